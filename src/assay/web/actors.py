"""Who is asking, and the guard every route passes: the web's one door to people.access.

:func:`guard` runs before each route (``create_app`` adds it to every router): it finds the
actor (personal mode: the local owner; team mode: the user a trusted proxy names, an
``Authorization: Bearer`` token, or the session cookie), looks up the action of the route
(:mod:`assay.web.route_actions`) and asks :func:`assay.people.access.check`. Routes check
nothing themselves; the project list only asks which projects the actor may see.
"""

from __future__ import annotations

from urllib.parse import unquote

import sqlalchemy as sa
from fastapi import Request

from assay.errors import AssayError, Forbidden, NotAuthenticated, NotFound
from assay.people.access import Actor, Decision, check, may, permitted_actions, refusal
from assay.people.accounts import (
    Account,
    account_by_id,
    get_account,
    local_account,
    session_account,
    with_account,
)
from assay.people.actors import account_for
from assay.people.guard_read import GuardRead, guard_read
from assay.people.mode import team_mode
from assay.people.ownership import others_copy, owns_item
from assay.people.sessions import judge_session, session_key
from assay.people.tokens import verify_token
from assay.records import Item, Project
from assay.store.db import autocommit, retry_dropped
from assay.store.projects import get_project, project_from_row
from assay.store.workspace import Workspace
from assay.web.proxies import proxy_user
from assay.web.route_actions import OWN_LISTS, action_for, is_public
from assay.web.state import workspace

SESSION_COOKIE = "assay_session"


def guard(request: Request) -> None:
    """Let the request through, or raise NotAuthenticated (401) or Forbidden (403).

    One connection for all the guard's reads and writes; tried once more when that
    connection had been dropped (:func:`assay.store.db.retry_dropped`)."""
    route = request.scope.get("route")
    path = getattr(route, "path", request.url.path)
    if is_public(request.method, path):
        return
    refusal = retry_dropped(lambda: _checked(request, path))
    if refusal is not None:
        raise refusal


def _checked(request: Request, path: str) -> AssayError | None:
    """The guard's reads and writes on a connection of their own: each write (a session's
    last use, an expired session's deletion) commits by itself, so a refusal keeps them."""
    with autocommit(workspace(request).engine) as conn:
        try:
            _check(request, path, conn)
        except AssayError as exc:
            return exc
    return None


def _check(request: Request, path: str, conn: sa.Connection) -> None:
    """The guard's decision. Team mode, the session, the project, the role and the item's
    owner come from one read (:func:`assay.people.guard_read.guard_read`); what it found
    is kept for the route (``request.state``), which then reads none of it again."""
    ws = workspace(request)
    name = request.path_params.get("name")
    item_id = request.path_params.get("item_id")
    cookie = session_key(request.cookies.get(SESSION_COOKIE, ""))
    read = guard_read(conn, session_key=cookie, project=name, item_id=item_id)
    actor = request_actor(request, conn=conn, read=read)
    if name is not None and read.project is not None:
        request.state.project = project_from_row(read.project)  # the route's project too
    if actor.personal:
        return
    action = action_for(request.method, path)
    if action is None:
        return
    if read.project is not None and item_id is not None and actor.role_in is not None:
        # read with the session: what owns_item would answer, from the same read
        owner = read.item_author
        own = owner is not None and (owner == actor.account_id or read.item_task)
        _known_owners(request)[read.project.id, item_id, actor.account_id] = own
    project = request_project(request, name, conn=conn) if name is not None else None
    own = project is not None and item_id is not None and owns(request, project, item_id, conn)
    own_list = request.method in ("GET", "HEAD") and path in OWN_LISTS and project is not None
    if own_list and may(ws, actor, action, project, own=True, conn=conn):
        return  # a role that reads only its own items sees a list of those: own_items_only
    check(ws, actor, action, project, own=own, conn=conn)
    if project is not None and item_id is not None and not own:
        _check_blind(ws, actor, project, item_id, conn)


def owns(
    request: Request, project: Project, item_id: str, conn: sa.Connection | None = None
) -> bool:
    """:func:`assay.people.ownership.owns_item` for the request's actor, asked once per
    request (the guard's read answered it for the item of the path)."""
    actor = request_actor(request)
    known = _known_owners(request)
    key = (project.id, item_id, actor.account_id)
    if key not in known:
        known[key] = owns_item(workspace(request), project.id, item_id, actor.account_id, conn=conn)
    return known[key]


