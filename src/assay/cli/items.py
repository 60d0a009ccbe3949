"""``assay items``: the gold items of a project, as the web list and editor show them.

The same stage functions serve the web page, the JSON API and these commands:
:func:`assay.gold.item_lists.list_items` and :func:`~assay.gold.items.get_item` (with
the checks of :func:`assay.gold.checks.check_item`), and :func:`assay.transfer.export_bundle`
for one item.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli import history, item_writes
from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    command_group,
    console,
    escape,
    print_json,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.records import Item, ItemSummary, Project
    from assay.store.workspace import Workspace

PAGE_SIZE = 50
"""Items a page of ``assay items list`` holds unless --page-size says otherwise (as the web)."""


def register(app: typer.Typer) -> None:
    group = command_group(
        app,
        "items",
        "List, show, create, edit, submit and export single gold items; their history.",
    )
    command(group, "list", list_command)
    command(group, "show", show)
    item_writes.register(group)
    command(group, "export-one", export_one)
    command(group, "history", history.history)
    command(group, "restore", history.restore)


def list_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    status: str = typer.Option(
        None,
        "--status",
        metavar="STATUS",
        help="Only items with these statuses: draft, submitted, accepted, rejected or all "
        "(comma-separated).",
        show_default=False,
    ),
    kind: str = typer.Option(
        None, "--kind", metavar="KIND", help="Only qa or conversation items.", show_default=False
    ),
    query_type: str = typer.Option(
        None,
        "--type",
        metavar="TYPE",
        help="Only items of this query type (an id of the project's taxonomy).",
        show_default=False,
    ),
    author: str = typer.Option(
        None, "--author", metavar="NAME", help="Only items by this author.", show_default=False
    ),
    text: str = typer.Option(
        "",
        "--text",
        metavar="WORDS",
        help="Only items whose questions, answers or notes contain this text.",
        show_default=False,
    ),
    needs_review: bool = typer.Option(
        False,
        "--needs-review",
        help="Only items whose evidence no longer matches its document (the document was "
        "replaced): exports and experiments leave them out until the passages are fixed.",
    ),
    copies: str = typer.Option(
        "exclude",
        "--copies",
        metavar="WHICH",
        help="Annotators' own copies of items (overlap, see `assay assign`): exclude (the "
        "gold items only), include, or only.",
    ),
    sort: str = typer.Option(
        "-updated",
        "--sort",
        metavar="KEY",
        help="updated, created, query, status, type or author; a leading - sorts descending.",
    ),
    page: int = typer.Option(1, "--page", min=1, metavar="N", help="Which page to show."),
    page_size: int = typer.Option(
        PAGE_SIZE, "--page-size", min=1, max=500, metavar="N", help="Items on a page."
    ),
    as_json: bool = JsonOption,
) -> None:
    """List a project's items, newest change first, with the filters of the web list.

    With --json, prints {"total", "total_exact", "offset", "limit", "items"} like GET
    /api/projects/NAME/items.
    """
    from assay.gold.item_lists import list_items

    offset = (page - 1) * page_size

    def body(ws: Workspace) -> tuple[int, list[ItemSummary]]:
        return list_items(
            ws,
            project_of(ws, project),
            status=status or None,
            query_type=query_type or None,
            author=author or None,
            kind=kind or None,
            text=text,
            review=needs_review,
            copies=copies,
            sort=sort,
            offset=offset,
            limit=page_size,
        )

    total, rows = run(ctx, body)
    if as_json:
        print_json(
            {
                "total": total,
                "total_exact": True,
                "offset": offset,
                "limit": page_size,
                "items": rows,
            }
        )
        return
    out = console()
    if not rows:
        out.print("No items." if total == 0 else f"No items on page {page} ({total} in all).")
        return
    for row in rows:  # two lines an item: the id whole (to copy) with its facts, the question
        kind = row.query_type if row.kind == "qa" else f"{row.kind}, {row.turn_count} turns"
        flag = "  [yellow]needs review[/]" if row.needs_review else ""
        out.print(
            f"[bold]{row.id}[/]  {row.status}{flag}  {escape(kind)}  {row.evidence_count} "
            f"evidence  {escape(row.author)}  {row.updated_at:%Y-%m-%d %H:%M}"
        )
        out.print(f"    {_short(row.query, 100)}", markup=False)
    pages = max(1, math.ceil(total / page_size))
    out.print(f"page {page} of {pages}, {total} item(s)", markup=False)


def show(
    ctx: typer.Context,
    item_id: str = typer.Argument(..., metavar="ITEM_ID", help="The item's id (assay items list)."),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Show one item: its turns, evidence and the findings of the completeness checks
    (with the unanswerable check: turns marked unanswerable whose pool has strong hits).

    With --json, prints {"item", "findings", "documents"} (documents: the names of the
    documents its evidence points to), as GET /api/projects/NAME/items/ITEM_ID does.
    """
    from assay.corpus.documents import document_names
    from assay.experiments.pools import unanswerable_check
    from assay.gold.checks import check_item
    from assay.gold.items import get_item

    def body(ws: Workspace) -> tuple[Item, list[Any], dict[str, str]]:
        target: Project = project_of(ws, project)
        item = get_item(ws, target, item_id)
        cited = (e.doc_id for t in item.turns for e in t.evidence if e.doc_id)
        findings = check_item(item, target) + unanswerable_check(ws, target, item)
        return item, findings, document_names(ws, target, cited)

    item, findings, names = run(ctx, body)
    if as_json:
        print_json({"item": item, "findings": findings, "documents": names})
        return
    _print_item(item, findings, names)


