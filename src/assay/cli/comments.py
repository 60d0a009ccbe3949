"""``assay comments``: the comments on one item or conversation, as the editor's panel shows
them (:mod:`assay.review.comments`), and adding, replying, resolving and reopening.

The command acts as ASSAY_AUTHOR's account, else the local owner (who may do everything).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import JsonOption, command, console, escape, print_json, project_of, run

if TYPE_CHECKING:
    from assay.records import Comment
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "comments", comments_command)


def comments_command(
    ctx: typer.Context,
    project: str = typer.Argument(..., metavar="PROJECT", help="The project's name."),
    item_id: str = typer.Argument(
        ..., metavar="ITEM_ID", help="The item's or conversation's id (assay items list)."
    ),
    add: str = typer.Option(
        None,
        "--add",
        metavar="TEXT",
        help="Add a general comment on the item with this text (with --reply-to: a reply).",
        show_default=False,
    ),
    reply_to: int = typer.Option(
        None,
        "--reply-to",
        metavar="COMMENT_ID",
        min=1,
        help="With --add: reply in the thread of this comment.",
        show_default=False,
    ),
    resolve: int = typer.Option(
        None,
        "--resolve",
        metavar="COMMENT_ID",
        min=1,
        help="Resolve this comment's thread.",
        show_default=False,
    ),
    reopen: int = typer.Option(
        None,
        "--reopen",
        metavar="COMMENT_ID",
        min=1,
        help="Reopen this comment's thread.",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """List the comments on an item, or add one (--add TEXT), reply (--reply-to) or
    resolve/reopen a thread.

    Each thread is shown with where it is anchored (the question, the answer or a passage of
    a turn, and the quoted text), "outdated" when the text changed so that the quote is no
    longer there ("moved" when it was found at another place), and its replies. Comments
    anchored to a span are made in the editor (select text, then "Comment").

    With --json, prints {"comments": [...]} like GET /api/projects/NAME/items/ITEM_ID/comments.
    """
    from assay.people.actors import acting_account
    from assay.review.comments import add_comment, list_comments, resolve_comment

    if reply_to is not None and add is None:
        raise typer.BadParameter("--reply-to needs --add TEXT (the reply)", param_hint="--reply-to")

    def body(ws: Workspace) -> list[Comment]:
        target = project_of(ws, project)
        if add is not None or resolve is not None or reopen is not None:
            me = acting_account(ws)
            with ws.engine.begin() as conn:
                if add is not None:
                    add_comment(ws, target, item_id, add, author=me, parent_id=reply_to, conn=conn)
                for comment_id, resolved in ((resolve, True), (reopen, False)):
                    if comment_id is not None:
                        resolve_comment(
                            ws, target, item_id, comment_id, resolved, actor=me, conn=conn
                        )
        return list_comments(ws, target, item_id)

    found = run(ctx, body)
    if as_json:
        print_json({"comments": found})
        return
    _print_threads(found)


def _print_threads(found: list[Comment]) -> None:
    out = console()
    roots = [c for c in found if c.parent_id is None]
    if not roots:
        out.print("No comments.")
        return
    for root in roots:
        flags = []
        if root.anchor != "ok":
            flags.append(f"[yellow]{root.anchor}[/]")
        flags.append(f"resolved by {escape(root.resolved_by)}" if root.resolved else "open")
        out.print(f"[bold]#{root.id}[/]  {_where(root)}  {'  '.join(flags)}")
        if root.target != "item":
            out.print(f'    "{root.quote}"', markup=False)
        for c in [root, *(r for r in found if r.parent_id == root.id)]:
            when = f"{c.created_at:%Y-%m-%d %H:%M}" if c.created_at else ""
            lead = "  " if c is root else "    ↳ "
            out.print(f"{lead}{c.author} ({when}, #{c.id}): {c.body}", markup=False)
    open_count = sum(1 for r in roots if not r.resolved)
    out.print(f"{len(roots)} thread(s), {open_count} open", markup=False)


def _where(c: Comment) -> str:
    turn = (c.turn or 0) + 1
    if c.target == "item":
        return "general"
    if c.target == "evidence":
        return f"passage {(c.evidence or 0) + 1} of turn {turn}"
    return f"{c.target} of turn {turn}"
