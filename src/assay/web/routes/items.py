"""Gold items: the list, the editor, and their JSON API (``/api/projects/{name}/items``).

Saves carry the version the editor read; a stale save answers 409 with the stored item in
``current`` so the page can show both versions and nothing is lost.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from assay.corpus.documents import document_names
from assay.errors import InvalidInput
from assay.gold.items import (
    ItemBody,
    StaleItem,
    create_item,
    delete_item,
    get_item,
    item_events,
    set_status,
    submit_item,
)
from assay.gold.panel_search import panel_search
from assay.records import INT32, Item, Project, to_json
from assay.review.comments import open_comment_counts
from assay.review.reviews import save_edit
from assay.store.workspace import Workspace
from assay.web.actors import (
    actor_id,
    check_question_edit,
    copies_shown,
    may_delete_item,
    may_edit_question,
    own_items_only,
)
from assay.web.bounds import Offset, PageNumber, Position
from assay.web.evidence_start import started_item
from assay.web.items_view import (
    PAGE_SIZE,
    SORT_OPTIONS,
    bounded,
    clean_filters,
    conflict_response,
    count_limit,
    editor_url,
    find_items,
    item_payload,
    js_messages,
    list_place,
    next_url,
    paginate,
    type_options,
)
from assay.web.queue_view import queue_bar
from assay.web.render import language, open_project, read_only_why, render, translator

router = APIRouter()


class ItemSave(BaseModel):
    """A save from the editor: the item's new content and the version it was based on."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1, le=INT32)
    item: ItemBody


class StatusIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1, le=INT32)
    status: str


def _conflict(request: Request, ws: Workspace, project: Project, exc: StaleItem) -> JSONResponse:
    return conflict_response(request, exc, item_payload(ws, project, exc.current))


# ---------------------------------------------------------------- JSON API


@router.get("/api/projects/{name}/items", tags=["items"])
def api_items(
    request: Request,
    name: str,
    status: str = "",
    query_type: str = "",
    author: str = "",
    kind: str = "",
    text: str = "",
    needs_review: bool = False,
    copies: Literal["exclude", "include", "only"] = "exclude",
    sort: str = "-updated",
    offset: Offset = 0,
    limit: int = Query(PAGE_SIZE, ge=0, le=500),
    exact_total: bool = False,
) -> Any:
    """One page of items matching the filters, and how many match: counted up to 1,000 past
    ``offset`` (``total_exact`` false: more than ``total`` match), exactly with
    ``exact_total``. ``needs_review``: only items whose evidence no longer matches its
    document (each row says ``needs_review``). ``copies``: annotators' copies of items
    (overlap) are left out unless asked for."""
    ws, project = open_project(request, name)
    filters = {"status": status, "query_type": query_type, "author": author, "kind": kind}
    filters["review"] = "needed" if needs_review else ""
    filters["copies"] = copies_shown(request, project, "" if copies == "exclude" else copies)
    most = None if exact_total else count_limit(offset)
    total, rows = find_items(
        ws,
        project,
        {**filters, "text": text, "sort": sort},
        offset,
        limit,
        only_author=own_items_only(request, project),
        limit_count=most,
    )
    total, exact = (total, True) if most is None else bounded(total, most)
    counts = open_comment_counts(ws, project, [row.id for row in rows])
    listed = [{**to_json(row), "open_comments": counts.get(row.id, 0)} for row in rows]
    return {"total": total, "total_exact": exact, "offset": offset, "limit": limit, "items": listed}


@router.post("/api/projects/{name}/items", status_code=201, tags=["items"])
def api_create_item(request: Request, name: str, body: ItemBody) -> Any:
    ws, project = open_project(request, name)
    item = create_item(ws, project, body, author=actor_id(request))
    return item_payload(ws, project, item)


@router.get("/api/projects/{name}/items/{item_id}", tags=["items"])
def api_item(request: Request, name: str, item_id: str) -> Any:
    """The item, the findings of the completeness checks, and the project's query types."""
    ws, project = open_project(request, name)
    payload = item_payload(ws, project, get_item(ws, project, item_id))
    return {**payload, "query_types": type_options(project, language(request))}


