"""``assay endpoints``: the outgoing endpoints a workspace admin registered.

In team mode the generator, judges, rerankers, pool sources and experiments of every project
may use only URLs under a registered endpoint, and API keys go only to them
(:mod:`assay.llm.endpoints`). The CLI acts as the workspace's local owner, like
``assay users``: whoever runs it on the server machine is its admin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import JsonOption, command, console, print_json, run

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Outgoing endpoints (model servers, rerankers, external RAG systems) that "
        "projects may use in team mode; API keys go only to them.",
        no_args_is_help=True,
    )
    command(group, "add", add)
    command(group, "list", list_command)
    command(group, "remove", remove)
    app.add_typer(
        group, name="endpoints", short_help="Register, list and remove outgoing endpoints."
    )


def add(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME", help="Name shown to project leads."),
    url: str = typer.Argument(
        ...,
        metavar="URL",
        help="Base URL (http or https); settings may use it and any URL below it, e.g. "
        "https://llm.example.org/v1.",
    ),
    allow_private: bool = typer.Option(
        False,
        "--allow-private",
        help="Allow this host although it is a loopback, private or link-local address (a "
        "model server on your own network). Cloud metadata hosts are refused even then.",
    ),
    note: str = typer.Option("", "--note", metavar="TEXT", help="What it is for."),
) -> None:
    """Register an endpoint; its URL is checked against the outgoing policy now."""
    from assay.llm.endpoints import add_endpoint

    def body(ws: Workspace) -> None:
        endpoint = add_endpoint(ws, name, url, allow_private=allow_private, note=note)
        private = " (private address allowed)" if endpoint.allow_private else ""
        console().print(f"Registered {endpoint.name!r}: {endpoint.url}{private}", markup=False)

    run(ctx, body)


def list_command(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """List the registered endpoints by name."""
    from rich.table import Table

    from assay.llm.endpoints import list_endpoints

    def body(ws: Workspace) -> None:
        endpoints = list_endpoints(ws)
        if as_json:
            print_json([e.to_json() for e in endpoints])
            return
        if not endpoints:
            console().print("No endpoints. Register one with: assay endpoints add NAME URL")
            return
        table = Table("name", "url", "private allowed", "note", "registered")
        for e in endpoints:
            table.add_row(
                e.name,
                e.url,
                "yes" if e.allow_private else "no",
                e.note,
                f"{e.created_at:%Y-%m-%d %H:%M}",
            )
        console().print(table)

    run(ctx, body)


def remove(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME", help="The endpoint's name."),
) -> None:
    """Remove an endpoint: from the next request on no API key goes to it, and settings
    that use it fail in team mode until another endpoint covers them."""
    from assay.llm.endpoints import remove_endpoint

    def body(ws: Workspace) -> None:
        remove_endpoint(ws, name)
        console().print(f"Removed endpoint {name!r}.", markup=False)

    run(ctx, body)
