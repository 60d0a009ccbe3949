"""``assay cache``: the response cache of model requests (see docs/llm.md#response-cache).

Deterministic requests (temperature 0 or a seed) are answered from the workspace's cache
when asked again; ``show`` says how much it holds, ``clear`` drops it (all of it, or one
project's), after which every request goes to the model again. With ``ASSAY_URL`` set both
work on that server's project (``/api/projects/NAME/llm-cache``), never the whole workspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from assay.cli import remote
from assay.cli.common import JsonOption, command, console, print_json, project_of, run

if TYPE_CHECKING:
    from assay.store.workspace import Workspace

CacheProject = typer.Option(
    None,
    "--project",
    "-p",
    metavar="NAME",
    help="Only this project's cached replies (default: the whole workspace's; against a "
    "server with ASSAY_URL: its only project this token may see).",
    show_default=False,
)


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="The response cache: replies of deterministic model requests, kept in the "
        "workspace so a re-run makes no calls. Turn it off per run with --no-cache.",
        no_args_is_help=True,
    )
    command(group, "show", show)
    command(group, "clear", clear)
    app.add_typer(group, name="cache", short_help="Show or clear the cache of model replies.")


def _project_id(ws: Workspace, name: str | None) -> int | None:
    return project_of(ws, name).id if name else None


def show(ctx: typer.Context, project: str = CacheProject, as_json: bool = JsonOption) -> None:
    """How many replies the cache holds and their size, per endpoint and model."""
    from assay.llm.response_cache import cache_summary

    server = remote.server(ctx)
    summary: dict[str, Any]
    if server is not None:
        try:
            project = server.project(project)
            summary = server.json("GET", remote.project_path(project, "llm-cache"))
        finally:
            server.close()
    else:
        summary = run(ctx, lambda ws: cache_summary(ws.engine, _project_id(ws, project)))
    if as_json:
        print_json(summary)
        return
    out = console()
    scope = f"project {project!r}" if project else "the workspace"
    if server is not None:
        scope += f" on {server.url}"
    out.print(
        f"Response cache of {scope}: {summary['entries']} replies, {_size(summary['bytes'])}",
        markup=False,
    )
    for part in summary["models"]:
        out.print(
            f"  {part['endpoint']}  {part['model']}: {part['entries']} replies, "
            f"{_size(part['bytes'])}, newest {part['newest']}",
            markup=False,
        )


def clear(
    ctx: typer.Context,
    project: str = CacheProject,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    as_json: bool = JsonOption,
) -> None:
    """Drop the cached replies (of one project with -p); the next run asks the models again."""
    from assay.llm.response_cache import clear_cache

    server = remote.server(ctx)
    if server is not None:
        try:
            project = server.project(project)
            scope = f"project {project!r} on {server.url}"
            _confirm(scope, yes or as_json)
            path = remote.project_path(project, "llm-cache")
            dropped = int(server.json("DELETE", path)["dropped"])
        finally:
            server.close()
    else:
        scope = f"project {project!r}" if project else "the whole workspace"
        _confirm(scope, yes or as_json)
        dropped = run(ctx, lambda ws: clear_cache(ws.engine, _project_id(ws, project)))
    if as_json:
        print_json({"dropped": dropped})
        return
    console().print(f"Dropped {dropped} cached replies of {scope}.", markup=False)


def _confirm(scope: str, given: bool) -> None:
    if not given and not typer.confirm(f"Drop the response cache of {scope}?"):
        raise typer.Exit(1)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / 1024 / 1024:.1f} MB"
