"""External RAG systems over HTTP, and placing their contexts in the project's documents.

The contract (docs/evaluation.md): ``POST {endpoint}`` with
``{"query", "history": [{"role", "content"}], "task_id", "k"}``; the reply is
``{"answer": str, "contexts": [{"doc_id"?, "chunk_id"?, "text"?, "score"?}]}``. A context
named by chunk id or doc id is matched to the project's chunks or documents; a context given
only as text is located in the documents (exactly, else ignoring white space) so it can be
scored like a retrieved chunk. Failures raise :class:`ExternalError` with a message naming
the endpoint and the task; the runner records it for that task and goes on. Requests obey
the outgoing-HTTP policy of :mod:`assay.llm.outgoing`: an endpoint it refuses fails the
pipeline before any request.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import sqlalchemy as sa

from assay.corpus.anchoring import locate
from assay.corpus.evidence_mapping import chunks_for_span
from assay.errors import AssayError
from assay.experiments.tasks import Task
from assay.llm.gate import SLOW_DOWN_STATUSES, EndpointGate, retry_after_s
from assay.llm.outgoing import OutgoingPolicy, OutgoingRefused
from assay.records import Chunking, Project
from assay.store.schema import chunks, documents
from assay.store.workspace import Workspace


class ExternalError(AssayError):
    """The external system failed for one task: unreachable, timed out, or a bad reply."""


@dataclass(frozen=True, slots=True)
class ExternalReply:
    answer: str
    contexts: tuple[dict[str, Any], ...]


class ExternalClient:
    """Asks one endpoint; retries connection errors, timeouts and 5xx/429 replies.

    Each try holds a slot of ``gate`` (the process's gate of the endpoint, see
    :mod:`assay.llm.gate`; default one of its own): a 429 or 503 slows the endpoint down."""

    def __init__(
        self,
        endpoint: str,
        *,
        timeout_s: float = 60.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        policy: OutgoingPolicy | None = None,
        gate: EndpointGate | None = None,
    ) -> None:
        policy = policy if policy is not None else OutgoingPolicy.from_settings()
        try:
            policy.check_url(endpoint, strict=False)
        except OutgoingRefused as exc:
            raise ExternalError(f"external endpoint {endpoint}: {exc}") from None
        self.endpoint = endpoint
        self.retries = retries
        self.backoff_s = backoff_s
        self.client = policy.client(endpoint, timeout=timeout_s)
        self.gate = gate if gate is not None else EndpointGate(endpoint, 16)

    def close(self) -> None:
        self.client.close()

    def ask(self, task: Task, query: str, k: int) -> ExternalReply:
        body = {"query": query, "history": list(task.history), "task_id": task.task_id, "k": k}
        where = f"{self.endpoint} (task {task.task_id})"
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            with self.gate.slot() as ticket:
                try:
                    response = self.client.post(self.endpoint, json=body)
                except OutgoingRefused as exc:
                    raise ExternalError(f"{where}: {exc}") from None
                except httpx.TimeoutException:
                    problem = f"timed out after {self.client.timeout.read}s"
                    continue
                except httpx.TransportError as exc:
                    problem = f"could not connect ({exc.__class__.__name__}: {exc})"
                    continue
                if response.status_code in SLOW_DOWN_STATUSES:
                    wait = retry_after_s(response.headers.get("retry-after", ""))
                    self.gate.slow_down(ticket, None if wait is None else min(wait, 30.0))
                if response.status_code >= 500 or response.status_code == 429:
                    problem = f"HTTP {response.status_code}: {response.text[:200]}"
                    continue
                if response.status_code >= 400:
                    raise ExternalError(
                        f"{where}: HTTP {response.status_code}: {response.text[:200]}"
                    )
                self.gate.succeeded(ticket)
            return parse_reply(response, where)
        tries = self.retries + 1
        raise ExternalError(f"{where}: {problem} ({tries} attempt{'s' if tries > 1 else ''})")


def parse_reply(response: httpx.Response, where: str) -> ExternalReply:
    """Check the reply's shape; every problem names the field."""
    try:
        data = response.json()
    except ValueError:
        raise ExternalError(f"{where}: the reply is not JSON: {response.text[:120]!r}") from None
    if not isinstance(data, dict):
        raise ExternalError(f"{where}: the reply must be a JSON object, got {type(data).__name__}")
    answer = data.get("answer", "")
    if answer is None:
        answer = ""
    if not isinstance(answer, str):
        raise ExternalError(f"{where}: 'answer' must be text, got {type(answer).__name__}")
    contexts = data.get("contexts", [])
    if contexts is None:
        contexts = []
    if not isinstance(contexts, list):
        raise ExternalError(f"{where}: 'contexts' must be a list, got {type(contexts).__name__}")
    checked: list[dict[str, Any]] = []
    for number, context in enumerate(contexts, start=1):
        if isinstance(context, str):
            context = {"text": context}
        if not isinstance(context, dict):
            raise ExternalError(f"{where}: contexts[{number}] must be an object")
        for key in ("doc_id", "chunk_id", "text"):
            if context.get(key) is not None and not isinstance(context[key], str):
                raise ExternalError(f"{where}: contexts[{number}].{key} must be text")
        score = context.get("score")
        if score is not None and not isinstance(score, int | float):
            raise ExternalError(f"{where}: contexts[{number}].score must be a number")
        if not any(context.get(key) for key in ("doc_id", "chunk_id", "text")):
            raise ExternalError(
                f"{where}: contexts[{number}] needs at least one of doc_id, chunk_id, text"
            )
        checked.append(context)
    return ExternalReply(answer, tuple(checked))


