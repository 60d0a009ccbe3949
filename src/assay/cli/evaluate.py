"""``assay eval``: score a run file, JSONL answers or an HTTP endpoint; a CI gate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli import remote
from assay.cli.common import (
    JsonOption,
    NoCacheOption,
    ProjectOption,
    command,
    console,
    escape,
    fail,
    print_json,
    progress_bar,
    project_of,
    run,
    user_errors,
    warn,
)
from assay.errors import InvalidInput

if TYPE_CHECKING:
    from assay.cli.remote import Server
    from assay.store.workspace import Workspace

Scores = tuple[dict[str, float | None], dict[str, Any]]
"""The metric means (for the gates) and the summary printed."""
GATE_EXIT = 3
DIRECT_METRICS = ("nDCG@10", "R@10", "P@10", "RR", "AP")
MISSING_TASK = "they count as errors and are left out of the means"


LLM_HELP = "LLM metrics such as faithfulness are judged by the project's generator."


def register(app: typer.Typer) -> None:
    command(app, "eval", evaluate)


def parse_gates(pairs: list[str]) -> dict[str, float]:
    """``["nDCG@10=0.5"]`` → ``{"nDCG@10": 0.5}`` with the metric's canonical name."""
    from assay.experiments.catalogue import metric_name

    gates: dict[str, float] = {}
    for pair in pairs:
        name, sep, raw = pair.rpartition("=")
        if not sep or not name.strip():
            fail(f"--fail-under {pair!r} must look like METRIC=VALUE, e.g. nDCG@10=0.5")
        try:
            value = float(raw)
        except ValueError:
            fail(f"--fail-under {pair!r}: {raw!r} is not a number")
        try:
            canonical = metric_name(name)
        except InvalidInput as exc:
            fail(f"--fail-under {pair!r}: {exc}")
        gates[canonical] = value
    return gates


def _with_gates(metrics: list[str], gates: dict[str, float]) -> list[str]:
    """The metrics asked for, plus any a gate names that is not among them."""
    from assay.experiments.catalogue import metric_name

    try:
        names = {metric_name(m) for m in metrics}
    except InvalidInput as exc:
        fail(str(exc).replace("[", "\\["))
    return [*metrics, *(g for g in gates if g not in names)]


def check_gates(values: dict[str, float | None], gates: dict[str, float]) -> list[str]:
    """Messages for every gate that fails (a metric with no value fails its gate)."""
    failures = []
    for name, threshold in gates.items():
        value = values.get(name)
        if value is None:
            failures.append(
                f"{name} has no value (no task could be scored) - threshold {threshold}"
            )
        elif value < threshold:
            failures.append(f"{name} = {value:.4f} is under the threshold {threshold}")
    return failures


