"""What the experiment pages show: background runs, comparison columns, plot data, diffs.

Kept apart from the routes so the routes stay thin. :class:`ExperimentJobs` is the one piece
of process state: ``create_app`` makes one and keeps it on ``app.state`` (nothing at import).
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from assay.corpus.documents import get_document
from assay.errors import NotFound
from assay.experiments import (
    Experiment,
    get_experiment,
    iter_results,
    run_experiment,
    task_results,
)
from assay.experiments.imported import annotator_scores
from assay.experiments.store import experiment_tasks_of
from assay.experiments.tasks import Task
from assay.records import Project
from assay.store.workspace import Workspace


class ExperimentJobs:
    """Experiment runs in threads of this server process, one per experiment at most."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: dict[int, threading.Thread] = {}
        self._stops: dict[int, threading.Event] = {}
        self._errors: dict[int, str] = {}

    def alive(self, experiment_id: int) -> bool:
        with self._lock:
            thread = self._threads.get(experiment_id)
            return thread is not None and thread.is_alive()

    def start(self, ws: Workspace, project: Project, experiment_id: int) -> bool:
        """Run (or resume) in a new thread; False when a run of it is already going."""
        with self._lock:
            thread = self._threads.get(experiment_id)
            if thread is not None and thread.is_alive():
                return False
            stop = threading.Event()
            thread = threading.Thread(
                target=self._run,
                args=(ws, project, experiment_id, stop),
                name=f"experiment-{experiment_id}",
                daemon=True,
            )
            self._threads[experiment_id] = thread
            self._stops[experiment_id] = stop
            self._errors.pop(experiment_id, None)
        thread.start()
        return True

    def _run(
        self, ws: Workspace, project: Project, experiment_id: int, stop: threading.Event
    ) -> None:
        try:
            run_experiment(ws, project, experiment_id, should_stop=stop.is_set)
        except Exception as exc:  # stored as the experiment's message by run_experiment
            with self._lock:
                self._errors[experiment_id] = f"{exc.__class__.__name__}: {exc}"

    def stop(self, experiment_id: int) -> None:
        with self._lock:
            event = self._stops.get(experiment_id)
        if event is not None:
            event.set()

    def join(self, experiment_id: int, timeout: float | None = None) -> None:
        with self._lock:
            thread = self._threads.get(experiment_id)
        if thread is not None:
            thread.join(timeout)


def progress_json(experiment: Experiment, running: bool) -> dict[str, Any]:
    """The state a progress bar needs."""
    total = experiment.total
    finished = experiment.done_count + experiment.error_count
    return {
        "id": experiment.id,
        "name": experiment.name,
        "status": experiment.status,
        "running": running,
        "done": experiment.done_count,
        "errors": experiment.error_count,
        "total": total,
        "percent": round(100 * finished / total, 1) if total else 100.0,
        "message": experiment.message,
    }


@dataclass(frozen=True, slots=True)
class Column:
    """One pipeline of one experiment: a column of the comparison."""

    experiment: Experiment
    pipeline: str
    label: str
    summary: dict[str, Any]


def columns(experiments: Sequence[Experiment]) -> list[Column]:
    several = len(experiments) > 1
    return [
        Column(
            e,
            str(p["name"]),
            f"{e.name} / {p['name']}" if several else str(p["name"]),
            e.aggregates.get(str(p["name"]), {}),
        )
        for e in experiments
        for p in e.pipelines
    ]


def load_comparison(
    ws: Workspace, project: Project, ref: str, others: Sequence[str]
) -> list[Experiment]:
    """The experiment and the others to put beside it (each once)."""
    main = get_experiment(ws, project, ref)
    chosen = [main]
    for other in others:
        if not other.strip():
            continue
        found = get_experiment(ws, project, other.strip())
        if all(found.id != e.id for e in chosen):
            chosen.append(found)
    return chosen


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def per_task_values(
    ws: Workspace, project: Project, experiment: Experiment
) -> dict[str, dict[str, list[float]]]:
    """``{pipeline: {metric: [values]}}`` over the experiment's successful results."""
    values: dict[str, dict[str, list[float]]] = {
        str(p["name"]): {m: [] for m in experiment.metric_names} for p in experiment.pipelines
    }
    for result in iter_results(ws, project, experiment.id):
        if result.error is not None:
            continue
        bucket = values.setdefault(result.pipeline, {m: [] for m in experiment.metric_names})
        for metric in experiment.metric_names:
            number = _number(result.metrics.get(metric))
            if number is not None:
                bucket.setdefault(metric, []).append(number)
    return values


