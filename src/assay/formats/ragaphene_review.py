"""RAGAPHENE's review mode in Assay's terms: review status and status history, and review
comments as Assay comments, and back.

**Status.** ``status`` ``reviewed`` with the last ``accepted``/``rejected`` of
``status_history`` is that item status (``submitted`` without an opinion, else ``draft``); on
the way back each accept or reject recorded in Assay replaces its reviewer's earlier opinion.

**Comments.**
A RAGAPHENE comment is ``{comment, author, created, updated, provenance?}``; its provenance
names what it is about (``component``: ``messages[i].text`` for a message,
``messages[i].documents[j].text`` for a context of an agent message) with the selected
``text`` and its ``offsets`` ``[start, end]``. Read, it becomes a :class:`~assay.records.Comment`
on the question (a user message), the answer (an agent message) or the evidence its context
became, anchored by those offsets (located by the text when the file gives none); one without
provenance is a general comment. What has no place in our comments (a comment on an
alternative answer, on a context nobody voted on, or with a component we do not know) stays
in ``item.extra["ragaphene"]`` and is written back as it came. Comments are written in the
order they were made. Assay adds three keys RAGAPHENE ignores, so threads and resolution
survive a trip through a file: ``in_reply_to`` (the position of the thread's first comment in
the list), ``resolved`` and ``resolved_by``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from assay.formats.contexts import is_number, iso_time, unix_time
from assay.formats.ragaphene_v1 import REVIEWS
from assay.parsing.common import normalize_text
from assay.records import Comment, Context, Evidence, Item

COMPONENT = re.compile(r"^messages\[(\d+)\]\.(?:text|(?:documents|contexts)\[(\d+)\]\.text)$")


def item_status(status: str, history: list[Any]) -> str:
    """The item status a conversation's ``status`` and ``status_history`` give."""
    if status != "reviewed":
        return "draft"
    opinions = [h.get("status") for h in history if isinstance(h, dict)]
    opinions = [o for o in opinions if o in REVIEWS]
    return str(opinions[-1]) if opinions else "submitted"


def conversation_status(
    item: Item, kept: dict[str, Any], history: list[dict[str, Any]], edited: bool
) -> str:
    """The conversation's ``status``; ``history`` (the kept ``status_history``) gets the
    reviews recorded in Assay. ``edited``: an answer differs from its original."""
    for change in item.status_history:  # each reviewer's latest opinion, as RAGAPHENE keeps
        if change.status in REVIEWS:
            history[:] = [
                h
                for h in history
                if not (h.get("author") == change.actor and h.get("status") in REVIEWS)
            ]
            history.append(
                {"author": change.actor, "status": change.status, "timestamp": unix_time(change.at)}
            )
    if item.status in REVIEWS:
        opinions = [h.get("status") for h in history if h.get("status") in REVIEWS]
        if not opinions or opinions[-1] != item.status:  # no recorded change says who
            history.append(
                {
                    "author": item.author,
                    "status": item.status,
                    "timestamp": unix_time(item.updated_at),
                }
            )
        return "reviewed"
    before = kept.get("status")
    if before in ("created", "edited") and not (before == "created" and edited):
        return str(before)
    return "edited" if edited else "created"


@dataclass(frozen=True)
class MessagePlace:
    """Where message ``i`` of a conversation went: its turn and ``question`` or ``answer``."""

    turn: int
    target: str


def read_comments(
    raw: list[Any], item: Item, places: Sequence[MessagePlace], numbers: Iterator[int]
) -> tuple[list[Comment], list[Any]]:
    """The conversation's comments as Assay comments on ``item`` (ids from ``numbers``), and
    the raw ones that have no place among them (kept for the way back)."""
    mapped: list[Comment] = []
    kept: list[Any] = []
    by_position: dict[int, Comment] = {}
    for position, value in enumerate(raw):
        comment = _comment(value, item, places)
        if comment is None:
            kept.append(value)
            continue
        comment.id = next(numbers)
        parent = by_position.get(value.get("in_reply_to")) if _is_index(value) else None
        if parent is not None:
            comment.parent_id = parent.parent_id or parent.id
            comment.target, comment.turn, comment.evidence = "item", None, None
            comment.start = comment.end = None
            comment.quote = ""
        by_position[position] = comment
        mapped.append(comment)
    return mapped, kept


def _is_index(value: dict[str, Any]) -> bool:
    index = value.get("in_reply_to")
    return isinstance(index, int) and not isinstance(index, bool)


def _comment(value: Any, item: Item, places: Sequence[MessagePlace]) -> Comment | None:
    if not isinstance(value, dict) or not isinstance(value.get("comment"), str):
        return None
    known = {"comment", "author", "created", "updated", "provenance"}
    known |= {"in_reply_to", "resolved", "resolved_by"}
    if set(value) - known or not all(is_number(value.get(k)) for k in ("created", "updated")):
        return None  # kept whole: written back exactly
    author, resolved_by = value.get("author", ""), value.get("resolved_by", "")
    resolved = value.get("resolved", False)
    if not isinstance(author, str) or not isinstance(resolved_by, str):
        return None
    if not isinstance(resolved, bool):
        return None
    comment = Comment(
        item_id=item.id,
        author=author,
        body=value["comment"],
        resolved=resolved,
        resolved_by=resolved_by if resolved else "",
        created_at=iso_time(value["created"]),
        updated_at=iso_time(value["updated"]),
    )
    if "provenance" not in value:
        return comment
    return _anchored(comment, value["provenance"], item, places)


