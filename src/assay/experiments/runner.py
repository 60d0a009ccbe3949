"""Running experiments: task by task, each result in its own short transaction.

``run_experiment`` runs every task through every pipeline that has no good result yet, so
calling it again resumes a cancelled or killed run: stored results are kept, results that
ended in an error are tried again. Between tasks it checks ``should_stop`` and the stop flag
``cancel_experiment`` sets in the database (so a run in another process can be stopped).
``evaluate_tasks`` does the same work in memory, for ``assay eval``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from assay.corpus.chunkings import get_chunking
from assay.errors import AssayError, BackendUnavailable
from assay.experiments.imported import refuse_run
from assay.experiments.judge import JudgeMetric, Verdict, judge, make_judge
from assay.experiments.pipelines import PipelineRunner, PipelineSpec, outcome_level
from assay.experiments.scoring import Embed, MetricPlan, Outcome, aggregate, metric_plan, score_task
from assay.experiments.store import (
    Experiment,
    experiment_tasks_of,
    find_experiment,
    get_experiment,
    pipeline_specs,
)
from assay.experiments.tasks import Task
from assay.llm.endpoints import outgoing_policy
from assay.llm.records import Generator
from assay.records import Project
from assay.search.embeddings import workspace_embedder
from assay.store.db import utcnow
from assay.store.schema import experiment_results, experiments
from assay.store.workspace import Workspace

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)``; ``done`` counts task × pipeline units."""


@dataclass(frozen=True, slots=True)
class Scored:
    task: Task
    pipeline: str
    outcome: Outcome
    metrics: dict[str, Any]
    details: dict[str, Any]


class Unavailable:
    """A pipeline whose backend is missing (an extra that is not installed, say dense
    retrieval without ``embeddings``): each of its tasks fails with the reason while the
    other pipelines of the experiment run."""

    def __init__(self, spec: PipelineSpec, reason: str) -> None:
        self.spec = spec
        self.reason = f"pipeline {spec.name!r} cannot run: {reason}"

    def answer(self, task: Task) -> Outcome:
        return Outcome(error=self.reason)

    def close(self) -> None:
        pass


class Scorer:
    """Metrics of one outcome, judges included; judges and the embedder are made once."""

    def __init__(self, ws: Workspace, plan: MetricPlan, embedder: str = "minilm") -> None:
        self.plan = plan
        policy = outgoing_policy(ws) if plan.judges else None
        self.judges: list[tuple[JudgeMetric, Generator]] = [
            (metric, make_judge(metric, policy)) for metric in plan.judges
        ]
        self.embed: Embed | None = None
        if any(m.spec.name == "semantic_similarity" for m in plan.metrics):
            self.embed = workspace_embedder(ws, embedder).embed

    def score(self, task: Task, outcome: Outcome) -> tuple[Outcome, dict[str, Any], dict[str, Any]]:
        """The metrics and details of an outcome; a metric that fails turns the outcome
        into an error for this task (the run goes on)."""
        if outcome.error:
            return outcome, {}, {}
        try:
            metrics, details = self._score(task, outcome)
        except AssayError as exc:
            return dataclasses.replace(outcome, error=f"scoring failed: {exc}"), {}, {}
        return outcome, metrics, details

    def _score(self, task: Task, outcome: Outcome) -> tuple[dict[str, Any], dict[str, Any]]:
        level = outcome_level(outcome)
        verdicts: dict[str, Verdict] = {}
        judged: dict[str, Any] = {}
        for metric, generator in self.judges:
            verdict = judge(generator, metric, task, outcome.answer, outcome.contexts)
            verdicts[metric.name] = verdict
            judged[metric.name] = {"reply": verdict.reply, "error": verdict.error}
            if verdict.usage:
                judged[metric.name]["usage"] = {"model": metric.generator.model, **verdict.usage}
        metrics = score_task(
            self.plan, task, outcome, level=level, embed=self.embed, verdicts=verdicts
        )
        details: dict[str, Any] = {"level": level}
        if judged:
            details["judges"] = judged
        return metrics, details


