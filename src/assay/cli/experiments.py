"""``assay experiments``: create, list, run (with a progress bar, or ``--background`` as a job of
the workspace's queue for a server or ``assay worker`` to run), show, cancel; the reports
of finished experiments are in ``cli.experiment_reports``, the queue side of runs in
``cli.experiment_queue``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli import experiment_reports, remote
from assay.cli.common import (
    JsonOption,
    NoCacheOption,
    ProjectOption,
    command,
    command_group,
    console,
    escape,
    fail,
    print_json,
    progress_bar,
    project_of,
    run,
)
from assay.cli.experiment_queue import (
    drop_queued_run,
    live_progress,
    print_queued,
    queue_run,
    refuse_if_queued,
)

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    group = command_group(
        app,
        "experiments",
        "Experiments: pipelines answer a project's gold tasks; metrics are stored.\n\n"
        "With ASSAY_URL set (see `assay --help`), they live and run on that team server.",
        default=list_experiments,
    )
    command(group, "create", create)
    command(group, "run", run_command)
    command(group, "show", show)
    command(group, "cancel", cancel)
    experiment_reports.register(group)


def _pipeline(value: str) -> Any:
    """A preset name, a JSON object, or @FILE holding one (or a list of them)."""
    text = value
    if value.startswith("@"):
        path = Path(value[1:])
        if not path.is_file():
            fail(f"--pipeline {value!r}: no such file")
        text = path.read_text(encoding="utf-8")
    if not text.lstrip().startswith(("{", "[")):
        return value
    try:
        return json.loads(text)
    except ValueError as exc:
        fail(f"--pipeline {value[:60]!r}: not valid JSON ({exc})")


def _local_files(spec: Any) -> Any:
    """File names in a pipeline given on the command line are files of this machine: as
    Paths, ``create_experiment`` reads and stores them like uploads."""
    if not isinstance(spec, dict):
        return spec
    return {
        key: Path(value)
        if key in ("run_file", "answers_file") and isinstance(value, str) and value
        else value
        for key, value in spec.items()
    }


def _metric(value: str) -> Any:
    if value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError as exc:
            fail(f"--metric {value[:60]!r}: not valid JSON ({exc})")
    return value


def list_experiments(
    ctx: typer.Context, project: str = ProjectOption, as_json: bool = JsonOption
) -> None:
    """List a project's experiments, newest first (the default sub-command)."""
    if ctx.invoked_subcommand:
        return
    server = remote.server(ctx)
    if server is not None:
        from assay.cli import remote_experiments

        data = remote_experiments.listing(server, project)
        if as_json:
            print_json(data)
            return
        found = [remote_experiments.experiment_of(e) for e in data]
    else:
        from assay.experiments import list_experiments as listing

        found = run(ctx, lambda ws: listing(ws, project_of(ws, project)))
    if as_json:
        print_json(found)
        return
    if not found:
        console().print("No experiments yet: assay experiments create NAME --pipeline keyword")
        return
    from rich.table import Table

    table = Table("id", "name", "mode", "pipelines", "tasks", "status", "done", "errors")
    for e in found:
        pipelines = ", ".join(p["name"] for p in e.pipelines)
        table.add_row(
            str(e.id),
            e.name,
            e.mode,
            pipelines,
            str(e.task_count),
            e.status,
            f"{e.done_count}/{e.total}",
            str(e.error_count),
        )
    console().print(table)


