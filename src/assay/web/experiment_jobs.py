"""Experiment runs in the background of this server process, and the progress they show.

:class:`ExperimentJobs` is the one piece of process state: ``create_app`` makes one and keeps
it on ``app.state`` (nothing at import).
"""

from __future__ import annotations

import threading
from typing import Any

from fastapi import Request

from assay.experiments import Experiment, run_experiment
from assay.records import Project, to_json
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


def jobs(request: Request) -> ExperimentJobs:
    registry = request.app.state.experiment_jobs
    assert isinstance(registry, ExperimentJobs)
    return registry


def summary(request: Request, experiment: Experiment) -> dict[str, Any]:
    """The experiment as JSON with its progress (and whether this server is running it)."""
    return {
        **to_json(experiment),
        "progress": progress_json(experiment, jobs(request).alive(experiment.id)),
    }