def _stored_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A retrieved entry as stored: a passage placed in a document without its text (the
    document holds it), one outside the corpus (no offsets) with it, as its only copy."""
    if entry.get("start") is None:
        return dict(entry)
    return {k: v for k, v in entry.items() if k != "text"}


def _store(conn: sa.Connection, experiment_id: int, scored: Scored) -> int:
    """Write one result (replacing a failed one); returns how many rows it replaced."""
    outcome = scored.outcome
    key = (
        (experiment_results.c.experiment_id == experiment_id)
        & (experiment_results.c.pipeline == scored.pipeline)
        & (experiment_results.c.task_id == scored.task.task_id)
    )
    replaced = conn.execute(experiment_results.delete().where(key)).rowcount
    conn.execute(
        experiment_results.insert().values(
            experiment_id=experiment_id,
            pipeline=scored.pipeline,
            task_id=scored.task.task_id,
            retrieved=[_stored_entry(e) for e in outcome.retrieved],
            answer=outcome.answer,
            contexts=list(outcome.contexts),
            timings=outcome.timings,
            metrics=scored.metrics,
            details={**outcome.details, **scored.details},
            error=outcome.error,
            created_at=utcnow(),
        )
    )
    return int(replaced or 0)


def _counts(conn: sa.Connection, experiment_id: int) -> dict[str, int]:
    done, failed = conn.execute(
        sa.select(
            sa.func.count().filter(experiment_results.c.error.is_(None)),
            sa.func.count().filter(experiment_results.c.error.is_not(None)),
        ).where(experiment_results.c.experiment_id == experiment_id)
    ).one()
    return {"done_count": int(done or 0), "error_count": int(failed or 0)}


def _set(conn: sa.Connection, experiment_id: int, **values: Any) -> None:
    conn.execute(
        experiments.update()
        .where(experiments.c.id == experiment_id)
        .values(**values, **_counts(conn, experiment_id), updated_at=utcnow())
    )


def _stop_requested(conn: sa.Connection, experiment_id: int) -> bool:
    return bool(
        conn.scalar(
            sa.select(experiments.c.stop_requested).where(experiments.c.id == experiment_id)
        )
    )


def _record(conn: sa.Connection, experiment_id: int, scored: Scored) -> None:
    """Store one result and move the experiment's counts with it (pages watch the run)."""
    replaced = _store(conn, experiment_id, scored)  # only failed results are re-run
    failed = 1 if scored.outcome.error else 0
    conn.execute(
        experiments.update()
        .where(experiments.c.id == experiment_id)
        .values(
            done_count=experiments.c.done_count + (1 - failed),
            error_count=experiments.c.error_count + failed - replaced,
            updated_at=utcnow(),
        )
    )


