"""``assay experiments run --background`` and its guards: a run as a job of the workspace's
queue (``assay.jobs``), for a server or ``assay worker`` to run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.cli.common import console, print_json

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def queue_run(ws: Workspace, project: Any, name: str) -> Any:
    """Queue a run (or resume) of the experiment; Conflict when one is queued or running."""
    from assay.errors import Conflict
    from assay.experiments import get_experiment
    from assay.experiments.imported import refuse_run
    from assay.jobs import open_jobs
    from assay.jobs.kinds import submit_experiment

    experiment = get_experiment(ws, project, name, with_aggregates=False)
    refuse_run(experiment.name, experiment.selection)
    jobs = open_jobs(ws, run_here=False)
    try:
        if not submit_experiment(jobs, ws, experiment.id):
            raise Conflict(f"experiment {experiment.name!r} is already queued or running")
    finally:
        jobs.close()
    return experiment


def refuse_if_queued(ws: Workspace, project: Any, name: str) -> None:
    """A run in the foreground next to a background one would run the same tasks twice."""
    from assay.errors import Conflict
    from assay.experiments import get_experiment
    from assay.jobs import EXPERIMENT, open_jobs
    from assay.jobs.kinds import experiment_payload

    experiment = get_experiment(ws, project, name, with_aggregates=False)
    if open_jobs(ws, run_here=False).active(EXPERIMENT, experiment_payload(experiment.id)):
        raise Conflict(
            f"experiment {experiment.name!r} is queued or running in the background (a server "
            f"or `assay worker`); follow it with `assay experiments show {name}`, stop it "
            f"with `assay experiments cancel {name}`"
        )


def print_queued(result: Any, data: Any, as_json: bool) -> None:
    if as_json:
        print_json(data)
        return
    console().print(
        f"Experiment {result.name!r} is queued: a server or `assay worker` runs it. "
        f"Follow it: assay experiments show {result.name}",
        markup=False,
    )


def drop_queued_run(ws: Workspace, experiment_id: int) -> None:
    """A cancelled experiment's queued run goes (a running one stops at its stop flag)."""
    from assay.jobs import EXPERIMENT, open_jobs
    from assay.jobs.kinds import experiment_payload

    jobs = open_jobs(ws, run_here=False)
    try:
        jobs.cancel(EXPERIMENT, experiment_payload(experiment_id))
    finally:
        jobs.close()