def histogram(values: Sequence[float], bins: int = 10) -> dict[str, Any]:
    """Counts in ``bins`` equal bins; metrics in [0, 1] share that fixed range so columns
    can be compared by eye. Also the five numbers of a box plot."""
    if not values:
        return {"lo": 0.0, "hi": 1.0, "counts": [0] * bins, "peak": 0, "box": None, "n": 0}
    lo, hi = min(values), max(values)
    if lo >= 0.0 and hi <= 1.0:
        lo, hi = 0.0, 1.0
    elif hi == lo:
        hi = lo + 1.0
    counts = [0] * bins
    for value in values:
        index = min(bins - 1, int((value - lo) / (hi - lo) * bins))
        counts[index] += 1
    ordered = sorted(values)

    def quantile(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    box = [ordered[0], quantile(0.25), quantile(0.5), quantile(0.75), ordered[-1]]
    return {"lo": lo, "hi": hi, "counts": counts, "peak": max(counts), "box": box, "n": len(values)}


def plots(
    ws: Workspace, project: Project, experiments: Sequence[Experiment], cols: Sequence[Column]
) -> dict[str, Any]:
    """Plot data: a histogram per metric and column, and means per query type."""
    values = {e.id: per_task_values(ws, project, e) for e in experiments}
    metrics = metric_union(experiments)
    distributions = {
        metric: [
            {
                "label": c.label,
                **histogram(values[c.experiment.id].get(c.pipeline, {}).get(metric, [])),
            }
            for c in cols
        ]
        for metric in metrics
    }
    types = sorted({t for c in cols for t in c.summary.get("by_query_type", {})})
    by_type: dict[str, list[dict[str, Any]]] = {}
    for metric in metrics:
        groups = []
        for query_type in types:
            bars = []
            for c in cols:
                part = c.summary.get("by_query_type", {}).get(query_type, {}).get(metric, {})
                bars.append({"label": c.label, "mean": part.get("mean")})
            groups.append({"query_type": query_type, "bars": bars})
        by_type[metric] = groups
    return {"metrics": metrics, "distributions": distributions, "by_query_type": by_type}


def metric_union(experiments: Sequence[Experiment]) -> list[str]:
    names: list[str] = []
    for experiment in experiments:
        names.extend(m for m in experiment.metric_names if m not in names)
    return names


WORD = re.compile(r"\S+")


def word_diff(answer: str, reference: str) -> list[tuple[str, str]]:
    """``(op, words)`` pieces turning the reference into the answer: ``equal``, ``delete``
    (only in the reference) and ``insert`` (only in the answer)."""
    ours, theirs = WORD.findall(answer), WORD.findall(reference)
    matcher = difflib.SequenceMatcher(a=theirs, b=ours, autojunk=False)
    pieces: list[tuple[str, str]] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            pieces.append(("equal", " ".join(theirs[a0:a1])))
            continue
        if a1 > a0:
            pieces.append(("delete", " ".join(theirs[a0:a1])))
        if b1 > b0:
            pieces.append(("insert", " ".join(ours[b0:b1])))
    return pieces


def task_rows(
    ws: Workspace, project: Project, experiment: Experiment, offset: int, limit: int
) -> tuple[int, list[dict[str, Any]]]:
    """One page of tasks with each pipeline's metrics (or error)."""
    tasks = experiment_tasks_of(ws, experiment.id)
    page = tasks[offset : offset + limit]
    wanted = {t.task_id for t in page}
    results: dict[str, dict[str, Any]] = {t.task_id: {} for t in page}
    for result in iter_results(ws, project, experiment.id):
        if result.task_id in wanted:
            results[result.task_id][result.pipeline] = (
                {"error": result.error} if result.error else result.metrics
            )
    rows = [
        {
            "task_id": t.task_id,
            "item_id": t.item_id,
            "query": t.query(),
            "query_type": t.query_type,
            "results": results[t.task_id],
        }
        for t in page
    ]
    return len(tasks), rows


def task_json(task: Task) -> dict[str, Any]:
    return {
        "task_id": task.task_id,
        "item_id": task.item_id,
        "turn": task.turn,
        "query": task.query(),
        "turns": list(task.turns),
        "query_type": task.query_type,
        "answer": task.answer,
        "alternatives": list(task.alternatives),
        "unanswerable": task.unanswerable,
        "evidence": [
            {
                "doc_id": e.doc_id,
                "start": e.start,
                "end": e.end,
                "text": e.text,
                "label": e.label,
                "grade": e.grade,
                "group": e.group,
                "chunk_ids": list(e.chunk_ids),
            }
            for e in task.evidence
        ],
    }


RESULT_FIELDS = ("experiment", "pipeline", "task_id", "item_id", "query_type", "error")


def results_rows(
    ws: Workspace, project: Project, experiment: Experiment
) -> Iterator[dict[str, Any]]:
    """Every result as a flat record (tasks joined in for item id and query type)."""
    tasks = {t.task_id: t for t in experiment_tasks_of(ws, experiment.id)}
    for result in iter_results(ws, project, experiment.id):
        task = tasks.get(result.task_id)
        yield {
            "experiment": experiment.name,
            "pipeline": result.pipeline,
            "task_id": result.task_id,
            "item_id": task.item_id if task else "",
            "query_type": task.query_type if task else "",
            "query": task.query() if task else "",
            "answer": result.answer,
            "retrieved": [r.get("chunk_id") for r in result.retrieved],
            "metrics": result.metrics,
            "timings": result.timings,
            "error": result.error,
        }


def _cell(value: Any) -> str:
    """A CSV cell that no spreadsheet runs as a formula."""
    if isinstance(value, int | float):
        return str(value)
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def results_csv(ws: Workspace, project: Project, experiment: Experiment) -> Iterator[str]:
    """The results as CSV, one row per task and pipeline, one column per metric."""
    metrics = experiment.metric_names
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([*RESULT_FIELDS, "query", "answer", "retrieved", *metrics])
    yield buffer.getvalue()
    for row in results_rows(ws, project, experiment):
        buffer.seek(0)
        buffer.truncate()
        cells = [row[f] for f in RESULT_FIELDS]
        cells += [row["query"], row["answer"], " ".join(str(c) for c in row["retrieved"])]
        cells += [_metric_cell(row["metrics"].get(m)) for m in metrics]
        writer.writerow([_cell(c) for c in cells])
        yield buffer.getvalue()


def _metric_cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict | list) else value


