"""``assay judge assign``: give judging topics to judges (and take them back, or list them).

The same stage functions as ``/api/projects/{name}/judging/assignments``:
:mod:`assay.judging.assignments`. The CLI acts as the local owner (or ASSAY_AUTHOR's account).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def register(group: typer.Typer) -> None:
    command(group, "assign", assign)


def assign(
    ctx: typer.Context,
    topics: list[str] = typer.Option(
        [], "--topic", metavar="ID", help="A topic to give; repeatable.", show_default=False
    ),
    judges: list[str] = typer.Option(
        [],
        "--judge",
        metavar="USERNAME",
        help="A judge to give it to; repeatable.",
        show_default=False,
    ),
    mode: str = typer.Option(
        "report", "--mode", "-m", metavar="MODE", help="report, document or citation."
    ),
    remove: bool = typer.Option(
        False, "--remove", help="Take the topics back from the judges (their judgments stay)."
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Give judging topics to judges, per mode; without --topic, list who has what.

    A judge's overview lists the topics given to them first. Several judges may share a
    topic (agreement needs them to). In team mode judges must be members who may annotate.

    Example: assay judge assign -p kiddie --mode citation --topic leaf --topic bee
    --judge ada --judge bob
    """
    from assay.judging.assignments import assign_topics, list_assignments, unassign_topics
    from assay.people.actors import acting_account

    out = console()
    if not topics:
        rows = run(ctx, lambda ws: list_assignments(ws, project_of(ws, project)))
        if as_json:
            print_json({"assignments": rows})
            return
        if not rows:
            out.print("no topics are given to judges yet", markup=False)
        for row in rows:
            out.print(f"{escape(row.mode)}\t{escape(row.topic_id)}\t{escape(row.judge)}")
        return

    def body(ws: Workspace) -> int:
        found = project_of(ws, project)
        if remove:
            return unassign_topics(ws, found, mode, topics, judges)
        by = acting_account(ws)
        return assign_topics(ws, found, mode, topics, judges, assigned_by=by)

    count = run(ctx, body)
    what = "removed" if remove else "added"
    if as_json:
        print_json({what: count})
        return
    out.print(f"{count} assignment(s) {what}", markup=False)
