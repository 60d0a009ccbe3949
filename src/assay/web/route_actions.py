"""Which people action each route is: the table the access guard reads.

Every route that changes something is listed by method and path template; a test fails for
one that is not (:func:`missing_rules`). Reading routes of a project default to reading what
their path names (items, experiments, exports); routes outside a project only need someone
signed in. ``PUBLIC`` routes need nobody: the sign-in page and what it uses.
"""

from __future__ import annotations

from collections.abc import Iterable

P = "/api/projects/{name}"

WRITES: dict[tuple[str, str], str] = {
    ("POST", "/api/projects"): "project.create",
    # outgoing endpoints are the workspace admin's (assay.llm.endpoints)
    ("POST", "/api/endpoints"): "workspace.endpoints",
    ("DELETE", "/api/endpoints/{endpoint}"): "workspace.endpoints",
    ("PUT", f"{P}/settings"): "project.settings",
    ("PUT", f"{P}/pool-settings"): "project.settings",
    ("POST", f"{P}/documents"): "document.write",
    ("PATCH", f"{P}/documents/{{doc_id}}"): "document.write",
    ("DELETE", f"{P}/documents/{{doc_id}}"): "document.write",
    ("POST", f"{P}/documents/{{doc_id}}/replace"): "document.write",
    ("POST", f"{P}/chunkings"): "document.write",
    ("POST", f"{P}/items"): "item.create",
    # the editor saves the whole item; a save that changes a question also needs
    # item.edit_query (web.actors.check_question_edit): reviewers edit answers and evidence
    ("PUT", f"{P}/items/{{item_id}}"): "item.edit",
    ("DELETE", f"{P}/items/{{item_id}}"): "item.delete",
    # submit, or back to draft; accepting and rejecting are verdicts (the review route)
    ("POST", f"{P}/items/{{item_id}}/status"): "item.edit",
    # restoring an earlier version is a save (a changed question also needs item.edit_query)
    ("POST", f"{P}/items/{{item_id}}/restore"): "item.edit",
    ("POST", f"{P}/versions"): "version.create",
    ("POST", f"{P}/items/{{item_id}}/comments"): "comment.write",
    ("PATCH", f"{P}/items/{{item_id}}/comments/{{comment_id}}"): "comment.write",
    ("DELETE", f"{P}/items/{{item_id}}/comments/{{comment_id}}"): "comment.write",
    # verdicts and the review queue (assay.review)
    ("POST", f"{P}/items/{{item_id}}/review"): "item.review",
    ("POST", f"{P}/review-queue/next"): "item.review",
    ("POST", f"{P}/review-queue/{{item_id}}/skip"): "item.review",
    ("POST", f"{P}/synthesize"): "item.create",
    ("POST", f"{P}/experiments"): "experiment.run",
    ("POST", f"{P}/experiment-files"): "experiment.run",
    ("DELETE", f"{P}/experiments/{{ref}}"): "experiment.run",
    ("POST", f"{P}/experiments/{{ref}}/run"): "experiment.run",
    ("POST", f"{P}/experiments/{{ref}}/cancel"): "experiment.run",
    # dropping the response cache makes the next runs pay for every request again
    ("DELETE", f"{P}/llm-cache"): "experiment.run",
    ("POST", f"{P}/conversations"): "item.create",
    ("POST", f"{P}/conversations/overlap"): "item.create",
    ("PUT", f"{P}/conversations/{{item_id}}"): "item.edit",
    ("POST", f"{P}/conversations/{{item_id}}/turns"): "item.edit_query",
    ("POST", f"{P}/conversations/{{item_id}}/turns/{{number}}/generate"): "item.edit",
    ("POST", f"{P}/conversations/{{item_id}}/turns/{{number}}/draft/{{action}}"): "item.edit",
    ("PUT", f"{P}/conversation-settings"): "project.settings",
    ("POST", f"{P}/transfer/exports"): "export",
    ("POST", f"{P}/transfer/imports"): "import",
    # stopping an import changes what lands; a write, for those who may import (and export)
    ("POST", f"{P}/transfer/jobs/{{job_id}}/cancel"): "import",
    ("PUT", f"{P}/members/{{username}}"): "project.members",
    ("POST", f"{P}/assignments"): "item.assign",
    # one's own queue; review.queue refuses a task that is someone else's
    ("POST", f"{P}/queue/next"): "queue.work",
    ("POST", f"{P}/queue/{{task_id}}/submit"): "queue.work",
    ("POST", f"{P}/queue/{{task_id}}/skip"): "queue.work",
    ("POST", f"{P}/adjudication/{{item_id}}"): "item.review",
    ("DELETE", f"{P}/members/{{username}}"): "project.members",
    # judging mode's inputs and judgments made elsewhere (web.routes.judging_api)
    ("POST", f"{P}/judging/topics"): "import",
    ("POST", f"{P}/judging/runs"): "import",
    ("POST", f"{P}/judging/import"): "import",
    ("PUT", f"{P}/judging/judgments"): "judgment.write",
    ("POST", f"{P}/judging/assignments"): "item.assign",
    ("POST", f"{P}/judging/assignments/remove"): "item.assign",
    # production candidates (web.routes.candidates): a log comes in like an import; taking
    # the sample makes items and assigns them
    ("POST", f"{P}/candidates/imports"): "import",
    ("POST", f"{P}/candidates/assignments"): "item.assign",
    # LLM suggestions for an item (web.routes.suggestions): asking and deciding edit the item
    ("POST", f"{P}/items/{{item_id}}/suggestions"): "item.edit",
    ("POST", f"{P}/items/{{item_id}}/suggestions/accept"): "item.edit",
    ("POST", f"{P}/items/{{item_id}}/suggestions/reject"): "item.edit",
    # account admin and invites (web.routes.accounts): workspace admins only
    ("POST", "/api/accounts"): "workspace.users",
    ("POST", "/api/accounts/{username}/disable"): "workspace.users",
    ("POST", "/api/accounts/{username}/enable"): "workspace.users",
    ("PUT", "/api/accounts/{username}/password"): "workspace.users",
    ("POST", "/api/invites"): "workspace.users",
    ("DELETE", "/api/invites/{invite_id}"): "workspace.users",
    # a version exported, judging set up, items drafted by the LLM: leads and owners
    ("POST", f"{P}/synthesis-jobs"): "import",
}

