"""A reviewer's verdict on a submitted item: accept, accept with edits, or reject with a reason.

An item is submitted for review when its status is ``submitted`` and it is not an annotator's
copy (copies go to adjudication). A verdict names the version the reviewer read (optimistic
concurrency): when two reviewers decide on the same item at once, the first wins and the
other gets :class:`ReviewedMeanwhile` (409 on the web) naming what happened; nothing either
sent is written half.

- accept: status ``accepted``; a ``reviews`` row, verdict ``accept``.
- accept with edits: the reviewer's changes are saved as a new version (event ``review_edit``),
  then ``accepted``; the row's verdict is ``accept_edited`` and its ``changes`` the field-level
  diff (:mod:`assay.review.changes`) of the accepted item against what was submitted. Edits
  the reviewer's editor already saved count too: an ``accept`` of an item that differs from
  its submitted version is recorded as ``accept_edited``.
- reject: status ``rejected`` with a ``reason`` (required); the annotation queue shows the
  item to its author again with that reason.

In a conversation, a reviewer who edits an agent turn's answer keeps the submitted text in
the turn's ``original_answer`` (RAGAPHENE's ``originalText``), unless it is already set.

Who may review: ``item.review`` (owner, lead, reviewer). A reviewer never reviews their own
item; leads and owners may (someone has to, in a small team); the local owner of personal
mode may review anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from assay.errors import Forbidden, InvalidInput
from assay.gold.items import (
    StaleItem,
    editable_copy,
    get_item,
    save_item,
    save_read_item,
    set_status,
)
from assay.people.access import Actor, check
from assay.people.actors import AUTHOR_NAME
from assay.people.members import role_of
from assay.people.ownership import owns_item
from assay.records import Item, Project, to_json
from assay.review.assignments import send_back_to_author
from assay.review.changes import item_changes
from assay.review.queue import keep_hold
from assay.review.review_queue import finish_reservations
from assay.store.db import as_utc, reading, transaction, utcnow
from assay.store.review_schema import reviews
from assay.store.schema import accounts, events, items
from assay.store.workspace import Workspace

VERDICTS = ("accept", "accept_edited", "reject")
DONE = {"accept": "accepted", "accept_edited": "accepted with edits", "reject": "rejected"}
REVIEW_OWN = frozenset({"owner", "lead"})
"""Roles that may review their own items (a reviewer may not)."""


@dataclass(frozen=True, slots=True)
class Review:
    """One verdict: who gave it, when, on which version, with the reason and the changes."""

    id: int
    item_id: str
    reviewer: str
    verdict: str
    reason: str
    submitted_version: int
    changes: list[dict[str, Any]]
    at: datetime


class ReviewedMeanwhile(StaleItem):
    """The item changed after the reviewer read it (another reviewer decided, or someone
    saved it): the verdict was not recorded. ``current`` is the item as it is now."""

    def __init__(self, current: Item, base_version: int, last: Review | None) -> None:
        what = f"it is now version {current.version}, {current.status}"
        if last is not None and current.status in ("accepted", "rejected"):
            verdict = DONE[last.verdict]
            what += f" ({verdict} by {last.reviewer} at {last.at:%Y-%m-%d %H:%M:%S} UTC)"
        StaleItem.__init__(self, current, base_version)
        self.key, self.params = None, {}  # its own message, not the stale save's catalog text
        self.args = (
            f"item {current.id} changed after you read version {base_version}: {what}; "
            "your verdict was not recorded and nothing was overwritten (reload the item to "
            "review it as it is now)",
        )


def may_review_own(ws: Workspace, actor: Actor, project: Project) -> bool:
    """Whether ``actor`` may review items they wrote: the local owner, workspace admins,
    a project's owners and leads."""
    if actor.personal or actor.is_admin:
        return True
    return role_of(ws, project.id, actor.account_id) in REVIEW_OWN


def check_reviewer(ws: Workspace, actor: Actor, project: Project, item_id: str) -> None:
    """Raise Forbidden when ``actor`` is a reviewer reviewing their own item (``item.review``
    itself is the access guard's to check)."""
    if may_review_own(ws, actor, project):
        return
    if owns_item(ws, project.id, item_id, actor.account_id):
        raise Forbidden(
            f"{actor.username} may not review item {item_id}: it is their own, and a reviewer "
            "reviews other people's items (a lead or another reviewer reviews this one)",
            key="raised.review_own_item",
            username=actor.username,
            item_id=item_id,
        )


