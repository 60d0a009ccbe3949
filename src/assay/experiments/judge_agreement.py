"""Judge against human: how an experiment's LLM judge agrees with people on the same tasks.

The judge's labels are the values of the experiment's judge metrics per task and pipeline
(an imported experiment's judge metrics are its categorical metrics by ``algorithm``); a
task the judge failed on (value ``error``) is left out. People's labels come from:

- ``gold:answerable`` — the gold item says whether the question can be answered from the
  documents (``no`` for an unanswerable task, else ``yes``), one label per task;
- ``gold:relevant_context`` — whether the pipeline retrieved a passage the gold marks
  relevant (``yes``/``no``), per task and pipeline, for results with retrieved passages;
- ``judging:report`` — judged reports of the judging stage: the consensus rating of a
  report whose topic is the task (its id, item id or source id) and whose run is named like
  the pipeline;
- ``imported:<metric>`` — an imported (InspectorRAGet) experiment's human metrics: the
  label most of its annotators gave a result (a tie gives none).

The catalogue's LLM metrics (:mod:`assay.experiments.catalogue`) score in [0, 1]; for this
report a score of ``PASS`` or more reads as the label ``yes``, a lower one as ``no``.

Every judge metric is compared with every source whose labels share at least one label with
the judge's values (compared trimmed and case-folded), or with any source when a mapping of
human labels onto the judge's is given. The numbers come from
:func:`assay.metrics.judge_agreement.label_agreement`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from assay.errors import InvalidInput
from assay.experiments.imported import is_imported
from assay.experiments.judge import ERROR
from assay.experiments.results import TaskResult, iter_results
from assay.experiments.store import Experiment, experiment_tasks_of, get_experiment
from assay.experiments.tasks import Task
from assay.judging.judgments import list_judgments
from assay.judging.qrels import consensus, rating_grades
from assay.metrics.judge_agreement import LabelAgreement, label_agreement, normalise_label
from assay.records import Project
from assay.store.workspace import Workspace

Key = tuple[str, str]
"""(task_id, pipeline)."""
Labels = dict[Key, str]

EXAMPLES = 10
PASS = 0.5
"""An LLM metric's score from which it reads as ``yes`` against people's labels."""


def parse_mapping(pairs: Iterable[str]) -> dict[str, str]:
    """``HUMAN=JUDGE`` texts (the API's ``map``, the CLI's ``--map``) as a mapping."""
    found: dict[str, str] = {}
    for pair in pairs:
        human, sep, judge = pair.partition("=")
        if not sep or not human.strip() or not judge.strip():
            raise InvalidInput(f"map {pair!r}: write HUMAN_LABEL=JUDGE_LABEL, e.g. Perfect=yes")
        found[human.strip()] = judge.strip()
    return found


def judge_metrics(experiment: Experiment) -> dict[str, tuple[str, ...]]:
    """The experiment's judge metrics with their allowed values (normalised)."""
    found: dict[str, tuple[str, ...]] = {}
    for metric in experiment.metrics:
        if isinstance(metric, Mapping) and metric.get("kind") == "judge":
            values = [normalise_label(v) for v in metric.get("values") or []]
            found[str(metric["name"])] = tuple(v for v in values if v)
        if isinstance(metric, Mapping) and metric.get("kind") == "llm":
            found[str(metric["name"])] = ("yes", "no")
    if is_imported(experiment.selection):
        for metric in experiment.selection["imported"].get("metrics") or []:
            if metric.get("author") == "algorithm" and metric.get("type") == "categorical":
                values = [normalise_label(v.get("value")) for v in metric.get("values") or []]
                found[str(metric["name"])] = tuple(v for v in values if v)
    return found


def _judge_labels(results: Sequence[TaskResult], metric: str) -> Labels:
    labels: Labels = {}
    for result in results:
        value = result.metrics.get(metric)
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = "yes" if value >= PASS else "no"  # an LLM metric's score
        if result.error is None and value is not None and str(value) != ERROR:
            label = normalise_label(value)
            if label:
                labels[(result.task_id, result.pipeline)] = label
    return labels


def _majority(values: Iterable[Any]) -> str | None:
    counts = Counter(v for v in (normalise_label(x) for x in values) if v)
    if not counts:
        return None
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def imported_sources(experiment: Experiment, results: Sequence[TaskResult]) -> dict[str, Labels]:
    """Human metrics of an imported experiment, one label per result (the majority)."""
    if not is_imported(experiment.selection):
        return {}
    human = [
        str(m["name"])
        for m in experiment.selection["imported"].get("metrics") or []
        if m.get("author") == "human"
    ]
    sources: dict[str, Labels] = {}
    for metric in human:
        labels: Labels = {}
        for result in results:
            annotators = (result.details.get("scores") or {}).get(metric) or {}
            label = _majority(
                entry.get("value")
                for who, entry in annotators.items()
                if who != "system" and isinstance(entry, Mapping)
            )
            if label:
                labels[(result.task_id, result.pipeline)] = label
        if labels:
            sources[f"imported:{metric}"] = labels
    return sources


