"""Documents: list, view, original download (the workbench issue grows this page)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from assay.documents import count_documents, get_document, list_documents, original_bytes
from assay.models import Hit, to_json
from assay.projects import get_project
from assay.search.indexes import search as search_chunks
from assay.web.render import render, workspace

router = APIRouter()
PAGE_SIZE = 50


@router.get("/api/projects/{name}/documents", tags=["documents"])
def api_documents(
    request: Request, name: str, q: str = "", offset: int = 0, limit: int = PAGE_SIZE
) -> Any:
    ws = workspace(request)
    project = get_project(ws, name)
    docs = list_documents(ws, project, name_contains=q, offset=offset, limit=limit)
    return to_json({"total": count_documents(ws, project), "documents": docs})


@router.get("/api/projects/{name}/documents/{doc_id}", tags=["documents"])
def api_document(request: Request, name: str, doc_id: str) -> Any:
    ws = workspace(request)
    return to_json(get_document(ws, get_project(ws, name), doc_id))


@router.get("/projects/{name}/documents", response_class=HTMLResponse, include_in_schema=False)
def documents_page(request: Request, name: str, q: str = "", search: str = "") -> HTMLResponse:
    ws = workspace(request)
    project = get_project(ws, name)
    hits = search_chunks(ws, project, search, 10) if search.strip() else []
    return render(
        request,
        "documents.html",
        project=project,
        section="documents",
        query=q,
        search=search,
        hits=[(hit, snippet_parts(hit)) for hit in hits],
        documents=list_documents(ws, project, name_contains=q, limit=500),
        total=count_documents(ws, project),
    )


@router.get(
    "/projects/{name}/documents/{doc_id}", response_class=HTMLResponse, include_in_schema=False
)
def document_page(request: Request, name: str, doc_id: str) -> HTMLResponse:
    ws = workspace(request)
    project = get_project(ws, name)
    return render(
        request,
        "document.html",
        project=project,
        section="documents",
        document=get_document(ws, project, doc_id),
    )


@router.get("/projects/{name}/documents/{doc_id}/original", tags=["documents"])
def document_original(request: Request, name: str, doc_id: str) -> Response:
    ws = workspace(request)
    document = get_document(ws, get_project(ws, name), doc_id)
    return Response(
        original_bytes(ws, document),
        media_type=document.media_type,
        headers={"Content-Disposition": f"attachment; filename*=UTF-8''{quote(document.name)}"},
    )


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
