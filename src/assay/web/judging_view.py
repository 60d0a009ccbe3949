"""What the judging pages show: progress per mode, and a topic's units with their texts and
the judge's own judgments, as the data the workbench script reads.

The pages say "reports", "documents" and "citations" (autojudge-annotate's mode names);
the store says "report", "document" and "citation". Offsets in the data are code points, as
Python counts them; ``static/judging.js`` converts when it reads a selection.
"""

from __future__ import annotations

from typing import Any

from assay.errors import InvalidInput, NotFound
from assay.gold.project_config import judging_ratings
from assay.judging.assignments import list_assignments
from assay.judging.judgments import Judgment, Unit, list_judgments
from assay.judging.reports import Report, get_documents, get_topic, list_reports, list_topics
from assay.judging.units import progress, unit_states
from assay.records import Project
from assay.store.workspace import Workspace
from assay.web.i18n import Translator

PAGE_MODES = {"reports": "report", "documents": "document", "citations": "citation"}
"""The workbench's modes by their name in addresses, and the judgment mode each judges."""


def stored_mode(page_mode: str) -> str:
    if page_mode not in PAGE_MODES:
        raise NotFound(f"no judging mode {page_mode!r}; choose one of: {', '.join(PAGE_MODES)}")
    return PAGE_MODES[page_mode]


def judgment_json(judgment: Judgment) -> dict[str, Any]:
    """One judgment as the workbench and the JSON API show it."""
    unit = judgment.unit
    return {
        "mode": unit.mode,
        "topic_id": unit.topic_id,
        "run_id": unit.run_id,
        "doc_id": unit.doc_id,
        "sentence_idx": unit.sentence_idx,
        "judge": judgment.judge,
        "rating": judgment.rating,
        "comment": judgment.comment,
        "spans": [s.as_json() for s in judgment.spans],
        "report_spans": [s.as_json() for s in judgment.report_spans],
        "version": judgment.version,
        "updated_at": judgment.updated_at.isoformat(),
    }


def rating_labels(project: Project, t: Translator) -> list[dict[str, str]]:
    """The project's scale, each value with its label in the page's language (the default
    values are translated; a project's own values are shown as they are)."""
    labels = []
    for value in judging_ratings(project):
        key = f"judging.rating.{value}"
        labels.append({"value": value, "label": t(key) if key in t.fallback else value})
    return labels


def overview(
    ws: Workspace, project: Project, judge_id: int, *, every_judge: bool = False
) -> dict[str, Any]:
    """Per mode, the judge's progress per topic, and per run within it (reports and
    citations): what the overview page lists. The topics a lead gave this judge come first,
    marked ``assigned``; ``judges`` names everyone a topic was given to. ``every_judge`` (for
    those who hand out topics): per mode, each judge's progress too (``by_judge``)."""
    titles = {topic.topic_id: topic.title for topic in list_topics(ws, project)}
    given: dict[tuple[str, str], list[str]] = {}
    mine: set[tuple[str, str]] = set()
    for assignment in list_assignments(ws, project):
        given.setdefault((assignment.mode, assignment.topic_id), []).append(assignment.judge)
        if assignment.judge_id == judge_id:
            mine.add((assignment.mode, assignment.topic_id))
    modes: dict[str, Any] = {}
    for page_mode, mode in PAGE_MODES.items():
        topics: dict[str, dict[str, Any]] = {}
        for row in progress(ws, project, mode, judge_id=judge_id):
            topic = topics.setdefault(
                row.topic_id,
                {
                    "topic_id": row.topic_id,
                    "title": titles.get(row.topic_id, ""),
                    "runs": [],
                    "assigned": (mode, row.topic_id) in mine,
                    "judges": given.get((mode, row.topic_id), []),
                },
            )
            topic["runs"].append({"run_id": row.run_id, "judged": row.judged, "total": row.total})
        for topic in topics.values():
            topic["judged"] = sum(run["judged"] for run in topic["runs"])
            topic["total"] = sum(run["total"] for run in topic["runs"])
        listed = sorted(topics.values(), key=lambda topic: not topic["assigned"])  # stable
        modes[page_mode] = {
            "topics": listed,
            "judged": sum(topic["judged"] for topic in listed),
            "total": sum(topic["total"] for topic in listed),
            "assigned": sum(topic["assigned"] for topic in listed),
        }
        if every_judge:
            modes[page_mode]["by_judge"] = _judges(ws, project, mode)
    return {"topics": len(titles), "modes": modes}


