"""The HTTP reranker: one ``POST`` to a rerank endpoint per query.

Two request shapes (``api``):

``standard``  ``{"model", "query", "documents": [...], "top_n"}`` → ``{"results": [{"index",
              "relevance_score"}, ...]}``; served by llama.cpp's server (``--reranking``),
              vLLM, Infinity, Jina and Cohere (v2). ``top_n`` asks for every document.
``tei``       Hugging Face text-embeddings-inference: ``{"query", "texts": [...]}`` →
              ``[{"index", "score"}, ...]``.

The reply must give exactly one finite score per document: an index out of range, one given
twice or missing, a score that is not a number, or a body that is not such JSON is a
:class:`RerankError` naming the reranker and what was wrong. Timeouts, refused connections,
429 and 5xx are retried ``retries`` times; other statuses fail at once. Requests go through
the outgoing-HTTP policy (:mod:`assay.llm.outgoing`); the key, when set, goes only to the
endpoint's host.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import httpx

from assay.llm.gate import SLOW_DOWN_STATUSES, EndpointGate, retry_after_s
from assay.llm.outgoing import OutgoingPolicy, OutgoingRefused
from assay.search.rerank_records import RerankError, RerankerSettings, Reranking

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class HttpReranker:
    """``gate`` bounds the requests in flight to the endpoint (:mod:`assay.llm.gate`)."""

    def __init__(
        self,
        settings: RerankerSettings,
        *,
        api_key: str | None = None,
        policy: OutgoingPolicy | None = None,
        backoff_s: float = 0.3,
        gate: EndpointGate | None = None,
    ) -> None:
        self.settings = settings
        self.gate = gate if gate is not None else EndpointGate(settings.url, 16)
        self.url = settings.url
        self.name = settings.name
        self._api_key = api_key
        self._policy = policy if policy is not None else OutgoingPolicy.from_settings()
        self.backoff_s = backoff_s
        try:
            self._policy.check_url(self.url, strict=False)
        except OutgoingRefused as exc:
            raise RerankError(f"{self.name}: {exc}") from None

    def __repr__(self) -> str:  # never shows the key
        return f"HttpReranker(url={self.url!r}, api={self.settings.api!r})"

    def _body(self, query: str, documents: Sequence[str]) -> dict[str, Any]:
        if self.settings.api == "tei":
            return {"query": query, "texts": list(documents)}
        body: dict[str, Any] = {
            "query": query,
            "documents": list(documents),
            "top_n": len(documents),
        }
        if self.settings.model:
            body["model"] = self.settings.model
        return body

    def rerank(self, query: str, documents: Sequence[str]) -> Reranking:
        if not documents:
            return Reranking(())
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = self._body(query, documents)
        problem = ""
        tries = self.settings.retries + 1
        with self._policy.client(self.url, timeout=self.settings.timeout_s) as client:
            for attempt in range(tries):
                if attempt:
                    time.sleep(self.backoff_s * 2 ** (attempt - 1))
                with self.gate.slot() as ticket:
                    try:
                        response = client.post(self.url, json=body, headers=headers)
                    except OutgoingRefused as exc:
                        raise RerankError(f"{self.name}: {exc}") from None
                    except httpx.TimeoutException:
                        problem = f"timed out after {self.settings.timeout_s:g} s"
                        continue
                    except httpx.TransportError as exc:
                        problem = f"could not connect ({exc.__class__.__name__}: {exc})"
                        continue
                    if response.status_code in SLOW_DOWN_STATUSES:
                        wait = retry_after_s(response.headers.get("retry-after", ""))
                        self.gate.slow_down(ticket, None if wait is None else min(wait, 30.0))
                    elif response.status_code < 300:
                        self.gate.succeeded(ticket)
                if response.status_code in RETRY_STATUSES:
                    problem = f"HTTP {response.status_code}: {_excerpt(response)}"
                    continue
                if response.status_code >= 300:
                    raise RerankError(
                        f"{self.name}: HTTP {response.status_code}: {_excerpt(response)}"
                    )
                scores = parse_scores(response, len(documents), self.settings.api, self.name)
                return Reranking(scores, _usage(response), self.settings.model)
        count = f"{tries} attempt{'s' if tries > 1 else ''}"
        raise RerankError(f"{self.name}: {problem} ({count})")


def _excerpt(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:200] or response.reason_phrase


def _usage(response: httpx.Response) -> dict[str, Any]:
    """Token counts some services report (``usage`` or ``meta.billed_units``), else none."""
    try:
        data = response.json()
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    usage = data.get("usage")
    if isinstance(usage, dict):
        return {k: v for k, v in usage.items() if isinstance(v, int)}
    return {}


def parse_scores(response: httpx.Response, count: int, api: str, name: str) -> tuple[float, ...]:
    """One score per document from a reply of the ``api`` shape; RerankError otherwise."""
    try:
        data = response.json()
    except ValueError:
        raise RerankError(f"{name}: the reply is not JSON: {response.text[:120]!r}") from None
    key, score_key = ("results", "relevance_score") if api == "standard" else ("", "score")
    if api == "standard":
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise RerankError(
                f"{name}: the reply must be an object with a 'results' list "
                '([{"index": …, "relevance_score": …}]), got '
                f"{type(data).__name__}"
            )
        results = data["results"]
    else:
        if not isinstance(data, list):
            raise RerankError(
                f"{name}: a TEI reply must be a list of {{'index', 'score'}}, got "
                f"{type(data).__name__}"
            )
        results = data
    where = f"{key}[" if key else "["
    scores: dict[int, float] = {}
    for number, entry in enumerate(results):
        if not isinstance(entry, dict):
            raise RerankError(f"{name}: {where}{number}] must be an object")
        index, score = entry.get("index"), entry.get(score_key)
        if isinstance(index, bool) or not isinstance(index, int):
            raise RerankError(f"{name}: {where}{number}].index must be a whole number")
        if not 0 <= index < count:
            raise RerankError(
                f"{name}: {where}{number}].index is {index}, but {count} documents were "
                f"sent (indexes 0 to {count - 1})"
            )
        if index in scores:
            raise RerankError(f"{name}: document index {index} is scored twice")
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise RerankError(f"{name}: {where}{number}].{score_key} must be a finite number")
        scores[index] = float(score)
    if len(scores) != count:
        missing = sorted(set(range(count)) - set(scores))
        shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
        raise RerankError(
            f"{name}: {count} documents were sent but {len(scores)} scored; no score for "
            f"index {shown}"
        )
    return tuple(scores[i] for i in range(count))
