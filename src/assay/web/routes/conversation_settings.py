"""The conversation settings of a project: generator, retriever and the enrichment vocabulary
the workbench offers (never an API key)."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict

from assay.gold.project_config import generator_settings, settings_view, update_settings
from assay.store.projects import get_project
from assay.web.state import workspace

router = APIRouter()


class ConversationSettingsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    generator: dict[str, Any] | None = None
    retriever: dict[str, Any] | None = None
    enrichments: dict[str, list[str]] | None = None
    enrichments_single: list[str] | None = None
    """Names of the enrichments that take one value at most."""


@router.get("/api/projects/{name}/conversation-settings", tags=["conversations"])
def api_conversation_settings(request: Request, name: str) -> Any:
    """Generator, retriever and enrichment vocabulary of the project (no API key, ever)."""
    project = get_project(workspace(request), name)
    return settings_view(project)


@router.put("/api/projects/{name}/conversation-settings", tags=["conversations"])
def api_save_conversation_settings(
    request: Request, name: str, body: ConversationSettingsIn
) -> Any:
    """Change some settings; an invalid part (a prompt template with an unknown placeholder,
    an empty vocabulary) is refused with 422 and nothing is stored."""
    ws = workspace(request)
    project = get_project(ws, name)
    changes = {key: getattr(body, key) for key in body.model_fields_set}
    if "generator" in changes and changes["generator"] is not None:
        changes["generator"] = {
            **dataclasses.asdict(generator_settings(project)),
            **changes["generator"],
        }
    return settings_view(update_settings(ws, project, changes))
