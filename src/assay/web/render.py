"""Rendering pages: templates with the translator, language, CSRF token and helpers."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context

from assay.records import Project
from assay.store.workspace import Workspace
from assay.web.actors import allowed_actions, edit_refusal, request_project
from assay.web.i18n import COOKIE, LANGUAGES, Translator, negotiate, said
from assay.web.locale_format import FILTERS
from assay.web.state import workspace
from assay.web.type_names import FILTERS as TYPE_FILTERS


@functools.cache
def package_templates() -> Jinja2Templates:
    """The package's templates, compiled at most once per process and shared by its apps
    (they hold nothing of an app: a page finds its app in the request). Compiling a page's
    templates takes some 30 ms of CPU, which an app built per workspace (the tests build one
    per workspace) would otherwise spend again."""
    templates = Jinja2Templates(directory=str(resources.files("assay.web") / "templates"))
    # the package's templates do not change while it runs: compiled once, never re-checked
    templates.env.auto_reload = False
    templates.env.globals["url_for"] = _url_for_kept(templates.env.globals["url_for"])
    templates.env.globals["LANGUAGES"] = LANGUAGES
    templates.env.filters.update(FILTERS)
    templates.env.filters.update(TYPE_FILTERS)
    return templates


STATIC_URLS_KEPT = 512
"""How many static file URLs a process keeps (per host the pages were asked for)."""


def _url_for_kept(url_for: Any) -> Any:
    """Starlette's ``url_for`` with the static files' URLs kept: each one otherwise walks
    the app's routes (about 35 us, some twenty per editor page). Kept by the request's base
    URL and path, the same URL as asked afresh; a bounded dict (cleared when full), since
    the host comes from the request."""
    kept: dict[tuple[str, str], Any] = {}

    @pass_context
    def kept_url_for(context: Any, name: str, /, **path_params: Any) -> Any:
        if name != "static" or set(path_params) != {"path"}:
            return url_for(context, name, **path_params)
        request: Request = context["request"]
        key = (str(request.base_url), str(path_params["path"]))
        found = kept.get(key)
        if found is None:
            if len(kept) >= STATIC_URLS_KEPT:
                kept.clear()
            found = kept[key] = url_for(context, name, **path_params)
        return found

    return kept_url_for


def open_project(request: Request, name: str) -> tuple[Workspace, Project]:
    """The app's workspace and its project ``name`` (404 naming the projects there are)."""
    return workspace(request), request_project(request, name)


def language(request: Request) -> str:
    return negotiate(request.cookies.get(COOKIE), request.headers.get("accept-language"))


def translator(request: Request) -> Translator:
    translators: dict[str, Translator] = request.app.state.translators
    return translators[language(request)]


def read_only_why(
    request: Request, project: Project, item_id: str | None, action: str = "item.edit"
) -> str:
    """Why an editor is read-only for the caller, in their language ("" when they may
    ``action``): the line the page shows above a read-only editor (templates/_read_only.html)."""
    refused = edit_refusal(request, project, item_id, action)
    return said(refused, translator(request)) if refused is not None else ""


def render(
    request: Request, template: str, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    """Render a page; every template gets ``_`` (translate), ``lang``, ``csrf_token`` and
    ``can(action)``: whether the reader may do that here, to show only the controls they may
    use (the guard still decides every request)."""

    t = translator(request)
    return request.app.state.templates.TemplateResponse(  # type: ignore[no-any-return]
        request,
        template,
        {
            "_": t,
            "lang": t.language,
            "csrf_token": request.scope.get("state", {}).get("csrf_token", ""),
            "contact_info": workspace(request).settings.contact_info,
            "actor": getattr(request.state, "actor", None),
            "can": lambda action: action in allowed_actions(request),
            **context,
        },
        status_code=status_code,
    )