def _judges(ws: Workspace, project: Project, mode: str) -> list[dict[str, Any]]:
    """Each judge of the mode with how many units they judged (autojudge-annotate's rule),
    most first: a lead sees everyone's work, not only their own."""
    not_rated = judging_ratings(project)[0]
    judged: dict[str, set[str]] = {}
    for judgment in list_judgments(ws, project, mode=mode):
        units = judged.setdefault(judgment.judge, set())
        if judgment.judged(not_rated):
            units.add(judgment.unit.key)
    counts = [{"judge": name, "judged": len(units)} for name, units in judged.items()]
    return sorted(counts, key=lambda row: (-row["judged"], row["judge"]))


def _unit_json(unit: Unit, judged: bool, judges: int, mine: Judgment | None) -> dict[str, Any]:
    return {
        "key": unit.key,
        "topic_id": unit.topic_id,
        "run_id": unit.run_id,
        "doc_id": unit.doc_id,
        "sentence_idx": unit.sentence_idx,
        "judged": judged,
        "judges": judges,
        "judgment": judgment_json(mine) if mine else None,
    }


def _report_json(report: Report) -> dict[str, Any]:
    return {
        "run_id": report.run_id,
        "team_id": report.team_id,
        "sentences": [{"text": s.text, "citations": list(s.citations)} for s in report.sentences],
        "starts": report.starts,
    }


def workbench(
    ws: Workspace,
    project: Project,
    page_mode: str,
    topic_id: str,
    *,
    judge_id: int,
    run_id: str | None = None,
    unjudged_first: bool = False,
) -> dict[str, Any]:
    """A topic's units in one mode (of one run, when named), each with the judge's own
    judgment, the reports and documents they point into, and the topic."""
    mode = stored_mode(page_mode)
    topic = get_topic(ws, project, topic_id)
    states = unit_states(
        ws, project, topic_id, mode, judge_id=judge_id, unjudged_first=unjudged_first
    )
    if run_id is not None and mode != "document":
        states = [s for s in states if s.unit.run_id == run_id]
        if not states:
            raise InvalidInput(f"topic {topic_id!r} has no report of run {run_id!r} to judge")
    mine = {
        j.unit.key: j
        for j in list_judgments(ws, project, mode=mode, topic_id=topic_id, judge_id=judge_id)
    }
    reports = {}
    if mode != "document":
        runs = {s.unit.run_id for s in states}
        reports = {
            r.run_id: _report_json(r)
            for r in list_reports(ws, project, topic_id=topic_id)
            if r.run_id in runs
        }
    judged_ids = {s.unit.doc_id for s in states if s.unit.doc_id}
    cited = [d for report in reports.values() for s in report["sentences"] for d in s["citations"]]
    held = get_documents(ws, project, [*judged_ids, *cited])
    # the judged documents and those the reports cite: a citation chip opens its text
    documents = {
        doc.doc_id: {"title": doc.title, "url": doc.url, "text": doc.text} for doc in held.values()
    }
    return {
        "mode": mode,
        "page_mode": page_mode,
        "topic": {
            "topic_id": topic.topic_id,
            "title": topic.title,
            "problem_statement": topic.problem_statement,
            "background": topic.background,
        },
        "run_id": run_id,
        "units": [
            _unit_json(s.unit, s.judged_by_me, s.judges, mine.get(s.unit.key)) for s in states
        ],
        "reports": reports,
        "documents": documents,
        "titles": {doc.doc_id: doc.title or doc.doc_id for doc in held.values()},
    }
