"""``assay serve`` and ``assay demo``."""

from __future__ import annotations

import dataclasses
import errno
import functools
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from assay.cli.common import command, console, run

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "serve", serve)
    command(app, "demo", demo)


HostOption = typer.Option(
    None,
    "--host",
    metavar="HOST",
    help="Address to bind (default ASSAY_HOST, 127.0.0.1: this machine only). Any other "
    "address needs team mode (`assay team on`).",
    show_default=False,
)
PortOption = typer.Option(
    None,
    "--port",
    metavar="PORT",
    min=0,
    max=65535,
    help="Port to listen on (default ASSAY_PORT, 8765; 0 picks a free one).",
    show_default=False,
)
WorkersOption = typer.Option(
    None,
    "--workers",
    metavar="N",
    min=1,
    max=64,
    help="Server processes sharing the port and the database (default ASSAY_WORKERS, 1). "
    "Each keeps its own connection pool (ASSAY_THREADS connections); see docs/deploy.md.",
    show_default=False,
)
StartTimeoutOption = typer.Option(
    None,
    "--worker-start-timeout",
    metavar="SECONDS",
    min=5,
    max=3600,
    help="With --workers: seconds a server process may take to start and to answer the "
    "supervisor's health check before it is replaced (default ASSAY_WORKER_START_TIMEOUT, "
    "300; raise it on a busy machine).",
    show_default=False,
)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or a clear error when the port is taken.

    Binding before the server starts lets ``serve`` say where it serves only once that is
    true, and turn "address already in use" into advice instead of a traceback.
    """
    from assay.errors import BackendUnavailable

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise BackendUnavailable(
            f"cannot serve on host {host!r}: {exc.strerror}; set --host or ASSAY_HOST"
        ) from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise BackendUnavailable(
                f"port {port} on {host} is already in use (is Assay already running?); "
                "choose another port with --port or ASSAY_PORT, e.g. ASSAY_PORT=8766"
            ) from None
        raise BackendUnavailable(
            f"cannot serve on {host}:{port}: {exc.strerror}; "
            "choose another address with --host/ASSAY_HOST or --port/ASSAY_PORT"
        ) from None
    sock.set_inheritable(True)
    return sock


def _bind_for(ws: Workspace, host: str | None, port: int | None) -> tuple[str, socket.socket]:
    """Bind where asked, after checking that the workspace's mode allows that address."""
    from assay.people.mode import check_serve_host

    host = host or ws.settings.host
    check_serve_host(ws, host)
    return host, bind(host, port if port is not None else ws.settings.port)


def _serve(ws: Workspace, host: str, sock: socket.socket, workers: int = 1) -> None:
    """Serve on ``sock``: in this process, or with ``workers`` processes under uvicorn's
    supervisor, which waits ``worker_start_timeout`` seconds for each to start and answer
    (uvicorn's own 5 s replaced workers still importing on a busy machine, over and over,
    with nothing logged); each worker's start, death and replacement is logged."""
    from assay.errors import BackendUnavailable, install_extra

    try:
        import uvicorn
        from uvicorn.supervisors import Multiprocess

        from assay.web import create_app, create_app_in_process
    except ImportError as exc:
        sock.close()
        raise BackendUnavailable(
            f"the web server needs the server extra: {install_extra('server')}"
        ) from exc
    bound_port = sock.getsockname()[1]
    from assay.people.mode import is_loopback

    scope = "this machine only" if is_loopback(host) else "reachable from other machines"
    shown = f"[{host}]" if ":" in host else host
    processes = ""
    if workers > 1:
        timeout = ws.settings.worker_start_timeout
        processes = f", {workers} processes, each given {timeout} s to start"
    console().print(
        f"Assay is serving on http://{shown}:{bound_port}/ ({scope}{processes}); Ctrl+C stops it.",
        markup=False,
    )
    if host != ws.settings.host:  # the app answers to the address it was told to bind
        ws = dataclasses.replace(ws, settings=ws.settings.model_copy(update={"host": host}))
    # the app reads X-Forwarded-* itself, only from ASSAY_TRUSTED_PROXIES (web/proxies.py)
    try:
        if workers == 1:
            config = uvicorn.Config(create_app(ws), log_level="warning", proxy_headers=False)
            uvicorn.Server(config).run(sockets=[sock])
            return
        # every worker accepts on the socket bound here and opens the workspace itself
        factory = functools.partial(create_app_in_process, ws.settings)
        ws.engine.dispose()  # the parent serves nothing: no idle connections of its own
        config = uvicorn.Config(
            factory,
            factory=True,
            workers=workers,
            log_level="info",  # the supervisor's and each worker's start, death, replacement
            access_log=False,
            proxy_headers=False,
            timeout_worker_healthcheck=ws.settings.worker_start_timeout,
        )
        Multiprocess(config, sockets=[sock]).run()
    finally:
        sock.close()


