"""Documents: list with upload, rename, notes, replace, delete; the document view with chunks.

Uploads are one file per request, read by ``web.uploads`` with the size limit enforced while
the body streams in. After every change the project's search indexes are synced, so the
search box and the editor's search panel see the change at once.
"""

from __future__ import annotations

import contextlib
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from markupsafe import Markup
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool

from assay.corpus.chunkings import document_chunks, get_chunking, list_chunkings
from assay.corpus.documents import (
    citations,
    count_documents,
    delete_document,
    get_document,
    list_documents,
    original_bytes,
    update_document,
)
from assay.corpus.ingest import Source, ingest_source, keeps_textless, replace_document
from assay.errors import AssayError
from assay.records import Document, Hit, Project, to_json
from assay.search.indexes import search as search_chunks
from assay.search.indexes import sync_project
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.web.actors import actor_id, allowed_actions
from assay.web.bounds import Offset, PageNumber
from assay.web.doc_view import HTML, MARKDOWN, RENDERED, html_view, markdown_view
from assay.web.render import open_project, render, translator
from assay.web.state import workspace
from assay.web.uploads import read_upload, too_large, upload_body

router = APIRouter()
PAGE_SIZE = 50

UPLOAD_BODY = upload_body({"last_modified": {"type": "string", "description": "ISO 8601 time"}})


class DocumentPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    notes: str | None = None


def document_json(document: Document) -> dict[str, Any]:
    """A document without its text (uploads and edits answer with this)."""
    return {
        "id": document.id,
        "name": document.name,
        "media_type": document.media_type,
        "size": document.size,
        "chars": len(document.text),
        "without_text": not document.text.strip(),
        "warnings": list(document.parse_info.warnings),
        "notes": document.notes,
        "author": document.author,
    }


def sync_quietly(ws: Workspace, project: Project) -> None:
    """Bring the search indexes up to date; a busy index catches up on the next search."""
    with contextlib.suppress(AssayError):
        sync_project(ws, project)


@router.get("/api/projects/{name}/documents", tags=["documents"])
def api_documents(
    request: Request, name: str, q: str = "", offset: Offset = 0, limit: int = PAGE_SIZE
) -> Any:
    """Documents by name (``q`` filters on a part of the name), ``limit`` at most 500."""
    ws, project = open_project(request, name)
    limit = max(0, min(limit, 500))
    docs = list_documents(ws, project, name_contains=q, offset=max(0, offset), limit=limit)
    total = count_documents(ws, project)
    matching = count_matching(ws, project, q) if q else total
    return to_json({"total": total, "matching": matching, "documents": docs})


def count_matching(ws: Workspace, project: Project, q: str) -> int:
    return len(list_documents(ws, project, name_contains=q))


@router.post(
    "/api/projects/{name}/documents",
    status_code=201,
    tags=["documents"],
    openapi_extra=UPLOAD_BODY,
    responses={200: {"description": "same content as an existing document; not added"}},
)
async def api_upload(request: Request, name: str) -> Response:
    """Upload one file (multipart field ``file``): 201 with the new document, 200 when the
    same content is already there, 413 over the size limit, 422 when it cannot be read or
    yields no text (``reason``: ``no_text``; a project with the setting
    ``keep_textless_documents`` keeps it, ``without_text`` true and a warning)."""
    ws = workspace(request)
    project = await run_in_threadpool(get_project, ws, name)
    upload = await read_upload(request, ws.settings.max_file_bytes)
    if upload.too_large:
        return too_large(
            request, "documents.too_large", upload.filename or "the file", ws.settings.max_file_mb
        )
    data = bytes(upload.data)
    metadata = {"uploaded_as": upload.filename}
    if upload.fields.get("last_modified"):
        metadata["last_modified"] = upload.fields["last_modified"]
    source = Source(upload.filename or "unnamed", lambda: data, len(data), metadata)
    outcome = await run_in_threadpool(ingest_source, ws, project, source, actor_id(request))
    if outcome.status == "error":
        body = {"detail": outcome.message, "reason": outcome.reason or None}
        return JSONResponse(body, status_code=422)
    if outcome.status == "duplicate":
        duplicate_of = {"id": outcome.doc_id, "name": outcome.name}
        return JSONResponse({"duplicate_of": duplicate_of, "detail": outcome.message})
    await run_in_threadpool(sync_quietly, ws, project)
    document = await run_in_threadpool(get_document, ws, project, outcome.doc_id)
    return JSONResponse({"document": document_json(document)}, status_code=201)


@router.get("/api/projects/{name}/documents/{doc_id}", tags=["documents"])
def api_document(request: Request, name: str, doc_id: str) -> Any:
    ws = workspace(request)
    return to_json(get_document(ws, get_project(ws, name), doc_id))


@router.patch("/api/projects/{name}/documents/{doc_id}", tags=["documents"])
def api_update_document(request: Request, name: str, doc_id: str, body: DocumentPatch) -> Any:
    """Rename a document or change its notes; its text and chunks stay as they are."""
    ws, project = open_project(request, name)
    document = update_document(
        ws, get_document(ws, project, doc_id), name=body.name, notes=body.notes
    )
    return document_json(document)


