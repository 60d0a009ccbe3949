"""``assay review``: verdicts on submitted items and the review queue, from the terminal.

The same stage functions as the web's review bar and queue page:
:func:`assay.review.reviews.review_item` and :mod:`assay.review.review_queue`. The CLI works
on the local workspace as its owner (or the account ASSAY_AUTHOR names), who may review any
item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import JsonOption, command, console, escape, fail, print_json, run

if TYPE_CHECKING:
    from assay.review.reviews import Review
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "review", review)


def review(
    ctx: typer.Context,
    project: str = typer.Argument(..., metavar="PROJECT", help="The project's name."),
    item_id: str = typer.Argument(
        None,
        metavar="ITEM",
        help="The id of a submitted item (assay items list --status submitted); without "
        "--accept or --reject, its past verdicts are shown.",
        show_default=False,
    ),
    accept: bool = typer.Option(
        False,
        "--accept",
        help="Accept the item as it is now. When it differs from the version its author "
        "submitted (someone edited it in review), the verdict is recorded as accepted with "
        "edits, with the changes.",
    ),
    reject: str = typer.Option(
        None,
        "--reject",
        metavar="REASON",
        help="Reject the item with this reason (required, not empty): it goes back to its "
        "author with the reason.",
        show_default=False,
    ),
    queue: bool = typer.Option(
        False,
        "--queue",
        help="List the review queue instead: N of M reviewed, and the submitted items "
        "waiting, oldest first, with who is reviewing each now.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Accept or reject a submitted item, show its verdicts, or list the review queue.

    `assay review PROJECT ITEM --accept` accepts the item as it is now; `--reject REASON`
    sends it back to its author with the reason. Only submitted items are reviewed (not
    drafts, and not an annotator's copy under overlap: those go to adjudication). If the
    item changes while you decide (another reviewer was first), nothing is recorded and the
    error says what happened. `assay review PROJECT ITEM` shows the item's verdicts: who,
    when, the reason, and the changes made in review. `assay review PROJECT --queue` lists
    the queue.

    With --json, prints the review (as POST /api/projects/NAME/items/ID/review answers
    "review"), the list of reviews, or the queue (as GET /api/projects/NAME/review-queue).
    """
    if queue and (item_id or accept or reject is not None):
        fail("--queue lists the whole queue: leave out ITEM, --accept and --reject")
    if accept and reject is not None:
        fail("give either --accept or --reject REASON, not both")
    if not queue and not item_id:
        fail("give an ITEM (with --accept or --reject REASON), or --queue")
    if queue:
        run(ctx, lambda ws: _queue(ws, project, as_json))
    elif accept or reject is not None:
        verdict = "accept" if accept else "reject"
        run(ctx, lambda ws: _decide(ws, project, item_id, verdict, reject or "", as_json))
    else:
        run(ctx, lambda ws: _history(ws, project, item_id, as_json))


def _decide(
    ws: Workspace, name: str, item_id: str, verdict: str, reason: str, as_json: bool
) -> None:
    from assay.gold.items import get_item
    from assay.people.actors import acting_account
    from assay.review.reviews import review_item
    from assay.store.projects import get_project

    project = get_project(ws, name)
    item = get_item(ws, project, item_id)
    done = review_item(
        ws, project, item_id, verdict, item.version, reviewer=acting_account(ws), reason=reason
    )
    if as_json:
        print_json(done)
        return
    console().print(f"Item {item_id}: {_line(done)}", markup=False)
    _print_changes(done)


def _history(ws: Workspace, name: str, item_id: str, as_json: bool) -> None:
    from assay.gold.items import get_item
    from assay.review.reviews import item_reviews
    from assay.store.projects import get_project

    project = get_project(ws, name)
    item = get_item(ws, project, item_id)
    found = item_reviews(ws, project, item_id)
    if as_json:
        print_json(found)
        return
    out = console()
    out.print(f"Item {item_id} ({item.status}): {len(found)} review(s)", markup=False)
    for done in found:
        out.print(f"  {_line(done)}", markup=False)
        _print_changes(done)


def _queue(ws: Workspace, name: str, as_json: bool) -> None:
    from assay.people.actors import acting_account
    from assay.review.review_queue import review_progress, waiting_items
    from assay.store.projects import get_project

    project = get_project(ws, name)
    progress = review_progress(ws, project, acting_account(ws))
    waiting = waiting_items(ws, project)
    if as_json:
        print_json({"progress": progress, "items": waiting})
        return
    out = console()
    out.print(
        f"{progress.reviewed} of {progress.total} reviewed, {progress.waiting} waiting",
        markup=False,
    )
    for row in waiting:
        kind = "conversation" if row.kind == "conversation" else "single turn"
        held = f"  [yellow]reviewing: {escape(row.held_by)}[/]" if row.held_by else ""
        out.print(
            f"[bold]{row.id}[/]  {kind}  {escape(row.author)}  "
            f"{row.submitted_at:%Y-%m-%d %H:%M}{held}"
        )
        out.print(f"    {row.query}", markup=False)


def _line(done: Review) -> str:
    from assay.review.reviews import DONE

    line = f"{DONE[done.verdict]} by {done.reviewer} at {done.at:%Y-%m-%d %H:%M} UTC"
    line += f" (version {done.submitted_version})"
    return line + (f": {done.reason}" if done.reason else "")


def _print_changes(done: Review) -> None:
    out = console()
    for change in done.changes:
        out.print(
            f"    {change['field']}: {_short(change['before'])} -> {_short(change['after'])}",
            markup=False,
        )


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
