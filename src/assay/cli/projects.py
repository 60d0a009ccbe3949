"""``assay init`` and ``assay projects``."""

from __future__ import annotations

import typer
from rich.table import Table

from assay import projects as projects_api
from assay.cli.common import JsonOption, console, print_json, run, state, user_errors
from assay.documents import count_documents
from assay.models import Project
from assay.workspace import Workspace


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    group = typer.Typer(
        help="List, create, rename and delete projects.",
        invoke_without_command=True,
        no_args_is_help=False,
    )
    group.callback()(list_projects)
    group.command("create")(create)
    group.command("rename")(rename)
    group.command("delete")(delete)
    app.add_typer(group, name="projects")


def init(
    ctx: typer.Context,
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        metavar="NAME",
        help="Also create a project with this name.",
        show_default=False,
    ),
    language: str = typer.Option(
        "en", "--language", "-l", metavar="CODE", help="Language of that project."
    ),
) -> None:
    """Create the workspace folder and database (and optionally a first project)."""

    def body(ws: Workspace) -> None:
        out = console()
        out.print(f"Workspace ready: {ws.settings.home.resolve()}")
        if project:
            created = projects_api.create_project(ws, project, language)
            out.print(f"Created project {created.name!r} (language {created.language})")

    run(ctx, body)


def list_projects(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """List the projects of the workspace (the default when no sub-command is given)."""
    if ctx.invoked_subcommand:
        return

    def body(ws: Workspace) -> None:
        found = projects_api.list_projects(ws)
        rows = [(p, count_documents(ws, p)) for p in found]
        if as_json:
            print_json([{**_project_json(p), "documents": n} for p, n in rows])
            return
        if not found:
            console().print("No projects yet. Create one with: assay projects create NAME")
            return
        table = Table("name", "language", "documents", "created")
        for p, n in rows:
            table.add_row(p.name, p.language, str(n), p.created_at.strftime("%Y-%m-%d %H:%M"))
        console().print(table)

    run(ctx, body)


def _project_json(p: Project) -> dict[str, object]:
    return {
        "id": p.id,
        "name": p.name,
        "language": p.language,
        "created_at": p.created_at.isoformat(),
    }


def create(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME", help="Project name (unique in the workspace)."),
    language: str = typer.Option(
        "en",
        "--language",
        "-l",
        metavar="CODE",
        help="Language of the documents: " + ", ".join(projects_api.LANGUAGES) + ".",
    ),
) -> None:
    """Create a project."""

    def body(ws: Workspace) -> None:
        created = projects_api.create_project(ws, name, language)
        console().print(f"Created project {created.name!r} (language {created.language})")

    run(ctx, body)


def rename(
    ctx: typer.Context,
    old: str = typer.Argument(..., metavar="OLD", help="Current name."),
    new: str = typer.Argument(..., metavar="NEW", help="New name."),
) -> None:
    """Rename a project."""

    def body(ws: Workspace) -> None:
        renamed = projects_api.rename_project(ws, projects_api.get_project(ws, old), new)
        console().print(f"Renamed project {old!r} to {renamed.name!r}")

    run(ctx, body)


def delete(
    ctx: typer.Context,
    name: str = typer.Argument(
        ..., metavar="NAME", help="Project to delete, with all its documents."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a project and everything in it (asks first unless --yes)."""
    ws = None
    with user_errors():
        ws = state(ctx).workspace()
        project = projects_api.get_project(ws, name)
        count = count_documents(ws, project)
    if not yes:
        typer.confirm(
            f"Delete project {name!r} with {count} document(s)? This cannot be undone",
            abort=True,
        )
    with user_errors():
        projects_api.delete_project(ws, project)
    console().print(f"Deleted project {name!r}")
