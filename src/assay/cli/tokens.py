"""``assay tokens``: personal API tokens for the JSON API and for the CLI against a server.

A token is printed once, when it is made; the workspace keeps only its hash, so a lost token
is revoked and replaced, never shown again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import JsonOption, command, console, print_json, run

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Personal API tokens (Authorization: Bearer) for scripts and the CLI.",
        no_args_is_help=True,
    )
    command(group, "create", create)
    command(group, "list", list_command)
    command(group, "revoke", revoke)
    app.add_typer(group, name="tokens", short_help="Create, list and revoke personal API tokens.")


def create(
    ctx: typer.Context,
    user: str = typer.Option(
        ..., "--user", "-u", metavar="NAME", help="Account the token acts as.", show_default=False
    ),
    name: str = typer.Option(
        ...,
        "--name",
        "-n",
        metavar="TEXT",
        help="What the token is for (e.g. ci, laptop), shown in the list.",
        show_default=False,
    ),
    scope: str = typer.Option(
        "read",
        "--scope",
        metavar="SCOPE",
        help="read (only reads: search, lists, exports) or write (whatever the account's roles "
        "allow).",
    ),
    days: int = typer.Option(90, "--days", metavar="N", help="Days until it expires (1-730)."),
) -> None:
    """Create a token and print it once (only its hash is kept).

    Send it as `Authorization: Bearer TOKEN`. It acts as its account, within --scope, and
    stops when it expires, is revoked, or the account is disabled.
    """
    from assay.people.accounts import get_account
    from assay.people.tokens import create_token

    def body(ws: Workspace) -> None:
        account = get_account(ws, user)
        secret, token = create_token(ws, account.id, name, scope, days)
        out = console()
        out.print(
            f"Created {token.scope} token {token.id} {token.name!r} for {account.username!r}, "
            f"valid until {token.expires_at:%Y-%m-%d %H:%M} UTC. Copy it now; it is not shown "
            "again:",
            markup=False,
        )
        typer.echo(secret)

    run(ctx, body)


def list_command(
    ctx: typer.Context,
    user: str = typer.Option(
        None, "--user", "-u", metavar="NAME", help="Only this account's tokens.", show_default=False
    ),
    as_json: bool = JsonOption,
) -> None:
    """List tokens, newest first: id, account, name, scope, state, expiry, last use."""
    from rich.table import Table

    from assay.people.accounts import get_account
    from assay.people.tokens import list_tokens
    from assay.store.db import utcnow

    def body(ws: Workspace) -> None:
        account_id = get_account(ws, user).id if user else None
        tokens = list_tokens(ws, account_id)
        now = utcnow()
        if as_json:
            print_json(
                [
                    {
                        "id": t.id,
                        "user": t.username,
                        "name": t.name,
                        "prefix": t.prefix,
                        "scope": t.scope,
                        "state": t.state(now),
                        "created_at": t.created_at.isoformat(),
                        "expires_at": t.expires_at.isoformat(),
                        "last_used_at": t.last_used_at.isoformat() if t.last_used_at else None,
                    }
                    for t in tokens
                ]
            )
            return
        if not tokens:
            console().print("No tokens. Create one with: assay tokens create --user NAME --name X")
            return
        table = Table("id", "user", "name", "starts", "scope", "state", "expires", "last used")
        for t in tokens:
            used = f"{t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at else "never"
            table.add_row(
                str(t.id),
                t.username,
                t.name,
                t.prefix + "…",
                t.scope,
                t.state(now),
                f"{t.expires_at:%Y-%m-%d}",
                used,
            )
        console().print(table)

    run(ctx, body)


def revoke(
    ctx: typer.Context,
    token_id: int = typer.Argument(
        None, metavar="[ID]", help="Token id, from `assay tokens list`.", show_default=False
    ),
    all_of: str = typer.Option(
        None,
        "--all-of",
        metavar="NAME",
        help="Instead of one token, revoke every token of this account.",
        show_default=False,
    ),
) -> None:
    """Revoke a token (or all of an account's) for good: requests with it are refused."""
    from assay.cli.common import fail
    from assay.people.accounts import get_account
    from assay.people.tokens import revoke_token, revoke_tokens

    if (token_id is None) == (all_of is None):
        fail("give a token ID or --all-of NAME (one of the two)")
    if all_of is not None:
        count = run(ctx, lambda ws: revoke_tokens(ws, get_account(ws, all_of).id))
        console().print(f"Revoked {count} token(s) of {all_of.lower()!r}", markup=False)
        return
    token = run(ctx, lambda ws: revoke_token(ws, token_id))
    console().print(f"Revoked token {token.id} {token.name!r} of {token.username!r}", markup=False)