class ContextResolver:
    """Places contexts named by id or given as text in one chunking of a project."""

    def __init__(self, ws: Workspace, project: Project, chunking: Chunking) -> None:
        self.ws = ws
        self.project = project
        self.chunking = chunking
        self._texts: dict[str, str] | None = None
        self._names: dict[str, str] = {}
        self._chunks: dict[str, list[tuple[str, int, int]]] = {}
        self._chunk_rows: dict[str, tuple[str, int, int]] = {}

    def _load(self) -> dict[str, str]:
        if self._texts is None:
            with self.ws.engine.connect() as conn:
                rows = conn.execute(
                    sa.select(documents.c.id, documents.c.name, documents.c.text).where(
                        documents.c.project_id == self.project.id
                    )
                ).all()
                chunk_rows = conn.execute(
                    sa.select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.start, chunks.c.end)
                    .where(chunks.c.chunking_id == self.chunking.id)
                    .order_by(chunks.c.doc_id, chunks.c.ordinal)
                ).all()
            self._texts = {r.id: r.text for r in rows}
            self._names = {r.name: r.id for r in rows}
            for r in chunk_rows:
                self._chunk_rows[r.chunk_id] = (r.doc_id, r.start, r.end)
                self._chunks.setdefault(r.doc_id, []).append((r.chunk_id, r.start, r.end))
        return self._texts

    def text_of(self, doc_id: str, start: int, end: int) -> str:
        return self._load().get(doc_id, "")[start:end]

    def resolve(self, contexts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Retrieved entries ``{chunk_id, doc_id, start, end, score, rank, text}``; ids or
        offsets stay None where a context could not be placed (its text is kept)."""
        texts = self._load()
        resolved: list[dict[str, Any]] = []
        for rank, context in enumerate(contexts, start=1):
            entry = _unplaced(rank, context.get("score"), context.get("text") or "")
            chunk_id = context.get("chunk_id")
            doc_id = context.get("doc_id")
            if doc_id and doc_id not in texts:
                doc_id = self._names.get(doc_id, doc_id)  # a document name works too
            if chunk_id and chunk_id in self._chunk_rows:
                entry["doc_id"], entry["start"], entry["end"] = self._chunk_rows[chunk_id]
                entry["chunk_id"] = chunk_id
            elif entry["text"]:
                self._place_text(entry, doc_id)
            elif doc_id:
                entry["doc_id"] = doc_id
            if chunk_id and entry["chunk_id"] is None:
                entry["chunk_id"] = chunk_id  # unknown to the project: kept as given
            if not entry["text"] and entry["start"] is not None and entry["doc_id"] in texts:
                entry["text"] = texts[entry["doc_id"]][entry["start"] : entry["end"]]
            resolved.append(entry)
        return resolved

    def _place_text(self, entry: dict[str, Any], doc_id: str | None) -> None:
        texts = self._load()
        candidates = [doc_id] if doc_id in texts else list(texts)
        for candidate in candidates:
            assert candidate is not None
            span = locate(texts[candidate], entry["text"])
            if span is not None:
                entry["doc_id"], entry["start"], entry["end"] = candidate, span[0], span[1]
                entry["chunk_id"] = self._best_chunk(candidate, span[0], span[1])
                return
        if doc_id:
            entry["doc_id"] = doc_id

    def _best_chunk(self, doc_id: str, start: int, end: int) -> str | None:
        """The chunk standing for a located text: of those the overlap policy picks, the one
        sharing the most characters with it."""
        spans = self._chunks.get(doc_id, [])
        ids = set(chunks_for_span(start, end, spans))
        best = max(
            (c for c in spans if c[0] in ids),
            key=lambda c: min(end, c[2]) - max(start, c[1]),
            default=None,
        )
        return best[0] if best else None

    def resolve_ids(self, ranked: Sequence[tuple[str, float]]) -> list[dict[str, Any]]:
        """Entries for a run file's ranking: ids of chunks (of this chunking) or documents
        (by id or name); an unknown id is kept as a chunk id so it counts as a miss."""
        texts = self._load()
        resolved: list[dict[str, Any]] = []
        for rank, (id_, score) in enumerate(ranked, start=1):
            entry = _unplaced(rank, score, "")
            if id_ in self._chunk_rows:
                doc_id, start, end = self._chunk_rows[id_]
                entry.update(chunk_id=id_, doc_id=doc_id, start=start, end=end)
                entry["text"] = texts.get(doc_id, "")[start:end]
            elif id_ in texts or id_ in self._names:
                entry["doc_id"] = id_ if id_ in texts else self._names[id_]
            else:
                entry["chunk_id"] = id_
            resolved.append(entry)
        return resolved


def _unplaced(rank: int, score: Any, text: str) -> dict[str, Any]:
    """A retrieved entry not placed in a document yet: no chunk, document or offsets."""
    return {
        "chunk_id": None,
        "doc_id": None,
        "start": None,
        "end": None,
        "score": score,
        "rank": rank,
        "text": text,
    }
