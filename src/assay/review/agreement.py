"""Agreement between annotators who did the same items (overlap), read from the store.

The unit is one question: turn ``n`` of an original, as each annotator's copy has it. Only
copies that were handed in count (status ``submitted`` or ``accepted``): a draft is work in
progress, and comparing it would measure progress, not disagreement; drafts are counted and
reported, not compared. An original counts as adjudicated gold once an ``adjudicate`` event
is in its history (see :mod:`assay.review.adjudication`).

For every unit, each pair of versions is compared with the per-question measures of
:mod:`assay.metrics.rag_agreement`, and the query type and the unanswerable decision (query
type ``unanswerable``) as categories. Rows: per annotator pair, per annotator against the
adjudicated gold, per query type (the gold's type when adjudicated, else the type most
versions chose) and overall. Each row's means are over the units where a measure is defined;
``kappa`` is Cohen's for two raters (a pair, an annotator and the gold), Fleiss' for more
when every unit has the same number of versions (else None); ``alpha`` is Krippendorff's
(nominal), which allows missing versions.

``reviewed_only`` (blind mode, for those who may not review): only copies of originals already
accepted count, so no figure is computed from another annotator's unreviewed copy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from statistics import fmean
from typing import Any, NamedTuple

import sqlalchemy as sa

from assay.corpus.anchoring import gold_span
from assay.corpus.chunkings import document_chunks, get_chunking
from assay.corpus.evidence_mapping import chunks_for_span
from assay.gold.taxonomy import UNANSWERABLE
from assay.metrics.agreement import category_counts, cohen_kappa, fleiss_kappa, krippendorff_alpha
from assay.metrics.rag_agreement import (
    DocSpan,
    TurnAnnotation,
    TurnScores,
    annotate,
    compare_turns,
)
from assay.people.actors import AUTHOR_NAME
from assay.records import Chunking, Project
from assay.store.db import driver_rows, reading
from assay.store.schema import accounts, events, evidence, items, turns
from assay.store.workspace import Workspace

HANDED_IN = ("submitted", "accepted")
"""Copy statuses that count for agreement."""
GOLD = "gold"
"""The rater name of the adjudicated original in a tally against gold."""
BATCH = 500


@dataclass(frozen=True, slots=True)
class Categorical:
    """Agreement on a category (query type, unanswerable): the share of version pairs that
    agree, a kappa and Krippendorff's alpha (see the module docstring)."""

    observed: float | None
    kappa: float | None
    alpha: float | None


@dataclass(frozen=True, slots=True)
class Measures:
    units: int
    """Questions compared (turns with at least two versions)."""
    comparisons: int
    """Version pairs compared."""
    query_type: Categorical
    unanswerable: Categorical
    passages_jaccard: float | None
    passages_f1: float | None
    spans_f1: float | None
    groups_f1: float | None
    answer_token_f1: float | None
    answer_rouge_l: float | None


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a table: ``name`` is the annotator pair ("ada / bob"), the annotator
    (against gold), the query type, or "all"."""

    name: str
    measures: Measures


@dataclass(frozen=True, slots=True)
class AgreementReport:
    project: str
    chunking: str | None
    """Passage sets are compared as chunk ids of this chunking; None: by characters."""
    originals: int
    copies: int
    not_handed_in: int
    adjudicated: int
    annotators: list[str]
    overall: Measures
    pairs: list[Row]
    gold: list[Row]
    query_types: list[Row]


@dataclass
class _Tally:
    """What one row collects: per unit the raters' query types, and the pairs' scores."""

    ratings: list[dict[str, str]] = field(default_factory=list)
    scores: list[TurnScores] = field(default_factory=list)

    def add(self, ratings: dict[str, str], scores: Iterable[TurnScores]) -> None:
        """One unit: each rater's query type, and the scores of its version pairs."""
        self.ratings.append(ratings)
        self.scores.extend(scores)

    def measures(self) -> Measures:
        def mean(values: Iterable[float | None]) -> float | None:
            present = [v for v in values if v is not None]
            return fmean(present) if present else None

        columns = list(zip(*self.scores, strict=True)) if self.scores else [()] * 6
        unanswerable = [{k: str(v == UNANSWERABLE) for k, v in r.items()} for r in self.ratings]
        return Measures(
            len(self.ratings),
            len(self.scores),
            _categorical(self.ratings),
            _categorical(unanswerable),
            *(mean(column) for column in columns),
        )


def _categorical(ratings: Sequence[dict[str, str]]) -> Categorical:
    raters = sorted({name for unit in ratings for name in unit})
    if not ratings:
        return Categorical(None, None, None)
    agreeing = pairs = 0
    for unit in ratings:
        for a, b in combinations(unit.values(), 2):
            pairs += 1
            agreeing += a == b
    data: list[Sequence[Hashable | None]] = [[u.get(r) for u in ratings] for r in raters]
    kappa: float | None = None
    if len(raters) == 2:
        kappa = cohen_kappa(data[0], data[1])
    elif len({len(u) for u in ratings}) == 1 and len(ratings[0]) >= 2:
        kappa = fleiss_kappa(category_counts([list(u.values()) for u in ratings])[0])
    return Categorical(agreeing / pairs if pairs else None, kappa, krippendorff_alpha(data))


