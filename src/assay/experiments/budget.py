"""What a run spends (requests, cached answers, tokens, cost) and the cap that stops it.

A run's spend is counted from the usage each result records (``details.usage`` and the
judges', see :mod:`assay.experiments.costs`): a call answered from the response cache
(``"cached": true``) made no request and costs nothing, so it counts apart. The cost is
priced when the result arrives, with ASSAY_LLM_PRICES, so the cap can be checked as the run
goes.

A :class:`Budget` caps the requests and/or the cost of one run. A unit (a task through a
pipeline) starts only while what is spent plus what the units in flight are expected to
spend (the mean of the units finished so far) stays within the cap; the units already in
flight finish and are kept, so a run stops at the cap, not past it by more than those.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from assay.errors import InvalidInput
from assay.experiments.costs import Prices, call_tokens, prices_from_settings, usage_calls
from assay.experiments.scoring import metric_plan
from assay.experiments.store import Experiment, pipeline_specs


@dataclass(frozen=True, slots=True)
class Budget:
    """The cap of one run; ``None`` for no cap on that side."""

    max_cost_usd: float | None = None
    max_requests: int | None = None

    def __post_init__(self) -> None:
        cost = self.max_cost_usd
        if cost is not None and (
            isinstance(cost, bool)
            or not isinstance(cost, int | float)
            or not math.isfinite(cost)
            or cost <= 0
        ):
            raise InvalidInput(f"max_cost must be a number of US dollars > 0, got {cost!r}")
        requests = self.max_requests
        if requests is not None and (
            isinstance(requests, bool) or not isinstance(requests, int) or requests < 1
        ):
            raise InvalidInput(f"max_requests must be a whole number >= 1, got {requests!r}")

    @property
    def capped(self) -> bool:
        return self.max_cost_usd is not None or self.max_requests is not None

    def to_json(self) -> dict[str, Any] | None:
        if not self.capped:
            return None
        return {"max_cost_usd": self.max_cost_usd, "max_requests": self.max_requests}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Budget:
        """From stored JSON or a request body (``max_cost``/``max_cost_usd``,
        ``max_requests``); unknown keys are refused by name."""
        if not data:
            return cls()
        known = {"max_cost", "max_cost_usd", "max_requests"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidInput(
                f"budget: unknown field(s) {', '.join(unknown)}; valid: max_cost, max_requests"
            )
        cost = data.get("max_cost_usd", data.get("max_cost"))
        if isinstance(cost, int) and not isinstance(cost, bool):
            cost = float(cost)
        return cls(max_cost_usd=cost, max_requests=data.get("max_requests"))

    def check_prices(self, models: Iterable[str], prices: Prices) -> None:
        """A cost cap needs a price for every model the run calls: an unpriced model
        would pass as free and the cap would never hold."""
        if self.max_cost_usd is None:
            return
        unpriced = sorted({m for m in models if m and m not in prices})
        if unpriced:
            raise InvalidInput(
                f"max_cost needs a price for every model the run calls; no price for "
                f"{', '.join(unpriced)}: set ASSAY_LLM_PRICES (docs/evaluation.md) or cap "
                "with max_requests"
            )

    def reached(self, spent: Spend) -> str:
        """Why the run must stop (empty while within the cap)."""
        if self.max_requests is not None and spent.requests >= self.max_requests:
            return (
                f"budget reached: {spent.requests} requests of max {self.max_requests}; the "
                "results so far are kept, run it again with a higher cap to go on"
            )
        if self.max_cost_usd is not None and spent.cost_usd >= self.max_cost_usd:
            return (
                f"budget reached: ${spent.cost_usd:.4f} of max ${self.max_cost_usd:.4f}; the "
                "results so far are kept, run it again with a higher cap to go on"
            )
        return ""

    def stop_message(self, spent: Spend) -> str:
        """Why a run stopped for its budget (reached, or the next unit would pass it)."""
        reached = self.reached(spent)
        if reached:
            return reached
        caps = []
        if self.max_requests is not None:
            caps.append(f"{spent.requests} requests of max {self.max_requests}")
        if self.max_cost_usd is not None:
            caps.append(f"${spent.cost_usd:.4f} of max ${self.max_cost_usd:.4f}")
        return (
            f"budget reached: {', '.join(caps)}, and one more unit would pass it; the results "
            "so far are kept, run it again with a higher cap to go on"
        )

    def allows(self, spent: Spend, in_flight: int) -> bool:
        """Whether one more unit may start, counting what the units in flight (and it)
        are expected to spend."""
        if not self.capped:
            return True
        units = max(spent.units, 1)
        ahead = in_flight + 1
        if self.max_requests is not None:
            per_unit = spent.requests / units if spent.units else 1.0
            if spent.requests + ahead * per_unit > self.max_requests:
                return False
        if self.max_cost_usd is not None:
            per_unit_cost = spent.cost_usd / units
            if spent.cost_usd + ahead * per_unit_cost > self.max_cost_usd:
                return False
        return not self.reached(spent)


@dataclass(slots=True)
class Spend:
    """Requests, cached answers, tokens and cost of the units finished so far."""

    units: int = 0
    requests: int = 0
    cached_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add_result(self, details: Mapping[str, Any], prices: Prices) -> None:
        """Count one finished unit from the usage its result recorded."""
        self.units += 1
        for entry in usage_calls(details):
            if entry.get("cached"):
                self.cached_requests += 1
                continue
            model, tokens_in, tokens_out = call_tokens(entry)
            self.requests += 1
            self.input_tokens += tokens_in
            self.output_tokens += tokens_out
            price = prices.get(model)
            if price is not None:
                self.cost_usd += (tokens_in * price[0] + tokens_out * price[1]) / 1e6

    def plus(self, other: Spend) -> Spend:
        return Spend(
            self.units + other.units,
            self.requests + other.requests,
            self.cached_requests + other.cached_requests,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
        )

    def to_json(self) -> dict[str, Any]:
        calls = self.requests + self.cached_requests
        return {
            "units": self.units,
            "requests": self.requests,
            "cached_requests": self.cached_requests,
            "cached_share": round(self.cached_requests / calls, 4) if calls else 0.0,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
        }


def called_models(experiment: Experiment) -> list[str]:
    """The models an experiment's pipelines and judges call (what a cost cap must price)."""
    plan = metric_plan(experiment.metrics, experiment.mode)
    settings = [m.generator for m in plan.judges]
    for spec in pipeline_specs(experiment):
        if spec.kind == "search" and experiment.mode != "retrieval":
            settings.append(spec.generator_settings())
    return [g.model for g in settings if g.kind == "openai"]


def check_budget(experiment: Experiment, budget: Budget) -> None:
    """Refuse a cost cap that some model of the experiment has no price for."""
    budget.check_prices(called_models(experiment), prices_from_settings())
