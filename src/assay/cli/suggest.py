"""``assay suggest``: LLM suggestions (relevance labels, standalone rewrites) for people to
accept or reject in the workbench."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import (
    JsonOption,
    NoCacheOption,
    ProjectOption,
    command,
    console,
    escape,
    print_json,
    progress_bar,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.gold.suggesting import BatchReport
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "suggest", suggest_command)


def suggest_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    item: list[str] = typer.Option(
        None,
        "--item",
        "-i",
        metavar="ID",
        help="An item to suggest for (repeat for more); default: every draft or submitted item.",
        show_default=False,
    ),
    kind: str = typer.Option(
        "relevance",
        "--kind",
        metavar="KIND",
        help="relevance: a label and reason for each turn's passages; rewrite: a standalone "
        "rewrite for every later conversation turn that has none.",
    ),
    k: int = typer.Option(
        10,
        "-k",
        "--top-k",
        metavar="N",
        min=1,
        max=50,
        help="Passages to judge for a turn with no retrieved contexts (the retriever's top N).",
    ),
    no_cache: bool = NoCacheOption,
    as_json: bool = JsonOption,
) -> None:
    """Ask the project's LLM for suggestions and store them for people to decide.

    Relevance suggestions label each passage of a turn relevant, distracting or irrelevant,
    with a short reason: the turn's retrieved contexts, else the project retriever's top N
    for its question; passages already marked or waiting are left out. Nothing becomes
    evidence until someone accepts it in the item editor or the conversation workbench. Every
    suggestion is stored with its model, prompt hash and parameters. A turn whose request
    fails (timeout, endpoint error, a reply that is not the JSON asked for) stores nothing,
    is listed, and the command exits with status 1 after the others. Suggestions need an
    LLM: with the offline generator (the default) the command says so and stops; see
    `assay projects settings --generator` and docs/llm.md.
    """
    from rich.table import Table

    from assay.gold.suggesting import suggest_items
    from assay.people.actors import acting_account

    def body(ws: Workspace) -> BatchReport:
        target = project_of(ws, project)
        with progress_bar(not as_json) as bar:
            task = bar.add_task("Suggesting", total=len(item) if item else None)
            return suggest_items(
                ws,
                target,
                actor=acting_account(ws),
                item_ids=item or None,
                kind=kind,
                k=k,
                cache=not no_cache,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )

    report = run(ctx, body)
    if as_json:
        print_json(report)
    else:
        out = console()
        table = Table("item", "suggestions")
        for item_id, count in report.per_item.items():
            table.add_row(escape(item_id), str(count))
        out.print(table)
        for failure in report.failed:
            out.print(
                f"[red]failed[/] item {escape(failure['item_id'])} turn {failure['turn']}: "
                f"{escape(failure['error'])}"
            )
        out.print(
            f"{report.created} suggestion(s) stored for {report.items} item(s), "
            f"{report.skipped} passage(s) left out (marked already or waiting), "
            f"{len(report.failed)} turn(s) failed. Accept or reject them in the workbench."
        )
    if report.failed:
        raise typer.Exit(1)