READS: dict[tuple[str, str], str] = {
    # the editors' pages for a new item are where items are created
    ("GET", "/projects/{name}/items/new"): "item.create",
    ("GET", "/projects/{name}/conversations/new"): "item.create",
    # who has which tasks: for those who hand them out
    ("GET", "/projects/{name}/assignments"): "item.assign",
    ("GET", f"{P}/assignments"): "item.assign",
    # agreement compares everyone's items; adjudication is a reviewer's work
    ("GET", "/projects/{name}/agreement"): "item.read",
    ("GET", f"{P}/agreement"): "item.read",
    ("GET", "/projects/{name}/adjudication"): "item.review",
    ("GET", f"{P}/adjudication"): "item.review",
    ("GET", "/projects/{name}/adjudication/{item_id}"): "item.review",
    ("GET", f"{P}/adjudication/{{item_id}}"): "item.review",
    # the candidates page is where a lead samples and assigns; coverage reads every item
    ("GET", "/projects/{name}/candidates"): "item.assign",
    ("GET", f"{P}/candidates/sample"): "item.assign",
    ("GET", f"{P}/coverage"): "item.read",
    # the dashboard counts every item of the project: those who read them all
    ("GET", "/projects/{name}/dashboard"): "item.read",
    ("GET", "/api/projects/{name}/dashboard"): "item.read",
    # the project's pool coverage reads every item's gold
    ("GET", "/api/projects/{name}/pool/summary"): "item.read",
    # the review queue lists other people's items
    ("GET", "/projects/{name}/review"): "item.read",
    ("GET", f"{P}/review-queue"): "item.read",
    # the judges' document ratings as qrels are an export of the project
    ("GET", f"{P}/judging/qrels"): "export",
    ("GET", f"{P}/judging/qrels.trec"): "export",
    # judgments as autojudge JSON Lines: an export
    ("GET", f"{P}/judging/export"): "export",
    # one conversation as RAGAPHENE JSON, from its workbench
    ("GET", f"{P}/conversations/{{item_id}}/ragaphene"): "export",
    # the accounts of the workspace and invites: workspace admins only
    ("GET", "/admin/accounts"): "workspace.users",
    ("GET", "/api/accounts"): "workspace.users",
    ("GET", "/api/invites"): "workspace.users",
    # the pages that start uploads, LLM drafts and version downloads: for leads and owners
    ("GET", "/projects/{name}/judging-setup"): "import",
    ("GET", "/projects/{name}/synthesis"): "import",
}
"""Reading routes whose action is not the one their path suggests (see READ_SECTIONS)."""

PUBLIC = frozenset(
    {
        ("GET", "/login"),
        ("GET", "/api/session"),
        ("POST", "/api/session"),
        ("DELETE", "/api/session"),
        ("GET", "/language/{code}"),
        # the API's description (the app's own route, outside the guarded routers)
        ("GET", "/api/openapi.json"),
        ("GET", "/favicon.ico"),  # the sign-in page's icon, like /static
        # an invite link and accepting it: the invitee has no account yet (people.invites)
        ("GET", "/invite/{token}"),
        ("POST", "/api/invite-accept"),
    }
)

READ_SECTIONS = (
    ("/transfer", "export"),
    ("/items", "item.read"),
    ("/version", "item.read"),  # a frozen version's items (its page, show and diff)
    ("/conversations", "item.read"),
    ("/experiments", "experiment.read"),
)
"""Reading routes of a project by the first of these its path contains (transfer jobs and
their downloads are exports); any other is ``project.read``."""

OWN_LISTS = frozenset(
    {
        "/api/projects/{name}/items",
        "/projects/{name}/items",
        "/api/projects/{name}/conversations",
        "/projects/{name}/conversations",
    }
)
"""Lists of items that a role allowed only its own items (annotators) may open: they show
the caller's own items only (``web.actors.own_items_only``)."""

SAFE = frozenset({"GET", "HEAD"})


def action_for(method: str, path: str) -> str | None:
    """The action a request to the route ``path`` (its template) is; None when being signed
    in is enough. Unknown writes raise KeyError: :func:`missing_rules` keeps that from
    happening."""
    if method not in SAFE:
        return WRITES[(method, path)]
    if ("GET", path) in READS:
        return READS[("GET", path)]
    if "{name}" not in path:
        return None
    for part, action in READ_SECTIONS:
        if part in path:
            return action
    return "project.read"


def is_public(method: str, path: str) -> bool:
    return (method, path) in PUBLIC or (method == "HEAD" and ("GET", path) in PUBLIC)


def missing_rules(routes: Iterable[tuple[str, str]]) -> list[str]:
    """The writing routes among ``routes`` (method, path) with no rule: each must get one."""
    return sorted(
        f"{method} {path}"
        for method, path in routes
        if method not in SAFE and (method, path) not in WRITES and not is_public(method, path)
    )
