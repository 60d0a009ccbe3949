"""How ``assay experiments show`` prints an experiment: status, metric means per pipeline,
tokens and costs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.cli.common import console


def print_experiment(experiment: Any, print_version: Callable[[Any], None]) -> None:
    """Status, metric means per pipeline, tokens and costs."""
    out = console()
    out.print(
        f"[bold]{experiment.name}[/] (id {experiment.id}, mode {experiment.mode}): "
        f"{experiment.status}, {experiment.done_count}/{experiment.total} done, "
        f"{experiment.error_count} error(s)"
    )
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
