"""The one place that decides who may do what.

:func:`decide` is the rule, a pure function of the actor, the action, the actor's role in
the project and the project's settings; :func:`check` loads the role and raises
:class:`~assay.errors.Forbidden`. The web, the API, streams, downloads, jobs and the CLI ask
here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from assay.errors import Forbidden, InvalidInput
from assay.people.members import member_projects, role_of
from assay.people.roles import ACTIONS, ADMIN_ACTIONS, ROLES
from assay.store.workspace import Workspace

if TYPE_CHECKING:
    from assay.people.accounts import Account
    from assay.records import Project


@dataclass(frozen=True)
class Actor:
    """Who is acting: an account, how it signed in, and what that limits.

    ``scope`` is ``read`` for a read-only API token, else ``write``. ``personal``: the local
    owner of personal mode (or the CLI on the server machine), which may do everything."""

    account_id: int
    username: str
    is_admin: bool = False
    scope: str = "write"
    personal: bool = False
    role_in: tuple[int, str | None] | None = field(default=None, compare=False, repr=False)
    """The actor's role in one project as the request read it with its session (project id,
    role; None: not a member): :func:`may` asks the database for no other role there. An
    actor lives for one request (``request.state``), so a role changed meanwhile counts
    from the next request on."""

    @classmethod
    def of(cls, account: Account, scope: str = "write") -> Actor:
        return cls(account.id, account.username, account.is_admin, scope, account.origin == "local")

    def knowing_role(self, project_id: int, role: str | None) -> Actor:
        """This actor, with its role in the project ``project_id`` known (see ``role_in``)."""
        return replace(self, role_in=(project_id, role))


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


def decide(
    actor: Actor,
    action: str,
    role: str | None,
    *,
    own: bool = False,
    settings: dict[str, Any] | None = None,
) -> Decision:
    """May ``actor``, whose role in the project is ``role`` (None: not a member), do
    ``action``? ``own``: the record acted on is the actor's own or assigned to them."""
    write = _is_write(action)
    if write and actor.scope != "write":
        return Decision(False, f"a read-only token may not {action}")
    if actor.personal:
        return Decision(True, "the local owner may do everything")
    if actor.is_admin:
        return Decision(True, "workspace admins may do everything")
    if action in ADMIN_ACTIONS:
        return Decision(False, f"only workspace admins may {action}")
    if role is None:
        return Decision(False, f"{actor.username} is not a member of the project")
    rule = ACTIONS[action]
    if role in rule.roles:
        return Decision(True, f"a {role} may {action}")
    if role in rule.own:
        if own or (rule.widened_by and (settings or {}).get(rule.widened_by)):
            return Decision(True, f"a {role} may {action} on their own records")
        return Decision(False, f"a {role} may {action} only on their own or assigned records")
    who = ", ".join(r for r in ROLES if r in rule.roles)
    return Decision(False, f"a {role} may not {action} (only: {who})")


def _is_write(action: str) -> bool:
    if action in ACTIONS:
        return ACTIONS[action].write
    if action in ADMIN_ACTIONS:
        return ADMIN_ACTIONS[action]
    known = ", ".join([*ACTIONS, *ADMIN_ACTIONS])
    raise InvalidInput(f"unknown action {action!r}; known actions: {known}")


def may(
    ws: Workspace,
    actor: Actor,
    action: str,
    project: Project | None = None,
    *,
    own: bool = False,
    conn: sa.Connection | None = None,
) -> Decision:
    """:func:`decide` with the actor's role in ``project`` read from the database (no
    project: a workspace action such as managing users)."""
    settings = project.settings if project is not None else None
    role = _role(ws, actor, project, conn)
    return decide(actor, action, role, own=own, settings=settings)


def permitted_actions(
    ws: Workspace, actor: Actor, project: Project | None, *, conn: sa.Connection | None = None
) -> frozenset[str]:
    """Every action ``actor`` may do on any record of ``project`` (an annotator's rights on
    their own items are not among them), and the workspace actions it may do: for pages
    that show only the controls their reader may use."""
    settings = project.settings if project is not None else None
    role = _role(ws, actor, project, conn)
    return frozenset(
        action
        for action in (*ACTIONS, *ADMIN_ACTIONS)
        if decide(actor, action, role, settings=settings)
    )


def _role(
    ws: Workspace, actor: Actor, project: Project | None, conn: sa.Connection | None
) -> str | None:
    """The actor's role in the project; None outside one, and for those whose role does not
    matter (the local owner and workspace admins may do everything)."""
    if project is None or actor.personal or actor.is_admin:
        return None
    if actor.role_in is not None and actor.role_in[0] == project.id:
        return actor.role_in[1]
    return role_of(ws, project.id, actor.account_id, conn=conn)


def check(
    ws: Workspace,
    actor: Actor,
    action: str,
    project: Project | None = None,
    *,
    own: bool = False,
    conn: sa.Connection | None = None,
) -> None:
    """Raise :class:`Forbidden` (saying why, naming the project) unless :func:`may`."""
    decision = may(ws, actor, action, project, own=own, conn=conn)
    if not decision:
        where = f" in project {project.name!r}" if project is not None else ""
        raise Forbidden(f"{actor.username} may not {action}{where}: {decision.reason}")


def visible_projects(
    ws: Workspace, actor: Actor, projects: list[Project], *, conn: sa.Connection | None = None
) -> list[Project]:
    """The projects of ``projects`` the actor may see (``project.read``): all for the local
    owner and workspace admins, else those the actor is a member of."""
    if actor.personal or actor.is_admin:
        return projects
    roles = member_projects(ws, actor.account_id, conn=conn)
    return [p for p in projects if decide(actor, "project.read", roles.get(p.id))]
