"""What an OpenAI-compatible chat endpoint is sent, and what it sends back in Assay's terms.

Whole replies become a :class:`Generation`, streamed server-sent events become text deltas,
and error bodies become a short description. Anything malformed is a GeneratorError naming
the endpoint; a broken stream carries the text received so far in ``partial_text``. Shared
by :mod:`assay.llm.openai_compat` (over HTTP) and :mod:`assay.llm.local` (in process).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import httpx

from assay.llm.records import Generation, GeneratorError, Message, prompt_hash


class ChatSettings(Protocol):
    temperature: float
    max_tokens: int
    json_mode: bool


def chat_request(
    settings: ChatSettings, messages: Sequence[Message], *, stream: bool
) -> dict[str, Any]:
    """The body of a chat-completion request (without the model, which an in-process model
    does not take); ``settings.json_mode`` asks for a JSON object as the answer."""
    body: dict[str, Any] = {
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "stream": stream,
    }
    if settings.json_mode:
        body["response_format"] = {"type": "json_object"}
    return body


def generation_from_reply(
    reply: dict[str, Any],
    messages: Sequence[Message],
    *,
    url: str,
    model: str,
    params: dict[str, Any],
    json_mode: bool,
) -> Generation:
    """A chat-completion reply (already parsed JSON) as a Generation, or GeneratorError."""
    choice = _first_choice(reply, url)
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise _malformed(url, "missing choices[0].message.content")
    if json_mode:
        try:
            json.loads(content)
        except ValueError as exc:
            raise _malformed(
                url, f"JSON mode was asked for but the content is not JSON: {content!r:.80}"
            ) from exc
    usage = reply.get("usage")
    finish = choice.get("finish_reason")
    reply_model = reply.get("model")
    return Generation(
        text=content,
        model=reply_model if isinstance(reply_model, str) and reply_model else model,
        prompt_hash=prompt_hash(messages),
        params=params,
        usage=dict(usage) if isinstance(usage, dict) else {},
        finish_reason=finish if isinstance(finish, str) else "",
    )


def read_events(response: httpx.Response, url: str) -> Iterator[str]:
    """Text deltas from server-sent events until ``[DONE]``; raises with partial_text."""
    parts: list[str] = []
    finished = False

    def broken(reason: str) -> GeneratorError:
        text = "".join(parts)
        return GeneratorError(
            f"LLM endpoint {url}: stream interrupted after {len(text)} characters: {reason}",
            url=url,
            partial_text=text,
        )

    try:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue  # blank separators, comments (":"), event:, id:, retry:
            data = line[5:].strip()
            if data == "[DONE]":
                return
            try:
                event = json.loads(data)
            except ValueError:
                raise broken(f"malformed event {data!r:.80}") from None
            try:
                content, done = chunk_delta(event)
            except ValueError as exc:
                raise broken(f"{exc}: {data!r:.80}") from None
            if content:
                parts.append(content)
                yield content
            finished = finished or done
    except httpx.TimeoutException as exc:
        raise broken(f"no data for {_timeout_of(response)} (read timeout)") from exc
    except httpx.TransportError as exc:
        raise broken(f"connection lost ({str(exc) or type(exc).__name__})") from exc
    if not finished:
        raise broken("the stream ended without [DONE]")


def chunk_delta(event: object) -> tuple[str, bool]:
    """``(text, finished)`` of one streamed chat-completion chunk; ValueError if malformed."""
    if not isinstance(event, dict):
        raise ValueError("malformed event")
    if "error" in event:
        raise ValueError(f"the server reported an error ({_describe(event['error'])})")
    choices = event.get("choices")
    if not choices:
        return "", False  # e.g. a final usage-only event
    choice = choices[0] if isinstance(choices, list) else None
    if not isinstance(choice, dict):
        raise ValueError("malformed event")
    delta = choice.get("delta")
    content = delta.get("content") if isinstance(delta, dict) else None
    return (content if isinstance(content, str) else ""), bool(choice.get("finish_reason"))


def json_reply(response: httpx.Response, url: str) -> dict[str, Any]:
    """The JSON object of a whole reply; GeneratorError if it is not one or reports an error."""
    try:
        reply = response.json()
    except ValueError:
        raise _malformed(url, f"not JSON (starts with {response.text[:80]!r})") from None
    if not isinstance(reply, dict):
        raise _malformed(url, f"expected a JSON object, got {type(reply).__name__}")
    if "error" in reply and "choices" not in reply:
        raise GeneratorError(
            f"LLM endpoint {url}: the server reported an error ({_describe(reply['error'])})",
            url=url,
            status=response.status_code,
        )
    return reply


def _first_choice(reply: dict[str, Any], url: str) -> dict[str, Any]:
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _malformed(url, "missing choices[0]")
    return choices[0]


def _malformed(url: str, what: str) -> GeneratorError:
    where = f"LLM endpoint {url}" if url.startswith(("http://", "https://")) else url
    return GeneratorError(f"{where}: malformed reply: {what}", url=url)


def error_detail(response: httpx.Response) -> str:
    """The server's own words on why it refused, shortened, for the error message."""
    try:
        payload = response.json()
    except ValueError:
        return response.text.strip()[:200]
    if isinstance(payload, dict):
        for key in ("error", "detail", "message"):
            if key in payload:
                return _describe(payload[key])
    return str(payload)[:200]


def _describe(error: object) -> str:
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or error
        return str(message)[:200]
    return str(error)[:200]


def _timeout_of(response: httpx.Response) -> str:
    timeout = response.request.extensions.get("timeout", {})
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return f"{read:g} s" if isinstance(read, int | float) else "too long"
