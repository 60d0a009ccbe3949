"""Running experiments: units (a task through a pipeline) at once, results in batches.

``run_experiment`` runs every task through every pipeline that has no good result yet, so
calling it again resumes a cancelled or killed run: stored results are kept, results that
ended in an error are tried again. The run is split into shards (``experiments.shards``)
that other workers take too (``help_experiment``, a helper job); each process runs as many
units at once as the experiment's endpoints take (``experiments.concurrency``) and writes
results in batches (``experiments.shard_run``). Between batches it reads ``should_stop``,
the stop flag ``cancel_experiment`` sets in the database (so a run in another process can
be stopped) and the budget. ``evaluate_tasks`` does the same work in memory, for ``assay
eval``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from assay.corpus.chunkings import get_chunking
from assay.errors import AssayError, BackendUnavailable, InvalidInput
from assay.experiments.budget import Budget, check_budget
from assay.experiments.catalogue_scoring import score_catalogue
from assay.experiments.concurrency import UnitPool, check_concurrency, unit_concurrency
from assay.experiments.imported import refuse_run
from assay.experiments.judge import JudgeMetric, Verdict, judge, make_judge
from assay.experiments.pipelines import PipelineRunner, PipelineSpec, outcome_level
from assay.experiments.result_writes import Scored
from assay.experiments.scoring import Embed, MetricPlan, Outcome, aggregate, metric_plan, score_task
from assay.experiments.shard_run import FLUSH_S, ShardWork, lease_seconds, running_here
from assay.experiments.shards import SHARD_TASKS, has_open_shards, plan_shards
from assay.experiments.store import (
    Experiment,
    experiment_tasks_of,
    find_experiment,
    get_experiment,
    pipeline_specs,
)
from assay.experiments.tasks import Task
from assay.gold.project_config import generator_settings
from assay.llm import GeneratorSettings, make_generator
from assay.llm.endpoints import outgoing_policy
from assay.llm.records import Generator
from assay.llm.traffic import Traffic, workspace_traffic
from assay.records import Project
from assay.search.embeddings import workspace_embedder
from assay.store.db import utcnow
from assay.store.schema import experiment_results, experiments
from assay.store.workspace import Workspace

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)``; ``done`` counts task × pipeline units."""


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

    def __init__(
        self,
        ws: Workspace,
        plan: MetricPlan,
        embedder: str = "minilm",
        traffic: Traffic | None = None,
    ) -> None:
        self.plan = plan
        policy = outgoing_policy(ws) if plan.judges or plan.llm else None
        self.judges: list[tuple[JudgeMetric, Generator]] = [
            (metric, make_judge(metric, traffic, policy)) for metric in plan.judges
        ]
        self.llm = [
            (metric, make_generator(metric.generator, traffic=traffic, policy=policy))
            for metric in plan.llm
        ]
        self.embed: Embed | None = None
        if any(m.spec.name == "semantic_similarity" for m in plan.metrics) or any(
            m.entry.embeds for m in plan.llm
        ):
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
        llm_values: dict[str, Any] = {}
        for llm_metric, llm_generator in self.llm:
            found = score_catalogue(
                llm_metric, llm_generator, task, outcome.answer, outcome.contexts, self.embed
            )
            llm_values[llm_metric.name], judged[llm_metric.name] = found.value, found.details
        metrics = score_task(
            self.plan,
            task,
            outcome,
            level=level,
            embed=self.embed,
            verdicts=verdicts,
            llm_values=llm_values,
        )
        details: dict[str, Any] = {"level": level}
        if judged:
            details["judges"] = judged
        return metrics, details


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


def plan_generators(plan: MetricPlan) -> list[GeneratorSettings]:
    """The models the metrics call: the judges' and the catalogue's LLM metrics'."""
    return [m.generator for m in plan.judges] + [m.generator for m in plan.llm]


def run_concurrency(experiment: Experiment) -> int:
    """Units at once for this experiment (its own ``concurrency``, else its endpoints')."""
    plan = metric_plan(experiment.metrics, experiment.mode)
    return unit_concurrency(
        pipeline_specs(experiment),
        experiment.mode,
        plan_generators(plan),
        check_concurrency(experiment.selection.get("concurrency")),
    )


