"""Comments on items (assay.review.comments): anchors, threads, resolve, own edits, counts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from assay.errors import Forbidden, InvalidInput, NotFound
from assay.formats import Bundle, get_format
from assay.gold.items import create_item, get_item, save_item
from assay.people.accounts import create_account
from assay.records import Comment, Evidence, Item, Turn
from assay.review.comment_anchors import with_anchor
from assay.review.comments import (
    add_comment,
    comment_authors,
    delete_comment,
    edit_comment,
    list_comments,
    open_comment_counts,
    resolve_comment,
)
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle

ANSWER = "Hotels are refunded up to 140 euros per night."


def _setup(ws: Workspace) -> tuple:
    project = create_project(ws, "p")
    ada = create_account(ws, "ada", "a long password 1").id
    bob = create_account(ws, "bob", "a long password 2").id
    item = create_item(ws, project, Item(turns=[Turn(query="How much per night?", answer=ANSWER)]))
    return project, ada, bob, item


def test_a_comment_on_a_span_of_the_answer_stays_put_and_is_never_lost(any_ws: Workspace) -> None:
    project, ada, _, item = _setup(any_ws)
    start = ANSWER.index("140 euros")
    made = add_comment(
        any_ws, project, item.id, "Is it gross or net?", author=ada,
        target="answer", turn=0, start=start, end=start + 9, quote="140 euros",
    )  # fmt: skip
    assert (made.anchor, made.quote, made.author) == ("ok", "140 euros", "ada")

    # the answer grows in front of the quote: the quote moved, the comment follows it
    moved = "Since 2024, h" + ANSWER[1:]
    item = save_item(any_ws, project, item.id, _answer(item, moved), item.version)
    [now] = list_comments(any_ws, project, item.id)
    assert now.anchor == "moved"
    assert moved[now.start : now.end] == "140 euros"  # type: ignore[index]

    # the quote is gone: outdated, and still there with what it quoted
    gone = "Hotels are refunded in full."
    item = save_item(any_ws, project, item.id, _answer(item, gone), item.version)
    [now] = list_comments(any_ws, project, item.id)
    assert (now.anchor, now.quote, now.body) == ("outdated", "140 euros", "Is it gross or net?")
    assert (now.start, now.end) == (start, start + 9)  # as written

    # the text comes back: the comment is back in place
    save_item(any_ws, project, item.id, _answer(item, ANSWER), item.version)
    assert [c.anchor for c in list_comments(any_ws, project, item.id)] == ["ok"]


def _answer(item: Item, answer: str) -> Item:
    return replace(item, turns=[replace(item.turns[0], answer=answer)])


def test_anchors_are_checked_and_bad_ones_refused(any_ws: Workspace) -> None:
    project, ada, _, item = _setup(any_ws)
    with pytest.raises(InvalidInput, match="0 <= start < end"):
        add_comment(any_ws, project, item.id, "x", author=ada, target="answer", start=5, end=500)
    with pytest.raises(InvalidInput, match="save the item first"):
        add_comment(
            any_ws, project, item.id, "x", author=ada, target="question",
            start=0, end=3, quote="Why",
        )  # fmt: skip
    with pytest.raises(InvalidInput, match="no passage 1 of turn 1"):
        add_comment(any_ws, project, item.id, "x", author=ada, target="evidence", evidence=0,
                    start=0, end=1)  # fmt: skip
    with pytest.raises(InvalidInput, match="no turn 3"):
        add_comment(any_ws, project, item.id, "x", author=ada, target="answer", turn=2,
                    start=0, end=1)  # fmt: skip
    with pytest.raises(InvalidInput, match="unknown comment target"):
        add_comment(any_ws, project, item.id, "x", author=ada, target="notes")
    with pytest.raises(InvalidInput, match="needs some text"):
        add_comment(any_ws, project, item.id, "   ", author=ada)
    with pytest.raises(InvalidInput, match="NUL"):
        add_comment(any_ws, project, item.id, "a\x00b", author=ada)
    with pytest.raises(NotFound):
        add_comment(any_ws, project, "no-such-item", "x", author=ada)
    assert list_comments(any_ws, project, item.id) == []


def test_threads_resolve_reopen_and_own_edits(any_ws: Workspace) -> None:
    project, ada, bob, item = _setup(any_ws)
    first = add_comment(any_ws, project, item.id, "Source?", author=ada)
    reply = add_comment(any_ws, project, item.id, "Policy 4.2", author=bob, parent_id=first.id)
    again = add_comment(any_ws, project, item.id, "Thanks", author=ada, parent_id=reply.id)
    assert (reply.parent_id, again.parent_id) == (first.id, first.id)  # one thread
    other = create_item(any_ws, project, Item(turns=[Turn(query="q")]))
    assert open_comment_counts(any_ws, project, [item.id, other.id]) == {item.id: 1}

    done = resolve_comment(any_ws, project, item.id, reply.id, True, actor=bob)
    assert (done.id, done.resolved, done.resolved_by) == (first.id, True, "bob")
    assert open_comment_counts(any_ws, project, [item.id]) == {}
    reopened = resolve_comment(any_ws, project, item.id, first.id, False, actor=ada)
    assert (reopened.resolved, reopened.resolved_by) == (False, "")

    with pytest.raises(Forbidden, match=r"only its author \(ada\)"):
        edit_comment(any_ws, project, item.id, first.id, "changed", actor=bob)
    with pytest.raises(Forbidden, match="delete"):
        delete_comment(any_ws, project, item.id, first.id, actor=bob)
    edited = edit_comment(any_ws, project, item.id, first.id, "Source, please?", actor=ada)
    assert edited.body == "Source, please?"
    assert comment_authors(any_ws, item.id) == {first.id: ada, reply.id: bob, again.id: ada}

    delete_comment(any_ws, project, item.id, first.id, actor=ada)  # the thread goes with it
    assert list_comments(any_ws, project, item.id) == []
    with pytest.raises(NotFound, match="no comment"):
        resolve_comment(any_ws, project, item.id, first.id, True, actor=ada)


def test_comments_on_a_conversation_turn_and_a_passage(any_ws: Workspace) -> None:
    project, ada, _, _ = _setup(any_ws)
    from assay.corpus.ingest import ingest_bytes

    doc = ingest_bytes(any_ws, project, "policy.txt", ANSWER.encode())
    data = Item(
        kind="conversation",
        turns=[
            Turn(query="Hotels?", answer="Up to 140."),
            Turn(
                query="And taxis?",
                answer="Only at night.",
                evidence=[Evidence(doc_id=doc.id, text=ANSWER)],
            ),
        ],
    )
    item = create_item(any_ws, project, data)
    on_passage = add_comment(
        any_ws, project, item.id, "Wrong passage", author=ada,
        target="evidence", turn=1, evidence=0, start=0, end=6,
    )  # fmt: skip
    on_turn = add_comment(
        any_ws, project, item.id, "Ambiguous", author=ada, target="question", turn=1,
        start=4, end=9,
    )  # fmt: skip
    assert (on_passage.quote, on_turn.quote) == ("Hotels", "taxis")
    # the second turn goes: its comments are outdated, not gone
    stored = get_item(any_ws, project, item.id)
    save_item(any_ws, project, item.id, replace(stored, turns=stored.turns[:1]), stored.version)
    found = list_comments(any_ws, project, item.id)
    assert [(c.body, c.anchor) for c in found] == [
        ("Wrong passage", "outdated"),
        ("Ambiguous", "outdated"),
    ]


def test_re_anchoring_picks_the_nearest_occurrence() -> None:
    item = Item(turns=[Turn(answer="a b a b a")])
    comment = Comment(target="answer", turn=0, start=2, end=3, quote="b")
    moved = with_anchor(comment, Item(turns=[Turn(answer="xx a b a b a")]))
    assert (moved.anchor, moved.start, moved.end) == ("moved", 5, 6)
    assert with_anchor(comment, item).anchor == "ok"
    reply = Comment(parent_id=1, target="item")
    assert with_anchor(reply, item).anchor == "ok"


def test_comments_survive_an_import_that_replaces_the_project(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project, ada, bob, item = _setup(any_ws)
    first = add_comment(any_ws, project, item.id, "Source?", author=ada)
    add_comment(any_ws, project, item.id, "Policy 4.2", author=bob, parent_id=first.id)
    native = get_format("native")
    native.write(export_bundle(any_ws, project, statuses=None), tmp_path / "p.zip")
    import_bundle(any_ws, "p", native.read(tmp_path / "p.zip"), replace=True)
    again = get_project(any_ws, "p")
    found = list_comments(any_ws, again, item.id)  # the same item id, its comments kept
    assert [(c.body, c.author, c.parent_id is None) for c in found] == [
        ("Source?", "ada", True),
        ("Policy 4.2", "bob", False),
    ]


def test_a_comment_on_an_item_the_import_does_not_have(any_ws: Workspace) -> None:
    bundle = Bundle(
        items=[Item(id="q1", turns=[Turn(query="Why?")])],
        comments=[
            Comment(id=1, item_id="q1", author="ann", body="ok"),
            Comment(id=2, item_id="nope", author="ann", body="lost?"),
            Comment(id=3, item_id="q1", author="ben", body="reply", parent_id=2),
        ],
    )
    with pytest.raises(InvalidInput, match="comment 2 on item 'nope': its item was not imported"):
        import_bundle(any_ws, "strict", bundle)
    report = import_bundle(any_ws, "lenient", bundle, lenient=True)
    assert [(o.ref, o.status) for o in report.outcomes if o.kind == "comment"] == [
        ("q1#1", "imported"),
        ("nope#2", "skipped"),
        ("q1#3", "skipped"),
    ]