def review_item(
    ws: Workspace,
    project: Project,
    item_id: str,
    verdict: str,
    version: int,
    *,
    reviewer: int,
    reason: str = "",
    edits: Item | None = None,
    conn: sa.Connection | None = None,
) -> Review:
    """Record ``reviewer``'s verdict on version ``version`` of a submitted item (see the
    module's docstring); ``edits``: the item as the reviewer changed it, saved first."""
    if verdict not in VERDICTS:
        raise InvalidInput(
            f"verdict: unknown verdict {verdict!r}; choose one of: {', '.join(VERDICTS)}"
        )
    reason = reason.strip()
    if verdict == "reject" and not reason:
        raise InvalidInput("reason: a reject needs a reason, so the author knows what to change")
    if verdict == "reject" and edits is not None:
        raise InvalidInput("edits: a reject sends no edits; the author changes the item")
    with transaction(ws.engine, conn) as conn:
        item = get_item(ws, project, item_id, conn=conn)
        if item.version != version:
            raise _meanwhile(ws, conn, project, item_id, version)
        _check_reviewable(conn, item)
        submitted = submitted_content(conn, project, item_id) or to_json(item)
        if edits is not None and edits.kind != item.kind:
            raise InvalidInput(f"edits: kind stays {item.kind!r} in a review")
        try:
            if edits is not None:
                changed = keep_original_answers(item, edits)
                item = save_item(
                    ws,
                    project,
                    item_id,
                    changed,
                    version,
                    author=reviewer,
                    action="review_edit",
                    conn=conn,
                )
            status = "rejected" if verdict == "reject" else "accepted"
            item = set_status(ws, project, item_id, status, item.version, actor=reviewer, conn=conn)
        except StaleItem:
            raise _meanwhile(ws, conn, project, item_id, version) from None
        changes = item_changes(submitted, to_json(item))
        if verdict == "accept" and changes:
            verdict = "accept_edited"
        if verdict == "accept_edited" and not changes:
            raise InvalidInput(
                "edits: nothing differs from the submitted version; accept it as it is "
                "(verdict accept)"
            )
        now = utcnow()
        inserted = conn.execute(
            reviews.insert().values(
                project_id=project.id,
                item_id=item_id,
                reviewer_id=reviewer,
                verdict=verdict,
                reason=reason,
                submitted_version=version,
                changes=changes,
                at=now,
            )
        ).inserted_primary_key
        assert inserted is not None
        review_id = int(inserted[0])
        finish_reservations(conn, project, item_id, now)
        if verdict == "reject":
            send_back_to_author(conn, project, item_id, reviewer, now)
        name = conn.scalar(sa.select(AUTHOR_NAME).where(accounts.c.id == reviewer)) or ""
        return Review(review_id, item_id, name, verdict, reason, version, changes, now)


def _check_reviewable(conn: sa.Connection, item: Item) -> None:
    """Only submitted originals are reviewed: say why another item is not."""
    copy_of = conn.scalar(sa.select(items.c.copy_of).where(items.c.id == item.id))
    if copy_of:
        raise InvalidInput(
            f"item {item.id} is an annotator's copy of item {copy_of}: copies are merged in "
            "adjudication, not reviewed"
        )
    if item.status == "submitted":
        return
    why = {
        "draft": "it is a draft: its author submits it first",
        "accepted": "it was accepted already",
        "rejected": "it was rejected and waits for its author to submit it again",
    }[item.status]
    raise InvalidInput(f"item {item.id} cannot be reviewed: {why} (only submitted items are)")


def _meanwhile(
    ws: Workspace, conn: sa.Connection, project: Project, item_id: str, version: int
) -> ReviewedMeanwhile:
    current = get_item(ws, project, item_id, conn=conn)
    found = item_reviews(ws, project, item_id, conn=conn)
    return ReviewedMeanwhile(current, version, found[-1] if found else None)