class _Prepared:
    """The pipelines and the scorer of a run, made once and shared by its threads."""

    def __init__(
        self, ws: Workspace, project: Project, experiment: Experiment, *, cache: bool = True
    ) -> None:
        self.experiment = experiment
        self.runners: list[PipelineRunner | Unavailable] = []
        plan = metric_plan(experiment.metrics, experiment.mode)
        chunking = get_chunking(ws, project, experiment.selection.get("chunking"))
        traffic = workspace_traffic(ws, project.id, cache=cache)
        self.scorer = Scorer(ws, plan, experiment.selection.get("embedder", "minilm"), traffic)
        tasks = _file_tasks(ws, experiment)
        try:
            for spec in pipeline_specs(experiment):
                try:
                    runner = PipelineRunner(
                        ws, project, spec, experiment.mode, chunking, tasks, traffic=traffic
                    )
                except BackendUnavailable as exc:
                    self.runners.append(Unavailable(spec, str(exc)))
                else:
                    self.runners.append(runner)
        except BaseException:
            self.close()
            raise

    def work(
        self,
        ws: Workspace,
        budget: Budget,
        progress: Progress | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> ShardWork:
        """This process's part of the run, with as many units at once as it takes."""
        return ShardWork(
            ws,
            self.experiment.id,
            self.runners,
            self.score,
            threads=run_concurrency(self.experiment),
            budget=budget,
            total=self.experiment.total,
            progress=progress,
            should_stop=should_stop,
        )

    def score(self, task: Task, pipeline: str, outcome: Outcome) -> Scored:
        return Scored(task, pipeline, *self.scorer.score(task, outcome))

    @property
    def missing(self) -> str:
        return "; ".join(r.reason for r in self.runners if isinstance(r, Unavailable))

    def close(self) -> None:
        for runner in self.runners:
            runner.close()


def _file_tasks(ws: Workspace, experiment: Experiment) -> list[Task]:
    """Pipelines of run or answer files look tasks up by their query id, so they get every
    task; other runs read tasks a page at a time and need none here."""
    if any(spec.kind == "file" for spec in pipeline_specs(experiment)):
        return experiment_tasks_of(ws, experiment.id)
    return []


def run_experiment(
    ws: Workspace,
    project: Project,
    experiment_id: int | str,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    *,
    budget: Budget | None = None,
    cache: bool = True,
) -> Experiment:
    """Run (or resume) an experiment; returns it with its aggregates. A pipeline that cannot
    start (a missing file, bad settings) fails the experiment with a message; a task that
    fails is stored with its error and the run goes on.

    This process leads the run: it plans the shards (or, when a run of the experiment was
    cut short while running, keeps them), works on them with as many units at once as the
    endpoints take, and waits for shards other workers hold (taking over those whose
    worker stopped) until every shard is done. ``budget``: the run's cap (None: the one
    stored with the experiment by whoever queued the run).

    A run takes minutes, so it never holds one write transaction for all of it (SQLite has
    one write lock, and pages must see the progress): it is the entry point of its own short
    transactions and takes no ``conn``. ``cache=False`` (``--no-cache``) asks every model
    again and stores nothing in the response cache."""
    with ws.engine.begin() as conn:  # the start: plan the shards, mark it running
        row = find_experiment(conn, project, experiment_id)
        refuse_run(row.name, row.selection)
        experiment = get_experiment(ws, project, row.id, with_aggregates=False, conn=conn)
        if budget is not None:
            check_budget(experiment, budget)
        if not (row.status == "running" and has_open_shards(conn, row.id)):
            plan_shards(conn, row.id, row.task_count, _shard_size(experiment))
        values: dict[str, Any] = {"status": "running", "stop_requested": False, "message": ""}
        if budget is not None:
            values["budget"] = budget.to_json()
        _set(
            conn,
            row.id,
            **values,
            started_at=experiment.started_at or utcnow(),
            finished_at=None,
        )
        stored = sa.select(experiments.c.budget).where(experiments.c.id == row.id)
        stored_budget = Budget.from_json(conn.scalar(stored))

    def finish(**values: Any) -> None:
        with ws.engine.begin() as conn:
            _set(conn, row.id, **values)

    prepared: _Prepared | None = None
    work: ShardWork | None = None
    # helper jobs this process takes for the experiment leave at once
    with running_here(ws, row.id):
        try:
            prepared = _Prepared(ws, project, experiment, cache=cache)
            work = prepared.work(ws, stored_budget, progress, should_stop)
            work.start_from(experiment.done_count + experiment.error_count)
            while True:
                work.work()
                if work.stop_reason:
                    work.release()
                    message = "" if work.stop_reason == "cancelled" else work.stop_reason
                    finish(status="cancelled", stop_requested=False, message=message)
                    break
                with ws.engine.connect() as conn:
                    open_shards = has_open_shards(conn, row.id)
                if not open_shards:
                    finish(status="done", message=prepared.missing, finished_at=utcnow())
                    break
                time.sleep(min(FLUSH_S, lease_seconds(ws) / 3))  # other workers hold the rest
        except AssayError as exc:
            _release(work)
            finish(status="failed", message=str(exc), finished_at=utcnow())
        except KeyboardInterrupt:
            _release(work, write=True)
            finish(status="cancelled", message="interrupted")
            raise
        except BaseException as exc:
            _release(work)
            finish(status="failed", message=f"{exc.__class__.__name__}: {exc}")
            raise
        finally:
            if prepared is not None:
                prepared.close()
    return get_experiment(ws, project, row.id)


def help_experiment(
    ws: Workspace,
    project: Project,
    experiment_id: int,
    *,
    once_per_process: bool = True,
    cache: bool = True,
) -> None:
    """Work on the shards of a running experiment next to its lead (a helper job, on any
    worker); returns when none is left to claim, and the lead, which waits for every
    shard, closes the run. ``once_per_process``: a helper in a process that already runs
    the experiment leaves (that run's threads are what the endpoints take)."""
    with running_here(ws, experiment_id) as first:
        if once_per_process and not first:
            return
        with ws.engine.connect() as conn:
            row = find_experiment(conn, project, experiment_id)
            if row.status != "running" or not has_open_shards(conn, row.id):
                return
            experiment = get_experiment(ws, project, row.id, with_aggregates=False, conn=conn)
        prepared = _Prepared(ws, project, experiment, cache=cache)
        work = prepared.work(ws, Budget.from_json(experiment.budget))
        try:
            work.work()
            if work.stop_reason:
                work.release()
        except BaseException:
            _release(work)
            raise
        finally:
            prepared.close()


def _release(work: ShardWork | None, *, write: bool = False) -> None:
    """Give back a stopping run's shards (writing its finished units first, when asked);
    a failure here must not hide the one that stopped the run."""
    if work is None:
        return
    try:
        if write:
            work.write()
        work.release()
    except Exception:  # the run's own error is what the user needs
        log.exception("could not give back the shards of experiment %s", work.experiment_id)


def _shard_size(experiment: Experiment) -> int:
    size = experiment.selection.get("shard_size", SHARD_TASKS)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InvalidInput(f"shard_size must be a whole number >= 1, got {size!r}")
    return size


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
    concurrency: int | None = None,
    cache: bool = True,
) -> Evaluation:
    """Run one pipeline over tasks without storing anything, and aggregate the metrics;
    ``depth`` cuts a run file's rankings; ``cache=False`` bypasses the response cache.
    Tasks run as many at once as the endpoints take (or ``concurrency``); rows come back
    in task order."""
    plan = metric_plan(metrics, mode, generator_settings(project))
    traffic = workspace_traffic(ws, project.id, cache=cache)
    scorer = Scorer(ws, plan, traffic=traffic)
    selected = get_chunking(ws, project, chunking)
    runner = PipelineRunner(ws, project, spec, mode, selected, tasks, depth=depth, traffic=traffic)
    threads = unit_concurrency([spec], mode, plan_generators(plan), concurrency)
    found: dict[int, Scored] = {}

    def work(index: int) -> Scored:
        task = tasks[index]
        return Scored(task, spec.name, *scorer.score(task, runner.answer(task)))

    try:
        for item in UnitPool[int, Scored](threads).run(range(len(tasks)), work):
            if item is not None:
                found[item[0]] = item[1]
                if progress:
                    progress(len(found), len(tasks))
    finally:
        runner.close()
    rows = [found[i] for i in range(len(tasks))]
    summary = aggregate(
        ((r.task.query_type, r.metrics) for r in rows if not r.outcome.error), plan.names
    )
    summary["errors"] = sum(1 for r in rows if r.outcome.error)
    return Evaluation(plan, rows, summary)