class _Passages:
    """Turns an evidence passage into the key passage sets compare: its chunk ids under a
    chunking (the export's overlap policy), else its ``(doc_id, start, end)``."""

    def __init__(self, ws: Workspace, chunking: Chunking | None, conn: sa.Connection) -> None:
        self.ws, self.chunking, self.conn = ws, chunking, conn
        self.chunks: dict[str, list[tuple[str, int, int]]] = {}

    def keys(self, span: DocSpan) -> tuple[Hashable, ...]:
        if self.chunking is None:
            return (span,)
        doc_id = span[0]
        if doc_id not in self.chunks:
            found = document_chunks(self.ws, self.chunking, doc_id, conn=self.conn)
            self.chunks[doc_id] = [(c.chunk_id, c.start, c.end) for c in found]
        return chunks_for_span(span[1], span[2], self.chunks[doc_id])

    def annotation(self, turn: _Compared) -> TurnAnnotation:
        """A turn as the measures see it; evidence that is not anchored (unlocated or stale)
        has no reliable offsets and is left out."""
        labelled: dict[str, list[DocSpan]] = {}
        groups: dict[object, set[Hashable]] = {}
        relevant: list[DocSpan] = []
        for index, (doc_id, start, end, label, group, anchor) in enumerate(turn.evidence):
            span = gold_span(anchor, start, end)
            if span is None or doc_id is None:
                continue
            doc_span = (doc_id, *span)
            labelled.setdefault(label, []).append(doc_span)
            if label != "relevant" or turn.query_type == UNANSWERABLE:
                continue
            relevant.append(doc_span)
            key: object = group if group is not None else ("own", index)
            groups.setdefault(key, set()).update(self.keys(doc_span))
        return annotate(turn.query_type, groups.values(), relevant, labelled, turn.answer)


@dataclass
class _Unit:
    versions: dict[str, TurnAnnotation] = field(default_factory=dict)
    gold: TurnAnnotation | None = None

    def query_type(self) -> str:
        if self.gold is not None:
            return self.gold.query_type
        counts = Counter(v.query_type for v in self.versions.values())
        return min(counts, key=lambda t: (-counts[t], t))


def copy_rows(conn: sa.Connection, project: Project, original: str | None = None) -> list[Any]:
    """Id, ``copy_of``, status and author name of the project's copies (of ``original``
    only, when given), oldest first."""
    where = [items.c.project_id == project.id, items.c.copy_of.is_not(None)]
    if original is not None:
        where.append(items.c.copy_of == original)
    return list(
        conn.execute(
            sa.select(items.c.id, items.c.copy_of, items.c.status, AUTHOR_NAME)
            .join(accounts, accounts.c.id == items.c.author_id)
            .where(*where)
            .order_by(items.c.created_at, items.c.id)
        )
    )


class _Compared(NamedTuple):
    """What agreement reads of a turn: its evidence as ``(doc_id, start, end, label, group,
    anchor)``."""

    query_type: str
    answer: str
    evidence: list[tuple[Any, ...]]


def _compared_turns(conn: sa.Connection, ids: list[str]) -> dict[str, list[_Compared]]:
    """Per item of ``ids``, its turns with only what agreement compares: query type,
    answer and evidence (a full read also parses retrieved contexts and generation
    settings, most of what a turn holds, and builds records). Two queries per batch."""
    found: dict[str, list[_Compared]] = {i: [] for i in ids}
    by_id: dict[int, _Compared] = {}
    for turn_id, item_id, query_type, answer in driver_rows(
        conn,
        sa.select(turns.c.id, turns.c.item_id, turns.c.query_type, turns.c.answer)
        .where(turns.c.item_id.in_(ids))
        .order_by(turns.c.item_id, turns.c.ordinal),
    ):
        by_id[turn_id] = turn = _Compared(query_type, answer, [])
        found[item_id].append(turn)
    for turn_id, *passage in driver_rows(
        conn,
        sa.select(
            evidence.c.turn_id, evidence.c.doc_id, evidence.c.start, evidence.c.end,
            evidence.c.label, evidence.c.group_no, evidence.c.anchor,
        )
        .where(evidence.c.turn_id.in_(list(by_id)))
        .order_by(evidence.c.turn_id, evidence.c.ordinal),
    ):  # fmt: skip
        by_id[turn_id].evidence.append(tuple(passage))
    return found


def reviewed_originals(project: Project) -> sa.Select[Any]:
    """The ids of ``project``'s originals that have copies and are accepted (reviewed): what
    blind mode lets an annotator's figures be computed from."""
    originals = sa.select(items.c.copy_of).where(
        items.c.project_id == project.id, items.c.copy_of.is_not(None)
    )
    return sa.select(items.c.id).where(
        items.c.project_id == project.id,
        items.c.status == "accepted",
        items.c.id.in_(originals),
    )


