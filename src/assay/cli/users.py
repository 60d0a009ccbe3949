"""``assay users`` and ``assay team``: accounts, their roles, and personal or team mode.

The CLI works on the database directly, so it acts as the workspace's local owner: whoever
can run it on the server machine can read the database anyway. Passwords are read from a
prompt that does not echo, or from the first line of standard input (``--password-stdin``),
never from an option that would land in the shell history.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from assay.cli import invites
from assay.cli.common import JsonOption, ProjectOption, command, console, print_json, run

if TYPE_CHECKING:
    from datetime import datetime

    from assay.people.accounts import Account
    from assay.store.workspace import Workspace

ROLE_NAMES = "owner, lead, reviewer, annotator, viewer"


def register(app: typer.Typer) -> None:
    users = typer.Typer(help="Accounts of a team server and their roles.", no_args_is_help=True)
    command(users, "add", add)
    command(users, "list", list_users)
    command(users, "disable", disable)
    command(users, "enable", enable)
    command(users, "reset-password", reset_password)
    command(users, "set-role", set_role)
    invites.register(users)
    app.add_typer(users, name="users", short_help="Accounts of a team server and their roles.")
    team = typer.Typer(
        help="Personal or team mode: whether signing in is required and the server may be "
        "reached from other machines.",
        no_args_is_help=True,
    )
    command(team, "on", team_on)
    command(team, "off", team_off)
    command(team, "status", team_status)
    app.add_typer(team, name="team", short_help="Turn team mode (accounts, sign-in) on or off.")


UserArgument = typer.Argument(..., metavar="NAME", help="User name (lower case, e.g. alice).")
PasswordStdinOption = typer.Option(
    False,
    "--password-stdin",
    help="Read the password from the first line of standard input instead of a prompt.",
)


def read_password(from_stdin: bool) -> str:
    """The new password: the first line of stdin, or typed twice at a prompt that does not
    echo it."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    return str(typer.prompt("Password", hide_input=True, confirmation_prompt=True))


def add(
    ctx: typer.Context,
    name: str = UserArgument,
    display_name: str = typer.Option(
        "", "--display-name", metavar="TEXT", help="Name shown to others (default: NAME)."
    ),
    owner: bool = typer.Option(
        False,
        "--owner",
        help="Make the account a workspace admin: it manages users and creates projects, and "
        "may do everything in every project. The first account of a team server needs it.",
    ),
    password_stdin: bool = PasswordStdinOption,
) -> None:
    """Add an account that signs in with a password (at least 10 characters).

    Asks for the password twice unless --password-stdin is given.
    """
    from assay.errors import Conflict
    from assay.people.accounts import check_username, create_account, list_accounts
    from assay.people.mode import team_mode

    def body(ws: Workspace) -> None:
        if check_username(name) in {a.username for a in list_accounts(ws)}:  # before the prompt
            raise Conflict(f"an account named {name.lower()!r} already exists")
        account = create_account(
            ws, name, read_password(password_stdin), display_name=display_name, admin=owner
        )
        kind = "workspace admin" if account.is_admin else "account"
        out = console()
        out.print(f"Added {kind} {account.username!r}", markup=False)
        if not team_mode(ws):
            out.print(
                "Team mode is off, so nobody signs in yet: turn it on with `assay team on`.",
                markup=False,
            )

    run(ctx, body)


