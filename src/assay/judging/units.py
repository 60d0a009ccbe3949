"""The units a judging mode asks judges to judge, and how far they got.

- report mode: one unit per report (topic × run);
- document mode: one per document of a topic (the union over its runs);
- citation mode: one per sentence × cited document of each report, and one (no document)
  for a sentence without citations.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import sqlalchemy as sa

from assay.gold.project_config import judging_ratings
from assay.judging.judgments import Unit, list_judgments
from assay.judging.reports import Report, list_reports, list_topics, topic_doc_ids
from assay.records import Project
from assay.store.db import reading
from assay.store.workspace import Workspace


@dataclass(frozen=True, slots=True)
class UnitState:
    unit: Unit
    judged_by_me: bool
    """Judged by the judge asked about (by anyone when no judge was named)."""
    judges: int
    """How many judges have judged it."""


@dataclass(frozen=True, slots=True)
class Progress:
    topic_id: str
    run_id: str | None
    """None for document mode, whose units belong to a topic, not a run."""
    judged: int
    total: int


def report_units(mode: str, report: Report) -> list[Unit]:
    """A report's units in report or citation mode."""
    if mode == "report":
        return [Unit.report(report.topic_id, report.run_id)]
    units = []
    for index, sentence in enumerate(report.sentences):
        cited: tuple[str | None, ...] = sentence.citations or (None,)
        units += [Unit.citation(report.topic_id, report.run_id, index, d) for d in cited]
    return units


def topic_units(
    ws: Workspace,
    project: Project,
    topic_id: str,
    mode: str,
    *,
    conn: sa.Connection | None = None,
) -> list[Unit]:
    if mode == "document":
        return [Unit.document(topic_id, d) for d in topic_doc_ids(ws, project, topic_id, conn=conn)]
    reports = list_reports(ws, project, topic_id=topic_id, conn=conn)
    return [unit for report in reports for unit in report_units(mode, report)]


def judged_counts(
    ws: Workspace,
    project: Project,
    mode: str,
    *,
    topic_id: str | None = None,
    conn: sa.Connection | None = None,
) -> tuple[Counter[str], dict[int, set[str]]]:
    """Per unit key, how many judges judged it; and per judge, the unit keys they judged."""
    not_rated = judging_ratings(project)[0]
    judges: Counter[str] = Counter()
    by_judge: dict[int, set[str]] = {}
    for judgment in list_judgments(ws, project, mode=mode, topic_id=topic_id, conn=conn):
        if judgment.judged(not_rated):
            judges[judgment.unit.key] += 1
            by_judge.setdefault(judgment.judge_id, set()).add(judgment.unit.key)
    return judges, by_judge


def unit_states(
    ws: Workspace,
    project: Project,
    topic_id: str,
    mode: str,
    *,
    judge_id: int | None = None,
    unjudged_first: bool = False,
) -> list[UnitState]:
    """A topic's units in a mode, each with whether it is judged (by ``judge_id``)."""
    with reading(ws.engine, None) as conn:
        units = topic_units(ws, project, topic_id, mode, conn=conn)
        judges, by_judge = judged_counts(ws, project, mode, topic_id=topic_id, conn=conn)
    mine = by_judge.get(judge_id, set()) if judge_id is not None else set(judges)
    states = [UnitState(u, u.key in mine, judges[u.key]) for u in units]
    if unjudged_first:
        states.sort(key=lambda s: s.judged_by_me)  # stable: the order within each part stays
    return states


def progress(
    ws: Workspace, project: Project, mode: str, *, judge_id: int | None = None
) -> list[Progress]:
    """ "N of M judged" per topic and run (per topic in document mode), by one judge or by
    anyone."""
    rows: list[Progress] = []
    with reading(ws.engine, None) as conn:
        judges, by_judge = judged_counts(ws, project, mode, conn=conn)
        done = by_judge.get(judge_id, set()) if judge_id is not None else set(judges)
        for topic in list_topics(ws, project, conn=conn):
            if mode == "document":
                units = topic_units(ws, project, topic.topic_id, mode, conn=conn)
                judged = sum(u.key in done for u in units)
                rows.append(Progress(topic.topic_id, None, judged, len(units)))
                continue
            for report in list_reports(ws, project, topic_id=topic.topic_id, conn=conn):
                units = report_units(mode, report)
                judged = sum(u.key in done for u in units)
                rows.append(Progress(topic.topic_id, report.run_id, judged, len(units)))
    return rows
