"""The dashboard's panel on LLM suggestions: accepted, pending and rejected relevance
suggestions per suggested label and per model, rewrites per model, as one stacked bar each
(the figures come from :func:`assay.gold.suggestions.acceptance_rates`)."""

from __future__ import annotations

from typing import Any

from assay.web.dashboard_plots import Bar, Figure, Segment, hbars
from assay.web.i18n import Translator
from assay.web.locale_format import percent

STACK = (("accepted", "st-accepted"), ("pending", "st-open"), ("rejected", "st-rejected"))


def _bar(label: str, row: dict[str, Any], t: Translator) -> Bar:
    segments = [
        Segment(row[key], cls, f"{label} · {t('suggest.state.' + key)}: {row[key]}")
        for key, cls in STACK
    ]
    decided = row["accepted"] + row["rejected"]
    if not decided:
        return Bar(label, segments, t("suggest.dash.only_waiting", pending=row["pending"]))
    rate = percent(row["acceptance_rate"], t.language)
    return Bar(label, segments, t("suggest.dash.shown", rate=rate, decided=decided))


def suggestion_figure(data: dict[str, Any], t: Translator) -> Figure | None:
    """Bars per label, then per model (relevance), then per model (rewrites); None when the
    project has no suggestion yet."""
    rates = data["suggestions"]
    if not rates["overall"]["total"]:
        return None
    bars = [
        _bar(t("items.label." + r["label"]), r, t)
        for r in rates["relevance_by_label"]
        if r["total"]
    ]
    bars += [
        _bar(t("suggest.dash.model", model=r["model"]), r, t) for r in rates["relevance_by_model"]
    ]
    bars += [
        _bar(t("suggest.dash.rewrites", model=r["model"]), r, t) for r in rates["rewrite_by_model"]
    ]
    overall = rates["overall"]
    description = t(
        "suggest.dash.desc",
        total=overall["total"],
        accepted=overall["accepted"],
        rejected=overall["rejected"],
        pending=overall["pending"],
    )
    return hbars("dash-suggestions", t("suggest.dash.title"), description, bars)