def _known_owners(request: Request) -> dict[tuple[int, str, int], bool]:
    known = getattr(request.state, "owners", None)
    if not isinstance(known, dict):
        known = request.state.owners = {}
    return known


def request_project(request: Request, name: str, *, conn: sa.Connection | None = None) -> Project:
    """The project ``name`` as the guard read it for this request (kept on
    ``request.state``), else read now: a route does not read its project a second time."""
    known = getattr(request.state, "project", None)
    if isinstance(known, Project) and known.name == name:
        return known
    project = get_project(workspace(request), name, conn=conn)
    request.state.project = project
    return project


def _check_blind(
    ws: Workspace, actor: Actor, project: Project, item_id: str, conn: sa.Connection
) -> None:
    """Blind mode (project setting ``blind``): those who may not review never open another
    annotator's copy of an item before the item is accepted."""
    if not project.settings.get("blind") or may(ws, actor, "item.review", project, conn=conn):
        return
    if others_copy(ws, project.id, item_id, actor.account_id, conn=conn):
        raise Forbidden(
            f"{actor.username} may not open item {item_id} in project {project.name!r}: it is "
            "another annotator's version, and blind mode keeps versions apart until review"
        )


def own_items_only(request: Request, project: Project) -> int | None:
    """The author the caller's lists of items keep to: their account id when their role may
    read only their own items (annotators, unless the project lets them see all), else None.
    Lists, their pages and "next in list" all ask here."""
    actor = request_actor(request)
    if actor.personal:
        return None
    return None if may(workspace(request), actor, "item.read", project) else actor.account_id


def copies_shown(request: Request, project: Project, asked: str) -> str:
    """The ``copies`` list filter (include, only: annotators' copies of items) the caller may
    use: in blind mode, those who may not review get none ("")."""
    actor = request_actor(request)
    blind = bool(asked and project.settings.get("blind") and not actor.personal)
    if blind and not may(workspace(request), actor, "item.review", project):
        return ""
    return asked


def blind_to_unreviewed(request: Request, project: Project) -> bool:
    """Blind mode for figures: whether the caller's agreement and dashboard figures must
    leave out other annotators' copies of items not yet accepted (they may not review), what
    ever ``annotators_see_all`` says."""
    actor = request_actor(request)
    if actor.personal or not project.settings.get("blind"):
        return False
    return not may(workspace(request), actor, "item.review", project)


AUTHOR_COOKIE = "assay_author"


def actor_id(request: Request) -> int:
    """Who is working, as the account id writes record: in team mode the signed-in account;
    in personal mode the account of the name the annotator gave (cookie, percent-encoded by
    static/author.js so that any name survives; found or made as in
    :mod:`assay.people.actors`), else ASSAY_AUTHOR's, else the local owner."""
    actor = request_actor(request)
    if not actor.personal:
        return actor.account_id
    name = unquote(request.cookies.get(AUTHOR_COOKIE, "")).strip()[:200]
    return account_for(workspace(request), name)


def check_question_edit(request: Request, project: Project, stored: Item, new: Item) -> None:
    """A save that changes a question (or adds or removes turns) needs ``item.edit_query``
    on top of the route's ``item.edit``: reviewers correct answers and evidence, not what was
    asked. Raises Forbidden naming the action."""
    if [t.query for t in stored.turns] == [t.query for t in new.turns]:
        return
    actor = request_actor(request)
    if actor.personal:
        return
    own = owns(request, project, stored.id)
    check(workspace(request), actor, "item.edit_query", project, own=own)


def may_edit_question(request: Request, project: Project, item: Item) -> Decision:
    """Whether the caller may change the item's questions (:func:`check_question_edit`
    refuses such a save otherwise): the editor shows a question read-only when not."""
    actor = request_actor(request)
    ws = workspace(request)
    own = not actor.personal and owns(request, project, item.id)
    return may(ws, actor, "item.edit_query", project, own=own)


