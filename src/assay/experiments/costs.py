"""Token and cost totals of an experiment, per pipeline and overall.

Each stored result may carry the usage of the models it called (``details.usage``: one entry
per stage, ``rewrite``, ``rerank``, ``generate``, each ``{"model", "prompt_tokens",
"completion_tokens", …}``; judges' usage under ``details.judges.<name>.usage``, a list of
them for the catalogue's LLM metrics, which call the judge several times). Totals add
them up: input tokens (``prompt_tokens`` or ``input_tokens``; a bare ``total_tokens``, as some
rerankers report, counts as input), output tokens (``completion_tokens`` or
``output_tokens``), and calls. Failed results count too: their calls were made. A call
answered from the response cache (its usage says ``"cached": true``) counts as a call and its
tokens, but costs nothing: ``cached_calls`` and ``cached_share`` (of all calls) say how many.

Prices come from the setting ``ASSAY_LLM_PRICES``: JSON ``{"model": {"input": USD,
"output": USD}}`` per million tokens. A cost is given only where every model used has a
price; the models without one are listed (``unpriced``), so a missing price never passes as
free. Prices are applied when totals are read, so changing them updates old experiments.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from assay.errors import InvalidInput
from assay.llm.records import Generation

PRICES_SETTING = "ASSAY_LLM_PRICES"
Prices = dict[str, tuple[float, float]]


def parse_prices(text: str) -> Prices:
    """``{"model": {"input": x, "output": y}}`` (USD per 1M tokens) → ``{model: (x, y)}``."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{PRICES_SETTING} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInput(
            f'{PRICES_SETTING} must be an object such as {{"gpt-4o-mini": {{"input": 0.15, '
            '"output": 0.6}}}'
        )
    prices: Prices = {}
    for model, price in data.items():
        if not isinstance(price, dict) or set(price) - {"input", "output"}:
            raise InvalidInput(
                f"{PRICES_SETTING}: {model!r} needs an object with input and output (USD per "
                "million tokens)"
            )
        values = []
        for side in ("input", "output"):
            value = price.get(side, 0)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise InvalidInput(f"{PRICES_SETTING}: {model!r} {side} must be a number >= 0")
            values.append(float(value))
        prices[str(model)] = (values[0], values[1])
    return prices


def prices_from_settings() -> Prices:
    from assay.store.settings import Settings

    return parse_prices(Settings().llm_prices)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def call_usage(model: str, generation: Generation) -> dict[str, Any]:
    """A model call's usage as results record it: the model, its token counts, and
    ``"cached": True`` when the response cache answered (no request, nothing billed)."""
    usage: dict[str, Any] = {"model": model, **generation.usage}
    if generation.cached:
        usage["cached"] = True
    return usage


def usage_calls(details: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every model call a result recorded: the stages' ``usage`` entries, then the judges'
    (a list of them for an LLM metric of the catalogue, one per call)."""
    usage = details.get("usage")
    if isinstance(usage, Mapping):
        yield from (v for v in usage.values() if isinstance(v, Mapping))
    judges = details.get("judges")
    if isinstance(judges, Mapping):
        for judged in judges.values():
            used = judged.get("usage") if isinstance(judged, Mapping) else None
            if isinstance(used, Mapping) and used:
                yield used
            elif isinstance(used, list):
                yield from (u for u in used if isinstance(u, Mapping))


def call_tokens(entry: Mapping[str, Any]) -> tuple[str, int, int]:
    """``(model, input tokens, output tokens)`` of one recorded call."""
    given_in = _int(entry.get("prompt_tokens")) or _int(entry.get("input_tokens"))
    given_out = _int(entry.get("completion_tokens")) or _int(entry.get("output_tokens"))
    if not given_in and not given_out:
        given_in = _int(entry.get("total_tokens"))
    return str(entry.get("model") or "(unnamed)"), given_in, given_out


def usage_entries(details: Mapping[str, Any]) -> Iterator[tuple[str, int, int, bool]]:
    """``(model, input tokens, output tokens, cached)`` of every model call a result
    recorded."""
    for entry in usage_calls(details):
        yield (*call_tokens(entry), entry.get("cached") is True)


def _counts() -> dict[str, Any]:
    return {
        "calls": 0,
        "cached_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "billed_input_tokens": 0,
        "billed_output_tokens": 0,
    }


def _blank() -> dict[str, Any]:
    return {**_counts(), "by_model": {}}


def _add(total: dict[str, Any], model: str, tokens_in: int, tokens_out: int, cached: bool) -> None:
    for part in (total, total["by_model"].setdefault(model, _counts())):
        part["calls"] += 1
        part["input_tokens"] += tokens_in
        part["output_tokens"] += tokens_out
        if cached:
            part["cached_calls"] += 1
        else:
            part["billed_input_tokens"] += tokens_in
            part["billed_output_tokens"] += tokens_out


def _priced(total: dict[str, Any], prices: Prices) -> dict[str, Any]:
    cost = 0.0
    unpriced = []
    for model, part in total["by_model"].items():
        price = prices.get(model)
        if price is None:
            part["cost_usd"] = None
            if part["billed_input_tokens"] or part["billed_output_tokens"]:
                unpriced.append(model)
            continue
        part["cost_usd"] = (
            part["billed_input_tokens"] * price[0] + part["billed_output_tokens"] * price[1]
        ) / 1e6
        cost += part["cost_usd"]
    total["total_tokens"] = total["input_tokens"] + total["output_tokens"]
    total["cached_share"] = total["cached_calls"] / total["calls"] if total["calls"] else 0.0
    total["unpriced"] = sorted(unpriced)
    total["cost_usd"] = None if unpriced else cost
    return total


def cost_totals(
    rows: Iterable[tuple[str, Mapping[str, Any]]],
    pipelines: Iterable[str] = (),
    prices: Prices | None = None,
) -> dict[str, Any]:
    """Totals of ``(pipeline, details)`` rows: ``{"pipelines": {name: total}, "total":
    total}``, each ``{calls, cached_calls, cached_share, input_tokens, output_tokens,
    billed_input_tokens, billed_output_tokens, total_tokens, cost_usd, unpriced, by_model}``."""
    problem = ""
    if prices is None:
        try:
            prices = prices_from_settings()
        except InvalidInput as exc:  # shown with the totals; the page still opens
            prices, problem = {}, str(exc)
    per: dict[str, dict[str, Any]] = {name: _blank() for name in pipelines}
    overall = _blank()
    for pipeline, details in rows:
        bucket = per.setdefault(pipeline, _blank())
        for model, tokens_in, tokens_out, cached in usage_entries(details or {}):
            _add(bucket, model, tokens_in, tokens_out, cached)
            _add(overall, model, tokens_in, tokens_out, cached)
    totals: dict[str, Any] = {
        "pipelines": {name: _priced(total, prices) for name, total in per.items()},
        "total": _priced(overall, prices),
    }
    if problem:
        totals["prices_error"] = problem
    return totals