def evaluate(
    ctx: typer.Context,
    run_file: Path = typer.Option(
        None, "--run", metavar="FILE", help="TREC run file: qid Q0 docid rank score tag."
    ),
    answers: Path = typer.Option(
        None,
        "--answers",
        metavar="FILE",
        help='JSONL answers: {"task_id"|"query_id", "answer", "contexts"?} per line.',
    ),
    endpoint: str = typer.Option(
        None,
        "--endpoint",
        metavar="URL",
        help="A RAG service speaking the HTTP contract of docs/evaluation.md.",
    ),
    qrels: Path = typer.Option(
        None,
        "--qrels",
        metavar="FILE",
        help="Score --run against these qrels directly (TREC or BEIR TSV); no project needed.",
    ),
    judged: bool = typer.Option(
        False,
        "--judged",
        help="Score --run against the qrels of the project's document judgments "
        "(judging mode, see docs/judging.md) instead of its items.",
    ),
    metric: list[str] = typer.Option(
        [], "--metric", "-m", metavar="NAME", help="Metric to compute (repeatable); " + LLM_HELP
    ),
    fail_under: list[str] = typer.Option(
        [],
        "--fail-under",
        metavar="METRIC=VALUE",
        help=f"Exit with status {GATE_EXIT} when a metric's mean is below VALUE (repeatable).",
    ),
    mode: str = typer.Option(
        None,
        "--mode",
        metavar="MODE",
        help="retrieval or rag (default: retrieval for --run alone, else rag).",
        show_default=False,
    ),
    chunking: str = typer.Option(
        None, "--chunking", "-c", metavar="NAME", help="Chunking the gold is mapped onto."
    ),
    k: int = typer.Option(
        None,
        "-k",
        "--top-k",
        metavar="N",
        min=1,
        max=1000,
        help="Contexts asked of --endpoint (default 10); depth kept of --run (default all).",
        show_default=False,
    ),
    old_k: int = typer.Option(None, "--k", min=1, max=1000, hidden=True),
    status: str = typer.Option(
        "accepted",
        "--status",
        metavar="STATUS",
        help="Item statuses: draft, submitted, accepted, rejected or all (comma-separated).",
    ),
    turns: str = typer.Option(
        "all", "--turns", metavar="WHICH", help="Conversation turns: all, first, last, random."
    ),
    timeout: float = typer.Option(60.0, "--timeout", metavar="S", help="Endpoint timeout."),
    project: str = ProjectOption,
    no_cache: bool = NoCacheOption,
    as_json: bool = JsonOption,
) -> None:
    """Score a system against a project's accepted items, or a run against qrels.

    Give --run (ranked chunk or document ids), --answers, or --endpoint; ids in the files are
    task ids (ITEM::TURN), item ids or the ids items were imported with. With --qrels and
    --run, scores the run against the qrels directly (IR measures, as ir_measures names
    them). With --judged and --run, scores the run against the graded qrels of the
    project's document judgments (`assay judge qrels`). With --fail-under, exits with
    status 3 if a metric is below its threshold.

    With ASSAY_URL set (see `assay --help`), this runs against that team server.
    """
    from assay.experiments.scoring import DEFAULT_METRICS

    k = k if k is not None else old_k  # --k: the spelling before -k/--top-k
    gates = parse_gates(fail_under)
    if qrels is not None or judged:
        source = "--qrels" if qrels is not None else "--judged"
        if qrels is not None and judged:
            fail("give --qrels or --judged, not both")
        if run_file is None:
            fail(f"{source} needs --run, the run file to score")
        metrics = _with_gates(metric or list(DIRECT_METRICS), gates)
        if qrels is not None:
            values, summary = _direct(lambda: _read_qrels(qrels), str(qrels), run_file, metrics, k)
        else:
            label, found = _judged_qrels(ctx, project)
            values, summary = _direct(lambda: found, label, run_file, metrics, k)
    else:
        sources = [s for s in (run_file, answers, endpoint) if s is not None]
        if not sources:
            fail("give --run, --answers or --endpoint (or --qrels with --run)")
        if endpoint is not None and (run_file is not None or answers is not None):
            fail("--endpoint cannot be combined with --run or --answers")
        chosen = mode or ("retrieval" if answers is None and endpoint is None else "rag")
        if chosen not in DEFAULT_METRICS:
            fail(f"--mode {chosen!r}: choose retrieval, generation or rag")
        metrics = _with_gates(metric or list(DEFAULT_METRICS[chosen]), gates)
        spec: dict[str, Any] = {"name": "system", "timeout_s": timeout}
        if endpoint is not None:
            spec.update(kind="external", endpoint=endpoint, retriever={"k": k or 10})
        else:
            spec.update(kind="file", run_file=run_file, answers_file=answers)

        def score(ws: Workspace, name: str | None, data: dict[str, Any]) -> Scores:
            return _project_eval(
                ws, name, data, chosen, metrics, chunking, status, turns, k, as_json, not no_cache
            )

        server = remote.server(ctx)
        if server is None:
            values, summary = run(ctx, lambda ws: score(ws, project, spec))
        else:
            if endpoint is not None:
                fail(
                    "--endpoint with a server (ASSAY_URL) is not there yet; use --run or --answers"
                )
            values, summary = _remote_eval(server, project, status, spec, score)
    failures = check_gates(values, gates)
    if as_json:
        print_json({**summary, "gates": {"passed": not failures, "failures": failures}})
    else:
        for message in summary.get("warnings") or []:
            warn(message)
        _print_table(summary)
    if failures:
        from rich.console import Console

        for failure in failures:
            Console(stderr=True).print(f"[bold red]Gate failed:[/] {failure}", highlight=False)
        raise typer.Exit(GATE_EXIT)


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    from assay.experiments.runfiles import read_qrels

    return read_qrels(path)


def _judged_qrels(ctx: typer.Context, project: str | None) -> tuple[str, dict[str, dict[str, int]]]:
    """The graded qrels of a project's document judgments (the server's with ASSAY_URL)."""
    server = remote.server(ctx)
    if server is not None:
        name = server.project(project)
        found = server.json("GET", remote.project_path(name, "judging", "qrels"))["qrels"]
    else:
        from assay.judging.qrels import judged_qrels

        def body(ws: Workspace) -> tuple[str, dict[str, dict[str, int]]]:
            target = project_of(ws, project)
            return target.name, judged_qrels(ws, target)

        name, found = run(ctx, body)
    if not found:
        fail(escape(f"project {name!r} has no rated document judgments yet: nothing to score"))
    return f"judgments of project {name}", found