def list_users(
    ctx: typer.Context,
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        metavar="NAME",
        help="Only the members of this project, with their roles.",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """List accounts: admin, state, and (with --project) their role in that project."""
    from rich.table import Table

    from assay.people.accounts import list_accounts
    from assay.people.members import list_members
    from assay.store.db import utcnow
    from assay.store.projects import get_project

    def body(ws: Workspace) -> None:
        accounts = list_accounts(ws)
        roles: dict[int, str] = {}
        if project is not None:
            members = list_members(ws, get_project(ws, project).id)
            roles = {m.account_id: m.role for m in members}
            accounts = [a for a in accounts if a.id in roles]
        now = utcnow()
        rows = [(a, _state(a, now), roles.get(a.id, "")) for a in accounts]
        if as_json:
            print_json(
                [
                    {
                        "username": a.username,
                        "display_name": a.display_name,
                        "admin": a.is_admin,
                        "state": state,
                        "origin": a.origin,
                        **({"role": role} if project is not None else {}),
                    }
                    for a, state, role in rows
                ]
            )
            return
        table = Table("user", "name", "admin", "state", *(["role"] if project else []))
        for a, state, role in rows:
            cells = [a.username, a.display_name, "yes" if a.is_admin else "", state]
            table.add_row(*cells, *([role] if project else []))
        console().print(table)

    run(ctx, body)


def _state(account: Account, now: datetime) -> str:
    if account.origin == "local":
        return "local owner (no sign-in)"
    if account.origin == "imported":
        return "imported author (no sign-in)"
    if account.disabled:
        return "disabled"
    if account.locked_until is not None and account.locked_until > now:
        return f"locked until {account.locked_until:%H:%M} UTC"
    return "active"


def disable(ctx: typer.Context, name: str = UserArgument) -> None:
    """Disable an account: it cannot sign in, its sessions end at once, its tokens stop."""
    from assay.people.accounts import set_disabled

    run(ctx, lambda ws: set_disabled(ws, name))
    console().print(f"Disabled {name.lower()!r}; its sessions have ended", markup=False)


def enable(ctx: typer.Context, name: str = UserArgument) -> None:
    """Enable a disabled account again."""
    from assay.people.accounts import set_disabled

    run(ctx, lambda ws: set_disabled(ws, name, False))
    console().print(f"Enabled {name.lower()!r}", markup=False)


def reset_password(
    ctx: typer.Context, name: str = UserArgument, password_stdin: bool = PasswordStdinOption
) -> None:
    """Set a new password: ends every session of the account and lifts a lockout.

    Asks for the password twice unless --password-stdin is given. API tokens stay valid;
    after a leak revoke them too (`assay tokens revoke --all-of NAME`).
    """
    from assay.people.accounts import get_account, set_password

    def body(ws: Workspace) -> None:
        get_account(ws, name)  # an unknown name fails before the prompt
        set_password(ws, name, read_password(password_stdin))

    run(ctx, body)
    console().print(f"New password set for {name.lower()!r}; its sessions have ended")


def set_role(
    ctx: typer.Context,
    name: str = UserArgument,
    role: str = typer.Argument(
        ...,
        metavar="ROLE",
        help=f"With --project: {ROLE_NAMES}, or none (not a member). Without: admin or user "
        "(a workspace admin or not).",
    ),
    project: str = ProjectOption,
) -> None:
    """Give an account a role in a project, or make it a workspace admin (or not).

    Roles: owner (everything), lead (assign, review, import, export, experiments,
    settings), reviewer (review, comment; not a question's text), annotator (own and
    assigned items), viewer (read only). A project keeps at least one owner, the workspace
    one admin who can sign in.
    """
    from assay.cli.common import project_of
    from assay.people.accounts import get_account, set_admin
    from assay.people.members import remove_member
    from assay.people.members import set_role as give_role

    def body(ws: Workspace) -> str:
        account = get_account(ws, name)
        if role in ("admin", "user") and project is None:
            set_admin(ws, name, role == "admin")
            return f"{account.username!r} is {'a' if role == 'admin' else 'no'} workspace admin"
        where = project_of(ws, project)
        if role == "none":
            remove_member(ws, where.id, account.id)
            return f"{account.username!r} is no longer a member of {where.name!r}"
        give_role(ws, where.id, account.id, role)
        return f"{account.username!r} is {role} of {where.name!r}"

    console().print(run(ctx, body), markup=False)


def team_on(ctx: typer.Context) -> None:
    """Turn team mode on: signing in is required and `assay serve` may bind beyond loopback.

    Needs a workspace admin who can sign in (`assay users add NAME --owner`).
    """
    from assay.people.mode import set_team_mode

    run(ctx, lambda ws: set_team_mode(ws, True))
    console().print("Team mode is on: everyone signs in with their account.")


def start_team(ws: Workspace) -> None:
    """Team mode for ``assay serve --team``; prints the first owner's password when it was
    just made (the only time it is shown)."""
    from assay.people.mode import FIRST_OWNER, ensure_first_owner

    password = ensure_first_owner(ws)
    if password is None:
        return
    console().print(
        f"Team mode is on. Created the first workspace admin {FIRST_OWNER!r} with the password\n"
        f"\n    {password}\n\n"
        "It is shown only this once: sign in with it, then set your own with "
        f"`assay users reset-password {FIRST_OWNER}`.",
        markup=False,
    )


def team_off(ctx: typer.Context) -> None:
    """Turn team mode off (personal mode): no sign-in, serving this machine only.

    Refused while accounts other than one can sign in; disable them first.
    """
    from assay.people.mode import set_team_mode

    run(ctx, lambda ws: set_team_mode(ws, False))
    console().print("Team mode is off: this machine only, no sign-in.")


def team_status(ctx: typer.Context) -> None:
    """Say whether team mode is on, and how many accounts can sign in."""
    from assay.people.accounts import list_accounts
    from assay.people.mode import team_mode

    def body(ws: Workspace) -> str:
        active = sum(1 for a in list_accounts(ws) if a.can_sign_in)
        mode = "on" if team_mode(ws) else "off (personal mode)"
        return f"Team mode is {mode}; {active} account(s) can sign in."

    console().print(run(ctx, body), markup=False)