@router.post(
    "/api/projects/{name}/documents/{doc_id}/replace", tags=["documents"], openapi_extra=UPLOAD_BODY
)
async def api_replace(request: Request, name: str, doc_id: str) -> Response:
    """Replace the file: re-parse and re-chunk; evidence whose passage no longer matches the
    new text is flagged (``stale_evidence``), never moved."""
    ws = workspace(request)
    project = await run_in_threadpool(get_project, ws, name)
    document = await run_in_threadpool(get_document, ws, project, doc_id)
    upload = await read_upload(request, ws.settings.max_file_bytes)
    if upload.too_large:
        return too_large(
            request, "documents.too_large", upload.filename or "the file", ws.settings.max_file_mb
        )
    filename = upload.filename or document.name
    report = await run_in_threadpool(
        lambda: replace_document(
            ws, project, document, filename, bytes(upload.data), actor=actor_id(request)
        )
    )
    await run_in_threadpool(sync_quietly, ws, project)
    return JSONResponse(
        {
            "document": document_json(report.document),
            "stale_evidence": report.stale_evidence,
            "dropped_imported_chunks": report.dropped_imported_chunks,
            "detail": translator(request)(
                "documents.replaced_stale" if report.stale_evidence else "documents.replaced",
                name=report.document.name,
                stale=report.stale_evidence,
            ),
        }
    )


@router.delete("/api/projects/{name}/documents/{doc_id}", status_code=204, tags=["documents"])
def api_delete_document(request: Request, name: str, doc_id: str) -> Response:
    """Delete a document; refused (409, naming the items) while evidence points at it."""
    ws, project = open_project(request, name)
    delete_document(ws, get_document(ws, project, doc_id))
    sync_quietly(ws, project)
    return Response(status_code=204)


@router.get("/api/projects/{name}/documents/{doc_id}/items", tags=["documents"])
def api_citations(request: Request, name: str, doc_id: str) -> Any:
    """The items (conversations among them) whose evidence cites the document, oldest first,
    with the link to each: what a delete would be refused for. Reading it is reading items
    (``item.read``: an annotator only where the project lets them see every item)."""
    ws, project = open_project(request, name)
    document = get_document(ws, project, doc_id)
    return {"doc_id": document.id, "items": citations_json(ws, project, document)}


def citations_json(ws: Workspace, project: Project, document: Document) -> list[dict[str, str]]:
    base = f"/projects/{quote(project.name)}"
    return [
        {
            "id": item_id,
            "kind": kind,
            "query": query,
            "url": f"{base}/{'conversations' if kind == 'conversation' else 'items'}/{item_id}",
        }
        for item_id, query, kind in citations(ws, document)
    ]


@router.get("/api/projects/{name}/documents/{doc_id}/chunks", tags=["documents"])
def api_document_chunks(
    request: Request, name: str, doc_id: str, chunking: str | None = None
) -> Any:
    """The document's chunks under a chunking (the default one unless named), with text."""
    ws, project = open_project(request, name)
    document = get_document(ws, project, doc_id)
    selected = get_chunking(ws, project, chunking)
    return {
        "chunking": selected.name,
        "doc_id": document.id,
        "chunks": [
            {
                "chunk_id": c.chunk_id,
                "ordinal": c.ordinal,
                "start": c.start,
                "end": c.end,
                "text": document.text[c.start : c.end],
            }
            for c in document_chunks(ws, selected, document.id)
        ],
    }


@router.get("/projects/{name}/documents", response_class=HTMLResponse, include_in_schema=False)
def documents_page(
    request: Request, name: str, q: str = "", search: str = "", page: PageNumber = 1
) -> HTMLResponse:
    ws, project = open_project(request, name)
    hits = search_chunks(ws, project, search, 10) if search.strip() else []
    total = count_documents(ws, project)
    matching = count_matching(ws, project, q) if q else total
    pages = max(1, -(-matching // PAGE_SIZE))
    page = min(max(1, page), pages)
    return render(
        request,
        "documents.html",
        project=project,
        section="documents",
        query=q,
        search=search,
        hits=[(hit, snippet_parts(hit)) for hit in hits],
        documents=list_documents(
            ws, project, name_contains=q, offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE
        ),
        total=total,
        matching=matching,
        page=page,
        pages=pages,
        max_file_mb=f"{ws.settings.max_file_mb:g}",
        keep_textless=keeps_textless(project),
    )


@router.get(
    "/projects/{name}/documents/{doc_id}", response_class=HTMLResponse, include_in_schema=False
)
def document_page(
    request: Request, name: str, doc_id: str, chunking: str | None = None, view: str = ""
) -> HTMLResponse:
    """The document: its text first (Markdown and HTML rendered unless ``view=text``, which
    shows the extracted text with chunk boundaries), the items that cite it, then details."""
    ws, project = open_project(request, name)
    document = get_document(ws, project, doc_id)
    selected = get_chunking(ws, project, chunking or None)
    rendered = rendered_view(ws, document) if view != "text" else None
    cited = citations_json(ws, project, document) if "item.read" in allowed_actions(request) else []
    return render(
        request,
        "document.html",
        project=project,
        section="documents",
        document=document,
        chunkings=list_chunkings(ws, project),
        chunking=selected,
        chunks=document_chunks(ws, selected, document.id),
        max_file_mb=f"{ws.settings.max_file_mb:g}",
        view="rendered" if rendered is not None else "text",
        renders=document.media_type in RENDERED and bool(document.text.strip()),
        rendered=rendered,
        cited=cited,
    )


def rendered_view(ws: Workspace, document: Document) -> Markup | None:
    """Markdown and HTML documents shown rendered (None for other types or without text)."""
    if not document.text.strip():
        return None
    if document.media_type == MARKDOWN:
        return markdown_view(document.text)
    if document.media_type == HTML:
        data = original_bytes(ws, document)
        return html_view(document.text, data.decode("utf-8", errors="replace"))
    return None


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