def may_delete_item(request: Request, project: Project, item: Item | None) -> Decision:
    """Whether the caller may delete the item (``item.delete``; a new one would be their
    own): the editor shows its Delete button only then. The guard still decides the DELETE."""
    actor = request_actor(request)
    ws = workspace(request)
    own = item is None or (not actor.personal and owns(request, project, item.id))
    return may(ws, actor, "item.delete", project, own=own)


def edit_refusal(
    request: Request, project: Project, item_id: str | None, action: str = "item.edit"
) -> Forbidden | None:
    """Why the caller may not ``action`` the item ``item_id`` (None: anything of the
    project), the refusal a save would meet; None when they may. Editors show read-only then."""
    actor = request_actor(request)
    if actor.personal:
        return None
    own = item_id is not None and owns(request, project, item_id)
    decision = may(workspace(request), actor, action, project, own=own)
    return None if decision else refusal(actor, action, project, decision)


def allowed_actions(request: Request) -> frozenset[str]:
    """What the caller may do in the project the path names (outside one: the workspace
    actions), for pages that show only the controls their reader may use; the guard still
    decides every request. Worked out once per request, and only when a page asks."""
    known = getattr(request.state, "allowed_actions", None)
    if isinstance(known, frozenset):
        return known
    allowed: frozenset[str] = frozenset()
    actor = signed_in_actor(request)
    if actor is not None:
        ws = workspace(request)
        name = request.path_params.get("name")
        try:
            project = request_project(request, name) if name is not None else None
        except NotFound:  # the error page of an unknown project
            project = None
        allowed = permitted_actions(ws, actor, project)
    request.state.allowed_actions = allowed
    return allowed


def request_actor(
    request: Request, *, conn: sa.Connection | None = None, read: GuardRead | None = None
) -> Actor:
    """The actor of this request (worked out once, then kept on ``request.state``); ``read``:
    the guard's read of the request, else the database is asked."""
    known = getattr(request.state, "actor", None)
    if isinstance(known, Actor):
        return known
    ws = workspace(request)
    if read.team_mode if read is not None else team_mode(ws, conn=conn):
        actor = _signed_in(request, conn, read)
    else:
        actor = Actor.of(local_account(ws, conn=conn))
    request.state.actor = actor
    return actor


def _signed_in(request: Request, conn: sa.Connection | None, read: GuardRead | None) -> Actor:
    """The account of the trusted proxy's user header, else of a Bearer token, else of the
    session cookie (as ``read`` found it, with the role in the path's project)."""
    ws = workspace(request)
    header = request.headers.get("authorization", "")
    by_proxy = proxy_user(request, ws.settings)
    if by_proxy is not None:
        try:
            account = get_account(ws, by_proxy, conn=conn)
        except NotFound:
            raise NotAuthenticated(f"the proxy signed in {by_proxy!r}: no such account") from None
        if account.disabled:
            raise NotAuthenticated("this account is disabled; ask a workspace admin")
        return _of_account(account, "write")
    if header:
        kind, _, secret = header.partition(" ")
        if kind.lower() != "bearer" or not secret.strip():
            raise NotAuthenticated("send the API token as `Authorization: Bearer TOKEN`")
        token = verify_token(ws, secret.strip(), conn=conn)
        return _of_account(account_by_id(ws, token.account_id, conn=conn), token.scope)
    secret = request.cookies.get(SESSION_COOKIE, "")
    key = session_key(secret)
    if read is None or conn is None or key is None:
        found = session_account(ws, secret, conn=conn)
    else:
        found = with_account(judge_session(ws, conn, key, read.session))
    if found is None:
        raise NotAuthenticated("sign in first (your session has ended or never began)")
    actor = _of_account(found[1], "write")  # the account was read with the session
    if read is not None and read.project is not None:
        actor = actor.knowing_role(read.project.id, read.role)
    return actor


def _of_account(account: Account, scope: str) -> Actor:
    """The actor of a signed-in account: never the local owner (it has no web sign-in)."""
    if account.origin != "created":  # the local owner never acts through the web in team mode
        raise NotAuthenticated("this account cannot sign in")
    return Actor.of(account, scope)


def signed_in_actor(request: Request) -> Actor | None:
    """The actor when someone is signed in (or personal mode), else None: for pages that
    show who is signed in, such as the sign-in page itself."""
    try:
        return request_actor(request)
    except NotAuthenticated:
        return None
