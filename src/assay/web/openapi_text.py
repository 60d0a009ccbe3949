"""Our summaries of the API's operations, for the OpenAPI document and the API docs page.

FastAPI would otherwise title-case each function's name ("Api Create Item"). Each operation
gets a short summary here; its description is the route's docstring, or the text here for the
few routes that have none. :func:`describe` writes both into the app's OpenAPI document; a
test fails for an operation with no summary here (a new route: write one) or an entry that
names no operation (a stale one).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

P = "/api/projects/{name}"

SUMMARIES: dict[str, str] = {
    # people
    "GET /api/session": "Who is signed in",
    "POST /api/session": "Sign in",
    "DELETE /api/session": "Sign out",
    f"GET {P}/members": "List the project's members",
    f"PUT {P}/members/{{username}}": "Add a member or change a role",
    f"DELETE {P}/members/{{username}}": "Remove a member",
    # account admin (workspace admins) and invites
    "GET /api/accounts": "List accounts",
    "POST /api/accounts": "Create an account",
    "POST /api/accounts/{username}/disable": "Disable an account",
    "POST /api/accounts/{username}/enable": "Enable an account",
    "PUT /api/accounts/{username}/password": "Set a new password",
    "GET /api/invites": "List invites",
    "POST /api/invites": "Make an invite link",
    "DELETE /api/invites/{invite_id}": "Revoke an invite",
    "POST /api/invite-accept": "Accept an invite and sign in",
    "GET /api/endpoints": "List the registered outgoing endpoints",
    "POST /api/endpoints": "Register an outgoing endpoint (workspace admins)",
    "DELETE /api/endpoints/{endpoint}": "Remove an outgoing endpoint (workspace admins)",
    # projects
    "GET /api/projects": "List projects",
    "POST /api/projects": "Create a project",
    f"GET {P}": "Show a project",
    f"PUT {P}/settings": "Change project settings",
    # documents and chunkings
    f"GET {P}/documents": "List documents",
    f"POST {P}/documents": "Upload a document",
    f"GET {P}/documents/{{doc_id}}": "Show a document with its text",
    f"PATCH {P}/documents/{{doc_id}}": "Rename a document or change its notes",
    f"DELETE {P}/documents/{{doc_id}}": "Delete a document",
    f"POST {P}/documents/{{doc_id}}/replace": "Replace a document's file",
    f"GET {P}/documents/{{doc_id}}/chunks": "List a document's chunks",
    f"GET {P}/documents/{{doc_id}}/items": "List the items that cite a document",
    "GET /projects/{name}/documents/{doc_id}/original": "Download the uploaded file",
    f"GET {P}/chunkings": "List chunkings",
    f"POST {P}/chunkings": "Create a chunking",
    f"GET {P}/search": "Keyword search over the chunks",
    # items
    f"GET {P}/items": "List items",
    f"POST {P}/items": "Create an item",
    f"GET {P}/items/{{item_id}}": "Show an item with its checks",
    f"PUT {P}/items/{{item_id}}": "Save an item",
    f"DELETE {P}/items/{{item_id}}": "Delete an item",
    f"POST {P}/items/{{item_id}}/status": "Submit an item or set it back to draft",
    f"GET {P}/items/{{item_id}}/events": "An item's events",
    f"GET {P}/editor/search": "Search for the item editor",
    f"POST {P}/synthesize": "Draft items with the generator",
    f"POST {P}/synthesis-jobs": "Start drafting items as a job",
    # comments, review, history
    f"GET {P}/items/{{item_id}}/comments": "List an item's comments",
    f"POST {P}/items/{{item_id}}/comments": "Comment on an item",
    f"PATCH {P}/items/{{item_id}}/comments/{{comment_id}}": "Resolve, reopen or edit a comment",
    f"DELETE {P}/items/{{item_id}}/comments/{{comment_id}}": "Delete a comment",
    f"POST {P}/items/{{item_id}}/review": "Accept or reject a submitted item",
    f"GET {P}/items/{{item_id}}/reviews": "An item's verdicts",
    f"GET {P}/review-queue": "The review queue",
    f"POST {P}/review-queue/next": "Take the next item to review",
    f"POST {P}/review-queue/{{item_id}}/skip": "Give an item back to the review queue",
    f"GET {P}/items/{{item_id}}/history": "An item's history",
    f"POST {P}/items/{{item_id}}/restore": "Restore an earlier version of an item",
    # queues and assignment
    f"GET {P}/queue": "A queue of tasks",
    f"POST {P}/queue/next": "Take the next task",
    f"POST {P}/queue/{{task_id}}/submit": "Submit a task and take the next",
    f"POST {P}/queue/{{task_id}}/skip": "Skip a task",
    f"GET {P}/assignments": "Assignment overview",
    f"POST {P}/assignments": "Assign items to annotators",
    # production candidates (docs/production-to-gold.md)
    f"POST {P}/candidates/imports": "Import a production log as candidates",
    f"GET {P}/candidates/imports": "List log imports with their reports",
    f"GET {P}/candidates": "List production candidates",
    f"GET {P}/candidates/groups": "List groups of near-duplicate questions and topics",
    f"GET {P}/candidates/sample": "Show the sample to annotate next, with reasons",
    f"POST {P}/candidates/assignments": "Take the sample into assigned items",
    f"GET {P}/coverage": "Coverage of documents, sections and topics, and the gaps",
    # versions, agreement, adjudication, dashboard
    f"GET {P}/versions": "List frozen dataset versions",
    f"POST {P}/versions": "Freeze a dataset version",
    f"GET {P}/versions/{{version}}": "Show a dataset version",
    f"GET {P}/version-diff": "Compare two dataset versions",
    f"GET {P}/agreement": "Inter-annotator agreement",
    f"GET {P}/adjudication": "Items waiting for adjudication",
    f"GET {P}/adjudication/{{item_id}}": "An item's copies side by side",
    f"POST {P}/adjudication/{{item_id}}": "Merge copies into the gold item",
    f"GET {P}/dashboard": "Dashboard figures",
    # conversations
    f"GET {P}/conversations": "List conversations",
    f"POST {P}/conversations": "Start a conversation",
    f"POST {P}/conversations/overlap": "Overlap of an answer with passages",
    f"GET {P}/conversations/{{item_id}}": "Show a conversation",
    f"PUT {P}/conversations/{{item_id}}": "Save a conversation",
    f"POST {P}/conversations/{{item_id}}/turns": "Ask the next question",
    f"POST {P}/conversations/{{item_id}}/turns/{{number}}/generate": "Answer a turn again",
    f"POST {P}/conversations/{{item_id}}/turns/{{number}}/draft/{{action}}": (
        "Take or discard a drafted answer"
    ),
    f"GET {P}/conversation-settings": "Conversation settings",
    f"PUT {P}/conversation-settings": "Change conversation settings",
    # experiments
    f"GET {P}/experiments": "List experiments",
    f"POST {P}/experiments": "Create an experiment",
    f"POST {P}/experiment-files": "Upload a run or answers file",
    f"GET {P}/experiments/{{ref}}": "Show an experiment's results",
    f"DELETE {P}/experiments/{{ref}}": "Delete an experiment",
    f"POST {P}/experiments/{{ref}}/run": "Run or resume an experiment",
    f"POST {P}/experiments/{{ref}}/cancel": "Stop a running experiment",
    f"GET {P}/llm-cache": "Show the project's response cache",
    f"DELETE {P}/llm-cache": "Drop the project's response cache (owners and leads)",
    f"GET {P}/experiments/{{ref}}/events": "Follow an experiment's progress",
    f"GET {P}/experiments/{{ref}}/tasks": "List an experiment's tasks",
    f"GET {P}/experiments/{{ref}}/tasks/{{task_id}}": "One task across pipelines",
    f"GET {P}/experiments/{{ref}}/results.json": "Download results as JSON",
    f"GET {P}/experiments/{{ref}}/results.csv": "Download results as CSV",
    f"GET {P}/experiments/{{ref}}/inspectorraget": "Download as an InspectorRAGet file",
    # import and export
    "GET /api/formats": "List import and export formats",
    f"GET {P}/transfer/jobs": "List import and export jobs",
    f"GET {P}/transfer/jobs/{{job_id}}": "Show a job",
    f"POST {P}/transfer/jobs/{{job_id}}/cancel": "Cancel a job",
    f"GET {P}/transfer/jobs/{{job_id}}/events": "Follow a job",
    f"GET {P}/transfer/jobs/{{job_id}}/download": "Download an export",
    f"POST {P}/transfer/exports": "Start an export",
    f"POST {P}/transfer/imports": "Start an import",
    # judging
    f"GET {P}/judging/leaderboard": "Leaderboard of judged runs",
    f"GET {P}/judging/leaderboard.trec": "Leaderboard as TREC text",
    f"GET {P}/judging/agreement": "Agreement among judges",
    f"GET {P}/judging/qrels": "Document ratings as qrels",
    f"GET {P}/judging/qrels.trec": "Qrels as TREC text",
    f"POST {P}/judging/topics": "Import judging topics",
    f"POST {P}/judging/runs": "Import run reports",
    f"GET {P}/judging/progress": "Judging progress",
    f"GET {P}/judging/judgments": "A judge's judgment of one unit",
    f"PUT {P}/judging/judgments": "Save a judgment",
    f"GET {P}/judging/export": "Export judgments",
    f"POST {P}/judging/import": "Import judgments",
    f"GET {P}/judging/assignments": "Who judges which topics",
    f"POST {P}/judging/assignments": "Give topics to judges",
    f"POST {P}/judging/assignments/remove": "Take topics back from judges",
    f"GET {P}/judging/offline-page": "Download the offline judging page",
    # help
    "GET /api/guide": "The annotators' guide",
    # pools and LLM suggestions
    f"GET {P}/pool": "Pool a free question over the project's sources",
    f"GET {P}/items/{{item_id}}/pool": "Pool an item's question, marked by its gold",
    f"GET {P}/pool/summary": "Pool every question and report coverage",
    f"GET {P}/pool-settings": "Show the pool settings",
    f"PUT {P}/pool-settings": "Change the pool settings",
    f"GET {P}/items/{{item_id}}/suggestions": "List an item's LLM suggestions",
    f"POST {P}/items/{{item_id}}/suggestions": "Ask the generator for suggestions",
    f"POST {P}/items/{{item_id}}/suggestions/accept": "Accept LLM suggestions",
    f"POST {P}/items/{{item_id}}/suggestions/reject": "Reject LLM suggestions",
    # comparisons and exports of one
    f"GET {P}/compare-experiments": "Compare two experiments",
    f"GET {P}/experiments/{{ref}}/judge-agreement": "Agreement of the LLM judge with people",
    f"GET {P}/conversations/{{item_id}}/ragaphene": "Download one conversation as RAGAPHENE JSON",
}

DESCRIPTIONS: dict[str, str] = {
    "POST /api/projects": (
        "Create an empty project with a name and the language of its documents; 409 when the "
        "name is taken."
    ),
    f"GET {P}": (
        "The project: its language, how many documents and items (per status) it holds, its "
        "chunkings and query types."
    ),
    f"GET {P}/documents/{{doc_id}}": (
        "One document: its name, media type, size, parse information, notes, metadata and the "
        "extracted text that evidence offsets point into."
    ),
    "GET /projects/{name}/documents/{doc_id}/original": (
        "The file as it was uploaded (the same bytes), as a download."
    ),
    f"POST {P}/items": (
        "Create an item (one question, or several turns) as a draft; answers the stored item "
        "with its version, which the next save sends back."
    ),
    f"PUT {P}/items/{{item_id}}": (
        "Save the whole item if it is still at ``version``; a stale save gets 409 with the "
        "stored item and nothing is lost."
    ),
    f"DELETE {P}/items/{{item_id}}": "Delete the item; the deletion stays in the history.",
    f"GET {P}/conversations/{{item_id}}": (
        "The conversation with its turns, passages, answers, drafts and enrichments."
    ),
    f"GET {P}/experiments": "The project's experiments, newest first, with their state.",
    f"POST {P}/experiments": (
        "Create an experiment: a name, the pipelines to compare, and the dataset version or "
        "item statuses to run on; ``start`` runs it at once, else ``run`` starts it."
    ),
    f"DELETE {P}/experiments/{{ref}}": "Delete the experiment and its results.",
    f"GET {P}/experiments/{{ref}}/tasks": (
        "One page of the experiment's tasks (one per question) with each pipeline's metrics "
        "or error."
    ),
    f"GET {P}/experiments/{{ref}}/results.json": (
        "Every task's results per pipeline as one JSON document."
    ),
    f"GET {P}/experiments/{{ref}}/results.csv": (
        "Every task's results per pipeline as CSV, one row per task and pipeline."
    ),
}


def describe(app: FastAPI) -> None:
    """Write our summaries, and our text where a route has no docstring, into the app's
    OpenAPI document as FastAPI builds it (once, on first request)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = build()
        for path, operations in schema.get("paths", {}).items():
            for method, operation in operations.items():
                key = f"{method.upper()} {path}"
                if key in SUMMARIES:
                    operation["summary"] = SUMMARIES[key]
                if not operation.get("description") and key in DESCRIPTIONS:
                    operation["description"] = DESCRIPTIONS[key]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
