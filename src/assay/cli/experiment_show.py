"""How ``assay experiments show`` prints an experiment: status, metric means per pipeline,
tokens and costs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.cli.common import console


def print_experiment(
    experiment: Any,
    print_version: Callable[[Any], None],
    progress: dict[str, Any] | None = None,
) -> None:
    """Status (live, while it runs), metric means per pipeline, tokens and costs."""
    out = console()
    status = experiment.status
    if progress and progress.get("running") and status != "running":
        status = "queued"
    out.print(
        f"[bold]{experiment.name}[/] (id {experiment.id}, mode {experiment.mode}): "
        f"{status}, {experiment.done_count}/{experiment.total} done, "
        f"{experiment.error_count} error(s)"
    )
    if progress:
        print_live(out, progress)
    if experiment.message:
        out.print(experiment.message, markup=False)
    print_version(experiment)
    if not experiment.aggregates:
        return
    from rich.table import Table

    pipelines = list(experiment.aggregates)
    table = Table("metric", *pipelines)
    for metric in experiment.metric_names:
        cells = []
        for pipeline in pipelines:
            part = experiment.aggregates[pipeline]["overall"].get(metric, {})
            mean = part.get("mean")
            if mean is None and part.get("counts"):
                cells.append(", ".join(f"{k}: {v}" for k, v in part["counts"].items()))
            else:
                cells.append("-" if mean is None else f"{mean:.4f}")
        table.add_row(metric, *cells)
    table.add_row("errors", *(str(experiment.aggregates[p].get("errors", 0)) for p in pipelines))
    print_costs(out, table, experiment, pipelines)


def print_live(out: Any, progress: dict[str, Any]) -> None:
    """The live part of a run: waiting for a worker, or in flight, ETA and spend so far."""
    from assay.jobs.workers import START_WORKER

    if progress.get("waiting"):
        out.print(f"Waiting: {START_WORKER}.", markup=False)
        return
    spent = progress.get("spent") or {}
    if progress.get("status") != "running" and not spent.get("units"):
        return
    parts = []
    if progress.get("status") == "running":
        parts.append(f"{progress.get('in_flight', 0)} in flight")
        parts.append(f"{progress.get('workers', 0)} worker(s)")
        eta = progress.get("eta_s")
        parts.append("ETA " + (_duration(eta) if eta is not None else "-"))
    calls = spent.get("requests", 0) + spent.get("cached_requests", 0)
    parts.append(
        f"this run: {spent.get('requests', 0)} request(s), "
        f"{round(100 * spent.get('cached_share', 0))}% of {calls} call(s) cached"
    )
    parts.append(f"tokens {spent.get('input_tokens', 0)}/{spent.get('output_tokens', 0)}")
    parts.append(f"cost ${spent.get('cost_usd', 0):.4f}")
    budget = progress.get("budget") or {}
    caps = []
    if budget.get("max_cost_usd"):
        caps.append(f"max ${budget['max_cost_usd']}")
    if budget.get("max_requests"):
        caps.append(f"max {budget['max_requests']} requests")
    if caps:
        parts.append("budget " + ", ".join(caps))
    out.print("; ".join(parts), markup=False)


def _duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def print_costs(out: Any, table: Any, experiment: Any, pipelines: list[str]) -> None:
    """Rows for the metrics table (tokens, cost per pipeline), the table, then the total."""
    costs = (experiment.costs or {}).get("pipelines", {})
    if any(costs.get(p, {}).get("calls") for p in pipelines):
        table.add_row("tokens in/out", *(_tokens(costs.get(p)) for p in pipelines))
        table.add_row("cost (USD)", *(_cost(costs.get(p)) for p in pipelines))
    out.print(table)
    total = (experiment.costs or {}).get("total") or {}
    if total.get("calls"):
        cached = total.get("cached_calls", 0)
        share = f" ({cached} from the cache, {total.get('cached_share', 0):.0%})" if cached else ""
        out.print(
            f"Model calls: {total['calls']}{share}, tokens {_tokens(total)}, cost {_cost(total)}",
            markup=False,
        )
    if (experiment.costs or {}).get("prices_error"):
        out.print(f"Prices: {experiment.costs['prices_error']}", markup=False)


def _tokens(total: dict[str, Any] | None) -> str:
    if not total:
        return "-"
    return f"{total.get('input_tokens', 0)}/{total.get('output_tokens', 0)}"


def _cost(total: dict[str, Any] | None) -> str:
    if not total or not total.get("calls"):
        return "-"
    if total.get("cost_usd") is None:
        return "no price for " + ", ".join(total.get("unpriced") or ["?"])
    return f"{total['cost_usd']:.6f}"
