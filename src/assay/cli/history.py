"""``assay items history`` and ``assay items restore``: an item's audit trail as
:mod:`assay.review.history` reads it (the web's history page shows the same)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import JsonOption, ProjectOption, console, print_json, project_of, run

if TYPE_CHECKING:
    from assay.review.history import Change, HistoryEntry
    from assay.store.workspace import Workspace

ItemArgument = typer.Argument(..., metavar="ITEM_ID", help="The item's id (assay items list).")


def history(
    ctx: typer.Context,
    item_id: str = ItemArgument,
    project: str = ProjectOption,
    status_only: bool = typer.Option(
        False, "--status", help="Only the status changes (who accepted, rejected, submitted)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Show an item's history: every change, who made it and when, field by field.

    Works for conversations too. With --json, prints the events as
    GET /api/projects/NAME/items/ITEM_ID/history does ({"event", "at", "actor", "action",
    "changes": [{"field", "turn", "change", "before", "after"}], "restorable"}).
    """
    from assay.review.history import item_history, status_history

    entries = run(ctx, lambda ws: item_history(ws, project_of(ws, project), item_id))
    if status_only:
        changes = status_history(entries)
        if as_json:
            print_json(changes)
            return
        for c in changes:
            line = f"{c['at']:%Y-%m-%d %H:%M}  {c['actor']}: {c['from'] or '—'} → {c['to']}"
            console().print(line, markup=False)
        return
    if as_json:
        print_json(entries)
        return
    _print_history(entries)


def _print_history(entries: list[HistoryEntry]) -> None:
    out = console()
    for entry in entries:
        mark = "  (restorable)" if entry.restorable else ""
        out.print(
            f"#{entry.event}  {entry.at:%Y-%m-%d %H:%M}  {entry.actor}  {entry.action}{mark}",
            markup=False,
        )
        for change in entry.changes:
            out.print(f"    {describe(change)}", markup=False)


def describe(change: Change) -> str:
    """One line for a change: ``turn 1 answer: 'a' → 'b'``, ``turn 1 evidence added: …``."""
    where = f"turn {change.turn} " if change.turn else ""
    if change.field == "evidence":
        shown = change.after if change.after is not None else change.before
        text = _short(str((shown or {}).get("text") or ""))
        if change.change == "relabelled":
            labels = f"{_labels(change.before)} → {_labels(change.after)}"
            return f"{where}evidence relabelled: {labels}: {text}"
        return f"{where}evidence {change.change}: {text}"
    if change.change != "changed":
        return (
            f"{where}{change.field} {change.change}: {_short(str(change.after or change.before))}"
        )
    return f"{where}{change.field}: {_value(change.before)} → {_value(change.after)}"


def _labels(value: Any) -> str:
    value = value or {}
    group = f" group {value.get('group')}" if value.get("group") is not None else ""
    grade = f" grade {value.get('grade')}" if value.get("grade") is not None else ""
    return f"{value.get('label')}{group}{grade}"


def _value(value: Any) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    return _short(repr(value))


def _short(text: str, width: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def restore(
    ctx: typer.Context,
    item_id: str = ItemArgument,
    event: int = typer.Argument(
        ..., metavar="EVENT", help="The event whose content to bring back (assay items history)."
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Restore an item's content as an event of its history left it, as a new version.

    Its status stays; the restore is itself an event of the history.
    """
    from assay.gold.items import get_item
    from assay.review.history import restore_version

    def body(ws: Workspace) -> Any:
        target = project_of(ws, project)
        current = get_item(ws, target, item_id)
        return restore_version(ws, target, item_id, event, current.version)

    item = run(ctx, body)
    if as_json:
        print_json(item)
        return
    console().print(
        f"Restored item {item.id} as of event {event}: now version {item.version}", markup=False
    )
