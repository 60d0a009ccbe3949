"""Experiment runs as background jobs (``assay.jobs``), and the progress they show.

A run is a job in the workspace's queue, so it survives this process: any server process
(or ``assay worker``) runs it, and every server process reads its progress from the
experiment's row and whether it is queued or running from the queue. ``create_app`` keeps
the ``Jobs`` on ``app.state`` (``web.state.jobs``).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from assay.experiments import Experiment
from assay.jobs import EXPERIMENT
from assay.jobs.kinds import experiment_payload, submit_experiment
from assay.records import to_json
from assay.store.workspace import Workspace
from assay.web.state import jobs


def running(request: Request, experiment_id: int) -> bool:
    """Whether a run of the experiment is queued or running, in whatever process."""
    return jobs(request).active(EXPERIMENT, experiment_payload(experiment_id))


def start_run(request: Request, ws: Workspace, experiment_id: int, *, cache: bool = True) -> bool:
    """Queue a run (or resume); False when one is already queued or running. ``cache=False``
    asks every model again (no reply from the response cache)."""
    return submit_experiment(jobs(request), ws, experiment_id, cache=cache)


def drop_queued_run(request: Request, experiment_id: int) -> None:
    """A cancelled experiment's queued run goes (a running one stops at its stop flag)."""
    jobs(request).cancel(EXPERIMENT, experiment_payload(experiment_id))


def progress_json(experiment: Experiment, going: bool) -> dict[str, Any]:
    """The state a progress bar needs."""
    total = experiment.total
    finished = experiment.done_count + experiment.error_count
    return {
        "id": experiment.id,
        "name": experiment.name,
        "status": experiment.status,
        "running": going,
        "done": experiment.done_count,
        "errors": experiment.error_count,
        "total": total,
        "percent": round(100 * finished / total, 1) if total else 100.0,
        "message": experiment.message,
    }


def summary(request: Request, experiment: Experiment) -> dict[str, Any]:
    """The experiment as JSON with its progress (and whether a run is queued or running)."""
    return {
        **to_json(experiment),
        "progress": progress_json(experiment, running(request, experiment.id)),
    }
