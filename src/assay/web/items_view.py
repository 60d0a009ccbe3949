"""What the items list and the item editor show: JSON payloads, pagination, the next item.

Kept apart from the routes so they stay thin; everything here calls stage functions
(annotation, checks, documents, taxonomy) and holds no SQL.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from fastapi import Request
from fastapi.responses import JSONResponse

from assay.corpus.documents import document_names
from assay.errors import Conflict
from assay.gold.checks import check_item
from assay.gold.item_lists import list_items, list_neighbours
from assay.gold.items import editable_json
from assay.gold.taxonomy import query_types
from assay.records import Item, Project, to_json
from assay.store.workspace import Workspace
from assay.web.i18n import Translator, said
from assay.web.render import translator

PAGE_SIZE = 50
FILTERS = ("status", "query_type", "author", "kind", "text", "review", "copies", "sort")
"""``review=needed``: only items whose evidence needs review (see ``assay.corpus.anchoring``);
``copies=include|only``: annotators' copies of items under overlap too, or alone."""
COUNT_AHEAD = 1000
"""A list page counts the items up to this many past its first row and no further: more
shows as "1000+" (an exact count of a large project read every matching item per page)."""
SORT_OPTIONS = ("-updated", "updated", "-created", "created", "query", "status", "type", "author")


def type_options(project: Project, language: str) -> list[dict[str, str]]:
    """The project's query types with label and definition in the interface language."""
    options = []
    for qt in query_types(project):
        label, help_text = qt.text(language)
        options.append({"id": qt.id, "label": label, "help": help_text})
    return options


def item_payload(ws: Workspace, project: Project, item: Item) -> dict[str, Any]:
    """An item with its findings and the names of the documents its evidence points to."""
    cited = {e.doc_id for t in item.turns for e in t.evidence if e.doc_id}
    return {
        "item": to_json(item),
        "input": editable_json(item),
        "findings": [dataclasses.asdict(f) for f in check_item(item, project)],
        "documents": document_names(ws, project, cited),
    }


def conflict_response(request: Request, exc: Conflict, current: dict[str, Any]) -> JSONResponse:
    """409 for a stale save, with the payload of the item as stored now (``current`` and
    ``current_input``), so the page can show both versions and nothing is lost; the message
    in the reader's language."""
    body = {"detail": said(exc, translator(request)), **current}
    body["current"] = body.pop("item")
    body["current_input"] = body.pop("input")
    return JSONResponse(body, status_code=409)


def js_messages(t: Translator) -> dict[str, str]:
    """The catalog entries the editor script needs, in the interface language."""
    return t.starting("items.", "status.")


@dataclass(frozen=True, slots=True)
class Page:
    number: int
    pages: int
    offset: int
    total: int
    exact: bool = True
    """False: more than ``total`` items match (counted no further; ``pages`` is a floor)."""


def paginate(total: int | None, page: int, size: int = PAGE_SIZE, exact: bool = True) -> Page:
    """Page ``page`` (1-based) clamped to the pages there are; ``total=None``: not known yet;
    ``exact=False``: there are more than ``total`` (the page is then not past the end)."""
    pages = max(1, math.ceil((total or 0) / size))
    number = max(1, page) if total is None or not exact else min(max(1, page), pages)
    return Page(number, pages, (number - 1) * size, total or 0, exact)


def count_limit(offset: int) -> int:
    """How far a page that starts at ``offset`` counts (see ``COUNT_AHEAD``)."""
    return offset + COUNT_AHEAD


def bounded(total: int, limit: int) -> tuple[int, bool]:
    """A count made with ``count_limit=limit`` as (total, exact): past the limit, the limit
    and False ("more than that")."""
    return (total, True) if total <= limit else (limit, False)


def clean_filters(raw: dict[str, str]) -> dict[str, str]:
    """The list filters that were given, as strings (empty ones dropped)."""
    kept = {k: raw.get(k, "").strip() for k in FILTERS}
    if kept["sort"] not in SORT_OPTIONS:
        kept["sort"] = ""
    if kept["review"] != "needed":
        kept["review"] = ""
    if kept["copies"] not in ("include", "only"):
        kept["copies"] = ""
    return {k: v for k, v in kept.items() if v}


