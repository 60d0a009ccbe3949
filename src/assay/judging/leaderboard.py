"""Runs ranked by what the judges said of their reports: one value a run, topic and measure,
and an ``all`` value a run and measure (the mean over the topics where the run has one).

Measures (grades and the consensus of several judges as in :mod:`assay.judging.qrels`):

- ``mean_rating``: report mode. The mean grade the report's judges gave it (default scale:
  Perfect 3 … Bad 0); no value while no judge has rated it.
- ``supported_sentences``: citation mode. Of the report's *settled* sentences, the share with
  a supporting citation. A citation (sentence × cited document) supports when its consensus
  grade is at least :data:`~assay.judging.qrels.RELEVANT` (default scale: at least So-so). A
  sentence is settled once one of its citations supports it, or once every one of its units
  is rated (a sentence without citations has one unit, with no document: rated, it counts as
  unsupported). Sentences still waiting for judgments are left out.
- ``citation_precision``: citation mode. Of the report's rated citations (units with a
  document), the share that support their sentence.

The TREC text is ``run measure topic value`` per line, tab separated, the topics' lines first
and then the ``all`` lines (the layout of autojudge's ``trec-leaderboard.txt``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from assay.errors import InvalidInput
from assay.judging.judgments import Unit, list_judgments
from assay.judging.qrels import RELEVANT, check_trec_id, consensus, rating_grades, unit_grades
from assay.judging.reports import Report, get_topic, list_reports
from assay.records import Project
from assay.store.db import reading
from assay.store.workspace import Workspace

MEASURES = ("mean_rating", "supported_sentences", "citation_precision")
ALL = "all"


@dataclass(frozen=True, slots=True)
class Scores:
    """One run's values for one topic (or ``all``); None where nothing was judged yet."""

    topic_id: str
    mean_rating: float | None
    supported_sentences: float | None
    citation_precision: float | None
    report_judges: int
    """The report's ratings (one a judge); in the ``all`` row, summed over the topics."""
    settled_sentences: int
    rated_citations: int

    def value(self, measure: str) -> float | None:
        value: float | None = getattr(self, measure)
        return value


@dataclass(frozen=True, slots=True)
class RunScores:
    run_id: str
    team_id: str
    all: Scores
    topics: tuple[Scores, ...]
    covered: int = 0
    """Of the run's topics, how many have a value of the measure ranked by: a run judged on
    fewer topics than it answered is ranked after the complete ones (its mean covers less)."""

    @property
    def complete(self) -> bool:
        return self.covered == len(self.topics)


@dataclass(frozen=True, slots=True)
class Leaderboard:
    project: str
    measures: tuple[str, ...]
    grades: dict[str, int]
    """The scale's ratings with their grades."""
    sort: str
    """The measure the runs are ranked by (their ``all`` value, highest first)."""
    runs: tuple[RunScores, ...]


def _report_scores(report: Report, ratings: list[int], citations: dict[str, int]) -> Scores:
    settled = supported = rated = supporting = 0
    for index, sentence in enumerate(report.sentences):
        cited: tuple[str | None, ...] = sentence.citations or (None,)
        grades = [
            citations.get(Unit.citation(report.topic_id, report.run_id, index, d).key)
            for d in cited
        ]
        cited_grades = [g for d, g in zip(cited, grades, strict=True) if d and g is not None]
        rated += len(cited_grades)
        helps = sum(g >= RELEVANT for g in cited_grades)
        supporting += helps
        if helps or all(g is not None for g in grades):
            settled += 1
            supported += bool(helps)
    return Scores(
        report.topic_id,
        fmean(ratings) if ratings else None,
        supported / settled if settled else None,
        supporting / rated if rated else None,
        len(ratings),
        settled,
        rated,
    )


def _overall(topics: Sequence[Scores]) -> Scores:
    def mean(measure: str) -> float | None:
        values = [v for t in topics if (v := t.value(measure)) is not None]
        return fmean(values) if values else None

    return Scores(
        ALL,
        mean("mean_rating"),
        mean("supported_sentences"),
        mean("citation_precision"),
        sum(t.report_judges for t in topics),
        sum(t.settled_sentences for t in topics),
        sum(t.rated_citations for t in topics),
    )


def leaderboard(
    ws: Workspace,
    project: Project,
    *,
    topic_ids: Sequence[str] = (),
    sort: str = "mean_rating",
) -> Leaderboard:
    """Every run of the project (of some topics when ``topic_ids`` are given), ranked by
    ``sort``'s ``all`` value, highest first: runs judged on all their topics first, then
    those judged on some (their mean covers less), then those without a value; ties by run
    id. ``covered`` says on how many topics each run has a value."""
    if sort not in MEASURES:
        raise InvalidInput(f"cannot sort by {sort!r}; choose one of: {', '.join(MEASURES)}")
    wanted = set(topic_ids)
    with reading(ws.engine, None) as conn:
        for topic_id in topic_ids:
            get_topic(ws, project, topic_id, conn=conn)  # an unknown topic is an error
        reports = [
            r for r in list_reports(ws, project, conn=conn) if not wanted or r.topic_id in wanted
        ]
        report_grades = unit_grades(list_judgments(ws, project, mode="report", conn=conn), project)
        citation_grades = unit_grades(
            list_judgments(ws, project, mode="citation", conn=conn), project
        )
    citations = {key: consensus([g for _, g in pairs]) for key, pairs in citation_grades.items()}
    by_run: dict[str, list[Scores]] = {}
    teams: dict[str, str] = {}
    for report in reports:
        ratings = [
            g for _, g in report_grades.get(Unit.report(report.topic_id, report.run_id).key, [])
        ]
        by_run.setdefault(report.run_id, []).append(_report_scores(report, ratings, citations))
        teams.setdefault(report.run_id, report.team_id)
    runs = [
        RunScores(
            run,
            teams[run],
            _overall(topics),
            tuple(topics),
            sum(t.value(sort) is not None for t in topics),
        )
        for run, topics in by_run.items()
    ]
    return Leaderboard(project.name, MEASURES, rating_grades(project), sort, ranked(runs, sort))


def ranked(runs: Sequence[RunScores], sort: str) -> tuple[RunScores, ...]:
    """Highest ``all`` value of ``sort`` first: runs judged on all their topics, then those
    judged on some, then those without a value; ties by run id."""

    def rank(run: RunScores) -> tuple[bool, bool, float, str]:
        value = run.all.value(sort)
        return (value is None, not run.complete, -(value or 0.0), run.run_id)

    return tuple(sorted(runs, key=rank))


def trec_leaderboard(board: Leaderboard) -> str:
    """``run measure topic value`` lines (see the module docstring); measures without a
    value are left out."""
    lines: list[str] = []
    for part in ("topics", ALL):
        for run in board.runs:
            check_trec_id(run.run_id, "run id")
            shown = run.topics if part == "topics" else (run.all,)
            for scores in shown:
                check_trec_id(scores.topic_id, "topic id")
                for measure in board.measures:
                    value = scores.value(measure)
                    if value is not None:
                        lines.append(f"{run.run_id}\t{measure}\t{scores.topic_id}\t{value:.4f}\n")
    return "".join(lines)
