"""What the dashboard page shows: the figures of :func:`assay.review.dashboard.dashboard`
laid out as SVG plots (``web.dashboard_plots``), in the reader's language."""

from __future__ import annotations

from typing import Any

from assay.gold.taxonomy import query_types
from assay.records import Project
from assay.web.dashboard_plots import Bar, Figure, Segment, hbars, heatmap, lines
from assay.web.i18n import Translator
from assay.web.locale_format import number
from assay.web.suggestions_view import suggestion_figure

STATUS_ORDER = ("accepted", "submitted", "draft", "rejected")
"""How a bar of items stacks its statuses: finished work first."""


def duration(seconds: float, t: Translator) -> str:
    """``45 s``, ``12 min``, ``1.5 h``, ``3.2 d`` (in the reader's language)."""
    if seconds < 90:
        return t("dash.seconds", n=f"{seconds:.0f}")
    if seconds < 5400:
        return t("dash.minutes", n=f"{seconds / 60:.0f}")
    if seconds < 2 * 86400:
        return t("dash.hours", n=_decimal(seconds / 3600, t))
    return t("dash.days", n=_decimal(seconds / 86400, t))


def count(value: int, language: str) -> str:
    """``12,345`` in English, ``12.345`` in German."""
    return number(value, language)


def _decimal(value: float, t: Translator) -> str:
    return number(value, t.language, 1)


def type_labels(project: Project, language: str, t: Translator) -> dict[str, str]:
    labels = {q.id: q.text(language)[0] for q in query_types(project)}
    labels[""] = t("dash.no_type")
    return labels


def _status_bar(label: str, counts: dict[str, int], t: Translator) -> Bar:
    segments = [
        Segment(counts.get(s, 0), f"st-{s}", f"{label} · {t('status.' + s)}: {counts.get(s, 0)}")
        for s in STATUS_ORDER
    ]
    return Bar(label, segments, count(sum(counts.values()), t.language))


def _single(label: str, value: float, cls: str, shown: str) -> Bar:
    """A bar of one segment, its tooltip the label and what the bar shows."""
    return Bar(label, [Segment(value, cls, f"{label}: {shown}")], shown)


def funnel(data: dict[str, Any], t: Translator) -> Figure:
    f = data["funnel"]
    n = {key: count(value, t.language) for key, value in f.items()}
    created, submitted, reviewed = t("dash.created"), t("dash.submitted"), t("dash.reviewed")
    bars = [
        _single(created, f["total"], "st-all", n["total"]),
        _single(submitted, f["reached_submitted"], "st-submitted", n["reached_submitted"]),
        Bar(
            reviewed,
            [
                Segment(f["accepted"], "st-accepted", f"{t('status.accepted')}: {f['accepted']}"),
                Segment(f["rejected"], "st-rejected", f"{t('status.rejected')}: {f['rejected']}"),
            ],
            f"{n['accepted']} / {n['rejected']}",
        ),
    ]
    description = t(
        "dash.funnel_desc", total=f["total"], submitted=f["reached_submitted"],
        accepted=f["accepted"], rejected=f["rejected"],
    )  # fmt: skip
    return hbars("dash-funnel", t("dash.funnel"), description, bars, centred=True)


def by_type(data: dict[str, Any], labels: dict[str, str], t: Translator) -> Figure:
    bars = [
        _status_bar(labels.get(r["query_type"], r["query_type"]), r["by_status"], t)
        for r in data["query_types"]
    ]
    listed = "; ".join(f"{b.label}: {b.shown}" for b in bars)
    return hbars("dash-types", t("dash.types"), t("dash.types_desc", listed=listed), bars)


def throughput(data: dict[str, Any], t: Translator) -> Figure:
    tp = data["throughput"]
    rows = [(a["name"], a["per_day"]) for a in tp["annotators"]]
    listed = "; ".join(f"{a['name']}: {a['total']}" for a in tp["annotators"])
    description = t("dash.throughput_desc", days=len(tp["days"]), listed=listed)
    return heatmap(
        "dash-throughput", t("dash.throughput"), description, tp["days"], rows,
        t("dash.throughput_tip"),
    )  # fmt: skip


def time_per_item(data: dict[str, Any], t: Translator) -> Figure:
    bars = [
        _single(p["name"], p["median_seconds"], "st-time", duration(p["median_seconds"], t))
        for p in data["time_per_item"]
    ]
    listed = "; ".join(f"{b.label}: {b.shown}" for b in bars)
    return hbars("dash-time", t("dash.time"), t("dash.time_desc", listed=listed), bars)


def agreement(data: dict[str, Any], t: Translator) -> Figure:
    weeks = data["agreement"]["weeks"]
    series = [
        (t("dash.type_agreement"), "se-agree", [w["type_agreement"] for w in weeks]),
        (t("dash.review_acceptance"), "se-review", [w["review_acceptance"] for w in weeks]),
    ]
    return lines(
        "dash-agreement", t("dash.agreement"), t("dash.agreement_desc", weeks=len(weeks)),
        [w["week"] for w in weeks], series,
    )  # fmt: skip


def llm_drafts(data: dict[str, Any], labels: dict[str, str], t: Translator) -> Figure:
    llm = data["llm_drafts"]

    def bar(label: str, row: dict[str, int]) -> Bar:
        segments = [
            Segment(row[key], f"st-{key}", f"{label} · {t('dash.llm_' + key)}: {row[key]}")
            for key in ("accepted", "open", "rejected")
        ]
        return Bar(label, segments, count(row["total"], t.language))

    bars = [bar(t("dash.all_types"), llm["items"])]
    bars += [bar(labels.get(r["query_type"], r["query_type"]), r) for r in llm["by_query_type"]]
    i = llm["items"]
    description = t(
        "dash.llm_desc", total=i["total"], accepted=i["accepted"], rejected=i["rejected"],
        open=i["open"],
    )  # fmt: skip
    return hbars("dash-llm", t("dash.llm"), description, bars)


def coverage(data: dict[str, Any], t: Translator) -> Figure:
    c = data["coverage"]
    covered, uncovered = t("dash.covered"), t("dash.uncovered")
    bar = Bar(
        t("dash.documents"),
        [
            Segment(c["covered"], "st-covered", f"{covered}: {c['covered']}"),
            Segment(c["uncovered"], "st-uncovered", f"{uncovered}: {c['uncovered']}"),
        ],
        f"{count(c['covered'], t.language)} / {count(c['documents'], t.language)}",
    )
    description = t("dash.coverage_desc", covered=c["covered"], documents=c["documents"])
    return hbars("dash-coverage", t("dash.coverage"), description, [bar])


def figures(data: dict[str, Any], project: Project, t: Translator) -> dict[str, Any]:
    """Every plot of the page, and the query-type labels its tables use."""
    labels = type_labels(project, t.language, t)
    timed = data["time_per_item"]
    return {
        "count": lambda value: count(value, t.language),
        "labels": labels,
        "funnel": funnel(data, t),
        "types": by_type(data, labels, t),
        "throughput": throughput(data, t),
        "time": time_per_item(data, t),
        "agreement": agreement(data, t),
        "llm": llm_drafts(data, labels, t),
        "coverage": coverage(data, t),
        "suggestions": suggestion_figure(data, t),
        "durations": {p["username"]: duration(p["median_seconds"], t) for p in timed},
    }
