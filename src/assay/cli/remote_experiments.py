"""``assay experiments`` against a server (:mod:`assay.cli.remote`): the experiments routes.

Experiments run on the server (``run`` starts the run there and follows it); a pipeline's
run or answers file on this machine is uploaded first (``experiment-files``) and the
pipeline names the stored copy.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.cli.common import console, escape, fail, progress_bar
from assay.cli.remote import Server, project_path

if TYPE_CHECKING:
    from assay.experiments import Experiment

FILE_KINDS = {"run_file": "run", "answers_file": "answers"}


def experiment_of(data: dict[str, Any]) -> Experiment:
    """An experiment from the server's JSON, for the same tables a local command prints."""
    from assay.experiments import Experiment

    values: dict[str, Any] = {}
    for f in dataclasses.fields(Experiment):
        value = data.get(f.name)
        if f.name.endswith("_at") and isinstance(value, str):
            value = datetime.fromisoformat(value)
        values[f.name] = {} if value is None and f.name in ("aggregates", "costs") else value
    return Experiment(**values)


def listing(server: Server, project: str | None) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = server.json(
        "GET", project_path(server.project(project), "experiments")
    )
    return found


def _upload_files(server: Server, target: str, spec: Any) -> Any:
    """A pipeline naming files of this machine, with the files uploaded to the server."""
    if not isinstance(spec, dict):
        return spec
    spec = dict(spec)
    for key, kind in FILE_KINDS.items():
        value = spec.get(key)
        if isinstance(value, str) and value:
            path = Path(value)
            if not path.is_file():
                fail(escape(f"pipeline {spec.get('name', '')!r}: {key} {value!r}: no such file"))
            stored = server.upload(
                project_path(target, "experiment-files"), path, path.name, {"kind": kind}
            )
            spec[key] = {"sha256": stored["sha256"], "name": stored["name"]}
    return spec


def create(
    server: Server, project: str | None, name: str, pipelines: list[Any], **options: Any
) -> dict[str, Any]:
    target = server.project(project)
    body = {
        "name": name,
        "pipelines": [_upload_files(server, target, p) for p in pipelines],
        "start": False,
        **options,
    }
    created: dict[str, Any] = server.json("POST", project_path(target, "experiments"), json=body)
    return created


def get(server: Server, project: str | None, ref: str) -> dict[str, Any]:
    found: dict[str, Any] = server.json(
        "GET", project_path(server.project(project), "experiments", ref)
    )
    return dict(found["experiment"])


def start(
    server: Server,
    project: str | None,
    ref: str,
    budget: dict[str, Any] | None = None,
    cache: bool = True,
) -> dict[str, Any]:
    """Start (or resume) the run on the server without following it."""
    target = server.project(project)
    path = project_path(target, "experiments", ref, "run") + ("" if cache else "?cache=false")
    found: dict[str, Any] = server.json("POST", path, json=budget or {})
    return found


def run(
    server: Server,
    project: str | None,
    ref: str,
    quiet: bool,
    budget: dict[str, Any] | None = None,
    cache: bool = True,
) -> dict[str, Any]:
    """Start (or resume) the run on the server and follow it until it ends; a run no
    process picks up (no worker) fails with how to start one."""
    target = server.project(project)
    run_path = project_path(target, "experiments", ref, "run") + ("" if cache else "?cache=false")
    started = server.json("POST", run_path, json=budget or {})
    _refuse_waiting(started, ref)
    path = project_path(target, "experiments", str(started["id"]))
    try:
        with progress_bar(not quiet) as bar:
            job = bar.add_task(f"Running {started['name']}", total=None)

            def fetch() -> dict[str, Any]:
                found: dict[str, Any] = server.json("GET", path)["experiment"]
                _refuse_waiting(found, ref)
                done = found["progress"]["done"] + found["progress"]["errors"]
                bar.update(job, completed=done, total=found["progress"]["total"])
                return found

            return server.wait(
                fetch, lambda e: bool(e["progress"]["running"]) or e["status"] == "running"
            )
    except KeyboardInterrupt:
        fail(
            escape(
                f"stopped following; the run goes on on {server.url}. Stop it: "
                f"assay experiments cancel {ref}"
            ),
            130,
        )


def _refuse_waiting(data: dict[str, Any], ref: str) -> None:
    """A queued run that no process will take: say so instead of waiting forever."""
    from assay.jobs.workers import START_WORKER

    if (data.get("progress") or {}).get("waiting"):
        fail(
            escape(
                f"experiment {ref!r} is queued on the server, but {START_WORKER}; it starts "
                f"once one runs (or drop it: assay experiments cancel {ref})"
            )
        )


def cancel(server: Server, project: str | None, ref: str) -> dict[str, Any]:
    target = server.project(project)
    found: dict[str, Any] = server.json("POST", project_path(target, "experiments", ref, "cancel"))
    return found


def inspectorraget(server: Server, project: str | None, ref: str) -> dict[str, Any]:
    target = server.project(project)
    found: dict[str, Any] = server.json(
        "GET", project_path(target, "experiments", ref, "inspectorraget")
    )
    return found


def show_task(server: Server, project: str | None, ref: str, task_id: str, as_json: bool) -> None:
    """One task across the pipelines, as the local ``show --task`` prints it."""
    from assay.cli.common import print_json

    target = server.project(project)
    found = server.json("GET", project_path(target, "experiments", ref, "tasks", task_id))
    if as_json:
        print_json(found)
        return
    gold = found["task"]
    out = console()
    turns = gold.get("turns") or [""]
    out.print(f"[bold]{escape(gold['task_id'])}[/] ({gold['query_type']}): {escape(turns[-1])}")
    out.print(f"reference: {gold.get('answer', '')}", markup=False)
    for entry in found["pipelines"]:
        out.print(f"\n[bold]{escape(str(entry['pipeline']))}[/]")
        if not entry.get("ran"):
            out.print("not run yet", markup=False)
            continue
        if entry.get("error"):
            out.print(f"error: {entry['error']}", markup=False)
            continue
        out.print(f"answer: {entry['answer']}", markup=False)
        ids = ", ".join(str(r.get("chunk_id") or r.get("doc_id")) for r in entry["retrieved"])
        out.print(f"retrieved: {ids}", markup=False)
        out.print(f"metrics: {json.dumps(entry['metrics'])}", markup=False)
