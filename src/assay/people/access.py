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

from assay.errors import Forbidden, InvalidInput, Words
from assay.people.members import member_projects, role_of
from assay.people.roles import ACTIONS, ADMIN_ACTIONS, DOING, ROLES
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
    """Whether an action is allowed and why, in plain words. ``kind`` names the rule that
    refused (token, admins, member, own, role; "" when allowed), so :func:`check` can say it
    in the reader's language; ``role`` the actor's role and ``who`` the roles that may."""

    allowed: bool
    reason: str
    kind: str = ""
    role: str | None = None
    who: tuple[str, ...] = ()

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
    doing = DOING[action]
    if write and actor.scope != "write":
        return Decision(False, "this is a read-only API token", "token", role)
    if actor.personal:
        return Decision(True, "the local owner may do everything")
    if actor.is_admin:
        return Decision(True, "workspace admins may do everything")
    if action in ADMIN_ACTIONS:
        return Decision(False, f"only workspace admins may {doing}", "admins", role)
    if role is None:
        return Decision(False, f"{actor.username} is not a member of the project", "member")
    rule = ACTIONS[action]
    if role in rule.roles:
        return Decision(True, f"the role {role} may {doing}")
    if role in rule.own:
        if own or (rule.widened_by and (settings or {}).get(rule.widened_by)):
            return Decision(True, f"the role {role} may {doing} on their own items")
        reason = f"the role {role} may do this only on their own or assigned items"
        return Decision(False, reason, "own", role)
    who = tuple(r for r in ROLES if r in rule.roles)
    reason = f"the role {role} does not allow it (roles that may: {', '.join(who)})"
    return Decision(False, reason, "role", role, who)


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
        raise refusal(actor, action, project, decision)


def refusal(actor: Actor, action: str, project: Project | None, decision: Decision) -> Forbidden:
    """The refusal of ``decision`` in plain words (never an action's internal name); the
    pages show it in their reader's language (``web/i18n/*/roles.json``)."""
    user = actor.username
    doing = Words(DOING[action], f"doing.{action}")
    role = Words(decision.role or "", f"role.{decision.role}")
    who = Words(", ".join(decision.who), *(f"role.{r}" for r in decision.who))
    if project is None:
        if decision.kind == "token":
            return Forbidden(
                f"{user} may not {doing}: this API token may only read",
                key="raised.refused_token_anywhere",
                user=user,
                doing=doing,
            )
        if decision.kind == "admins":
            return Forbidden(
                f"{user} may not {doing}: only workspace admins may",
                key="raised.refused_admins",
                user=user,
                doing=doing,
            )
        return Forbidden(f"{user} may not {doing}", key="raised.refused", user=user, doing=doing)
    name = project.name
    if decision.kind == "token":
        return Forbidden(
            f"{user} may not {doing} in project {name!r}: this API token may only read",
            key="raised.refused_token",
            user=user,
            doing=doing,
            name=name,
        )
    if decision.kind == "own":
        return Forbidden(
            f"{user} may not {doing} in project {name!r}: with the role {role} only on "
            "their own items or items assigned to them",
            key="raised.refused_own",
            user=user,
            doing=doing,
            name=name,
            role=role,
        )
    if decision.kind == "role":
        return Forbidden(
            f"{user} may not {doing} in project {name!r}: the role {role} does not allow "
            f"it (roles that may: {who})",
            key="raised.refused_role",
            user=user,
            doing=doing,
            name=name,
            role=role,
            who=who,
        )
    return Forbidden(
        f"{user} may not {doing} in project {name!r}: they are not a member of it",
        key="raised.refused_not_member",
        user=user,
        doing=doing,
        name=name,
    )


def visible_projects(
    ws: Workspace, actor: Actor, projects: list[Project], *, conn: sa.Connection | None = None
) -> list[Project]:
    """The projects of ``projects`` the actor may see (``project.read``): all for the local
    owner and workspace admins, else those the actor is a member of."""
    if actor.personal or actor.is_admin:
        return projects
    roles = member_projects(ws, actor.account_id, conn=conn)
    return [p for p in projects if decide(actor, "project.read", roles.get(p.id))]
