"""A client for OpenAI-compatible chat endpoints (OpenAI, vLLM, Ollama, llama.cpp, …).

Plain httpx, no SDK: ``POST {base_url}/chat/completions``, whole replies or server-sent
events. Rate limits (429), server errors (5xx), refused connections and timeouts are retried
with exponential backoff and jitter, honouring ``Retry-After`` up to a cap; everything else
fails at once. Every failure is a :class:`GeneratorError` whose message names the endpoint
and says what to do. A stream is retried only before its first byte of text: once text has
been handed out a failure raises with ``partial_text`` holding all of it.

Every request goes through :mod:`assay.llm.outgoing` (allowed hosts and addresses, no
redirects, the API key only to the host of ``base_url``); a refusal is a GeneratorError
that is not retried. Replies are read by :mod:`assay.llm.openai_replies`.

Each try holds a slot of the endpoint's gate (:mod:`assay.llm.gate`) while it is in flight
(for a stream, until it is read or closed); a 429 or 503 slows the whole endpoint down. A
deterministic whole reply is looked up in, and stored to, the response cache
(:mod:`assay.llm.response_cache`) when the generator has one.
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx

from assay.llm.gate import SLOW_DOWN_STATUSES, EndpointGate, retry_after_s
from assay.llm.openai_replies import (
    chat_request,
    error_detail,
    generation_from_reply,
    json_reply,
    read_events,
)
from assay.llm.outgoing import OutgoingPolicy, OutgoingRefused
from assay.llm.records import Generation, GeneratorError, Message
from assay.llm.response_cache import ResponseCache, cacheable

if TYPE_CHECKING:
    from assay.llm import GeneratorSettings
    from assay.llm.traffic import Traffic

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
USER_AGENT = "assay (+OpenAI-compatible client)"


class OpenAICompatGenerator:
    """Chat completions from one model at one endpoint.

    ``retries`` is the number of extra tries after the first. ``backoff_s`` is the first
    wait; waits double per try, are jittered by up to half, and never exceed
    ``max_wait_s`` (nor does a ``Retry-After``). ``policy`` decides which hosts may be
    reached (default: from the ``ASSAY_OUTGOING_*`` environment); ``transport`` and
    ``sleep`` exist for tests. ``gate`` bounds the requests in flight (default: a gate of
    this generator's own, 16 slots); ``cache`` answers repeated requests (default: none).
    ``seed`` is sent when set.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        temperature: float = 0.0,
        max_tokens: int = 512,
        timeout_s: float = 60.0,
        retries: int = 2,
        json_mode: bool = False,
        api_key: str | None = None,
        transport: httpx.BaseTransport | None = None,
        backoff_s: float = 0.5,
        max_wait_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        policy: OutgoingPolicy | None = None,
        seed: int | None = None,
        gate: EndpointGate | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.retries = retries
        self.json_mode = json_mode
        self._api_key = api_key
        self._transport = transport
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self._sleep = sleep
        self._policy = policy if policy is not None else OutgoingPolicy.from_settings()
        self.seed = seed
        self._gate = gate if gate is not None else EndpointGate(self.gate_key, 16)
        self._cache = cache
        self._http: httpx.Client | None = None
        self._http_lock = threading.Lock()

    @property
    def gate_key(self) -> str:
        """What one gate bounds: the endpoint and the model asked for."""
        return f"{self.base_url} {self.model}"

    @classmethod
    def from_settings(
        cls,
        settings: GeneratorSettings,
        *,
        api_key: str | None = None,
        transport: httpx.BaseTransport | None = None,
        traffic: Traffic | None = None,
        **options: Any,
    ) -> OpenAICompatGenerator:
        """From stored settings; ``traffic`` gives the process's gate of the endpoint and
        the response cache (used when the settings make the answer deterministic)."""
        if traffic is not None:
            key = f"{settings.base_url.rstrip('/')} {settings.model}"
            options.setdefault(
                "gate",
                traffic.gates.gate(key, settings.max_in_flight, hold_s=settings.timeout_s + 30),
            )
            if traffic.cache is not None and cacheable(
                settings.cache, settings.temperature, settings.seed
            ):
                options.setdefault("cache", traffic.cache)
        return cls(
            base_url=settings.base_url,
            model=settings.model,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout_s=settings.timeout_s,
            retries=settings.retries,
            json_mode=settings.json_mode,
            seed=settings.seed,
            api_key=api_key,
            transport=transport,
            **options,
        )

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatGenerator(url={self.url!r}, model={self.model!r})"

    @property
    def params(self) -> dict[str, Any]:
        """What decides the answer, stored with it; never the API key."""
        params: dict[str, Any] = {
            "kind": "openai",
            "base_url": self.base_url,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
        }
        if self.seed is not None:
            params["seed"] = self.seed
        return params

    def generate(self, messages: Sequence[Message]) -> Generation:
        body = self._body(messages, stream=False)
        key = self._cache.key(self.url, body) if self._cache is not None else ""
        if self._cache is not None:
            stored = self._cache.get(key)
            if stored is not None:
                found = self._generation(messages, stored)  # usage says so: cost counts it free
                return dataclasses.replace(
                    found, cached=True, usage={**found.usage, "cached": True}
                )
        with self._request(self._client(), body, stream=False) as response:
            reply = json_reply(response, self.url)
        generation = self._generation(messages, reply)  # checked before it is kept
        if self._cache is not None:
            self._cache.put(key, self.url, self.model, reply)
        return generation

    def _generation(self, messages: Sequence[Message], reply: dict[str, Any]) -> Generation:
        return generation_from_reply(
            reply,
            messages,
            url=self.url,
            model=self.model,
            params=self.params,
            json_mode=self.json_mode,
        )

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        body = self._body(messages, stream=True)
        with self._request(self._client(), body, stream=True) as response:
            if response.headers.get("content-type", "").startswith("application/json"):
                # The server ignored "stream": true and answered at once.
                response.read()
                yield self._generation(messages, json_reply(response, self.url)).text
                return
            yield from read_events(response, self.url)

    # --- request and retries ------------------------------------------------------------

    def _client(self) -> httpx.Client:
        """The generator's one HTTP client, made on first use and shared by its threads: its
        connection pool keeps connections open between requests (a client per request paid
        for a new transport, and a TLS set-up, each time: about 0.4 s of CPU)."""
        with self._http_lock:
            if self._http is None:
                self._http = self._policy.client(
                    self.base_url,
                    timeout=httpx.Timeout(self.timeout_s),
                    transport=self._transport,
                    connections=self._gate.limit,
                )
                weakref.finalize(self, self._http.close)  # a generator nobody closed
            return self._http

    def close(self) -> None:
        """Close the connections (the generator makes new ones if it is used again)."""
        with self._http_lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()

    def _body(self, messages: Sequence[Message], *, stream: bool) -> dict[str, Any]:
        body = {"model": self.model, **chat_request(self, messages, stream=stream)}
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    def _headers(self, *, stream: bool) -> dict[str, str]:
        headers = {
            "User-Agent": USER_AGENT,
            "Accept": "text/event-stream" if stream else "application/json",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    @contextmanager
    def _request(
        self, client: httpx.Client, body: dict[str, Any], *, stream: bool
    ) -> Iterator[httpx.Response]:
        """An open response with a 2xx status, holding its gate slot until the ``with``
        ends; failed tries are retried (each with a slot of its own, none while waiting)."""
        tries = 0
        while True:
            tries += 1
            retry_after: float | None = None
            with self._gate.slot() as ticket:
                response = self._try(client, body, stream=stream, tries=tries)
                if response is not None and response.status_code < 300:
                    self._gate.succeeded(ticket)
                    try:
                        yield response
                    finally:
                        response.close()
                    return
                if response is not None:
                    response.read()
                    response.close()
                    retry_after = retry_after_s(response.headers.get("retry-after", ""))
                    if response.status_code in SLOW_DOWN_STATUSES:
                        capped = None if retry_after is None else min(retry_after, self.max_wait_s)
                        self._gate.slow_down(ticket, capped)
                    if response.status_code not in RETRY_STATUSES or tries > self.retries:
                        raise self._status_error(response, tries)
            self._sleep(self._wait(tries, retry_after))

    def _try(
        self, client: httpx.Client, body: dict[str, Any], *, stream: bool, tries: int
    ) -> httpx.Response | None:
        """One request: its response (any status), or None after a failure worth another
        try; the last try's failure, and a refusal, raise."""
        try:
            request = client.build_request(
                "POST", self.url, json=body, headers=self._headers(stream=stream)
            )
            return client.send(request, stream=stream)
        except OutgoingRefused as exc:
            raise GeneratorError(
                f"LLM endpoint {self.url}: {exc}", url=self.url, tries=tries
            ) from None
        except httpx.TimeoutException as exc:
            if tries > self.retries:
                raise GeneratorError(
                    f"LLM endpoint {self.url}: timed out after {self.timeout_s:g} s "
                    f"({_count(tries)})",
                    url=self.url,
                    tries=tries,
                ) from exc
        except httpx.TransportError as exc:
            if tries > self.retries:
                raise self._connection_error(exc, tries) from exc
        return None

    def _wait(self, tries: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_wait_s)
        delay = min(self.max_wait_s, self.backoff_s * 2.0 ** (tries - 1))
        return delay / 2 + random.random() * delay / 2

    def _connection_error(self, exc: httpx.TransportError, tries: int) -> GeneratorError:
        where = self.base_url.split("://", 1)[-1].split("/", 1)[0]
        text = str(exc) or type(exc).__name__
        if "refused" in text.lower():
            what = f"connection refused at {where}"
        else:
            what = f"cannot reach {where} ({text})"
        return GeneratorError(
            f"LLM endpoint {self.url}: {what} after {_count(tries)} — is the server running "
            "and base_url right?",
            url=self.url,
            tries=tries,
        )

    def _status_error(self, response: httpx.Response, tries: int) -> GeneratorError:
        status = response.status_code
        detail = error_detail(response)
        suffix = f" ({detail})" if detail else ""
        if status in (401, 403):
            key_state = "" if self._api_key else " (no key is set)"
            message = (
                f"{status} {response.reason_phrase} — check ASSAY_LLM_API_KEY{key_state}{suffix}"
            )
        elif status == 404:
            message = (
                f"404 — model {self.model!r} not found at {self.base_url}, or base_url is not "
                f"the API root (it usually ends in /v1){suffix}"
            )
        elif status == 429:
            message = f"429 rate limited after {_count(tries)}{suffix}"
        elif status >= 500:
            message = f"{status} server error after {_count(tries)}{suffix}"
        else:
            message = f"{status} {response.reason_phrase}{suffix}"
        return GeneratorError(
            f"LLM endpoint {self.url}: {message}", url=self.url, status=status, tries=tries
        )


def _count(tries: int) -> str:
    return "1 try" if tries == 1 else f"{tries} tries"
