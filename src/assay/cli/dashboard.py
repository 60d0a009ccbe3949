"""``assay dashboard``: a project's dashboard figures in the terminal, or as JSON.

The same stage function serves the web page, its JSON twin and this command:
:func:`assay.review.dashboard.dashboard`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    console,
    escape,
    print_json,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "dashboard", dashboard_command)


def dashboard_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    days: int = typer.Option(
        28,
        "--days",
        min=1,
        max=366,
        metavar="N",
        help="Throughput and time per item over the last N days (UTC), today included.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Show how far a project's gold is and how the work goes.

    The status funnel, items per query type, documents no question cites, submissions per
    annotator and the median time per item in the last --days days, agreement per week
    (same query type on overlapped items; reviews accepting unchanged) and LLM drafts. Copies
    made for overlap are not gold: they count only in throughput and time per item (see
    docs/team-workflow.md). With --json, prints what GET /api/projects/NAME/dashboard
    returns.
    """
    from assay.review.dashboard import dashboard

    def body(ws: Workspace) -> dict[str, Any]:
        return dashboard(ws, project_of(ws, project), days=days)

    figures = run(ctx, body)
    if as_json:
        print_json(figures)
        return
    _print(figures)


def _print(figures: dict[str, Any]) -> None:
    out = console()
    f = figures["funnel"]
    out.print(f"[bold]{escape(figures['project'])}[/]: {f['total']} gold items")
    out.print(
        f"  funnel: created {f['total']} → submitted {f['reached_submitted']} → accepted "
        f"{f['accepted']} / rejected {f['rejected']}; {f['draft']} draft, {f['submitted']} "
        f"waiting for review; {f['copies']} overlap copies (not gold)"
    )
    types = ", ".join(f"{r['query_type'] or '(none)'} {r['total']}" for r in figures["query_types"])
    out.print(f"  per query type: {escape(types) or '-'}")
    c = figures["coverage"]
    out.print(f"  coverage: {c['covered']} of {c['documents']} documents cited by a question")
    for doc in c["uncovered_documents"][:10]:
        out.print(f"    no questions: {doc['name']}", markup=False)
    if c["uncovered"] > 10:
        out.print(f"    … and {c['uncovered'] - 10} more (--json lists up to 100)")
    tp = figures["throughput"]
    out.print(f"  submitted in the last {len(tp['days'])} days: {sum(tp['per_day'])}")
    for person in tp["annotators"]:
        out.print(f"    {person['name']}: {person['total']}", markup=False)
    out.print(f"  median time per item first submitted in those {len(tp['days'])} days:")
    for p in figures["time_per_item"]:
        minutes = p["median_seconds"] / 60
        out.print(f"    {p['name']}: {minutes:.1f} min over {p['items']} items", markup=False)
    weeks = [w for w in figures["agreement"]["weeks"] if w["overlapped"] or w["reviews"]]
    out.print("  agreement per week (same query type on overlap; reviews accepted unchanged):")
    if not weeks:
        out.print("    no overlapping work or reviews yet")
    for w in weeks:
        out.print(
            f"    week of {w['week']}: {_percent(w['type_agreement'])} of {w['overlapped']} "
            f"overlapped; {_percent(w['review_acceptance'])} of {w['reviews']} reviews"
        )
    llm = figures["llm_drafts"]["items"]
    out.print(
        f"  LLM drafts: {llm['total']} ({llm['accepted']} accepted, {llm['rejected']} "
        f"rejected, {llm['open']} open)"
    )
    sg = figures["suggestions"]["overall"]
    out.print(
        f"  LLM suggestions: {sg['total']} ({sg['accepted']} accepted, {sg['rejected']} "
        f"rejected, {sg['pending']} waiting; {_percent(sg['acceptance_rate'])} of decided accepted)"
    )


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"
