"""Where an anchored comment sits in its item's text, now that the text may have changed.

A comment stores offsets into one text of one turn (the question, the answer or an evidence
passage) and the quote they held. Reading it against the item as it is now gives one of three
answers (:data:`assay.records.COMMENT_ANCHORS`): the quote is still there (``ok``), it is
elsewhere in the same text (``moved``: re-anchored there for display, the stored row is not
touched), or it is gone (``outdated``: shown with its quote, never dropped). Pure functions:
no database.
"""

from __future__ import annotations

from dataclasses import replace

from assay.errors import InvalidInput
from assay.records import COMMENT_TARGETS, Comment, Item

MAX_BODY = 20_000
"""Characters a comment may hold."""


def target_text(item: Item, target: str, turn: int | None, evidence: int | None) -> str | None:
    """The text a comment is anchored to, or None when the item no longer has it (the turn or
    the passage was removed)."""
    if turn is None or not 0 <= turn < len(item.turns):
        return None
    this = item.turns[turn]
    if target == "question":
        return this.query
    if target == "answer":
        return this.answer
    if target == "evidence" and evidence is not None and 0 <= evidence < len(this.evidence):
        return this.evidence[evidence].text
    return None


def describe(target: str, turn: int | None, evidence: int | None) -> str:
    """``the answer of turn 2`` / ``passage 1 of turn 1``: what an error names."""
    where = f"turn {(turn or 0) + 1}"
    if target == "evidence":
        return f"passage {(evidence or 0) + 1} of {where}"
    return f"the {target} of {where}"


def checked_anchor(
    item: Item,
    target: str,
    turn: int | None,
    evidence: int | None,
    start: int | None,
    end: int | None,
    quote: str | None,
) -> tuple[int | None, int | None, int | None, int | None, str]:
    """The anchor of a new comment as stored: ``(turn, evidence, start, end, quote)``.

    A general comment (``item``) has none. An anchored one needs the turn (and the passage
    for ``evidence``) to exist and ``0 <= start < end <= len(text)``; ``quote``, when given,
    must be the text there (else the editor sent offsets into text the server does not have:
    it must save first)."""
    if target not in COMMENT_TARGETS:
        raise InvalidInput(f"unknown comment target {target!r}; choose one of: {COMMENT_TARGETS}")
    if target == "item":
        if any(v is not None for v in (turn, evidence, start, end)) or quote:
            raise InvalidInput("a general comment (target 'item') takes no turn, offsets or quote")
        return None, None, None, None, ""
    if target != "evidence" and evidence is not None:
        raise InvalidInput(f"field 'evidence' is only for comments on a passage, not {target}")
    turn = 0 if turn is None and len(item.turns) == 1 else turn
    if turn is None or not 0 <= turn < len(item.turns):
        raise InvalidInput(f"item {item.id} has no turn {(turn or 0) + 1} to comment on")
    text = target_text(item, target, turn, evidence)
    where = describe(target, turn, evidence)
    if text is None:
        raise InvalidInput(f"item {item.id} has no {where} to comment on")
    if start is None or end is None or not 0 <= start < end <= len(text):
        raise InvalidInput(
            f"{where} has {len(text)} characters: a comment on it needs "
            "0 <= start < end <= that many (select some text)"
        )
    found = text[start:end]
    if quote is not None and quote != found:
        raise InvalidInput(
            f"the quoted text is not at characters {start}-{end} of {where} as stored; "
            "save the item first, then comment"
        )
    return turn, evidence, start, end, found


def checked_body(body: str) -> str:
    body = body.strip()
    if not body:
        raise InvalidInput("a comment needs some text")
    if "\x00" in body:
        raise InvalidInput("a comment cannot hold a NUL character (no database stores it)")
    if len(body) > MAX_BODY:
        raise InvalidInput(f"a comment holds at most {MAX_BODY} characters, not {len(body)}")
    return body


def with_anchor(comment: Comment, item: Item) -> Comment:
    """The comment with ``anchor`` worked out against the item's current text (and, when
    ``moved``, the offsets where the quote is now: the occurrence nearest the old place)."""
    if comment.target == "item" or comment.parent_id is not None:
        return replace(comment, anchor="ok")
    text = target_text(item, comment.target, comment.turn, comment.evidence)
    start, end, quote = comment.start, comment.end, comment.quote
    if text is None or start is None or end is None or not quote:
        return replace(comment, anchor="outdated")
    if text[start:end] == quote:
        return replace(comment, anchor="ok")
    places = _occurrences(text, quote)
    if not places:
        return replace(comment, anchor="outdated")
    nearest = min(places, key=lambda at: (abs(at - start), at))
    return replace(comment, anchor="moved", start=nearest, end=nearest + len(quote))


def _occurrences(text: str, quote: str) -> list[int]:
    found: list[int] = []
    at = text.find(quote)
    while at >= 0:
        found.append(at)
        at = text.find(quote, at + 1)
    return found
