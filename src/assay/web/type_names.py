"""Type names on pages in the reader's language: the Jinja filter ``query_type`` turns a query
type's id into its label from the page's project (its own list, else the defaults), the same
label the editor shows; an id the list does not hold is shown as it is."""

from __future__ import annotations

from typing import Any

from jinja2 import pass_context

from assay.gold.taxonomy import DEFAULT_QUERY_TYPES, query_types
from assay.records import Project


def query_type_label(type_id: str | None, project: Project | None, lang: str) -> str:
    if not type_id:
        return "–"
    types = query_types(project) if project is not None else DEFAULT_QUERY_TYPES
    return next((q.text(lang)[0] for q in types if q.id == type_id), type_id)


@pass_context
def _query_type(context: Any, type_id: str | None) -> str:
    project = context.get("project")
    lang = context.get("lang", "en")
    if isinstance(project, dict) and project.get("query_types"):  # a project's JSON view
        for entry in project["query_types"]:
            if entry["id"] == type_id:
                return str(entry["label"].get(lang) or entry["label"].get("en") or type_id)
    return query_type_label(type_id, project if isinstance(project, Project) else None, lang)


FILTERS = {"query_type": _query_type}