def create(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME", help="Experiment name (unique per project)."),
    pipeline: list[str] = typer.Option(
        [],
        "--pipeline",
        metavar="SPEC",
        help="keyword, dense or hybrid (with the offline generator), or a JSON object with "
        "a retriever and a generator (see docs/llm.md), or @FILE with JSON (repeatable).",
    ),
    mode: str = typer.Option(
        "retrieval", "--mode", metavar="MODE", help="retrieval, generation or rag."
    ),
    metric: list[str] = typer.Option(
        [],
        "--metric",
        "-m",
        metavar="NAME",
        help="Metric (repeatable; default per mode): a registry name such as nDCG@10, an LLM "
        "metric (faithfulness, answer_relevancy, context_precision, context_recall, "
        "answer_correctness; judged by the project's generator) or a JSON object (a judge "
        'metric, or {"kind": "llm", "metric": ..., "generator": {...}}).',
    ),
    status: str = typer.Option(
        "accepted",
        "--status",
        metavar="STATUS",
        help="Item statuses: draft, submitted, accepted, rejected or all (comma-separated).",
    ),
    turns: str = typer.Option(
        "all", "--turns", metavar="WHICH", help="Conversation turns: all, first, last, random."
    ),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed of --turns random."),
    chunking: str = typer.Option(
        None, "--chunking", "-c", metavar="NAME", help="Chunking to retrieve and score on."
    ),
    version: str = typer.Option(
        None,
        "--version",
        metavar="NAME",
        help="Run on this frozen dataset version (assay versions list), not on the live "
        "items; its statuses and chunking are used (--chunking still overrides).",
        show_default=False,
    ),
    concurrency: int = typer.Option(
        None,
        "--concurrency",
        metavar="N",
        help="Units (a task through a pipeline) each worker runs at once. Default: the sum "
        "of max_in_flight of the endpoints the experiment calls (1 with the local model).",
        show_default=False,
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Create an experiment: freeze the tasks of the chosen items, ready to run."""
    pipelines: list[Any] = []
    for value in pipeline or ["keyword"]:
        parsed = _pipeline(value)
        pipelines.extend(parsed if isinstance(parsed, list) else [parsed])
    metrics = [_metric(m) for m in metric] or None
    options: dict[str, Any] = {"mode": mode, "metrics": metrics, "turns": turns, "seed": seed}
    options.update(chunking=chunking, version=version)
    if concurrency is not None:
        options["concurrency"] = concurrency
    server = remote.server(ctx)
    if server is not None:
        from assay.cli import remote_experiments

        data = remote_experiments.create(
            server, project, name, pipelines, statuses=status.split(","), **options
        )
        _created(remote_experiments.experiment_of(data), data, as_json)
        return
    pipelines = [_local_files(p) for p in pipelines]
    from assay.experiments import create_experiment
    from assay.store.db import transaction

    def body(ws: Workspace) -> Any:
        with transaction(ws.engine, None) as conn:
            target = project_of(ws, project)
            return create_experiment(
                ws, target, name, pipelines=pipelines, statuses=status, conn=conn, **options
            )

    created = run(ctx, body)
    _created(created, created, as_json)


def _created(created: Any, data: Any, as_json: bool) -> None:
    if as_json:
        print_json(data)
        return
    console().print(
        f"Created experiment {created.name!r} (id {created.id}): {created.task_count} tasks × "
        f"{len(created.pipelines)} pipeline(s). Run it: assay experiments run {created.name}"
    )
    _print_version(created)


def _print_version(experiment: Any) -> None:
    frozen = experiment.selection.get("version")
    if frozen:
        console().print(f"On dataset version {frozen['name']!r}, sha256 {frozen['hash']}")


def run_command(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="EXPERIMENT", help="Experiment name or id."),
    project: str = ProjectOption,
    background: bool = typer.Option(
        False,
        "--background",
        help="Queue the run and return at once: a server or `assay worker` runs it "
        "(see docs/deploy.md), and it resumes by itself if that process dies. A large run "
        "is split into shards that every worker running jobs takes a share of.",
    ),
    max_cost: float = typer.Option(
        None,
        "--max-cost",
        metavar="USD",
        help="Stop the run cleanly once it has spent this many US dollars (priced with "
        "ASSAY_LLM_PRICES; every model called needs a price). Results so far are kept.",
        show_default=False,
    ),
    max_requests: int = typer.Option(
        None,
        "--max-requests",
        metavar="N",
        help="Stop the run cleanly once it has made this many model requests (answers from "
        "the response cache do not count). Results so far are kept.",
        show_default=False,
    ),
    no_cache: bool = NoCacheOption,
    as_json: bool = JsonOption,
) -> None:
    """Run an experiment, or resume it: tasks with a stored result are skipped, failed
    tasks are tried again. Many tasks run at once, as many as the endpoints take (see
    `assay experiments create --concurrency`). Ctrl-C (or `assay experiments cancel`)
    stops: the units in flight finish and are kept.

    Deterministic model requests (temperature 0 or a seed) are answered from the response
    cache when they were asked before; --no-cache asks every model again."""
    from assay.experiments import run_experiment
    from assay.experiments.budget import Budget

    budget = _budget(max_cost, max_requests)
    server = remote.server(ctx)
    if server is not None:
        from assay.cli import remote_experiments

        if background:
            data = remote_experiments.start(server, project, name, budget, not no_cache)
            print_queued(str(data["name"]), data, as_json)
            return
        data = remote_experiments.run(server, project, name, as_json, budget, not no_cache)
        _ran(remote_experiments.experiment_of(data), data, as_json)
        return
    if background:
        data = run(
            ctx, lambda ws: queue_run(ws, project_of(ws, project), name, budget, not no_cache)
        )
        print_queued(str(data["name"]), data, as_json)
        return

    def body(ws: Workspace) -> Any:
        refuse_if_queued(ws, project_of(ws, project), name)
        with progress_bar(not as_json) as bar:
            job = bar.add_task(f"Running {name}", total=None)
            return run_experiment(
                ws,
                project_of(ws, project),
                name,
                progress=lambda d, t: bar.update(job, completed=d, total=t),
                cache=not no_cache,
                budget=Budget.from_json(budget),
            )

    try:
        result = run(ctx, body)
    except KeyboardInterrupt:
        fail(f"stopped; the results so far are kept. Resume: assay experiments run {name}", 130)
    _ran(result, result, as_json)


def _budget(max_cost: float | None, max_requests: int | None) -> dict[str, Any] | None:
    """The run's cap as the API takes it (checked here, so a typo fails at once)."""
    from assay.errors import AssayError
    from assay.experiments.budget import Budget

    given = {"max_cost": max_cost, "max_requests": max_requests}
    try:
        Budget.from_json(given)
    except AssayError as exc:
        fail(escape(f"--max-cost/--max-requests: {exc}"))
    return {k: v for k, v in given.items() if v is not None} or None


def _ran(result: Any, data: Any, as_json: bool) -> None:
    if as_json:
        print_json(data)
    else:
        _print_experiment(result)
    if result.status == "failed":
        fail(escape(f"experiment {result.name!r} failed: {result.message}"))
    broken = [
        pipeline
        for pipeline, aggregate in (result.aggregates or {}).items()
        if result.task_count and aggregate.get("errors", 0) >= result.task_count
    ]
    if broken and result.status == "done":
        fail(
            escape(
                f"pipeline(s) {', '.join(broken)} of {result.name!r} failed on every task "
                f"({result.task_count} of {result.task_count}); the results are kept. "
                f"One task's error: assay experiments show {result.name} --task TASK_ID"
            )
        )


def show(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="EXPERIMENT", help="Experiment name or id."),
    task: str = typer.Option(
        None, "--task", metavar="TASK_ID", help="Show one task's results in every pipeline."
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Show an experiment's status and metric means per pipeline, or one task in detail."""
    server = remote.server(ctx)
    if server is not None:
        from assay.cli import remote_experiments

        if task:
            remote_experiments.show_task(server, project, name, task, as_json)
            return
        data = remote_experiments.get(server, project, name)
        if as_json:
            print_json(data)
        else:
            _print_experiment(remote_experiments.experiment_of(data), data.get("progress"))
        return
    from assay.experiments import get_experiment, task_results

    if task:
        found = run(ctx, lambda ws: task_results(ws, project_of(ws, project), name, task))
        gold, results = found
        if as_json:
            print_json({"task": gold, "results": results})
            return
        out = console()
        out.print(f"[bold]{gold.task_id}[/] ({gold.query_type}): {gold.turns[-1]}", markup=True)
        out.print(f"reference: {gold.answer}", markup=False)
        for pipeline, result in results.items():
            out.print(f"\n[bold]{pipeline}[/]")
            if result.error:
                out.print(f"error: {result.error}", markup=False)
                continue
            out.print(f"answer: {result.answer}", markup=False)
            ids = ", ".join(str(r.get("chunk_id") or r.get("doc_id")) for r in result.retrieved)
            out.print(f"retrieved: {ids}", markup=False)
            out.print(f"metrics: {json.dumps(result.metrics)}", markup=False)
        return

    def body(ws: Workspace) -> Any:
        experiment = get_experiment(ws, project_of(ws, project), name)
        return experiment, live_progress(ws, experiment)

    experiment, progress = run(ctx, body)
    if as_json:
        from assay.records import to_json

        print_json({**to_json(experiment), "progress": progress})
    else:
        _print_experiment(experiment, progress)


def cancel(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="EXPERIMENT", help="Experiment name or id."),
    project: str = ProjectOption,
) -> None:
    """Ask a running experiment to stop after its current task (resume with run)."""

    def body(ws: Workspace) -> Any:
        from assay.experiments import cancel_experiment
        from assay.store.db import transaction

        with transaction(ws.engine, None) as conn:
            cancelled = cancel_experiment(ws, project_of(ws, project), name, conn=conn)
        drop_queued_run(ws, cancelled.id)
        return cancelled

    server = remote.server(ctx)
    if server is not None:
        from assay.cli import remote_experiments

        data = remote_experiments.cancel(server, project, name)
        result = remote_experiments.experiment_of(data)
    else:
        result = run(ctx, body)
    console().print(f"Experiment {result.name!r}: stop requested (status {result.status}).")


def _print_experiment(experiment: Any, progress: dict[str, Any] | None = None) -> None:
    from assay.cli.experiment_show import print_experiment

    print_experiment(experiment, _print_version, progress)
