"""``assay users invite``, ``invites`` and ``revoke-invite``: invite links from the server
machine, the same as the account admin page makes (:mod:`assay.people.invites`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import JsonOption, command, console, escape, print_json, run

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def register(users: typer.Typer) -> None:
    command(users, "invite", invite)
    command(users, "invites", list_invites_command)
    command(users, "revoke-invite", revoke)


def invite(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME", help="User name of the account to make."),
    display_name: str = typer.Option(
        "", "--display-name", metavar="TEXT", help="Name shown to others (default: NAME)."
    ),
    owner: bool = typer.Option(False, "--owner", help="The account becomes a workspace admin."),
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        metavar="NAME",
        help="A project the account joins (with --role).",
        show_default=False,
    ),
    role: str = typer.Option(
        None,
        "--role",
        metavar="ROLE",
        help="Its role there: owner, lead, reviewer, annotator or viewer.",
        show_default=False,
    ),
    days: int = typer.Option(7, "--days", min=1, max=30, help="How long the link works."),
    base_url: str = typer.Option(
        "http://127.0.0.1:8765",
        "--base-url",
        metavar="URL",
        help="The address people reach the server at; the link starts with it.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Make an invite link: whoever opens it before it expires chooses a password, gets the
    account NAME and is signed in. The link works once and is shown only now."""
    from assay.people.accounts import local_account
    from assay.people.invites import create_invite
    from assay.store.projects import get_project

    def body(ws: Workspace) -> tuple[str, str]:
        project_id = get_project(ws, project).id if project else None
        secret, made = create_invite(
            ws,
            name,
            created_by=local_account(ws).id,
            display_name=display_name,
            admin=owner,
            project_id=project_id,
            role=role,
            days=days,
        )
        return secret, made.expires_at.strftime("%Y-%m-%d %H:%M")

    secret, until = run(ctx, body)
    link = f"{base_url.rstrip('/')}/invite/{secret}"
    if as_json:
        print_json({"link": link, "expires_at": until})
        return
    out = console()
    out.print(
        f"Invite link for {name.lower()!r}, valid until {until} UTC, shown only now:", markup=False
    )
    out.print(link, markup=False, soft_wrap=True)


def list_invites_command(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """List invites, newest first: the account each makes, its state and expiry."""
    from rich.table import Table

    from assay.people.invites import list_invites
    from assay.store.db import utcnow

    found = run(ctx, list_invites)
    now = utcnow()
    if as_json:
        print_json([i.as_json(now) for i in found])
        return
    table = Table("id", "user", "project", "role", "state", "expires", "by")
    for i in found:
        table.add_row(
            str(i.id), escape(i.username), escape(i.project or ""), i.role or "",
            i.state(now), f"{i.expires_at:%Y-%m-%d %H:%M}", escape(i.created_by),
        )  # fmt: skip
    console().print(table)


def revoke(
    ctx: typer.Context,
    invite_id: int = typer.Argument(
        ..., metavar="ID", help="The invite's number (assay users invites)."
    ),
) -> None:
    """Revoke an open invite: its link stops working."""
    from assay.people.invites import revoke_invite

    run(ctx, lambda ws: revoke_invite(ws, invite_id))
    console().print(f"Revoked invite {invite_id}.", markup=False)