def _print_item(item: Item, findings: list[Any], names: dict[str, str]) -> None:
    out = console()
    out.print(f"[bold]{escape(item.id)}[/]  {item.kind}, {item.status}, version {item.version}")
    created, updated = (f"{t:%Y-%m-%d %H:%M}" for t in (item.created_at, item.updated_at))
    out.print(
        f"author {item.author or '—'}, origin {item.origin}, created {created}, updated {updated}",
        markup=False,
    )
    if item.notes:
        out.print(f"notes: {item.notes}", markup=False)
    for number, turn in enumerate(item.turns, 1):
        out.print()
        out.print(f"[bold]Turn {number}[/] ({escape(turn.query_type)})")
        out.print(f"  question: {turn.query}", markup=False)
        if turn.rewrite:
            out.print(f"  rewrite: {turn.rewrite}", markup=False)
        out.print(f"  answer: {turn.answer or '—'}", markup=False)
        for alternative in turn.alternatives:
            out.print(f"  also acceptable: {alternative}", markup=False)
        for name, values in turn.enrichments.items():
            out.print(f"  {name}: {', '.join(values)}", markup=False)
        if turn.retrieved:
            out.print(f"  retrieved: {len(turn.retrieved)} passage(s)", markup=False)
        for ev in turn.evidence:
            where = names.get(ev.doc_id or "", ev.doc_id or "no document")
            span = "" if ev.start is None else f", chars {ev.start}–{ev.end}"
            group = f" group {ev.group}" if ev.label == "relevant" else ""
            flag = "" if ev.anchor == "ok" else f" [{ev.anchor}]"
            out.print(f"  - {ev.label}{group}: {where}{span}{flag}", markup=False)
            out.print(f"    {_short(ev.text, 200)}", markup=False)
    if findings:
        out.print()
        for f in findings:
            colour = "red" if f.level == "error" else "yellow"
            out.print(f"[{colour}]{f.level}[/] {escape(f.message)}")


def export_one(
    ctx: typer.Context,
    item_id: str = typer.Argument(..., metavar="ITEM_ID", help="The item's id (assay items list)."),
    format_name: str = typer.Argument(..., metavar="FORMAT", help="Format name (assay formats)."),
    path: Path = typer.Argument(..., metavar="PATH", help="File or folder to write."),
    project: str = ProjectOption,
    chunking: str = typer.Option(
        None,
        "--chunking",
        "-c",
        metavar="NAME",
        help="Chunking whose chunk ids the export uses (default: the project's default).",
        show_default=False,
    ),
    include_unanswerable: bool = typer.Option(
        False,
        "--include-unanswerable",
        help="AutoRAG: also write the item when it has no retrieval_gt.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Export one item, whatever its status, with the project's documents in a format.

    Shows how the item looks in that format (assay export writes all accepted items). An
    item whose evidence needs review (its document was replaced) is refused, like every
    export leaves it out.
    """
    from assay.transfer.project_export import ExportOptions, plan_export, write_export

    options = ExportOptions(
        format_name,
        chunking=chunking,
        items=[item_id],
        strict=True,  # an item whose evidence needs review is refused, not left out
        include_unanswerable=include_unanswerable,
    )

    def body(ws: Workspace) -> list[str]:
        plan = plan_export(ws, project_of(ws, project), options)
        return write_export(ws, plan, path).notes

    notes = run(ctx, body)
    if as_json:
        print_json({"path": str(path), "item": item_id, "notes": notes})
        return
    out = console()
    for note in notes:
        out.print(f"[yellow]note:[/] {escape(note)}")
    out.print(f"Wrote item {item_id} to {path}", markup=False)


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
