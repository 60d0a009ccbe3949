"""``assay serve`` and ``assay demo``."""

from __future__ import annotations

import typer

from assay.cli.common import console, run
from assay.demo import open_demo
from assay.errors import BackendUnavailable
from assay.search.indexes import sync_project
from assay.workspace import Workspace


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("demo")(demo)


HostOption = typer.Option(
    None,
    "--host",
    metavar="HOST",
    help="Address to bind (default ASSAY_HOST, 127.0.0.1: this machine only).",
    show_default=False,
)
PortOption = typer.Option(
    None,
    "--port",
    metavar="PORT",
    help="Port to listen on (default ASSAY_PORT, 8765).",
    show_default=False,
)


def _serve(ws: Workspace, host: str | None, port: int | None) -> None:
    try:
        import uvicorn

        from assay.web import create_app
    except ImportError as exc:
        raise BackendUnavailable(
            "the web server needs the server extra: pip install 'assay[server]'"
        ) from exc
    host = host or ws.settings.host
    port = port if port is not None else ws.settings.port
    scope = (
        "this machine only"
        if host in ("127.0.0.1", "localhost", "::1")
        else "reachable from other machines"
    )
    console().print(f"Assay is serving on http://{host}:{port}/ ({scope}); Ctrl+C stops it.")
    uvicorn.run(create_app(ws), host=host, port=port, log_level="warning")


def serve(ctx: typer.Context, host: str = HostOption, port: int = PortOption) -> None:
    """Serve the web workbench (binds 127.0.0.1 unless told otherwise)."""
    run(ctx, lambda ws: _serve(ws, host, port))


def demo(
    ctx: typer.Context,
    host: str = HostOption,
    port: int = PortOption,
    no_serve: bool = typer.Option(False, "--no-serve", help="Create the demo, don't serve it."),
) -> None:
    """Create (first time) or open the demo project and serve it."""

    def body(ws: Workspace) -> None:
        project, report = open_demo(ws, with_items=True)
        out = console()
        if report is None:
            out.print(f"Opened the demo project {project.name!r} in {ws.settings.home.resolve()}")
        else:
            out.print(
                f"Created the demo project {project.name!r}: {len(report.added)} documents and "
                f"the demo gold set as accepted items in {ws.settings.home.resolve()}"
            )
            for outcome in report.errors:
                out.print(f"[red]error[/] {outcome.message}")
        sync_project(ws, project)
        if not no_serve:
            _serve(ws, host, port)

    run(ctx, body)