def keep_original_answers(stored: Item, data: Item) -> Item:
    """``data`` with each conversation turn whose answer it changes keeping ``stored``'s
    answer in ``original_answer`` (when that is empty), and no turn losing the original it
    has (an editor page loaded before it was set sends it empty): RAGAPHENE's review mode
    keeps the agent's text as submitted. Single-turn items are returned as they are."""
    if stored.kind != "conversation":
        return data
    data = editable_copy(data)
    for new, old in zip(data.turns, stored.turns, strict=False):
        if not new.original_answer:  # an editor that has not seen the original keeps it too
            new.original_answer = old.original_answer or (
                old.answer if new.answer != old.answer else ""
            )
    return data


def save_edit(
    ws: Workspace,
    project: Project,
    item_id: str,
    data: Item,
    base_version: int,
    *,
    author: int,
    check: Callable[[Item], None] | None = None,
) -> Item:
    """An editor's save, as one transaction that reads the item once: ``check`` is called
    with the stored item first (the web's question-edit rule; it refuses by raising), then
    the author's hold on the item's pool task is renewed (:func:`keep_hold`). Of a submitted
    item by someone other than its author, a reviewer's edit (event ``review_edit``,
    answers kept as in :func:`keep_original_answers`); else a plain save."""
    with transaction(ws.engine, None) as conn:
        stored = get_item(ws, project, item_id, conn=conn)
        if check is not None:
            check(stored)
        keep_hold(ws, project, item_id, author, conn=conn)
        action = "save"
        if stored.status == "submitted" and not owns_item(
            ws, project.id, stored.id, author, conn=conn
        ):
            data, action = keep_original_answers(stored, data), "review_edit"
        return save_read_item(
            ws, project, stored, data, base_version, author=author, action=action, conn=conn
        )


def submitted_content(conn: sa.Connection, project: Project, item_id: str) -> Any:
    """The item as it was last submitted, as JSON values: what the first change after its
    last submission replaced (an event's ``before``); None when it has not changed since
    (or was never submitted and never changed: then it is the item as it is)."""
    by_item = sa.and_(events.c.project_id == project.id, events.c.item_id == item_id)
    submits = conn.execute(
        sa.select(events.c.id, events.c.after)
        .where(by_item, events.c.action == "status")
        .order_by(events.c.id.desc())
    )
    since = next((r.id for r in submits if (r.after or {}).get("status") == "submitted"), 0)
    later = conn.execute(
        sa.select(events.c.before).where(by_item, events.c.id > since).order_by(events.c.id)
    )
    for (before,) in later:
        if isinstance(before, dict) and "turns" in before:
            return before
    return None


def pending_changes(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> list[dict[str, Any]]:
    """What the item's current version changes against its submitted one (a reviewer's
    edits so far): what an accept now would record."""
    with reading(ws.engine, conn) as conn:
        item = to_json(get_item(ws, project, item_id, conn=conn))
        return item_changes(submitted_content(conn, project, item_id) or item, item)


def item_reviews(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> list[Review]:
    """The item's verdicts, oldest first."""
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(reviews, AUTHOR_NAME.label("reviewer"))
            .join(accounts, accounts.c.id == reviews.c.reviewer_id)
            .where(reviews.c.project_id == project.id, reviews.c.item_id == item_id)
            .order_by(reviews.c.at, reviews.c.id)
        ).all()
    return [
        Review(
            r.id,
            r.item_id,
            r.reviewer,
            r.verdict,
            r.reason,
            r.submitted_version,
            list(r.changes or []),
            as_utc(r.at),
        )
        for r in rows
    ]


def review_refusal(
    ws: Workspace, actor: Actor, project: Project, item: Item
) -> Forbidden | InvalidInput | None:
    """Why ``actor`` may not review ``item`` now (the refusal a verdict would meet), or None
    when they may: for pages that show the verdict buttons only to those who may use them."""
    try:
        check(ws, actor, "item.review", project)
        check_reviewer(ws, actor, project, item.id)
        with reading(ws.engine, None) as conn:
            _check_reviewable(conn, item)
    except (Forbidden, InvalidInput) as exc:
        return exc
    return None