@router.put("/api/projects/{name}/items/{item_id}", tags=["items"])
def api_save_item(request: Request, name: str, item_id: str, body: ItemSave) -> Any:
    ws, project = open_project(request, name)

    def may_save(stored: Item) -> None:
        check_question_edit(request, project, stored, body.item)

    author = actor_id(request)
    try:
        item = save_edit(
            ws, project, item_id, body.item, body.version, author=author, check=may_save
        )
    except StaleItem as exc:
        return _conflict(request, ws, project, exc)
    return item_payload(ws, project, item)


@router.post("/api/projects/{name}/items/{item_id}/status", tags=["items"])
def api_item_status(request: Request, name: str, item_id: str, body: StatusIn) -> Any:
    """Change the status; ``submitted`` only when the item passes the completeness checks.
    Accepting and rejecting are a reviewer's verdicts: ``POST .../review``."""
    ws, project = open_project(request, name)
    if body.status in ("accepted", "rejected"):
        raise InvalidInput(
            f"status: {body.status} is a reviewer's verdict; send it to "
            f"/api/projects/{project.name}/items/{item_id}/review (a reject with its reason)"
        )
    try:
        if body.status == "submitted":
            item = submit_item(ws, project, item_id, body.version, actor=actor_id(request))
        else:
            item = set_status(
                ws, project, item_id, body.status, body.version, actor=actor_id(request)
            )
    except StaleItem as exc:
        return _conflict(request, ws, project, exc)
    return item_payload(ws, project, item)


@router.delete("/api/projects/{name}/items/{item_id}", status_code=204, tags=["items"])
def api_delete_item(request: Request, name: str, item_id: str) -> Response:
    ws, project = open_project(request, name)
    delete_item(ws, project, item_id, actor=actor_id(request))
    return Response(status_code=204)


@router.get("/api/projects/{name}/items/{item_id}/events", tags=["items"])
def api_item_events(request: Request, name: str, item_id: str) -> Any:
    """The item's history: who did what, with the content before and after."""
    ws, project = open_project(request, name)
    get_item(ws, project, item_id)  # 404 for an unknown item rather than an empty history
    return item_events(ws, project, item_id)


@router.get("/api/projects/{name}/editor/search", tags=["items"])
def api_editor_search(
    request: Request, name: str, q: str, k: int = Query(10, ge=1, le=100), rerank: bool = False
) -> Any:
    """The editor's search panel: hits over the default chunking, with document names;
    ``rerank`` reorders them with the project's reranker."""
    ws, project = open_project(request, name)
    hits = panel_search(ws, project, q, k, rerank=rerank)
    names = document_names(ws, project, {hit.doc_id for hit in hits})
    return {"hits": to_json(hits), "documents": names}


# ---------------------------------------------------------------- pages


@router.get("/projects/{name}/items", response_class=HTMLResponse, include_in_schema=False)
def items_page(request: Request, name: str, page: PageNumber = 1) -> HTMLResponse:
    ws, project = open_project(request, name)
    filters = clean_filters(dict(request.query_params))
    if not copies_shown(request, project, filters.get("copies", "")):
        filters.pop("copies", None)
    mine = own_items_only(request, project)
    offset = paginate(None, page).offset
    most = count_limit(offset)
    total, rows = find_items(
        ws, project, filters, offset, PAGE_SIZE, only_author=mine, limit_count=most
    )
    shown, exact = bounded(total, most)
    at = paginate(shown, page, exact=exact)
    if page != at.number:  # past the last page (so counted exactly): show the last one
        _, rows = find_items(
            ws, project, filters, at.offset, PAGE_SIZE, only_author=mine, count=False
        )
    list_query = urlencode(filters)
    types = type_options(project, language(request))
    return render(
        request,
        "items.html",
        project=project,
        section="items",
        filters=filters,
        rows=[
            (row, editor_url(project, row.id, list_query, at.offset + i, row.kind))
            for i, row in enumerate(rows)
        ],
        page=at,
        comment_counts=open_comment_counts(ws, project, [row.id for row in rows]),
        types=types,
        type_labels={t["id"]: t["label"] for t in types},
        sort_options=SORT_OPTIONS,
        page_url=lambda number: "?" + urlencode({**filters, "page": number}),
    )


