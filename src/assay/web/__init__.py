"""The web app: ``create_app(workspace)`` builds one; nothing is created at import time.

Every HTML page has a JSON twin under ``/api``. Routes call stage functions and hold no SQL.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from assay import __version__
from assay.documents import count_documents, get_document, list_documents, original_bytes
from assay.errors import AssayError, Conflict, InvalidInput, NotFound
from assay.models import Hit, to_json
from assay.projects import get_project, list_projects
from assay.search.indexes import search
from assay.workspace import Workspace

PAGE_SIZE = 50


def create_app(ws: Workspace) -> FastAPI:
    app = FastAPI(title="Assay", version=__version__, docs_url="/api/docs")
    package = resources.files("assay.web")
    templates = Jinja2Templates(directory=str(package / "templates"))
    app.mount("/static", StaticFiles(directory=str(package / "static")), name="static")

    @app.exception_handler(AssayError)
    def _assay_error(request: Request, exc: AssayError) -> Response:
        status = {NotFound: 404, Conflict: 409, InvalidInput: 422}.get(type(exc), 400)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": str(exc)}, status_code=status)
        return templates.TemplateResponse(
            request, "error.html", {"message": str(exc), "status": status}, status_code=status
        )

    def page(request: Request, name: str, **context: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, name, context)

    @app.get("/api/projects")
    def api_projects() -> Any:
        return to_json(
            [
                {"name": p.name, "language": p.language, "documents": count_documents(ws, p)}
                for p in list_projects(ws)
            ]
        )

    @app.get("/", response_class=HTMLResponse)
    def projects_page(request: Request) -> HTMLResponse:
        return page(request, "projects.html", projects=api_projects())

    @app.get("/api/projects/{name}/documents")
    def api_documents(name: str, q: str = "", offset: int = 0, limit: int = PAGE_SIZE) -> Any:
        project = get_project(ws, name)
        docs = list_documents(ws, project, name_contains=q, offset=offset, limit=limit)
        return to_json({"total": count_documents(ws, project), "documents": docs})

    @app.get("/api/projects/{name}/search")
    def api_search(name: str, q: str, k: int = 10, chunking: str | None = None) -> Any:
        return to_json(search(ws, get_project(ws, name), q, k, chunking))

    @app.get("/projects/{name}", response_class=HTMLResponse)
    def project_page(request: Request, name: str, q: str = "", k: int = 10) -> HTMLResponse:
        project = get_project(ws, name)
        hits = search(ws, project, q, k) if q.strip() else []
        return page(
            request,
            "project.html",
            project=project,
            documents=list_documents(ws, project, limit=500),
            total=count_documents(ws, project),
            query=q,
            hits=[(hit, snippet_parts(hit)) for hit in hits],
        )

    @app.get("/api/projects/{name}/documents/{doc_id}")
    def api_document(name: str, doc_id: str) -> Any:
        return to_json(get_document(ws, get_project(ws, name), doc_id))

    @app.get("/projects/{name}/documents/{doc_id}", response_class=HTMLResponse)
    def document_page(request: Request, name: str, doc_id: str) -> HTMLResponse:
        project = get_project(ws, name)
        return page(
            request, "document.html", project=project, document=get_document(ws, project, doc_id)
        )

    @app.get("/projects/{name}/documents/{doc_id}/original")
    def document_original(name: str, doc_id: str) -> Response:
        document = get_document(ws, get_project(ws, name), doc_id)
        quoted = document.name.replace('"', "")
        return Response(
            original_bytes(ws, document),
            media_type=document.media_type,
            headers={"Content-Disposition": f'attachment; filename="{quoted}"'},
        )

    return app


def snippet_parts(hit: Hit) -> list[tuple[str, bool]]:
    """The snippet cut into (text, is_match) pieces, so templates escape every piece."""
    parts: list[tuple[str, bool]] = []
    cursor = 0
    for start, end in sorted(hit.highlights):
        if start < cursor:
            continue
        parts.append((hit.snippet[cursor:start], False))
        parts.append((hit.snippet[start:end], True))
        cursor = end
    parts.append((hit.snippet[cursor:], False))
    return [part for part in parts if part[0]]