def drill_down(ws: Workspace, project: Project, ref: str, task_id: str) -> dict[str, Any]:
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    task, results = task_results(ws, project, experiment.id, task_id)
    gold = {c for e in task.evidence if e.label == "relevant" for c in e.chunk_ids}
    names: dict[str, str] = {}
    texts: dict[str, str] = {}

    def passage(doc_id: str, start: Any, end: Any) -> str:
        if doc_id not in texts:
            try:
                document = get_document(ws, project, doc_id)
                texts[doc_id], names[doc_id] = document.text, document.name
            except NotFound:
                texts[doc_id], names[doc_id] = "", doc_id
        if isinstance(start, int) and isinstance(end, int):
            return texts[doc_id][start:end]
        return ""

    pipelines = []
    for spec in experiment.pipelines:
        result = results.get(str(spec["name"]))
        entry: dict[str, Any] = {"pipeline": spec["name"], "ran": result is not None}
        if result is not None:
            retrieved = []
            for hit in result.retrieved:
                doc_id = str(hit.get("doc_id") or "")
                text = passage(doc_id, hit.get("start"), hit.get("end")) if doc_id else ""
                retrieved.append(
                    {
                        **hit,
                        "text": text,
                        "document": names.get(doc_id, doc_id),
                        "hit": hit.get("chunk_id") in gold,
                    }
                )
            reference = task.references[0] if task.references else ""
            entry.update(
                answer=result.answer,
                error=result.error,
                metrics=result.metrics,
                timings=result.timings,
                retrieved=retrieved,
                diff=[{"op": op, "text": text} for op, text in word_diff(result.answer, reference)]
                if result.answer and reference
                else [],
                annotators=annotator_scores(result.details),
            )
        pipelines.append(entry)
    evidence = task_json(task)["evidence"]
    for ev in evidence:
        if ev["doc_id"]:
            passage(ev["doc_id"], None, None)
            ev["document"] = names.get(ev["doc_id"], ev["doc_id"])
    return {
        "experiment": {"id": experiment.id, "name": experiment.name, "mode": experiment.mode},
        "task": {**task_json(task), "evidence": evidence},
        "gold_chunk_ids": sorted(gold),
        "pipelines": pipelines,
    }