def find_items(
    ws: Workspace,
    project: Project,
    filters: dict[str, str],
    offset: int,
    limit: int,
    *,
    only_author: int | None = None,
    count: bool = True,
    limit_count: int | None = None,
    after: str | None = None,
) -> tuple[int, list[Any]]:
    """A page of the list; ``only_author`` (an account id: an annotator's own items, their
    copies among them) wins over the author filter; ``count=False``: no total (0);
    ``limit_count``, ``after``: see ``list_items`` (``count_limit``, ``after``)."""
    return list_items(
        ws,
        project,
        **_list_arguments(filters, only_author),
        after=after,
        offset=offset,
        limit=limit,
        count=count,
        count_limit=limit_count,
    )


def _list_arguments(filters: dict[str, str], only_author: int | None) -> dict[str, Any]:
    """The list's filters as ``list_items`` takes them (see :func:`find_items`)."""
    return {
        "status": filters.get("status") or None,
        "query_type": filters.get("query_type") or None,
        "author": None if only_author is not None else filters.get("author") or None,
        "author_id": only_author,
        "kind": filters.get("kind") or None,
        "text": filters.get("text", ""),
        "review": filters.get("review") == "needed",
        "copies": "include" if only_author is not None else filters.get("copies") or "exclude",
        "sort": filters.get("sort") or "-updated",
    }


def editor_url(
    project: Project, item_id: str, list_query: str = "", pos: int | None = None, kind: str = "qa"
) -> str:
    """The editor of an item; a conversation's is the conversation workbench."""
    if kind == "conversation":
        return f"/projects/{quote(project.name)}/conversations/{quote(item_id)}"
    url = f"/projects/{quote(project.name)}/items/{quote(item_id)}"
    if pos is not None:
        url += "?" + urlencode({"list": list_query, "pos": pos})
    return url


def next_url(
    ws: Workspace,
    project: Project,
    item_id: str | None,
    list_query: str,
    pos: int | None,
    only_author: int | None = None,
) -> str:
    """Where "save and next" goes: the item after this one in the list the annotator came from
    (same filters and sort, as it is now); a new item when there is no list or it has ended.

    The list may have moved since it was shown (a submitted item leaves a "drafts" list, a
    saved one climbs to the top of "recently changed"), so "after" is read from the item's
    own sort key, not from its old position: one indexed read, wherever the item now is.
    """
    new = f"/projects/{quote(project.name)}/items/new"
    if item_id is None or pos is None:
        return new
    filters = clean_filters(dict(parse_qsl(list_query)))
    _, following = find_items(
        ws, project, filters, 0, 1, only_author=only_author, count=False, after=item_id
    )
    if not following:
        return new
    nxt = following[0]
    return editor_url(project, nxt.id, urlencode(filters), pos + 1, nxt.kind)


def list_place(
    ws: Workspace,
    project: Project,
    item_id: str,
    list_query: str,
    pos: int,
    only_author: int | None = None,
) -> dict[str, Any]:
    """The editor's place in the list it was opened from: ``prev_url`` and ``next_url``
    (None at either end), ``number`` (1-based, from ``pos``) and ``total`` (counted as the
    list page counts, ``exact`` False past that: "1000+").

    Both neighbours are read from the item's own sort key like :func:`next_url`
    (``list_neighbours``: one connection, the item's key read once)."""
    filters = clean_filters(dict(parse_qsl(list_query)))
    query = urlencode(filters)
    most = count_limit(0)
    total, following, before = list_neighbours(
        ws, project, item_id, **_list_arguments(filters, only_author), count_limit=most
    )
    total, exact = bounded(total, most)
    return {
        "prev_url": editor_url(project, before.id, query, max(0, pos - 1), before.kind)
        if before
        else None,
        "next_url": editor_url(project, following.id, query, pos + 1, following.kind)
        if following
        else None,
        "number": pos + 1,
        "total": max(total, pos + 1) if exact else total,
        "exact": exact,
    }
