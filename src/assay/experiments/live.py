"""The live progress of a run, as pages, the JSON API and ``assay experiments show`` give it.

Counts come from the experiment's row (moved by every batch of results); units in flight,
workers, requests, cached answers, tokens and cost so far from the shards of the current
run (every worker adds its own); the ETA from the units this run finished and the time it
has taken. ``waiting`` says why a queued run does not start (no process runs jobs).
"""

from __future__ import annotations

from typing import Any

from assay.experiments.shard_run import lease_seconds
from assay.experiments.shards import run_state
from assay.experiments.store import Experiment
from assay.store.db import utcnow
from assay.store.workspace import Workspace

NO_WORKER = "no_worker"


def run_progress(
    ws: Workspace, experiment: Experiment, *, queued: bool, waiting: str = ""
) -> dict[str, Any]:
    """What a progress display needs. ``queued``: a job for the run is queued or running;
    ``waiting``: why it does not start (:data:`NO_WORKER`), else empty."""
    total = experiment.total
    finished = experiment.done_count + experiment.error_count
    with ws.engine.connect() as conn:
        state = run_state(conn, experiment.id, lease_seconds(ws))
    running = experiment.status == "running"
    eta_s: float | None = None
    rate: float | None = None
    if running and state.started_at is not None and state.spent.units:
        elapsed = max((utcnow() - state.started_at).total_seconds(), 1e-3)
        rate = state.spent.units / elapsed
        eta_s = round(max(total - finished, 0) / rate, 1)
    return {
        "id": experiment.id,
        "name": experiment.name,
        "status": experiment.status,
        "running": queued,
        "done": experiment.done_count,
        "errors": experiment.error_count,
        "total": total,
        "percent": round(100 * finished / total, 1) if total else 100.0,
        "message": experiment.message,
        "in_flight": state.in_flight if running else 0,
        "workers": state.workers if running else 0,
        "shards": {"total": state.shards, "done": state.done_shards},
        "units_per_s": round(rate, 3) if rate is not None else None,
        "eta_s": eta_s,
        "spent": state.spent.to_json(),
        "budget": experiment.budget,
        "waiting": waiting if queued and not running else "",
    }
