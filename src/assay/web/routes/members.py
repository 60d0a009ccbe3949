"""A project's members and their roles: ``/api/projects/{name}/members``.

Reading them is reading the project; changing them is the ``project.members`` action (owners
and workspace admins), decided by the access guard like every route.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict

from assay.people.access import may
from assay.people.accounts import get_account
from assay.people.members import list_members, remove_member, set_role
from assay.people.mode import team_mode
from assay.people.roles import ROLES
from assay.records import Project
from assay.web.actors import request_actor
from assay.web.render import open_project
from assay.web.state import workspace

router = APIRouter()


class RoleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["owner", "lead", "reviewer", "annotator", "viewer"]


@router.get("/api/projects/{name}/members", tags=["members"])
def api_members(request: Request, name: str) -> list[dict[str, Any]]:
    """The members, most powerful role first: user name, display name, role, disabled."""
    ws, project = open_project(request, name)
    return [
        {
            "username": m.username,
            "display_name": m.display_name,
            "role": m.role,
            "disabled": m.disabled,
        }
        for m in list_members(ws, project.id)
    ]


@router.put("/api/projects/{name}/members/{username}", tags=["members"])
def api_set_member(request: Request, name: str, username: str, body: RoleIn) -> Any:
    """Add an account to the project or change its role (a project keeps one owner)."""
    ws, project = open_project(request, name)
    set_role(ws, project.id, get_account(ws, username).id, body.role)
    return api_members(request, name)


@router.delete("/api/projects/{name}/members/{username}", status_code=204, tags=["members"])
def api_remove_member(request: Request, name: str, username: str) -> Response:
    """Remove an account from the project (not the only owner)."""
    ws, project = open_project(request, name)
    remove_member(ws, project.id, get_account(ws, username).id)
    return Response(status_code=204)


def members_panel(request: Request, project: Project) -> dict[str, Any] | None:
    """What the project page shows about members: None in personal mode (nobody but the
    local owner); else the members, whether this actor may change them, and whether
    annotators see every item (owners and leads may switch it)."""
    ws = workspace(request)
    if not team_mode(ws):
        return None
    actor = request_actor(request)
    quoted = quote(project.name, safe="")
    return {
        "members": api_members(request, project.name),
        "roles": list(ROLES),
        "can_manage": bool(may(ws, actor, "project.members", project)),
        "api": f"/api/projects/{quoted}/members/",
        "can_settings": bool(may(ws, actor, "project.settings", project)),
        "settings_api": f"/api/projects/{quoted}/settings",
        "see_all": bool(project.settings.get("annotators_see_all")),
    }
