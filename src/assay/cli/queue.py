"""``assay assign`` and ``assay queue``: hand items out to annotators, and see a queue.

The CLI works on the database directly, as the workspace's local owner (or the account
ASSAY_AUTHOR names); the web's assignment page and ``/api/projects/NAME/assignments`` do the
same through :func:`assay.review.assignments.assign`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import JsonOption, command, console, escape, print_json, project_of, run

if TYPE_CHECKING:
    from assay.store.workspace import Workspace

ProjectArgument = typer.Argument(
    None,
    metavar="PROJECT",
    help="Project name; may be left out when the workspace has exactly one project.",
    show_default=False,
)


def register(app: typer.Typer) -> None:
    command(app, "assign", assign_command)
    command(app, "queue", queue_command)


def _names(values: list[str]) -> list[str]:
    """``["ada,bob", "cy"]`` → ``["ada", "bob", "cy"]``."""
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def assign_command(
    ctx: typer.Context,
    project: str = ProjectArgument,
    to: list[str] = typer.Option(
        [],
        "--to",
        metavar="USERS",
        help="Annotators' user names, comma separated (or --to repeated). Leave out to put "
        "the items in the shared pool, where the first annotator who starts one reserves it.",
        show_default=False,
    ),
    overlap: int = typer.Option(
        1,
        "--overlap",
        min=1,
        max=50,
        metavar="N",
        help="How many annotators do each item, independently (each on their own copy); "
        "at most the number named with --to.",
    ),
    method: str = typer.Option(
        "round-robin",
        "--method",
        metavar="METHOD",
        help="round-robin (in turn) or balanced (whoever has the fewest open tasks first).",
    ),
    blind: bool = typer.Option(
        None,
        "--blind/--no-blind",
        help="Turn blind mode on or off for the project: annotators do not see each other's "
        "copies of an item until it is reviewed. Left out: as it is.",
        show_default=False,
    ),
    lock_minutes: int = typer.Option(
        None,
        "--lock-minutes",
        min=1,
        max=1440,
        metavar="MIN",
        help="How long a task taken from the pool stays reserved (default 30); opening or "
        "autosaving it renews the reservation.",
        show_default=False,
    ),
    ids: list[str] = typer.Option(
        [],
        "--ids",
        metavar="IDS",
        help="Item ids, comma separated (or --ids repeated).",
        show_default=False,
    ),
    status: str = typer.Option(
        "",
        "--status",
        metavar="STATUS",
        help="Items with these statuses: draft, submitted, accepted, rejected or all "
        "(comma-separated).",
        show_default=False,
    ),
    query_type: str = typer.Option(
        "", "--type", metavar="TYPE", help="Items of this query type.", show_default=False
    ),
    kind: str = typer.Option(
        "", "--kind", metavar="KIND", help="qa or conversation items.", show_default=False
    ),
    text: str = typer.Option(
        "", "--text", metavar="WORDS", help="Items containing this text.", show_default=False
    ),
    origin: str = typer.Option(
        "",
        "--origin",
        metavar="ORIGIN",
        help="Items whose origin starts so: llm picks the LLM drafts of `assay synthesize`.",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """Assign items to annotators (or the shared pool), with overlap and blind mode.

    Items are chosen by --ids or by the filters (--status, --type, --kind, --text,
    --origin); annotators' copies are never assigned, and an item already handed out is
    left out, so running the same command twice assigns nothing twice. In team mode each
    annotator must be a project member who may edit items (not a viewer).

    Example: assay assign ferries --to ada,bob --overlap 2 --blind --status draft
    """
    from assay.people.actors import acting_account
    from assay.review.assignments import ItemFilter, assign, set_queue_settings

    chosen = ItemFilter(
        ids=_names(ids), status=status, query_type=query_type, kind=kind, text=text,
        origin=origin,
    )  # fmt: skip

    def body(ws: Workspace) -> dict[str, object]:
        with ws.engine.begin() as conn:
            found = set_queue_settings(
                ws, project_of(ws, project), blind=blind, lock_minutes=lock_minutes, conn=conn
            )
            report = assign(
                ws, found, chosen, _names(to), assigned_by=acting_account(ws, conn=conn),
                overlap=overlap, method=method, conn=conn,
            )  # fmt: skip
        return report.as_json()

    report = run(ctx, body)
    if as_json:
        print_json(report)
        return
    out = console()
    tasks = report["tasks"]
    assert isinstance(tasks, dict)
    shares = ", ".join(f"{name or 'the pool'} {count}" for name, count in tasks.items())
    out.print(f"Assigned {report['items']} item(s): {shares or 'nothing'}.", markup=False)
    if report["already_assigned"]:
        out.print(f"{report['already_assigned']} item(s) were assigned before.", markup=False)


def queue_command(
    ctx: typer.Context,
    project: str = ProjectArgument,
    user: str = typer.Option(
        "",
        "--user",
        metavar="NAME",
        help="Whose queue (default: the account the CLI acts as, ASSAY_AUTHOR or the local owner).",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """List a queue's tasks and how many are done ("N of M done").

    Open tasks come first (those a reviewer sent back before the rest, with the reason),
    then done, then skipped ones with the annotator's reason.
    """
    from assay.people.accounts import account_by_id, get_account
    from assay.people.actors import acting_account
    from assay.review.tasks import Queue, queue_of

    def body(ws: Workspace) -> tuple[str, Queue]:
        found = project_of(ws, project)
        account = get_account(ws, user) if user else None
        account_id = account.id if account else acting_account(ws)
        return account_by_id(ws, account_id).username, queue_of(ws, found, account_id)

    username, queue = run(ctx, body)
    if as_json:
        print_json(
            {"user": username, "done": queue.done, "total": queue.total, "tasks": queue.tasks}
        )
        return
    out = console()
    out.print(f"{username}: {queue.done} of {queue.total} done", markup=False)
    if queue.pool:
        out.print(f"{queue.pool} task(s) wait in the shared pool.", markup=False)
    for task in queue.tasks:
        note = ""
        if task.state == "skipped":
            note = f"  skipped: {escape(task.reason)}"
        elif task.returned:
            note = f"  [yellow]sent back:[/] {escape(task.returned)}"
        pool = " (pool)" if task.pool else ""
        out.print(f"[bold]{task.id}[/] {task.state}{pool}  {task.item_id}{note}")
        out.print(f"    {task.query or '(no question yet)'}", markup=False)
