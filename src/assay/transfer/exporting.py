"""Projects out to Bundles.

Export reads the project in batches and returns a Bundle of lazy iterables, so writers stream.
The CLI and the web export accepted items unless told otherwise (:func:`choose_statuses`) and
say what they left out (:func:`export_scope`). Items with evidence that cannot be used as gold
(stale, or breaking ``document.text[start:end] == evidence.text`` against the current text) are
never exported: the invariant is re-checked here
(:func:`assay.corpus.anchoring.items_needing_review`), they are left out and listed per item,
and a strict export refuses.
Evidence is mapped onto the chosen chunking by character overlap
(:func:`assay.corpus.evidence_mapping.chunks_for_span`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate

from assay.corpus.anchoring import EvidenceProblem, gold_span, items_needing_review
from assay.corpus.chunkings import get_chunking, list_chunkings
from assay.corpus.documents import document_record, iter_documents
from assay.corpus.evidence_mapping import chunks_for_span
from assay.errors import ImportRunning, NotFound
from assay.formats import Bundle, ChunkingRecord, ChunkRecord, Lazy, ProjectInfo
from assay.gold.item_lists import item_ids
from assay.gold.statuses import is_every_status, parse_statuses
from assay.records import (
    STATUSES,
    Chunking,
    Item,
    Project,
    Span,
)
from assay.review.comments import iter_item_comments
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer.evaluations import project_evaluations
from assay.transfer.reading import (
    document_ids,
    evidence_spans,
    iter_document_chunks,
    iter_item_rows,
    status_counts,
)


def choose_statuses(values: Sequence[str] | None) -> list[str] | None:
    """Statuses to export from ``--status`` values (:func:`assay.gold.statuses.parse_statuses`:
    nothing given means ``accepted``); ``None`` back means every status."""
    chosen = parse_statuses(values)
    return None if is_every_status(chosen) else list(chosen)


@dataclass(frozen=True, slots=True)
class ExportScope:
    """How many items an export holds and how many it leaves out, by status and because
    their evidence needs review."""

    items: int
    left_out: dict[str, int]
    needs_review: dict[str, list[EvidenceProblem]] = field(default_factory=dict)
    """Items of the chosen statuses left out because some evidence cannot be used as gold."""

    def needs_review_lines(self) -> list[str]:
        """``<item id>: turn 1, passage 2: its document changed …`` per item."""
        return [
            f"{item_id}: " + "; ".join(p.message for p in problems)
            for item_id, problems in self.needs_review.items()
        ]

    def strict_message(self, project: str) -> str:
        """Why a strict export is refused (only when :attr:`needs_review` is not empty)."""
        ids = ", ".join(self.needs_review)
        return (
            f"refusing a strict export of project {project!r}: {len(self.needs_review)} "
            f"item(s) have evidence that cannot be used as gold (their documents changed): "
            f"{ids}; fix the passages in the editor or export without strict to leave them out"
        )

    def left_out_text(self) -> str:
        """``20 draft, 1 rejected`` (empty when nothing is left out)."""
        return ", ".join(f"{n} {status}" for status, n in self.left_out.items() if n)

    def empty_message(self, project: str, widen: str, allow: str) -> str:
        """Why an export of no item is refused; ``widen``/``allow`` name the options."""
        left = self.left_out_text()
        if self.needs_review:
            review = f"{len(self.needs_review)} needing review"
            left = f"{left}, {review}" if left else review
        held = f"it holds {left} item(s)" if left else "it holds no items"
        return (
            f"nothing to export: project {project!r} has no item with the chosen status "
            f"({held}); include other statuses with {widen}, or use {allow} to "
            "export the documents without items"
        )


def export_scope(
    ws: Workspace,
    project: Project,
    statuses: Sequence[str] | None,
    *,
    items: Sequence[str] | None = None,
) -> ExportScope:
    """Count what an export with ``statuses`` (or of exactly the ``items``) takes and leaves
    out; refuses while an import is writing into the project (a half-imported project is no
    dataset)."""
    lock = get_project(ws, project.name).importing_since
    if lock is not None:
        raise ImportRunning(
            f"project {project.name!r} is being imported into (since "
            f"{lock:%Y-%m-%d %H:%M:%S} UTC); export it when the import has finished"
        )
    with ws.engine.connect() as conn:
        review = items_needing_review(conn, project.id, statuses if items is None else None)
    if items is not None:
        review = {i: review[i] for i in dict.fromkeys(items) if i in review}
        return ExportScope(len(set(items)) - len(review), {}, review)
    counts = status_counts(ws, project)
    chosen = set(STATUSES if statuses is None else statuses)
    return ExportScope(
        items=sum(n for s, n in counts.items() if s in chosen) - len(review),
        left_out={s: counts[s] for s in STATUSES if s not in chosen and counts.get(s)},
        needs_review=review,
    )


def export_bundle(
    ws: Workspace,
    project: Project,
    *,
    chunking: str | None = None,
    statuses: Sequence[str] | None = None,
    items: Sequence[str] | None = None,
    needs_review: Collection[str] | None = None,
) -> Bundle:
    """The project as a Bundle of lazy iterables; chunk ids refer to ``chunking`` (default:
    the project's default chunking). ``items``: exactly these items, whatever their status
    (``assay items export-one``); an id the project does not hold is NotFound. Items whose
    evidence cannot be used as gold are never included: ``needs_review`` passes the ones
    :func:`export_scope` found (else they are looked up again)."""
    target = _target_chunking(ws, project, chunking)
    chosen = chosen_items(ws, project, items) if items is not None else None
    mapper = _ChunkMapper(ws, project, target)
    gold = cache(lambda: _gold_ids(ws, project, statuses, chosen, needs_review))
    return Bundle(
        project=ProjectInfo(
            name=project.name,
            language=project.language,
            settings=project.settings,
            created_at=project.created_at.isoformat(),
            updated_at=project.updated_at.isoformat(),
        ),
        documents=Lazy(lambda: (document_record(ws, d) for d in iter_documents(ws, project))),
        chunkings=[
            ChunkingRecord(
                name=c.name,
                method=c.method,
                params=c.params,
                is_default=c.is_default,
                chunks=Lazy(_chunk_factory(ws, project, c)),
            )
            for c in list_chunkings(ws, project)
        ],
        items=Lazy(lambda: (_with_chunks(i, mapper) for i in iter_item_rows(ws, gold()))),
        target_chunking=target.name if target else None,
        provenance={"tool": "assay", "project": project.name},
        evaluations=Lazy(lambda: project_evaluations(ws, project)),
        comments=Lazy(lambda: iter_item_comments(ws, gold())),
    )


def _gold_ids(
    ws: Workspace,
    project: Project,
    statuses: Sequence[str] | None,
    chosen: list[str] | None,
    held: Collection[str] | None,
) -> list[str]:
    """The ids to export, without the items whose evidence cannot be used as gold."""
    ids = chosen if chosen is not None else item_ids(ws, project, statuses)
    if held is None:
        with ws.engine.connect() as conn:
            wanted = None if chosen is not None else statuses
            held = items_needing_review(conn, project.id, wanted).keys()
    return [i for i in ids if i not in held] if held else ids


def chosen_items(ws: Workspace, project: Project, ids: Sequence[str]) -> list[str]:
    """``ids`` without repeats, each checked to be an item of ``project`` (else NotFound)."""
    held = set(item_ids(ws, project, None))
    for item_id in ids:
        if item_id not in held:
            raise NotFound(f"project {project.name!r} has no item {item_id!r}")
    return list(dict.fromkeys(ids))


def _target_chunking(ws: Workspace, project: Project, name: str | None) -> Chunking | None:
    try:
        return get_chunking(ws, project, name)
    except NotFound:
        if name is not None:
            raise
        return None


def _chunk_factory(
    ws: Workspace, project: Project, chunking: Chunking
) -> Callable[[], Iterator[ChunkRecord]]:
    def chunks() -> Iterator[ChunkRecord]:
        order = document_ids(ws, project)
        for doc_id, text, spans in iter_document_chunks(ws, chunking.id, order, with_text=True):
            body = text or ""
            for chunk_id, start, end in spans:
                yield ChunkRecord(chunk_id, doc_id, start, end, body[start:end])

    return chunks


class _ChunkMapper:
    """Evidence span → chunk ids of one chunking, computed once for the whole project."""

    def __init__(self, ws: Workspace, project: Project, chunking: Chunking | None) -> None:
        self.ws = ws
        self.project = project
        self.chunking = chunking
        self.table: dict[tuple[str, int, int], tuple[str, ...]] | None = None

    def get(self, doc_id: str | None, span: Span | None) -> tuple[str, ...]:
        """The chunk ids of a passage; ``span`` from :func:`assay.corpus.anchoring.gold_span`."""
        if self.chunking is None or doc_id is None or span is None:
            return ()
        if self.table is None:
            self.table = self._build(self.chunking)
        return self.table.get((doc_id, *span), ())

    def _build(self, chunking: Chunking) -> dict[tuple[str, int, int], tuple[str, ...]]:
        table: dict[tuple[str, int, int], tuple[str, ...]] = {}
        wanted = evidence_spans(self.ws, self.project)
        if not wanted:
            return table
        for doc_id, _, doc_chunks in iter_document_chunks(self.ws, chunking.id, sorted(wanted)):
            ordered = [(c_start, c_end, cid) for cid, c_start, c_end in doc_chunks]
            if any(ordered[i] > ordered[i + 1] for i in range(len(ordered) - 1)):
                ordered.sort()
            starts = [c[0] for c in ordered]
            reach = list(accumulate((c[1] for c in ordered), max))
            for s, e in wanted[doc_id]:
                low, high = bisect_right(reach, s), bisect_left(starts, e)
                candidates = [(cid, c_start, c_end) for c_start, c_end, cid in ordered[low:high]]
                table[(doc_id, s, e)] = chunks_for_span(s, e, candidates)
        return table


def _with_chunks(item: Item, mapper: _ChunkMapper) -> Item:
    """The item with each usable evidence's ``chunk_ids`` in the export's chunking (an item
    read for this export only, so it is filled in place)."""
    for turn in item.turns:
        for e in turn.evidence:
            span = gold_span(e.anchor, e.start, e.end)
            e.chunk_ids = mapper.get(e.doc_id, span)
    return item