def _direct(
    load_qrels: Callable[[], dict[str, dict[str, int]]],
    qrels_label: str,
    run_path: Path,
    metrics: list[str],
    k: int | None,
) -> tuple[dict[str, float | None], dict[str, Any]]:
    from assay.errors import AssayError
    from assay.experiments.query_match import score_run

    gold = qrels_label if qrels_label.startswith("judgments ") else f"the qrels {qrels_label}"
    try:
        qrels = load_qrels()
        values, matched, queries = score_run(qrels, run_path, metrics, k, gold)
    except AssayError as exc:
        fail(str(exc).replace("[", "\\["))
    warning = matched.warning("each counts as 0, as in ir_measures and trec_eval -c")
    summary = {
        "qrels": qrels_label,
        "run": str(run_path),
        "tasks": len(qrels),
        "run_queries": queries,
        "query_ids": matched.to_json(),
        "warnings": [warning] if warning else [],
        "metrics": dict(values),
    }
    return dict(values), summary


def _remote_eval(
    server: Server,
    project_name: str | None,
    status: str,
    spec_data: dict[str, Any],
    score: Callable[[Workspace, str, dict[str, Any]], Scores],
) -> Scores:
    """Score against a server's gold set: the same scoring, on a local copy of the items
    (``remote_transfer.gold_workspace``), the files' ids turned into the copy's."""
    import tempfile

    from assay.cli.remote_transfer import gold_workspace, translate_answers, translate_run

    with (
        user_errors(),
        tempfile.TemporaryDirectory(prefix="assay-eval-") as tmp,
        gold_workspace(server, project_name, status) as (ws, target, ids),
    ):
        data = dict(spec_data)
        if data.get("run_file") is not None:
            data["run_file"] = translate_run(data["run_file"], ids, Path(tmp) / "run")
        if data.get("answers_file") is not None:
            answers = Path(tmp) / "answers"
            data["answers_file"] = translate_answers(data["answers_file"], ids, answers)
        return score(ws, target.name, data)


def _project_eval(
    ws: Workspace,
    project_name: str | None,
    spec_data: dict[str, Any],
    mode: str,
    metrics: list[str],
    chunking: str | None,
    status: str,
    turns: str,
    k: int | None,
    quiet: bool,
    cache: bool = True,
) -> tuple[dict[str, float | None], dict[str, Any]]:
    from assay.experiments.pipelines import attach_local_files, parse_pipeline
    from assay.experiments.query_match import file_overlaps
    from assay.experiments.runner import evaluate_tasks
    from assay.experiments.scoring import means
    from assay.experiments.tasks import build_tasks

    target = project_of(ws, project_name)
    spec = parse_pipeline(attach_local_files(ws, spec_data))  # your files, read here
    tasks = build_tasks(ws, target, statuses=status, turns=turns, chunking=chunking)
    if not tasks:
        raise InvalidInput(
            f"project {target.name!r} has no items with status {status}; nothing to score"
        )
    overlaps = file_overlaps(ws, spec, tasks, f"project {target.name!r}")
    with progress_bar(not quiet) as bar:
        job = bar.add_task("Scoring", total=len(tasks))
        result = evaluate_tasks(
            ws,
            target,
            spec,
            tasks,
            mode=mode,
            metrics=metrics or None,
            chunking=chunking,
            depth=k if spec.kind == "file" else None,
            cache=cache,
            progress=lambda d, t: bar.update(job, completed=d, total=t),
        )
    values = means(result.summary)
    summary = {
        "project": target.name,
        "mode": mode,
        "tasks": len(tasks),
        "errors": result.summary["errors"],
        "error_examples": [
            {"task_id": r.task.task_id, "error": r.outcome.error} for r in result.errors[:5]
        ],
        "metrics": values,
        "by_query_type": {
            query_type: {name: part["mean"] for name, part in parts.items()}
            for query_type, parts in result.summary["by_query_type"].items()
        },
        "counts": {name: part["count"] for name, part in result.summary["overall"].items()},
        "query_ids": {kind: found.to_json() for kind, found in overlaps.items()},
        "warnings": [w for found in overlaps.values() if (w := found.warning(MISSING_TASK))],
    }
    return values, summary


def _number(value: Any) -> str:
    return "-" if value is None else f"{value:.4f}"


def _print_table(summary: dict[str, Any]) -> None:
    out = console()
    counts = summary.get("counts", {})
    from rich.table import Table

    table = Table("metric", "mean", "scored", title=f"{summary.get('tasks', 0)} tasks")
    for name, value in summary["metrics"].items():
        table.add_row(name, _number(value), str(counts.get(name, summary.get("tasks", ""))))
    out.print(table)
    by_type = summary.get("by_query_type") or {}
    if len(by_type) > 1:
        names = list(summary["metrics"])
        breakdown = Table("query type", *names, title="by query type")
        for query_type, values in by_type.items():
            breakdown.add_row(query_type or "-", *(_number(values.get(n)) for n in names))
        out.print(breakdown)
    if summary.get("errors"):
        out.print(f"[yellow]{summary['errors']} task(s) failed[/], e.g.:")
        for example in summary.get("error_examples", []):
            out.print(f"  {example['task_id']}: {example['error']}", markup=False)
