"""Evidence rules: anchoring, staleness, and whether evidence may count as gold.

The invariant is ``document.text[start:end] == evidence.text``. Offsets win when given; text
alone is located in the document (exactly, then ignoring white space differences). What
cannot be anchored is refused, except imported text (kept as ``unlocated``) and evidence whose
document changed (kept as ``stale``): flagged, never moved.

Every decision on whether stored evidence can be used as gold is made here
(:func:`unusable_evidence`, :func:`items_needing_review`, :func:`gold_span`): exports leave
out, experiments skip and the items list flags exactly the same items. Which chunks stand for
a passage is the overlap policy of :mod:`assay.corpus.evidence_mapping`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from assay.corpus.text_index import TextIndex
from assay.errors import InvalidInput
from assay.records import Evidence, Span
from assay.store.db import utcnow
from assay.store.schema import documents, events, evidence, items, turns

DOC_BATCH = 200
"""Documents whose texts are read at once when checking evidence against them."""
ROW_BATCH = 20_000
"""Passages read at once when checking evidence against their documents."""


def locate(haystack: str, needle: str, index: TextIndex | None = None) -> Span | None:
    """Where ``needle`` occurs in ``haystack``: exactly, else ignoring differences in white
    space (PDF line breaks, doubled spaces). The first occurrence wins. ``index``: an index of
    ``haystack`` that finds exact occurrences without reading all of it."""
    if not needle.strip():
        return None
    start = index.find(needle) if index is not None else haystack.find(needle)
    if start >= 0:
        return start, start + len(needle)
    words = needle.split()
    pattern = r"\s+".join(re.escape(word) for word in words)
    found = re.search(pattern, haystack)
    return (found.start(), found.end()) if found else None


INDEX_AFTER = 250
"""Passages located in one document before it gets an index (:mod:`assay.corpus.text_index`):
building one costs about as much as 250 searches of the document, each then costs a few
microseconds however long the document is."""
INDEX_CHARS = 64_000
"""Shorter documents are searched directly: as fast as an index, with no index to build (at
40,000 characters a 520-character passage is found in 5.8 µs by ``str.find``, in 6.4 µs by
an index that took 2 ms to build)."""


class DocumentTexts:
    """Document texts of one project as evidence is anchored: read once per save, or once
    per import for a whole import. A document often searched gets an index. At most
    ``max_chars`` characters of the texts used last are kept (``None``: all), an index
    counted as long as its text (it takes about as much memory)."""

    def __init__(self, conn: sa.Connection, project_id: int, max_chars: int | None = None) -> None:
        self.conn = conn
        self.project_id = project_id
        self.max_chars = max_chars
        self.cache: dict[str, str | None] = {}
        self.passages: dict[tuple[str, int, int], str] = {}
        self.indexes: dict[str, TextIndex] = {}
        self.searched: dict[str, int] = {}
        self.chars = 0

    def get(self, doc_id: str) -> str | None:
        if doc_id in self.cache:
            text = self.cache.pop(doc_id)  # put back below: the last used comes last
        else:
            text = self.conn.scalar(
                sa.select(documents.c.text).where(
                    documents.c.id == doc_id, documents.c.project_id == self.project_id
                )
            )
            self._make_room(len(text or ""))
        self.cache[doc_id] = text
        return text

    def read_passages(self, wanted: Iterable[tuple[str, int, int]]) -> None:
        """Read these passages (document id, start, end) in one statement, not the whole
        texts: a save citing a few sentences of long documents transfers those sentences.
        :meth:`passage` then has them; a passage of a document the project does not hold
        is left out."""
        todo = sorted({(d, s, e) for d, s, e in wanted if 0 <= s < e and d not in self.cache})
        for first in range(0, len(todo), PASSAGES_AT_ONCE):
            batch = todo[first : first + PASSAGES_AT_ONCE]
            params: dict[str, Any] = {"project_id": self.project_id}
            for n, (doc_id, start, end) in enumerate(batch):
                params.update({f"d{n}": doc_id, f"s{n}": start + 1, f"l{n}": end - start})
            for n, text in self.conn.execute(_passages_read(len(batch)), params):
                self.passages[batch[n]] = text

    def passage(self, doc_id: str, start: int, end: int) -> str | None:
        """``text[start:end]`` of the document when its text or this passage was read
        (:meth:`read_passages`), else None (then :meth:`get` reads the text)."""
        if doc_id in self.cache:
            text = self.cache[doc_id]
            return None if text is None else text[start:end]
        return self.passages.get((doc_id, start, end))

    def locate(self, doc_id: str, text: str, needle: str) -> Span | None:
        """:func:`locate` in the document ``doc_id`` whose text is ``text``."""
        index = self.indexes.get(doc_id)
        if index is None and len(text) >= INDEX_CHARS:
            self.searched[doc_id] = searched = self.searched.get(doc_id, 0) + 1
            fits = self.max_chars is None or 2 * len(text) <= self.max_chars
            if searched >= INDEX_AFTER and fits and doc_id in self.cache:
                self._make_room(len(text))  # drops others: this text was used last
                index = self.indexes[doc_id] = TextIndex(text)
        return locate(text, needle, index)

    def _make_room(self, chars: int) -> None:
        """Count ``chars`` more, dropping the texts (and indexes) used longest ago."""
        self.chars += chars
        while self.max_chars is not None and self.cache and self.chars > self.max_chars:
            oldest = next(iter(self.cache))
            text = self.cache.pop(oldest) or ""
            self.chars -= len(text) * (2 if self.indexes.pop(oldest, None) else 1)
            self.searched.pop(oldest, None)


PASSAGES_AT_ONCE = 50
"""Passages :meth:`DocumentTexts.read_passages` reads in one statement."""


@functools.cache
def _passages_read(count: int) -> sa.CompoundSelect[Any]:
    """``count`` passages of the project's documents (position, text), one indexed lookup
    each: built once per count and process (bound parameters)."""
    project = sa.bindparam("project_id", type_=sa.Integer)
    parts = [
        sa.select(
            sa.literal(n, sa.Integer),
            sa.func.substr(
                documents.c.text,
                sa.bindparam(f"s{n}", type_=sa.Integer),
                sa.bindparam(f"l{n}", type_=sa.Integer),
            ),
        ).where(
            documents.c.id == sa.bindparam(f"d{n}", type_=sa.String),
            documents.c.project_id == project,
        )
        for n in range(count)
    ]
    return sa.union_all(*parts)


def anchor_evidence(
    ev: Evidence, texts: DocumentTexts, where: str
) -> tuple[str | None, int | None, int | None, str, str]:
    """Check or find the offsets of one evidence; returns doc_id, start, end, text, anchor."""
    if ev.doc_id is None:
        if ev.origin == "imported":
            return None, None, None, ev.text, "unlocated"
        raise InvalidInput(f"{where}: every evidence must point to a document")
    if ev.start is not None and ev.end is not None and 0 <= ev.start < ev.end:
        passage = texts.passage(ev.doc_id, ev.start, ev.end)  # read alone, when it was
        whole = passage is not None and len(passage) == ev.end - ev.start
        if whole and passage is not None and (not ev.text or ev.text == passage):
            return ev.doc_id, ev.start, ev.end, passage, "ok"
    text = texts.get(ev.doc_id)
    if text is None:
        raise InvalidInput(f"{where}: no document {ev.doc_id!r} in this project")
    if ev.start is not None and ev.end is not None:
        if not ev.start < ev.end <= len(text):
            if ev.anchor in ("stale", "unlocated"):
                return ev.doc_id, ev.start, ev.end, ev.text, ev.anchor
            raise InvalidInput(
                f"{where}: offsets {ev.start}..{ev.end} are outside the document (0..{len(text)})"
            )
        passage = text[ev.start : ev.end]
        if not ev.text or ev.text == passage:
            return ev.doc_id, ev.start, ev.end, passage, "ok"
        if ev.anchor in ("stale", "unlocated"):
            return ev.doc_id, ev.start, ev.end, ev.text, ev.anchor
        raise InvalidInput(
            f"{where}: the text does not match the document at {ev.start}..{ev.end} "
            f"(document has {passage[:60]!r}, evidence has {ev.text[:60]!r})"
        )
    span = texts.locate(ev.doc_id, text, ev.text)
    if span is not None:
        return ev.doc_id, span[0], span[1], text[span[0] : span[1]], "ok"
    if ev.origin == "imported" or ev.anchor in ("stale", "unlocated"):
        return ev.doc_id, None, None, ev.text, ev.anchor or "unlocated"
    raise InvalidInput(f"{where}: the text was not found in the document {ev.doc_id!r}")


# ---------------------------------------------------------------- staleness and gold use


def passage_matches(doc_text: str | None, start: int | None, end: int | None, text: str) -> bool:
    """The invariant for one evidence: ``doc_text[start:end] == text``."""
    if doc_text is None or start is None or end is None:
        return False
    return 0 <= start < end <= len(doc_text) and doc_text[start:end] == text


def gold_span(anchor: str | None, start: int | None, end: int | None) -> Span | None:
    """The offsets that may stand for gold (mapped onto chunks): only those of anchored
    evidence; unlocated, stale and never-checked (None) evidence maps to no chunk."""
    if anchor != "ok" or start is None or end is None:
        return None
    return start, end


def needs_review() -> sa.ColumnElement[bool]:
    """SQL, correlated with ``items``: the item holds stale evidence (the "needs review" state
    of the items list). Derived from the evidence, so it clears itself when that is fixed."""
    return sa.exists(
        sa.select(evidence.c.id)
        .join(turns, turns.c.id == evidence.c.turn_id)
        .where(turns.c.item_id == items.c.id, evidence.c.anchor == "stale")
    )


def needing_review() -> sa.ColumnElement[bool]:
    """SQL on ``items``: the same state as :func:`needs_review`, as one scan of the evidence
    (for filtering a whole project rather than marking one page of rows)."""
    return items.c.id.in_(
        sa.select(turns.c.item_id)
        .join(evidence, evidence.c.turn_id == turns.c.id)
        .where(evidence.c.anchor == "stale")
    )


@dataclass(frozen=True, slots=True)
class EvidenceProblem:
    """One evidence of an item that cannot be used as gold, and why."""

    turn: int
    """1-based turn number."""
    passage: int
    """1-based position of the evidence in its turn."""
    doc_id: str | None
    reason: Literal["stale", "broken"]

    @property
    def message(self) -> str:
        why = (
            "its document changed after it was marked"
            if self.reason == "stale"
            else "its text does not match its document"
        )
        return f"turn {self.turn}, passage {self.passage}: {why}"


def items_needing_review(
    conn: sa.Connection, project_id: int, statuses: Sequence[str] | None = None
) -> dict[str, list[EvidenceProblem]]:
    """Items of a project (with ``statuses``; ``None``: all) whose evidence cannot be used as
    gold, with each problem: what exports leave out and experiments skip.

    Stale evidence is what a replacement marked; anchored evidence is checked against the
    document's current text (:func:`passage_matches`), which catches evidence whose document
    changed some other way (``broken``). The passages are read a group of documents at a time
    (at most ``ROW_BATCH`` passages and ``DOC_BATCH`` texts in memory, whatever the size of
    the project: a frozen version of 100k items), each document's text once.
    """
    where = [items.c.project_id == project_id, evidence.c.anchor.in_(("ok", "stale"))]
    if statuses is not None:
        where.append(items.c.status.in_(list(statuses)))
    joined = evidence.join(turns, turns.c.id == evidence.c.turn_id).join(
        items, items.c.id == turns.c.item_id
    )
    select = sa.select(
        items.c.id,
        turns.c.ordinal,
        evidence.c.ordinal,
        evidence.c.doc_id,
        evidence.c.anchor,
        evidence.c.start,
        evidence.c.end,
        evidence.c.text,
    ).select_from(joined)
    problems: list[tuple[str, int, int, EvidenceProblem]] = []
    for batch in _document_batches(conn, joined, where):
        named = [d for d in batch if d is not None]
        texts: dict[str, str] = dict(
            conn.execute(
                sa.select(documents.c.id, documents.c.text).where(documents.c.id.in_(named))
            ).all()
        )
        cited: sa.ColumnElement[bool] = evidence.c.doc_id.in_(named)
        if None in batch:  # evidence without a document
            cited = sa.or_(cited, evidence.c.doc_id.is_(None))
        for item_id, turn, ordinal, doc_id, anchor, start, end, text in conn.execute(
            select.where(*where, cited)
        ):
            if anchor == "ok" and passage_matches(texts.get(doc_id), start, end, text):
                continue
            reason: Literal["stale", "broken"] = "stale" if anchor == "stale" else "broken"
            found = EvidenceProblem(turn + 1, ordinal + 1, doc_id, reason)
            problems.append((item_id, turn, ordinal, found))
    by_item: dict[str, list[EvidenceProblem]] = {}
    for item_id, _, _, found in sorted(problems, key=lambda p: p[:3]):
        by_item.setdefault(item_id, []).append(found)
    return by_item


def _document_batches(
    conn: sa.Connection, joined: Any, where: list[Any]
) -> Iterator[list[str | None]]:
    """The cited document ids (None: evidence without one) in groups of at most
    ``DOC_BATCH`` documents and, unless one document alone is cited more, ``ROW_BATCH``
    passages (one GROUP BY tells how many each has)."""
    counts = conn.execute(
        sa.select(evidence.c.doc_id, sa.func.count())
        .select_from(joined)
        .where(*where)
        .group_by(evidence.c.doc_id)
    ).all()
    batch: list[str | None] = []
    rows = 0
    for doc_id, n in sorted(counts, key=lambda c: (c[0] is not None, c[0] or "")):
        if batch and (rows + n > ROW_BATCH or len(batch) >= DOC_BATCH):
            yield batch
            batch, rows = [], 0
        batch.append(doc_id)
        rows += n
    if batch:
        yield batch


def problems_json(problems: dict[str, list[EvidenceProblem]]) -> list[dict[str, Any]]:
    """``[{"id", "problems": [{"turn", "passage", "doc_id", "reason", "message"}]}]``."""
    return [
        {
            "id": item_id,
            "problems": [
                {
                    "turn": p.turn,
                    "passage": p.passage,
                    "doc_id": p.doc_id,
                    "reason": p.reason,
                    "message": p.message,
                }
                for p in found
            ],
        }
        for item_id, found in problems.items()
    ]


def flag_stale_evidence(
    conn: sa.Connection, project_id: int, doc_id: str, doc_name: str, text: str, actor: int
) -> int:
    """After a document's text changed: evidence whose passage no longer matches is marked
    ``stale`` (never moved), evidence that matches again is ``ok``. Each item that gains stale
    evidence is put in the "needs review" state, recorded in its history as done by ``actor``
    (an account id). Returns how many evidence rows are stale now."""
    cited = conn.execute(
        sa.select(
            evidence.c.id,
            evidence.c.start,
            evidence.c.end,
            evidence.c.text,
            evidence.c.anchor,
            evidence.c.ordinal,
            turns.c.ordinal.label("turn"),
            turns.c.item_id,
        )
        .join(turns, turns.c.id == evidence.c.turn_id)
        .where(evidence.c.doc_id == doc_id, evidence.c.anchor.in_(("ok", "stale")))
    ).all()
    stale = 0
    gone_stale: dict[str, list[dict[str, int]]] = {}
    for row in cited:
        matches = passage_matches(text, row.start, row.end, row.text)
        stale += not matches
        anchor = "ok" if matches else "stale"
        if anchor != row.anchor:
            conn.execute(evidence.update().where(evidence.c.id == row.id).values(anchor=anchor))
        if anchor == "stale" and row.anchor == "ok":
            gone_stale.setdefault(row.item_id, []).append(
                {"turn": row.turn + 1, "passage": row.ordinal + 1}
            )
    now = utcnow()
    for item_id, passages in gone_stale.items():
        conn.execute(
            events.insert().values(
                project_id=project_id,
                item_id=item_id,
                actor_id=actor,
                action="needs_review",
                before={"anchor": "ok", "passages": passages},
                after={
                    "anchor": "stale",
                    "needs_review": True,
                    "reason": "document_replaced",
                    "detail": f"document {doc_name!r} was replaced; its text no longer "
                    "matches the passages",
                    "document": doc_id,
                    "passages": passages,
                },
                at=now,
            )
        )
    return stale