def adjudicated_originals(conn: sa.Connection, project: Project) -> set[str]:
    """The ids of the originals with an ``adjudicate`` event in their history."""
    rows = conn.scalars(
        sa.select(events.c.item_id)
        .where(events.c.project_id == project.id, events.c.action == "adjudicate")
        .distinct()
    )
    return {item_id for item_id in rows if item_id}


def agreement_report(
    ws: Workspace,
    project: Project,
    *,
    chunking: str | None = None,
    reviewed_only: bool = False,
    conn: sa.Connection | None = None,
) -> AgreementReport:
    """Agreement over every original's handed-in copies (see the module docstring);
    ``chunking`` names the chunking whose chunk ids stand for passages (None: characters);
    ``reviewed_only``: only the copies of accepted originals (blind mode, annotators)."""
    with reading(ws.engine, conn) as conn:
        mapping = get_chunking(ws, project, chunking, conn=conn) if chunking else None
        passages = _Passages(ws, mapping, conn)
        rows = copy_rows(conn, project)
        if reviewed_only:
            reviewed = set(conn.scalars(reviewed_originals(project)))
            rows = [r for r in rows if r.copy_of in reviewed]
        counted = [r for r in rows if r.status in HANDED_IN]
        author = {r.id: r[3] for r in counted}
        original = {r.id: r.copy_of for r in counted}
        adjudicated = adjudicated_originals(conn, project) & set(original.values())
        units: dict[tuple[str, int], _Unit] = {}
        ids = [r.id for r in counted] + sorted(adjudicated)
        for offset in range(0, len(ids), BATCH):
            for item_id, found in _compared_turns(conn, ids[offset : offset + BATCH]).items():
                for number, turn in enumerate(found):
                    annotation = passages.annotation(turn)
                    if item_id in author:
                        unit = units.setdefault((original[item_id], number), _Unit())
                        unit.versions[author[item_id]] = annotation
                    elif (item_id, number) in units:
                        units[(item_id, number)].gold = annotation
    return _report(project, chunking, rows, counted, adjudicated, list(units.values()))


def _report(
    project: Project,
    chunking: str | None,
    rows: list[Any],
    counted: list[Any],
    adjudicated: set[str],
    units: list[_Unit],
) -> AgreementReport:
    on_chunks = chunking is not None
    overall = _Tally()
    pairs: dict[str, _Tally] = {}
    gold: dict[str, _Tally] = {}
    types: dict[str, _Tally] = {}
    for unit in units:  # each pair of versions is compared once, then tallied where it counts
        types_of = {name: v.query_type for name, v in unit.versions.items()}
        scored = {
            (a, b): compare_turns(unit.versions[a], unit.versions[b], on_chunks=on_chunks)
            for a, b in combinations(sorted(unit.versions), 2)
        }
        if scored:
            overall.add(types_of, scored.values())
            types.setdefault(unit.query_type(), _Tally()).add(types_of, scored.values())
        for (a, b), scores in scored.items():
            pair = {a: types_of[a], b: types_of[b]}
            pairs.setdefault(f"{a} / {b}", _Tally()).add(pair, [scores])
        if unit.gold is not None:
            for name, version in unit.versions.items():
                against = compare_turns(version, unit.gold, on_chunks=on_chunks)
                ratings = {name: types_of[name], GOLD: unit.gold.query_type}
                gold.setdefault(name, _Tally()).add(ratings, [against])

    def table(tallies: dict[str, _Tally]) -> list[Row]:
        return [Row(name, tallies[name].measures()) for name in sorted(tallies)]

    return AgreementReport(
        project=project.name,
        chunking=chunking,
        originals=len({r.copy_of for r in counted}),
        copies=len(counted),
        not_handed_in=len(rows) - len(counted),
        adjudicated=len(adjudicated),
        annotators=sorted({r[3] for r in counted}),
        overall=overall.measures(),
        pairs=table(pairs),
        gold=table(gold),
        query_types=table(types),
    )


COLUMNS: tuple[tuple[str, str], ...] = (
    ("units", "n"),
    ("query_type.kappa", "type\nκ"),
    ("query_type.alpha", "type\nα"),
    ("unanswerable.kappa", "unans\nκ"),
    ("passages_jaccard", "pass\nJ"),
    ("passages_f1", "pass\nF1"),
    ("spans_f1", "span\nF1"),
    ("groups_f1", "group\nF1"),
    ("answer_token_f1", "ans\nF1"),
    ("answer_rouge_l", "ROUGE\n-L"),
)
"""The columns a table of the report shows (the CLI and the page): a dotted path into
:class:`Measures` and a short heading (two lines, so a table fits 80 columns)."""


def column_value(measures: Measures, path: str) -> float | int | None:
    value: Any = measures
    for part in path.split("."):
        value = getattr(value, part)
    return value  # type: ignore[no-any-return]
