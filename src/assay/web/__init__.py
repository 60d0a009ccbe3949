"""The web workbench: ``create_app(workspace)`` builds one; nothing is created at import time.

Every HTML page has a JSON twin under ``/api`` (documented in OpenAPI at ``/api/docs``).
Routes live in ``web/routes/``, one module per concept of a stage (``*_view`` and the other
modules of ``web/`` hold what several routes show); they call stage functions and hold no
SQL and no business rules.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from urllib.parse import quote

import anyio.to_thread
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute

from assay import __version__
from assay.errors import (
    AssayError,
    BackendUnavailable,
    Conflict,
    Forbidden,
    ImportRunning,
    InvalidInput,
    NotAuthenticated,
    NotFound,
)
from assay.jobs import open_jobs
from assay.jobs.transfer_jobs import clean_upload_folders
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.web import apidocs
from assay.web.actors import guard
from assay.web.bodylimit import BodyLimitMiddleware
from assay.web.csrf import CSRFMiddleware
from assay.web.headers import SecurityHeadersMiddleware
from assay.web.hosts import HostMiddleware
from assay.web.i18n import load_catalogs, make_translators, said
from assay.web.login_limit import LoginLimiter
from assay.web.openapi_text import describe
from assay.web.paths import hide_paths, workspace_paths
from assay.web.proxies import ProxyHeadersMiddleware
from assay.web.render import package_templates, render, translator
from assay.web.routes import (
    accounts,
    adjudication,
    agreement,
    candidates,
    chunkings,
    comments,
    conversation_pages,
    conversation_settings,
    conversations,
    dashboard,
    documents,
    endpoints,
    experiment_compare,
    experiment_pages,
    experiment_results,
    experiments,
    exports,
    guide,
    history,
    imports,
    invite_accept,
    items,
    judging_api,
    judging_offline,
    judging_pages,
    judging_results,
    judging_setup,
    llm_cache,
    members,
    pools,
    projects,
    queue,
    reviews,
    search,
    signin,
    site,
    suggestions,
    synthesis,
    transfer,
    versions,
)
from assay.web.strictjson import StrictJSONMiddleware

STATUS = {
    NotFound: 404,
    NotAuthenticated: 401,
    Forbidden: 403,
    ImportRunning: 423,  # before Conflict, its base class
    Conflict: 409,
    InvalidInput: 422,
    BackendUnavailable: 503,
}


ROUTE_MODULES = (
    apidocs,
    site,
    signin,
    invite_accept,
    accounts,
    projects,
    members,
    documents,
    chunkings,
    items,
    comments,
    endpoints,
    reviews,
    synthesis,
    search,
    pools,
    guide,
    experiments,
    experiment_results,
    experiment_compare,
    experiment_pages,
    llm_cache,
    conversations,
    conversation_settings,
    conversation_pages,
    dashboard,
    transfer,
    exports,
    imports,
    queue,
    history,
    versions,
    agreement,
    adjudication,
    judging_results,
    judging_api,
    judging_pages,
    judging_offline,
    judging_setup,
    suggestions,
    candidates,
)
"""Every module of routes, in the order their routes are matched."""


@functools.cache
def guarded_routes() -> tuple[BaseRoute, ...]:
    """Every route of ``ROUTE_MODULES``, each behind the access guard (assay.web.actors: the
    one place that decides), built once per process and shared by its apps. The routes hold
    nothing of a workspace (a request finds its app's in ``request.app.state``); FastAPI
    resolves an included router's dependencies on its first request and keeps them on the
    router, which costs about 0.15 s of CPU each time an app is built anew (the tests build
    one per workspace, some a thousand per run)."""
    router = APIRouter(dependencies=[Depends(guard)])
    for module in ROUTE_MODULES:
        router.include_router(module.router)
    return tuple(router.routes)


def create_app(ws: Workspace) -> FastAPI:
    jobs = open_jobs(ws)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        """While serving, a worker thread runs background jobs (ASSAY_SERVER_RUNS_JOBS),
        resuming those a dead process left behind."""
        # sync routes run in anyio's default pool (40 threads); sized to the settings instead,
        # so it matches the database connection pool (store.db.create_engine)
        anyio.to_thread.current_default_thread_limiter().total_tokens = ws.settings.threads
        if ws.settings.server_runs_jobs:
            jobs.start()
        try:
            yield
        finally:
            jobs.stop()

    app = FastAPI(
        title="Assay",
        version=__version__,
        docs_url=None,
        openapi_url="/api/openapi.json",
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.ws = ws
    app.state.templates = package_templates()
    app.state.catalogs = load_catalogs()
    app.state.translators = make_translators(app.state.catalogs)
    clean_upload_folders(ws)  # what no queued or running import will read
    app.state.jobs = jobs
    app.state.login_limiter = LoginLimiter(
        name_failures=ws.settings.login_max_failures, lock_minutes=ws.settings.login_lock_minutes
    )
    # outermost last: a trusted proxy's client address and scheme, headers on every answer,
    # then Host, CSRF, body size, strict JSON
    app.add_middleware(StrictJSONMiddleware)
    app.add_middleware(
        BodyLimitMiddleware,
        json_limit=ws.settings.max_body_bytes,
        upload_limit=imports.UPLOAD_FACTOR * ws.settings.max_file_bytes
        + ws.settings.max_body_bytes,
    )
    app.add_middleware(CSRFMiddleware)
    app.add_middleware(HostMiddleware, settings=ws.settings)
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(ProxyHeadersMiddleware, settings=ws.settings)
    app.mount(
        "/static", StaticFiles(directory=str(resources.files("assay.web") / "static")), "static"
    )

    @app.exception_handler(AssayError)
    def _assay_error(request: Request, exc: AssayError) -> Response:
        status = next((code for cls, code in STATUS.items() if isinstance(exc, cls)), 400)
        message = hide_paths(said(exc, translator(request)), workspace_paths(ws.settings.home))
        api = request.url.path.startswith("/api/")
        if status == 401 and not api and request.method in ("GET", "HEAD"):
            here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/login?next={quote(here, safe='')}", status_code=303)
        if api:
            headers = {"www-authenticate": "Bearer"} if status == 401 else None
            return JSONResponse({"detail": message}, status_code=status, headers=headers)
        return render(request, "error.html", status_code=status, message=message, status=status)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = [
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
        ]
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": "; ".join(problems)}, status_code=422)
        message = "; ".join(problems)
        return render(request, "error.html", status_code=422, message=message, status=422)

    @app.exception_handler(StarletteHTTPException)
    def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """JSON under /api/ (and for every status but 404 and 405), the HTML page elsewhere."""
        headers = getattr(exc, "headers", None)
        if request.url.path.startswith("/api/") or exc.status_code not in (404, 405):
            return JSONResponse(
                {"detail": exc.detail}, status_code=exc.status_code, headers=headers
            )
        key = "error.not_found" if exc.status_code == 404 else "error.method"
        message = translator(request)(key, path=request.url.path[:200])
        return render(
            request,
            "error.html",
            status_code=exc.status_code,
            message=message,
            status=exc.status_code,
        )

    app.router.routes.extend(guarded_routes())
    describe(app)  # our summaries in the OpenAPI document
    return app


def create_app_in_process(settings: Settings) -> FastAPI:
    """The app of one worker process of ``assay serve --workers N``: each opens the workspace
    itself (an engine and its connection pool per process), after the parent has migrated it.
    Says so in the log, so a start that takes long (or fails) is seen."""
    started = time.monotonic()
    app = create_app(Workspace.open(settings, create=False))
    logging.getLogger("uvicorn.error").info(
        "Assay worker process [%d] opened the workspace in %.1f s; starting to serve",
        os.getpid(),
        time.monotonic() - started,
    )
    return app