def serve(
    ctx: typer.Context,
    host: str = HostOption,
    port: int = PortOption,
    workers: int = WorkersOption,
    worker_start_timeout: int = StartTimeoutOption,
    team: bool = typer.Option(
        False,
        "--team",
        help="Turn team mode on first; when no workspace admin can sign in yet, create one "
        "named admin and print its random password once.",
    ),
) -> None:
    """Serve the web workbench (binds 127.0.0.1 unless told otherwise).

    Says where it serves once the port is bound; a port in use is an error naming
    --port and ASSAY_PORT. With --workers N, N processes share the port; each one's start
    is logged, and one that does not start within --worker-start-timeout is replaced.
    """
    from assay.cli.users import start_team

    def body(ws: Workspace) -> None:
        if team:
            start_team(ws)
        share_folder(ws)
        if worker_start_timeout is not None:
            update = {"worker_start_timeout": worker_start_timeout}
            ws = dataclasses.replace(ws, settings=ws.settings.model_copy(update=update))
        _serve(ws, *_bind_for(ws, host, port), workers or ws.settings.workers)

    run(ctx, body)


def demo(
    ctx: typer.Context,
    host: str = HostOption,
    port: int = PortOption,
    no_serve: bool = typer.Option(False, "--no-serve", help="Create the demo, don't serve it."),
    sample_run: Path = typer.Option(
        None,
        "--sample-run",
        metavar="FILE",
        help="Also write a TREC run of the demo's questions ranked by keyword search "
        "(a stand-in for your system's run, for `assay eval --run`).",
    ),
) -> None:
    """Create (first time) or open the demo project and serve it.

    Creates the workspace too when there is none (like `assay init`).
    """

    def body(ws: Workspace) -> None:
        bound = None if no_serve else _bind_for(ws, host, port)  # a busy port fails first
        try:
            _create_demo(ws, sample_run)
        except BaseException:
            if bound is not None:
                bound[1].close()
            raise
        if bound is not None:
            _serve(ws, *bound)

    run(ctx, body, create=True)


def share_folder(ws: Workspace) -> None:
    """Team mode on PostgreSQL: copy the originals and run files of this folder that the
    database lacks (kept only here before migration 0028) into it, so that servers and
    workers on other machines find them; says how many when there were any."""
    from assay.experiments.runfiles import file_store

    saved = ws.blobs.share_folder() + file_store(ws).share_folder()
    if saved:
        console().print(
            f"Copied {saved} stored file(s) of {ws.settings.home.resolve()} into the database "
            "for servers and workers on other machines.",
            markup=False,
        )


def _create_demo(ws: Workspace, sample_run: Path | None = None) -> None:
    from assay.demo import open_demo
    from assay.demo.tour import write_keyword_run
    from assay.search.indexes import sync_project

    project, report = open_demo(ws, with_items=True)
    out = console()
    where = ws.settings.home.resolve()
    if report is None:
        out.print(f"Opened the demo project {project.name!r} in {where}", markup=False)
    else:
        out.print(
            f"Created the demo project {project.name!r}: {len(report.added)} documents and "
            f"the demo gold set as accepted items in {where}",
            markup=False,
        )
        for outcome in report.errors:
            out.print(f"error {outcome.message}", markup=False)
    sync_project(ws, project)
    if sample_run is not None:
        ranked = write_keyword_run(ws, project, sample_run)
        out.print(
            f"Wrote keyword search's run of {ranked} question(s) to {sample_run}", markup=False
        )
