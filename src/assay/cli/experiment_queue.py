"""``assay experiments`` and the workspace's job queue: queue a run (with its cap), refuse a
foreground run next to a queued one, drop a cancelled run's jobs, and tell the run's live
progress, including that no process runs jobs when a queued run waits for one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.cli.common import console, print_json

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def live_progress(ws: Workspace, experiment: Any) -> dict[str, Any]:
    """The run's live progress as the server's API gives it (queued, in flight, ETA,
    spend, and whether it waits for a worker)."""
    from assay.experiments.live import NO_WORKER, run_progress
    from assay.jobs import EXPERIMENT, open_jobs
    from assay.jobs.kinds import experiment_payload
    from assay.jobs.workers import live_workers

    jobs = open_jobs(ws, run_here=False)
    try:
        queued = jobs.active(EXPERIMENT, experiment_payload(experiment.id))
    finally:
        jobs.close()
    waits = queued and experiment.status != "running" and not live_workers(ws)
    return run_progress(ws, experiment, queued=queued, waiting=NO_WORKER if waits else "")


def queue_run(
    ws: Workspace,
    project: Any,
    name: str,
    budget: dict[str, Any] | None = None,
    cache: bool = True,
) -> dict[str, Any]:
    """Queue a run (or resume) of the experiment and its helpers; Conflict when one is
    queued or running. Returns the experiment as JSON with its progress. ``cache=False``
    asks every model again."""
    from assay.errors import Conflict
    from assay.experiments import get_experiment
    from assay.experiments.budget import Budget, check_budget
    from assay.experiments.imported import refuse_run
    from assay.jobs import open_jobs
    from assay.jobs.kinds import submit_experiment
    from assay.records import to_json

    experiment = get_experiment(ws, project, name, with_aggregates=False)
    refuse_run(experiment.name, experiment.selection)
    cap = Budget.from_json(budget)
    check_budget(experiment, cap)
    jobs = open_jobs(ws, run_here=False)
    try:
        if not submit_experiment(jobs, ws, experiment.id, cap, cache=cache):
            raise Conflict(f"experiment {experiment.name!r} is already queued or running")
    finally:
        jobs.close()
    queued = get_experiment(ws, project, experiment.id, with_aggregates=False)
    return {**to_json(queued), "progress": live_progress(ws, queued)}


def refuse_if_queued(ws: Workspace, project: Any, name: str) -> None:
    """A run in the foreground next to a background one would run the same tasks twice."""
    from assay.errors import Conflict
    from assay.experiments import get_experiment
    from assay.jobs import EXPERIMENT, open_jobs
    from assay.jobs.kinds import experiment_payload
    from assay.jobs.workers import START_WORKER

    experiment = get_experiment(ws, project, name, with_aggregates=False)
    if open_jobs(ws, run_here=False).active(EXPERIMENT, experiment_payload(experiment.id)):
        waits = live_progress(ws, experiment)["waiting"]
        raise Conflict(
            f"experiment {experiment.name!r} is queued or running in the background (a server "
            f"or `assay worker`); follow it with `assay experiments show {name}`, stop it "
            f"with `assay experiments cancel {name}`"
            + (f". It waits: {START_WORKER}" if waits else "")
        )


def print_queued(name: str, data: dict[str, Any], as_json: bool) -> None:
    """Say the run is queued, and that no process runs jobs when none does."""
    from assay.jobs.workers import START_WORKER

    if as_json:
        print_json(data)
        return
    console().print(
        f"Experiment {name!r} is queued: a server or `assay worker` runs it. "
        f"Follow it: assay experiments show {name}",
        markup=False,
    )
    if (data.get("progress") or {}).get("waiting"):
        console().print(f"It waits: {START_WORKER}.", markup=False)


def drop_queued_run(ws: Workspace, experiment_id: int) -> None:
    """A cancelled experiment's queued run and helpers go (a running one stops at its stop
    flag)."""
    from assay.jobs import open_jobs
    from assay.jobs.kinds import cancel_experiment_jobs

    jobs = open_jobs(ws, run_here=False)
    try:
        cancel_experiment_jobs(jobs, experiment_id)
    finally:
        jobs.close()
