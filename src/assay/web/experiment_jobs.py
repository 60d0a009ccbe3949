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
from assay.experiments.budget import Budget
from assay.experiments.live import NO_WORKER, run_progress
from assay.jobs import EXPERIMENT
from assay.jobs.kinds import cancel_experiment_jobs, experiment_payload, submit_experiment
from assay.jobs.workers import live_workers
from assay.records import to_json
from assay.store.workspace import Workspace
from assay.web.state import jobs, workspace


def running(request: Request, experiment_id: int) -> bool:
    """Whether a run of the experiment is queued or running, in whatever process."""
    return jobs(request).active(EXPERIMENT, experiment_payload(experiment_id))


def start_run(
    request: Request,
    ws: Workspace,
    experiment_id: int,
    budget: Budget | None = None,
    *,
    cache: bool = True,
) -> bool:
    """Queue a run (or resume) with its helpers; False when one is already queued or
    running. ``cache=False`` asks every model again (no reply from the response cache)."""
    return submit_experiment(jobs(request), ws, experiment_id, budget, cache=cache)


def drop_queued_run(request: Request, experiment_id: int) -> None:
    """A cancelled experiment's queued run goes (a running one stops at its stop flag)."""
    cancel_experiment_jobs(jobs(request), experiment_id)


def waiting(request: Request, ws: Workspace) -> str:
    """Why a queued run would not start: no process runs jobs (this server does not, and
    no `assay worker` beats); empty when one does."""
    if jobs(request).runs_here or live_workers(ws):
        return ""
    return NO_WORKER


def progress_json(request: Request, experiment: Experiment) -> dict[str, Any]:
    """The state a progress bar needs, live counts of the run included."""
    ws = workspace(request)
    going = running(request, experiment.id)
    why = waiting(request, ws) if going and experiment.status != "running" else ""
    return run_progress(ws, experiment, queued=going, waiting=why)


def summary(request: Request, experiment: Experiment) -> dict[str, Any]:
    """The experiment as JSON with its progress (and whether a run is queued or running)."""
    return {**to_json(experiment), "progress": progress_json(request, experiment)}
