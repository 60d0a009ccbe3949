"""``assay agreement``: how much annotators agree on the items they did in overlap."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import JsonOption, command, console, escape, print_json, project_of, run

if TYPE_CHECKING:
    from assay.review.agreement import AgreementReport, Row
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "agreement", agreement)


def agreement(
    ctx: typer.Context,
    project: str = typer.Argument(
        None,
        metavar="[PROJECT]",
        help="Project name; may be left out when the workspace has exactly one project.",
        show_default=False,
    ),
    chunking: str = typer.Option(
        None,
        "--chunking",
        "-c",
        metavar="NAME",
        help="Compare relevant passages as the chunk ids of this chunking (the export's "
        "overlap policy). Default: compare them by characters.",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """Inter-annotator agreement over items done by several annotators (overlap).

    Compares the copies annotators handed in (submitted or accepted; drafts are counted,
    not compared), question by question: query type and the unanswerable decision (share
    agreeing, Cohen's kappa for two raters or Fleiss' for more, Krippendorff's alpha),
    relevant-passage sets (Jaccard and F1), evidence spans (character F1, same label),
    AND/OR group structure (pairwise co-membership F1 over shared passages) and reference
    answers (token F1, ROUGE-L). Tables per annotator pair, per annotator against the
    adjudicated gold, per query type, and overall; docs/team-workflow.md defines each
    measure. With --json, prints the whole report.
    """
    from assay.review.agreement import agreement_report

    def body(ws: Workspace) -> AgreementReport:
        return agreement_report(ws, project_of(ws, project), chunking=chunking)

    report = run(ctx, body)
    if as_json:
        print_json(report)
        return
    _print(report)


def _print(report: AgreementReport) -> None:
    from rich import box
    from rich.table import Table

    from assay.review.agreement import COLUMNS, Row, column_value

    out = console()
    passages = f"chunks of {report.chunking}" if report.chunking else "characters"
    out.print(
        f"[bold]{escape(report.project)}[/]: {report.originals} item(s) with "
        f"{report.copies} handed-in copies by {len(report.annotators)} annotator(s); "
        f"{report.not_handed_in} copies not handed in (left out); {report.adjudicated} "
        f"adjudicated; passages compared by {escape(passages)}."
    )

    def table(title: str, first: str, rows: list[Row]) -> None:
        if not rows:
            return
        shown = Table(
            title=title,
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            collapse_padding=True,
            title_justify="left",
        )
        shown.add_column(first, no_wrap=True)
        for _, heading in COLUMNS:
            shown.add_column(heading, justify="right")
        for row in rows:
            cells = [_cell(column_value(row.measures, path)) for path, _ in COLUMNS]
            shown.add_row(escape(row.name), *cells)
        out.print(shown)

    table("overall", "", [Row("all", report.overall)])
    table("per annotator pair", "pair", report.pairs)
    table("per annotator against the adjudicated gold", "annotator", report.gold)
    table("per query type", "query type", report.query_types)


def _cell(value: float | int | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.2f}"