@router.get("/projects/{name}/items/new", response_class=HTMLResponse, include_in_schema=False)
def new_item_page(
    request: Request,
    name: str,
    doc: str = "",
    start: int = Query(0, ge=0, le=INT32),
    end: int = Query(0, ge=0, le=INT32),
) -> HTMLResponse:
    """A new item; ``doc``, ``start`` and ``end`` start it with that passage as evidence."""
    ws, project = open_project(request, name)
    started = None
    if doc:
        types = type_options(project, language(request))
        first_type = types[0]["id"] if types else "fact_single"
        started = started_item(ws, project, doc, start, end, first_type)
    return _editor(request, ws, project, None, "", None, started=started)


@router.get(
    "/projects/{name}/items/{item_id}", response_class=HTMLResponse, include_in_schema=False
)
def item_page(
    request: Request,
    name: str,
    item_id: str,
    list_query: str = Query("", alias="list"),
    pos: Position = None,
    task: int | None = Query(None, ge=1, le=INT32),
) -> Response:
    """The editor; ``list`` and ``pos`` say which list it was opened from (for "next"),
    ``task`` the queue task it was opened for (Submit then opens the next one). A
    conversation is sent on to its workbench."""
    ws, project = open_project(request, name)
    item = get_item(ws, project, item_id)
    if item.kind == "conversation":  # never edited as a single-turn item
        where = editor_url(project, item.id, kind=item.kind)
        return RedirectResponse(where + (f"?task={task}" if task else ""), status_code=303)
    bar = queue_bar(request, ws, project, task, translator(request))
    return _editor(request, ws, project, item, list_query, pos, bar)


def _editor(
    request: Request,
    ws: Workspace,
    project: Project,
    item: Item | None,
    list_query: str,
    pos: int | None,
    queue: dict[str, Any] | None = None,
    *,
    started: dict[str, Any] | None = None,
) -> HTMLResponse:
    types = type_options(project, language(request))
    payload = item_payload(ws, project, item) if item else {"findings": [], "documents": {}}
    payload = started or payload
    mine = own_items_only(request, project)
    place = (
        list_place(ws, project, item.id, list_query, pos, mine)
        if item is not None and pos is not None and queue is None
        else None
    )
    new_url = f"/projects/{quote(project.name)}/items/new"
    data = {
        "project": project.name,
        "item": payload.get("item"),
        "input": payload.get("input"),
        "findings": payload["findings"],
        "documents": payload["documents"],
        "query_types": types,
        "default_type": types[0]["id"] if types else "fact_single",
        # from the queue, "save and next" (Ctrl+Enter) goes back to it; Submit takes the next;
        # from a list, the place's next (read with it), else a new item
        "next_url": queue["queue_url"]
        if queue
        else place["next_url"] or new_url
        if place
        else next_url(ws, project, item.id if item else None, list_query, pos, mine),
        # opened from a list: its neighbours and "N of M" (Previous, Next, Submit and next)
        "place": place,
        "new_url": new_url,
        "may_delete": bool(may_delete_item(request, project, item)),
        "list_url": f"/projects/{quote(project.name)}/items"
        + (f"?{list_query}" if list_query else ""),
        "messages": js_messages(translator(request)),
        "queue": queue,
    }
    return render(
        request,
        "item.html",
        project=project,
        section="items",
        item=item,
        types=types,
        data=data,
        question_locked=item is not None and not may_edit_question(request, project, item),
        read_only=read_only_why(request, project, item.id) if item is not None else "",
    )
