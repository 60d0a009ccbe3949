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
from assay.jobs.transfer_jobs import EXPORT, IMPORT, SYNTHESIS
from assay.store.db import utcnow
from assay.store.projects import get_project
from assay.store.schema import experiments, projects
from assay.store.workspace import Workspace

if TYPE_CHECKING:
    from assay.jobs import Jobs

EXPERIMENT = "experiment"
"""Run (or resume) an experiment: ``{"experiment": id}``, with ``"cache": false`` when the run
asks every model again (``--no-cache``)."""
# IMPORT: an upload into a project, ``{"transfer": id, "upload": "imports/…", …}``; EXPORT:
# a project into a file, ``{"transfer": id, "output": "exports/…", …}`` (``jobs.transfer_work``);
# SYNTHESIS: LLM drafts, ``{"transfer": id, "n": …, "types": […], …}`` (``jobs.synthesis_work``)
KINDS = (EXPERIMENT, IMPORT, EXPORT, SYNTHESIS)


def experiment_payload(experiment_id: int) -> dict[str, Any]:
    return {"experiment": experiment_id}


def submit_experiment(jobs: Jobs, ws: Workspace, experiment_id: int, *, cache: bool = True) -> bool:
    """Queue a run (or resume) of the experiment; False when one is queued or running.
    A stop asked for earlier (say while it was pending) does not cancel this new run."""
    payload = experiment_payload(experiment_id)
    if not cache:
        payload["cache"] = False
    if jobs.active(EXPERIMENT, payload):
        return False
    with ws.engine.begin() as conn:
        conn.execute(
            experiments.update()
            .where(experiments.c.id == experiment_id)
            .values(stop_requested=False, updated_at=utcnow())
        )
    return jobs.submit(EXPERIMENT, payload)


def job_key(kind: str, payload: dict[str, Any]) -> str:
    if kind == EXPERIMENT:
        return f"experiment-{int(payload['experiment'])}"
    if kind in (IMPORT, EXPORT, SYNTHESIS):
        return f"transfer-{payload['transfer']}"
    raise _unknown(kind)


def run_job(ws: Workspace, kind: str, payload: dict[str, Any]) -> None:
    """Do the job's work in this thread; its progress and outcome go to the database."""
    if kind == EXPERIMENT:
        _run_experiment(ws, int(payload["experiment"]), cache=payload.get("cache") is not False)
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
