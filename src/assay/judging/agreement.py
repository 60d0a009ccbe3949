"""How much judges agree on the units they both judged: on ratings and on spans, per mode.

- Ratings, over the units that two or more judges rated (a rating other than "not rated"):
  ``exact`` is the share of judge pairs on a unit who gave the same rating; ``alpha`` is
  Krippendorff's alpha at the ordinal level over the grades (:mod:`assay.judging.qrels`),
  judges × units, a judge who did not rate a unit counting as missing.
- Spans, over the judge pairs who both judged a unit (a rating, a span or a comment) and of
  whom at least one marked a span: the mean character-overlap F1, twice the characters both
  marked divided by the characters each marked, summed (each judge's spans merged first).
  Pairs where neither marked a span are left out: they agree on nothing marked, which says
  little. Citation mode has two kinds: ``spans`` on the document, ``report_spans`` on the
  sentence.

Rows: per mode over all its judges, and per judge pair over the units both judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean

from assay.gold.project_config import judging_ratings
from assay.judging.judgments import MODES, Judgment, Span, list_judgments
from assay.judging.qrels import grade_of, judge_label, rating_grades
from assay.metrics.agreement import krippendorff_alpha
from assay.metrics.rag_agreement import span_f1
from assay.records import Project
from assay.store.db import reading
from assay.store.workspace import Workspace

Units = list[dict[int, Judgment]]
"""Per unit, its judgments by judge id."""


@dataclass(frozen=True, slots=True)
class Agreement:
    units: int
    """Units rated by two or more of the judges compared."""
    pairs: int
    """Judge pairs compared on those units' ratings."""
    exact: float | None
    alpha: float | None
    span_pairs: int
    """Judge pairs compared on spans (at least one of the two marked a span)."""
    spans_f1: float | None
    report_span_pairs: int
    report_spans_f1: float | None
    """Citation mode: the spans on the sentence (None in the other modes)."""


@dataclass(frozen=True, slots=True)
class PairAgreement:
    first: str
    second: str
    measures: Agreement


@dataclass(frozen=True, slots=True)
class ModeAgreement:
    mode: str
    judges: tuple[str, ...]
    overall: Agreement
    pairs: tuple[PairAgreement, ...]


@dataclass(frozen=True, slots=True)
class JudgingAgreement:
    project: str
    modes: tuple[ModeAgreement, ...]


def _span_f1s(units: Units, spans_of: str) -> list[float]:
    found = []
    for judged in units:
        for a, b in combinations(judged.values(), 2):
            first: tuple[Span, ...] = getattr(a, spans_of)
            second: tuple[Span, ...] = getattr(b, spans_of)
            if first or second:
                found.append(
                    span_f1(
                        [("", s.start, s.end) for s in first],
                        [("", s.start, s.end) for s in second],
                    )
                )
    return found


def _agreement(units: Units, judge_ids: Sequence[int], project: Project, mode: str) -> Agreement:
    grades = rating_grades(project)
    rated = [
        {judge: g for judge, j in judged.items() if (g := grade_of(j, project, grades)) is not None}
        for judged in units
    ]
    rated = [r for r in rated if len(r) >= 2]
    same = [a == b for r in rated for a, b in combinations(r.values(), 2)]
    data = [[r.get(judge) for r in rated] for judge in judge_ids]
    alpha = krippendorff_alpha(data, "ordinal") if rated else None
    spans = _span_f1s(units, "spans")
    report_spans = _span_f1s(units, "report_spans") if mode == "citation" else []
    return Agreement(
        len(rated),
        len(same),
        fmean(same) if same else None,
        alpha,
        len(spans),
        fmean(spans) if spans else None,
        len(report_spans),
        fmean(report_spans) if report_spans else None,
    )


def _mode(project: Project, mode: str, judgments: list[Judgment]) -> ModeAgreement:
    not_rated = judging_ratings(project)[0]
    by_unit: dict[str, dict[int, Judgment]] = {}
    names: dict[int, str] = {}
    for judgment in judgments:
        if judgment.judged(not_rated):
            by_unit.setdefault(judgment.unit.key, {})[judgment.judge_id] = judgment
            names[judgment.judge_id] = judge_label(judgment)
    units = [judged for judged in by_unit.values() if len(judged) >= 2]
    judge_ids = sorted(names, key=lambda j: (names[j], j))
    pairs = []
    for a, b in combinations(judge_ids, 2):
        both = [{a: u[a], b: u[b]} for u in units if a in u and b in u]
        if both:
            pairs.append(PairAgreement(names[a], names[b], _agreement(both, (a, b), project, mode)))
    return ModeAgreement(
        mode,
        tuple(names[j] for j in judge_ids),
        _agreement(units, judge_ids, project, mode),
        tuple(pairs),
    )


def judging_agreement(ws: Workspace, project: Project) -> JudgingAgreement:
    """Agreement among the project's judges in each mode (see the module docstring)."""
    with reading(ws.engine, None) as conn:
        judgments = {mode: list_judgments(ws, project, mode=mode, conn=conn) for mode in MODES}
    return JudgingAgreement(
        project.name, tuple(_mode(project, mode, judgments[mode]) for mode in MODES)
    )