def gold_sources(tasks: Sequence[Task], results: Sequence[TaskResult]) -> dict[str, Labels]:
    """What the gold items' people said: answerable or not, and which passages are relevant."""
    by_id = {t.task_id: t for t in tasks}
    answerable: Labels = {}
    relevant: Labels = {}
    for result in results:
        task = by_id.get(result.task_id)
        if task is None or result.error is not None:
            continue
        key = (result.task_id, result.pipeline)
        answerable[key] = "no" if task.unanswerable else "yes"
        if result.retrieved:
            level = result.details.get("level", "chunk")
            field = "chunk_id" if level == "chunk" else "doc_id"
            gold = {i for group in _groups(task, level) for i in group}
            hit = any(entry.get(field) in gold for entry in result.retrieved)
            relevant[key] = "yes" if hit else "no"
    sources = {"gold:answerable": answerable}
    if relevant:
        sources["gold:relevant_context"] = relevant
    return sources


def _groups(task: Task, level: str) -> list[list[str]]:
    return task.chunk_groups() if level == "chunk" else task.doc_groups()


def judging_source(
    ws: Workspace, project: Project, tasks: Sequence[Task], results: Sequence[TaskResult]
) -> dict[str, Labels]:
    """Judged reports (topic × run) whose topic is a task and whose run is a pipeline."""
    judgments = list_judgments(ws, project, mode="report")
    if not judgments:
        return {}
    grades = rating_grades(project)
    names = {grade: rating for rating, grade in grades.items()}
    per_report: dict[tuple[str, str], list[int]] = {}
    for judgment in judgments:
        if judgment.rating in grades and judgment.unit.run_id is not None:
            key = (judgment.unit.topic_id, judgment.unit.run_id)
            per_report.setdefault(key, []).append(grades[judgment.rating])
    by_id = {t.task_id: t for t in tasks}
    labels: Labels = {}
    for result in results:
        task = by_id.get(result.task_id)
        if task is None:
            continue
        for topic in (task.task_id, task.item_id, *task.aliases):
            found = per_report.get((topic, result.pipeline))
            if found:
                labels[(result.task_id, result.pipeline)] = str(
                    normalise_label(names[consensus(found)])
                )
                break
    return {"judging:report": labels} if labels else {}


def _report(
    metric: str,
    values: tuple[str, ...],
    source: str,
    judge: Labels,
    human: Labels,
    mapping: Mapping[str, str],
    queries: Mapping[str, str],
) -> dict[str, Any]:
    keys = sorted(judge.keys() & human.keys())
    found: LabelAgreement = label_agreement(
        ((key, judge[key], human[key]) for key in keys), mapping=mapping, examples=EXAMPLES
    )
    data = asdict(found)
    data["accuracy"] = found.accuracy
    data["disagreements"] = [
        {
            "task_id": d.key[0],  # type: ignore[index]
            "pipeline": d.key[1],  # type: ignore[index]
            "query": queries.get(d.key[0], ""),  # type: ignore[index]
            "judge": d.judge,
            "human": d.human,
        }
        for d in found.disagreements
    ]
    return {
        "judge_metric": metric,
        "judge_values": list(values),
        "source": source,
        "judged": len(judge),
        "labelled": len(human),
        **data,
    }


def judge_agreement(
    ws: Workspace,
    project: Project,
    ref: int | str,
    *,
    mapping: Mapping[str, str] | None = None,
    pipeline: str | None = None,
    experiment: Experiment | None = None,
) -> dict[str, Any]:
    """Every judge metric of the experiment against every fitting human source (JSON);
    ``pipeline``: that pipeline's results only (else all of them)."""
    experiment = experiment or get_experiment(ws, project, ref, with_aggregates=False)
    wanted = {
        normalise_label(k) or "": normalise_label(v) or "" for k, v in (mapping or {}).items()
    }
    judges = judge_metrics(experiment)
    reports: list[dict[str, Any]] = []
    sources: dict[str, int] = {}
    if judges:
        results = list(iter_results(ws, project, experiment.id, pipeline))
        tasks = experiment_tasks_of(ws, experiment.id)
        queries = {t.task_id: t.query() for t in tasks}
        found = {
            **gold_sources(tasks, results),
            **judging_source(ws, project, tasks, results),
            **imported_sources(experiment, results),
        }
        sources = {name: len(labels) for name, labels in found.items()}
        for metric, values in judges.items():
            judge = _judge_labels(results, metric)
            for source, human in found.items():
                shown = {wanted.get(v, v) for v in human.values()}
                if not wanted and not shown & (set(values) or set(judge.values())):
                    continue
                reports.append(_report(metric, values, source, judge, human, wanted, queries))
    return {
        "experiment": experiment.id,
        "name": experiment.name,
        "pipeline": pipeline,
        "judge_metrics": list(judges),
        "sources": sources,
        "mapping": wanted,
        "reports": reports,
    }
