"""The web workbench: ``create_app(workspace)`` builds one; nothing is created at import time.

Every HTML page has a JSON twin under ``/api`` (documented in OpenAPI at ``/api/docs``).
Routes live in ``web/routes/``, one module per stage; they call stage functions and hold no
SQL and no business rules.
"""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from assay import __version__
from assay.errors import AssayError, BackendUnavailable, Conflict, InvalidInput, NotFound
from assay.web.csrf import CSRFMiddleware
from assay.web.experiments_view import ExperimentJobs
from assay.web.i18n import load_catalogs
from assay.web.jobs import JobRegistry
from assay.web.render import make_templates, render
from assay.web.routes import (
    conversations,
    documents,
    experiments,
    guide,
    items,
    projects,
    search,
    transfer,
)
from assay.workspace import Workspace

STATUS = {NotFound: 404, Conflict: 409, InvalidInput: 422, BackendUnavailable: 503}


def create_app(ws: Workspace) -> FastAPI:
    app = FastAPI(
        title="Assay",
        version=__version__,
        docs_url="/api/docs",
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    app.state.ws = ws
    app.state.templates = make_templates()
    app.state.catalogs = load_catalogs()
    app.state.transfer_jobs = JobRegistry()
    app.state.experiment_jobs = ExperimentJobs()
    app.add_middleware(CSRFMiddleware)
    app.mount(
        "/static", StaticFiles(directory=str(resources.files("assay.web") / "static")), "static"
    )

    @app.exception_handler(AssayError)
    def _assay_error(request: Request, exc: AssayError) -> Response:
        status = next((code for cls, code in STATUS.items() if isinstance(exc, cls)), 400)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": str(exc)}, status_code=status)
        return render(request, "error.html", status_code=status, message=str(exc), status=status)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = [
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
        ]
        return JSONResponse({"detail": "; ".join(problems)}, status_code=422)

    for module in (projects, documents, items, search, guide, experiments, conversations, transfer):
        app.include_router(module.router)
    return app
