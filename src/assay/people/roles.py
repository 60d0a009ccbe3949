"""The five project roles and what each may do, as one table.

Every action names the roles that may do it on any record of the project, and the roles
that may do it only on their own (or assigned) records. :mod:`assay.people.access` reads
this table and nothing else; a new action is a new row here.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.errors import InvalidInput

ROLES: dict[str, str] = {
    "owner": "everything: members, settings, deleting the project",
    "lead": "assign, review, import and export, experiments, documents and settings",
    "reviewer": "read, review and comment; edits answers and evidence, not question text",
    "annotator": "writes and edits their own and assigned items; comments",
    "viewer": "reads only",
}
"""Project roles, most powerful first, with what each is for (shown in help and errors)."""


@dataclass(frozen=True)
class Rule:
    """Who may do one action. ``write``: changes something (a read-only token may not).
    ``own``: roles allowed on their own or assigned records only. ``widened_by``: a project
    setting that, when true, lets the ``own`` roles act on every record too."""

    write: bool
    roles: frozenset[str]
    own: frozenset[str] = frozenset()
    widened_by: str = ""


def _rule(write: bool, roles: str, own: str = "", widened_by: str = "") -> Rule:
    return Rule(write, frozenset(roles.split()), frozenset(own.split()), widened_by)


ALL = "owner lead reviewer annotator viewer"

ACTIONS: dict[str, Rule] = {
    # reading
    "project.read": _rule(False, ALL),
    "item.read": _rule(False, "owner lead reviewer viewer", "annotator", "annotators_see_all"),
    "experiment.read": _rule(False, ALL),
    # writing gold items
    "item.create": _rule(True, "owner lead annotator"),
    "item.edit": _rule(True, "owner lead reviewer", "annotator"),
    "item.edit_query": _rule(True, "owner lead", "annotator"),
    "item.delete": _rule(True, "owner lead", "annotator"),
    "item.review": _rule(True, "owner lead reviewer"),
    "item.assign": _rule(True, "owner lead"),
    # take, submit and skip the tasks of one's own queue (review.queue checks whose they are)
    "queue.work": _rule(True, "owner lead reviewer annotator"),
    "comment.write": _rule(True, "owner lead reviewer annotator"),
    # judging mode: everyone who annotates or reviews may judge (each judge keeps their own
    # judgments); reading judgments and leaderboards is project.read
    "judgment.write": _rule(True, "owner lead reviewer annotator"),
    # the project's corpus, data in and out, experiments
    "document.write": _rule(True, "owner lead"),
    "import": _rule(True, "owner lead"),
    "export": _rule(False, "owner lead"),
    "experiment.run": _rule(True, "owner lead"),
    "version.create": _rule(True, "owner lead"),
    "project.settings": _rule(True, "owner lead"),
    # the project itself
    "project.members": _rule(True, "owner"),
    "project.delete": _rule(True, "owner"),
}
"""Project actions. Workspace actions (managing users, creating projects) belong to
workspace admins: see :data:`ADMIN_ACTIONS`."""

ADMIN_ACTIONS: dict[str, bool] = {
    "workspace.users": True,
    "project.create": True,
    "workspace.endpoints": True,  # outgoing URLs (and so where API keys go): issue 32
}
"""Workspace actions, only for workspace admins; the value says whether it writes."""


DOING: dict[str, str] = {
    "project.read": "open the project",
    "item.read": "read other people's items",
    "experiment.read": "read experiments",
    "item.create": "create items",
    "item.edit": "edit items",
    "item.edit_query": "change an item's question",
    "item.delete": "delete items",
    "item.review": "review items",
    "item.assign": "assign work",
    "queue.work": "work through a queue",
    "comment.write": "write comments",
    "judgment.write": "judge",
    "document.write": "add or change documents",
    "import": "import data",
    "export": "export data",
    "experiment.run": "run experiments",
    "version.create": "freeze versions",
    "project.settings": "change the project's settings",
    "project.members": "manage the project's members",
    "project.delete": "delete the project",
    "workspace.users": "manage accounts",
    "project.create": "create projects",
    "workspace.endpoints": "manage outgoing endpoints",
}
"""Each action in plain words, as refusals say it ("vic may not edit items ..."); the pages
show the catalog's text of ``doing.<action>`` (``web/i18n/*/roles.json``) instead."""


def check_role(role: str) -> str:
    if role not in ROLES:
        raise InvalidInput(f"unknown role {role!r}; choose one of: {', '.join(ROLES)}")
    return role