def run_experiment(
    ws: Workspace,
    project: Project,
    experiment_id: int | str,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Experiment:
    """Run (or resume) an experiment; returns it with its aggregates. A pipeline that cannot
    start (a missing file, bad settings) fails the experiment with a message; a task that
    fails is stored with its error and the run goes on.

    A run takes minutes, so it never holds one write transaction for all of it (SQLite has
    one write lock, and pages must see the progress): it is the entry point of its own short
    transactions and takes no ``conn``. One marks the experiment running, then each task
    through each pipeline is stored and committed on its own (so an interrupted run keeps
    every finished task), and one more records how the run ended."""
    with ws.engine.begin() as conn:  # the start: read what is done, mark it running
        row = find_experiment(conn, project, experiment_id)
        refuse_run(row.name, row.selection)
        good = {
            (r.pipeline, r.task_id)
            for r in conn.execute(
                sa.select(experiment_results.c.pipeline, experiment_results.c.task_id).where(
                    experiment_results.c.experiment_id == row.id,
                    experiment_results.c.error.is_(None),
                )
            )
        }
        experiment = get_experiment(ws, project, row.id, with_aggregates=False, conn=conn)
        tasks = experiment_tasks_of(ws, row.id, conn=conn)
        _set(
            conn,
            row.id,
            status="running",
            stop_requested=False,
            message="",
            started_at=experiment.started_at or utcnow(),
            finished_at=None,
        )

    def finish(**values: Any) -> None:
        with ws.engine.begin() as conn:
            _set(conn, row.id, **values)

    total = len(tasks) * len(experiment.pipelines)
    runners: list[PipelineRunner | Unavailable] = []
    try:
        plan = metric_plan(experiment.metrics, experiment.mode)
        chunking = get_chunking(ws, project, experiment.selection.get("chunking"))
        scorer = Scorer(ws, plan, experiment.selection.get("embedder", "minilm"))
        for spec in pipeline_specs(experiment):
            try:
                runners.append(PipelineRunner(ws, project, spec, experiment.mode, chunking, tasks))
            except BackendUnavailable as exc:
                runners.append(Unavailable(spec, str(exc)))
        done = len(good)
        if progress:
            progress(done, total)
        for task in tasks:
            with ws.engine.connect() as conn:
                stop = (should_stop is not None and should_stop()) or _stop_requested(conn, row.id)
            if stop:
                finish(status="cancelled", stop_requested=False)
                return get_experiment(ws, project, row.id)
            for runner in runners:
                if (runner.spec.name, task.task_id) in good:
                    continue
                outcome, metrics, details = scorer.score(task, runner.answer(task))
                with ws.engine.begin() as conn:  # one task, one transaction
                    _record(conn, row.id, Scored(task, runner.spec.name, outcome, metrics, details))
                done += 1
                if progress:
                    progress(done, total)
        missing = "; ".join(r.reason for r in runners if isinstance(r, Unavailable))
        finish(status="done", message=missing, finished_at=utcnow())
    except AssayError as exc:
        finish(status="failed", message=str(exc), finished_at=utcnow())
    except KeyboardInterrupt:
        finish(status="cancelled", message="interrupted")
        raise
    except BaseException as exc:
        finish(status="failed", message=f"{exc.__class__.__name__}: {exc}")
        raise
    finally:
        for runner in runners:
            runner.close()
    return get_experiment(ws, project, row.id)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """An in-memory run (``assay eval``): per-task rows and their aggregate."""

    plan: MetricPlan
    rows: list[Scored]
    summary: dict[str, Any]

    @property
    def errors(self) -> list[Scored]:
        return [r for r in self.rows if r.outcome.error]


def evaluate_tasks(
    ws: Workspace,
    project: Project,
    spec: PipelineSpec,
    tasks: Sequence[Task],
    *,
    mode: str,
    metrics: Sequence[str | dict[str, Any]] | None = None,
    chunking: str | None = None,
    depth: int | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    """Run one pipeline over tasks without storing anything, and aggregate the metrics;
    ``depth`` cuts a run file's rankings."""
    plan = metric_plan(metrics, mode)
    scorer = Scorer(ws, plan)
    selected = get_chunking(ws, project, chunking)
    runner = PipelineRunner(ws, project, spec, mode, selected, tasks, depth=depth)
    rows: list[Scored] = []
    try:
        for done, task in enumerate(tasks, start=1):
            outcome, metrics_, details = scorer.score(task, runner.answer(task))
            rows.append(Scored(task, spec.name, outcome, metrics_, details))
            if progress:
                progress(done, len(tasks))
    finally:
        runner.close()
    summary = aggregate(
        ((r.task.query_type, r.metrics) for r in rows if not r.outcome.error), plan.names
    )
    summary["errors"] = sum(1 for r in rows if r.outcome.error)
    return Evaluation(plan, rows, summary)
