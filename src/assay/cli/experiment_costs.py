"""Token and cost totals of an experiment, as ``assay experiments show`` prints them."""

from __future__ import annotations

from typing import Any


def print_costs(out: Any, table: Any, experiment: Any, pipelines: list[str]) -> None:
    """Rows for the metrics table (tokens, cost per pipeline), the table, then the total."""
    costs = (experiment.costs or {}).get("pipelines", {})
    if any(costs.get(p, {}).get("calls") for p in pipelines):
        table.add_row("tokens in/out", *(_tokens(costs.get(p)) for p in pipelines))
        table.add_row("cost (USD)", *(_cost(costs.get(p)) for p in pipelines))
    out.print(table)
    total = (experiment.costs or {}).get("total") or {}
    if total.get("calls"):
        out.print(
            f"Model calls: {total['calls']}, tokens {_tokens(total)}, cost {_cost(total)}",
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
