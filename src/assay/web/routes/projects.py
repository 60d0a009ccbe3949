"""Projects page, project home with the query-type editor, language switch."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from assay.corpus.chunkings import list_chunkings
from assay.corpus.documents import count_documents
from assay.gold.item_lists import list_items
from assay.gold.project_config import update_settings
from assay.gold.synthesis import acceptance_rates
from assay.gold.taxonomy import DEFAULT_QUERY_TYPES, query_types
from assay.people.access import visible_projects
from assay.records import Project, to_json
from assay.store.projects import LANGUAGES as PROJECT_LANGUAGES
from assay.store.projects import create_project, get_project, list_projects
from assay.store.workspace import Workspace
from assay.web.actors import own_items_only, request_actor
from assay.web.i18n import COOKIE, LANGUAGES
from assay.web.render import render
from assay.web.routes.members import members_panel
from assay.web.state import workspace

router = APIRouter()


class ProjectIn(BaseModel):
    name: str
    language: str = "en"


class SettingsIn(BaseModel):
    """Settings to change; keys left out keep their value, ``null`` restores the default."""

    model_config = ConfigDict(extra="forbid")
    query_types: list[Any] | None = Field(
        default=None,
        description="Query types: [{id, label: {en, de}, help: {en, de}}]; null = the defaults",
    )
    annotators_see_all: StrictBool | None = Field(
        default=None,
        description="Whether annotators read every item, not only their own; null = no",
    )
    keep_textless_documents: StrictBool | None = Field(
        default=None,
        description="Whether uploads keep files without extractable text (with a warning) "
        "instead of refusing them; null = refuse",
    )
    mtrag_collection: str | None = Field(
        default=None,
        description="The collection of MTRAG tasks exported for conversations made in Assay; "
        "null = the project's name",
    )
    judging_ratings: list[str] | None = Field(
        default=None,
        description="The rating scale of judging mode, at least two labels, the first "
        "meaning 'not rated'; null = autojudge-annotate's scale",
    )


def query_types_json(entries: Any) -> list[dict[str, Any]]:
    return [{"id": q.id, "label": q.label, "help": q.help} for q in entries]


def project_overview(request: Request, name: str) -> dict[str, Any]:
    """The project's counts; items counted are those the caller's lists show (an annotator's
    own, see ``own_items_only``)."""
    ws = workspace(request)
    project = get_project(ws, name)
    mine = own_items_only(request, project)
    copies = "include" if mine is not None else "exclude"  # as their list shows them
    by_status = {
        status: list_items(ws, project, status=status, author_id=mine, copies=copies, limit=0)[0]
        for status in ("draft", "submitted", "accepted", "rejected")
    }
    conversations = list_items(
        ws, project, kind="conversation", author_id=mine, copies=copies, limit=0
    )[0]
    return {
        "name": project.name,
        "language": project.language,
        "importing_since": project.importing_since,  # an import is writing into it
        "documents": count_documents(ws, project),
        "items": sum(by_status.values()),
        "single_turn": sum(by_status.values()) - conversations,
        "conversations": conversations,
        "items_by_status": by_status,
        "chunkings": [c.name for c in list_chunkings(ws, project)],
        "query_types": query_types_json(query_types(project)),
        "custom_query_types": bool(project.settings.get("query_types")),
        "created_at": project.created_at,
        "llm_drafts": acceptance_rates(ws, project),
    }


@router.get("/api/projects", tags=["projects"])
def api_projects(request: Request) -> Any:
    """The projects the signed-in account may see (all of them in personal mode), with the
    number of items it may read there."""
    ws = workspace(request)
    return to_json(
        [
            {
                "name": p.name,
                "language": p.language,
                "importing_since": p.importing_since,
                "documents": count_documents(ws, p),
                "items": own_count(ws, p, own_items_only(request, p)),
            }
            for p in visible_projects(ws, request_actor(request), list_projects(ws))
        ]
    )


def own_count(ws: Workspace, project: Project, mine: int | None) -> int:
    """How many items the caller's list shows (an annotator's own, their copies among them)."""
    copies = "include" if mine is not None else "exclude"
    return list_items(ws, project, author_id=mine, copies=copies, limit=0)[0]


@router.post("/api/projects", status_code=201, tags=["projects"])
def api_create_project(request: Request, body: ProjectIn) -> Any:
    project = create_project(workspace(request), body.name, body.language)
    return to_json(project)


@router.get("/api/projects/{name}", tags=["projects"])
def api_project(request: Request, name: str) -> Any:
    return to_json(project_overview(request, name))


@router.put("/api/projects/{name}/settings", tags=["projects"])
def api_update_settings(request: Request, name: str, body: SettingsIn) -> Any:
    """Change project settings (the query-type taxonomy, whether annotators see every item,
    the judging rating scale); invalid values get 422."""
    ws = workspace(request)
    changes: dict[str, Any] = {}
    if "query_types" in body.model_fields_set:
        given = body.query_types
        changes["query_types"] = None if given is None else [without_blanks(e) for e in given]
    if "annotators_see_all" in body.model_fields_set:
        changes["annotators_see_all"] = body.annotators_see_all
    if "keep_textless_documents" in body.model_fields_set:
        changes["keep_textless_documents"] = body.keep_textless_documents
    if "mtrag_collection" in body.model_fields_set:
        changes["mtrag_collection"] = body.mtrag_collection
    if "judging_ratings" in body.model_fields_set:
        changes["judging_ratings"] = body.judging_ratings
    update_settings(ws, get_project(ws, name), changes)
    return to_json(project_overview(request, name))


def without_blanks(entry: Any) -> Any:
    """Trim ids and drop empty label/help translations (the form sends every field)."""
    if not isinstance(entry, dict):
        return entry
    cleaned = dict(entry)
    if isinstance(cleaned.get("id"), str):
        cleaned["id"] = cleaned["id"].strip()
    for key in ("label", "help"):
        if isinstance(cleaned.get(key), dict):
            cleaned[key] = {
                lang: text.strip()
                for lang, text in cleaned[key].items()
                if isinstance(text, str) and text.strip()
            }
    return cleaned


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def projects_page(request: Request) -> HTMLResponse:
    return render(
        request,
        "projects.html",
        projects=api_projects(request),
        project_languages=PROJECT_LANGUAGES,
    )


@router.get("/projects/{name}", response_class=HTMLResponse, include_in_schema=False)
def project_home(request: Request, name: str) -> HTMLResponse:
    overview = project_overview(request, name)
    return render(
        request,
        "project.html",
        project=overview,
        section="home",
        default_query_types=query_types_json(DEFAULT_QUERY_TYPES),
        members=members_panel(request, get_project(workspace(request), name)),
    )


@router.get("/language/{code}", include_in_schema=False)
def switch_language(code: str, next: str = "/") -> Response:
    """Remember the interface language in a cookie and go back (local paths only)."""
    response = RedirectResponse(local_path(next), status_code=303)
    if code in LANGUAGES:
        response.set_cookie(COOKIE, code, max_age=365 * 24 * 3600, samesite="lax", path="/")
    return response


def local_path(target: str) -> str:
    """``target`` when it is a path on this site, else ``/``: no scheme, no host, and nothing a
    browser might read as one (``//host``, ``/\\host``, control characters)."""
    if (
        not target.startswith("/")
        or target.startswith(("//", "/\\"))
        or "\\" in target
        or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target)
        or urlsplit(target).netloc
    ):
        return "/"
    return target