def _anchored(
    comment: Comment, provenance: Any, item: Item, places: Sequence[MessagePlace]
) -> Comment | None:
    if not isinstance(provenance, dict) or set(provenance) - {"component", "text", "offsets"}:
        return None
    match = COMPONENT.match(str(provenance.get("component", "")))
    quote = provenance.get("text", "")
    offsets = provenance.get("offsets")
    if match is None or not isinstance(quote, str) or not quote:
        return None
    message = int(match.group(1))
    if message >= len(places):
        return None
    place = places[message]
    turn = item.turns[place.turn]
    if match.group(2) is None:
        comment.target = place.target
        text = turn.query if place.target == "question" else turn.answer
    else:
        if place.target != "answer":
            return None
        evidence = _context_evidence(turn.retrieved, turn.evidence, int(match.group(2)))
        if evidence is None:
            return None
        comment.target, comment.evidence = "evidence", evidence
        text = turn.evidence[evidence].text
    comment.turn, comment.quote = place.turn, quote
    if offsets is None:
        at = text.find(quote)
        comment.start, comment.end = (at, at + len(quote)) if at >= 0 else (None, None)
        return comment
    if not _span(offsets):
        return None
    comment.start, comment.end = offsets
    return comment


def _span(offsets: Any) -> bool:
    return (
        isinstance(offsets, list)
        and len(offsets) == 2
        and all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
        and 0 <= offsets[0] < offsets[1]
    )


def _context_evidence(
    retrieved: Sequence[Context], evidence: Sequence[Evidence], index: int
) -> int | None:
    """The evidence that context ``index`` of the agent message became (its first vote)."""
    if index >= len(retrieved):
        return None
    context = retrieved[index]
    text = normalize_text(str(context.get("text") or ""))
    for number, ev in enumerate(evidence):
        if ev.doc_id == context.get("document_id") and ev.text == text:
            return number
    return None


def write_comments(
    comments: Sequence[Comment],
    kept: Sequence[Any],
    messages: dict[tuple[int, str], int],
    contexts: dict[tuple[int, int], tuple[int, int]],
) -> list[Any]:
    """The conversation's ``comments`` list: ours (``messages`` gives the message index of a
    turn's question or answer, ``contexts`` the message and context index of a turn's
    evidence) and the kept raw ones, in the order they were made."""
    written: list[tuple[float, int, Any]] = []
    position: dict[int, int] = {}
    ordered = sorted(comments, key=lambda c: (c.created_at is None, c.created_at or 0, c.id))
    roots = [c for c in ordered if c.parent_id is None]
    replies = [c for c in ordered if c.parent_id is not None]
    for c in roots + replies:
        out: dict[str, Any] = {
            "comment": c.body,
            "author": c.author,
            "created": unix_time(c.created_at),
            "updated": unix_time(c.updated_at or c.created_at),
        }
        provenance = _provenance(c, messages, contexts)
        if provenance:
            out["provenance"] = provenance
        if c.parent_id is not None and c.parent_id in position:
            out["in_reply_to"] = position[c.parent_id]
        if c.resolved:
            out.update(resolved=True, resolved_by=c.resolved_by)
        position[c.id] = len(written)
        written.append((out["created"], len(written), out))
    for value in copy.deepcopy(list(kept)):
        created: Any = value.get("created") if isinstance(value, dict) else None
        when = float(created) if is_number(created) else float("inf")
        written.append((when, len(written), value))
    # the order they were made in; a reply stays after its thread's first comment
    order = sorted(range(len(written)), key=lambda i: written[i][:2])
    new_place = {old: new for new, old in enumerate(order)}
    result = []
    for i in order:
        value = written[i][2]
        if isinstance(value, dict) and "in_reply_to" in value and i < len(position):
            value["in_reply_to"] = new_place[value["in_reply_to"]]
        result.append(value)
    return result


def _provenance(
    c: Comment,
    messages: dict[tuple[int, str], int],
    contexts: dict[tuple[int, int], tuple[int, int]],
) -> dict[str, Any]:
    if c.target == "item" or c.parent_id is not None or c.turn is None:
        return {}
    if c.target == "evidence":
        found = contexts.get((c.turn, c.evidence or 0))
        component = f"messages[{found[0]}].documents[{found[1]}].text" if found else ""
    else:
        message = messages.get((c.turn, c.target))
        component = f"messages[{message}].text" if message is not None else ""
    out: dict[str, Any] = {"component": component, "text": c.quote}
    if c.start is not None and c.end is not None:
        out["offsets"] = [c.start, c.end]
    return out


def context_places(
    turn: int,
    message: int,
    evidence: Sequence[Evidence],
    contexts: Sequence[dict[str, Any]],
    doc_ids: dict[str, str],
) -> dict[tuple[int, int], tuple[int, int]]:
    """(turn, evidence number) → (message index, context index) for a written agent message:
    the context whose document and text the evidence has (as the contexts' votes are made)."""
    found: dict[tuple[int, int], tuple[int, int]] = {}
    for number, ev in enumerate(evidence):
        for index, context in enumerate(contexts):
            same_doc = ev.doc_id is None or doc_ids.get(ev.doc_id, ev.doc_id) == context.get(
                "document_id"
            )
            if same_doc and _norm(ev.text) == _norm(str(context.get("text") or "")):
                found[(turn, number)] = (message, index)
                break
    return found


def _norm(text: str) -> str:
    return " ".join(normalize_text(text).split())
