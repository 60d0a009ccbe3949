"""What a job does, by kind: the one place a queue turns ``(kind, payload)`` into work.

A payload is plain JSON (ids, and file names relative to the workspace folder, never paths
or objects), so any process that opens the same workspace can run the job. ``job_key`` names
what a job works on: a queue holds at most one queued or running job per key (an experiment
has one run at a time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.experiments.budget import Budget
from assay.experiments.shards import SHARD_TASKS
from assay.jobs.transfer_jobs import EXPORT, IMPORT, SYNTHESIS
from assay.store.db import utcnow
from assay.store.projects import get_project
from assay.store.schema import experiments, projects
from assay.store.workspace import Workspace

if TYPE_CHECKING:
    from assay.jobs import Jobs

EXPERIMENT = "experiment"
"""Run (or resume) an experiment: ``{"experiment": id}``, with ``"cache": false`` when the run
asks every model again (``--no-cache``). This job leads the run."""
EXPERIMENT_HELPER = "experiment-helper"
"""Work on shards of a running experiment next to its lead: ``{"experiment": id,
"helper": n}`` (and the lead's ``"cache"``); any worker may take it (a run on several workers)."""
MAX_HELPERS = 16
# IMPORT: an upload into a project, ``{"transfer": id, "upload": "imports/…", …}``; EXPORT:
# a project into a file, ``{"transfer": id, "output": "exports/…", …}`` (``jobs.transfer_work``);
# SYNTHESIS: LLM drafts, ``{"transfer": id, "n": …, "types": […], …}`` (``jobs.synthesis_work``)
KINDS = (EXPERIMENT, EXPERIMENT_HELPER, IMPORT, EXPORT, SYNTHESIS)


def experiment_payload(experiment_id: int) -> dict[str, Any]:
    return {"experiment": experiment_id}


def helpers(task_count: int, shard_size: int = SHARD_TASKS) -> int:
    """Helper jobs a run queues: one per shard beyond the first (up to MAX_HELPERS)."""
    return max(0, min(MAX_HELPERS, -(-task_count // shard_size) - 1))


def submit_experiment(
    jobs: Jobs,
    ws: Workspace,
    experiment_id: int,
    budget: Budget | None = None,
    *,
    cache: bool = True,
) -> bool:
    """Queue a run (or resume) of the experiment, and helper jobs that let other workers
    take its shards; False when a run is queued or running. A stop asked for earlier (say
    while it was pending) does not cancel this new run. ``budget``: the run's cap (stored
    with the experiment; None: no cap); ``cache=False`` asks every model again."""
    payload = experiment_payload(experiment_id)
    if not cache:
        payload["cache"] = False
    if jobs.active(EXPERIMENT, payload):
        return False
    with ws.engine.begin() as conn:
        row = conn.execute(
            sa.select(experiments.c.task_count, experiments.c.selection).where(
                experiments.c.id == experiment_id
            )
        ).one()
        conn.execute(
            experiments.update()
            .where(experiments.c.id == experiment_id)
            .values(
                stop_requested=False,
                budget=(budget or Budget()).to_json(),
                updated_at=utcnow(),
            )
        )
    if not jobs.submit(EXPERIMENT, payload):
        return False
    size = row.selection.get("shard_size", SHARD_TASKS)
    count = helpers(row.task_count, size if isinstance(size, int) else SHARD_TASKS)
    for number in range(1, count + 1):
        helper = {"experiment": experiment_id, "helper": number}
        if not cache:
            helper["cache"] = False
        jobs.submit(EXPERIMENT_HELPER, helper)
    return True


def cancel_experiment_jobs(jobs: Jobs, experiment_id: int) -> None:
    """Drop the queued run of an experiment and its queued helpers (running ones stop at
    the experiment's stop flag)."""
    jobs.cancel(EXPERIMENT, experiment_payload(experiment_id))
    for number in range(1, MAX_HELPERS + 1):
        jobs.cancel(EXPERIMENT_HELPER, {"experiment": experiment_id, "helper": number})


def job_key(kind: str, payload: dict[str, Any]) -> str:
    if kind == EXPERIMENT:
        return f"experiment-{int(payload['experiment'])}"
    if kind == EXPERIMENT_HELPER:
        return f"experiment-{int(payload['experiment'])}-helper-{int(payload['helper'])}"
    if kind in (IMPORT, EXPORT, SYNTHESIS):
        return f"transfer-{payload['transfer']}"
    raise _unknown(kind)


def run_job(ws: Workspace, kind: str, payload: dict[str, Any]) -> None:
    """Do the job's work in this thread; its progress and outcome go to the database."""
    if kind == EXPERIMENT:
        _run_experiment(ws, int(payload["experiment"]), cache=payload.get("cache") is not False)
        return
    if kind == EXPERIMENT_HELPER:
        _help_experiment(ws, int(payload["experiment"]), cache=payload.get("cache") is not False)
        return
    if kind in (IMPORT, EXPORT):
        from assay.jobs.transfer_work import run_export, run_import

        (run_import if kind == IMPORT else run_export)(ws, payload)
        return
    if kind == SYNTHESIS:
        from assay.jobs.synthesis_work import run_synthesis

        run_synthesis(ws, payload)
        return
    raise _unknown(kind)


def _unknown(kind: str) -> InvalidInput:
    return InvalidInput(f"unknown job kind {kind!r} (known: {', '.join(KINDS)})")


def _run_experiment(ws: Workspace, experiment_id: int, *, cache: bool = True) -> None:
    """Resume the run: the runner skips tasks that already have a good result. A cancel that
    came while the job waited in the queue is honoured before the run starts."""
    from assay.experiments import run_experiment

    with ws.engine.begin() as conn:
        row = conn.execute(
            sa.select(projects.c.name, experiments.c.stop_requested)
            .join(projects, projects.c.id == experiments.c.project_id)
            .where(experiments.c.id == experiment_id)
        ).one_or_none()
        if row is None:
            return  # deleted while it waited
        if row.stop_requested:
            conn.execute(
                experiments.update()
                .where(experiments.c.id == experiment_id)
                .values(status="cancelled", stop_requested=False, updated_at=utcnow())
            )
            return
    run_experiment(ws, get_project(ws, row.name), experiment_id, cache=cache)


def _help_experiment(ws: Workspace, experiment_id: int, *, cache: bool = True) -> None:
    """Take shards of the running experiment (nothing when it is not running any more)."""
    from assay.experiments.runner import help_experiment

    with ws.engine.connect() as conn:
        name = conn.scalar(
            sa.select(projects.c.name)
            .join(experiments, experiments.c.project_id == projects.c.id)
            .where(experiments.c.id == experiment_id)
        )
    if name is not None:
        help_experiment(ws, get_project(ws, name), experiment_id, cache=cache)
