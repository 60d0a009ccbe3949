"""Reviews (assay.review.reviews) and the review queue (assay.review.review_queue), on SQLite
and PostgreSQL: verdicts, the diff of a reviewer's edits, the refusals, two reviewers at once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from functools import partial
from typing import Any

import pytest

from assay.errors import Forbidden, InvalidInput
from assay.gold.items import create_item, editable_copy, get_item, item_events, set_status
from assay.people.access import Actor
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.records import Item, Project, Turn
from assay.review.copies import copy_item
from assay.review.review_queue import (
    next_review,
    review_progress,
    skip_review,
    waiting_items,
)
from assay.review.reviews import (
    ReviewedMeanwhile,
    check_reviewer,
    item_reviews,
    pending_changes,
    review_item,
    save_edit,
)
from assay.store.db import utcnow
from assay.store.projects import create_project
from assay.store.workspace import Workspace


def submitted(ws: Workspace, project: Project, author: int, query: str = "When?") -> Item:
    item = create_item(
        ws, project, Item(turns=[Turn(query=query, answer="At 22:40.")], notes="n"), author=author
    )
    return set_status(ws, project, item.id, "submitted", item.version, actor=author)


@pytest.fixture
def team(any_ws: Workspace) -> dict[str, Any]:
    project = create_project(any_ws, "p")
    people = {
        name: create_account(any_ws, name, f"a long password {name}").id
        for name in ("ann", "rita", "rob", "lee")
    }
    for name, role in (("ann", "annotator"), ("rita", "reviewer"), ("rob", "reviewer")):
        set_role(any_ws, project.id, people[name], role)
    set_role(any_ws, project.id, people["lee"], "lead")
    return {"ws": any_ws, "project": project, **people}


def test_accept_as_submitted(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    item = submitted(ws, project, team["ann"])
    review = review_item(ws, project, item.id, "accept", item.version, reviewer=team["rita"])
    assert (review.verdict, review.changes, review.reviewer) == ("accept", [], "rita")
    assert review.submitted_version == item.version
    stored = get_item(ws, project, item.id)
    assert (stored.status, stored.version) == ("accepted", item.version + 1)
    assert item_reviews(ws, project, item.id) == [review]


def test_accept_with_edits_saves_a_version_and_keeps_the_diff(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    item = submitted(ws, project, team["ann"])
    edits = editable_copy(item)
    edits.turns[0].answer = "The ferry leaves at 22:40."
    edits.turns[0].alternatives = ["22:40"]
    review = review_item(
        ws, project, item.id, "accept_edited", item.version, reviewer=team["rita"], edits=edits
    )
    assert review.verdict == "accept_edited"
    assert review.changes == [
        {"field": "turns[0].answer", "before": "At 22:40.", "after": "The ferry leaves at 22:40."},
        {"field": "turns[0].alternatives", "before": [], "after": ["22:40"]},
    ]
    stored = get_item(ws, project, item.id)
    assert (stored.status, stored.turns[0].answer) == ("accepted", "The ferry leaves at 22:40.")
    assert [e["action"] for e in item_events(ws, project, item.id)][-2:] == [
        "review_edit",
        "status",
    ]
    assert item_reviews(ws, project, item.id)[0].changes == review.changes


def test_edits_saved_by_the_editor_count_against_what_was_submitted(
    team: dict[str, Any],
) -> None:
    """The editor autosaves a reviewer's edits (event review_edit); an accept afterwards is an
    accept with edits, the diff against the submitted version, not the last save."""
    ws, project = team["ws"], team["project"]
    item = submitted(ws, project, team["ann"])
    first = editable_copy(item)
    first.notes = "checked"
    saved = save_edit(ws, project, item.id, first, item.version, author=team["rita"])
    second = editable_copy(saved)
    second.turns[0].answer = "22:40"
    saved = save_edit(ws, project, saved.id, second, saved.version, author=team["rita"])
    assert [e["action"] for e in item_events(ws, project, item.id)][-2:] == ["review_edit"] * 2
    expected = [
        {"field": "turns[0].answer", "before": "At 22:40.", "after": "22:40"},
        {"field": "notes", "before": "n", "after": "checked"},
    ]
    assert pending_changes(ws, project, item.id) == expected
    review = review_item(ws, project, item.id, "accept", saved.version, reviewer=team["rita"])
    assert (review.verdict, review.changes) == ("accept_edited", expected)


def test_accept_edited_without_a_change_is_refused(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    item = submitted(ws, project, team["ann"])
    with pytest.raises(InvalidInput, match="nothing differs from the submitted version"):
        review_item(ws, project, item.id, "accept_edited", item.version, reviewer=team["rita"])
    assert get_item(ws, project, item.id).status == "submitted"


def test_reject_needs_a_reason_and_sends_the_item_back(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    item = submitted(ws, project, team["ann"])
    with pytest.raises(InvalidInput, match=r"^reason: a reject needs a reason"):
        review_item(ws, project, item.id, "reject", item.version, reviewer=team["rita"])
    with pytest.raises(InvalidInput, match=r"^reason:"):
        review_item(ws, project, item.id, "reject", item.version, reviewer=team["rita"], reason=" ")
    review = review_item(
        ws, project, item.id, "reject", item.version, reviewer=team["rita"], reason="Cite pier 3."
    )
    assert (review.verdict, review.reason) == ("reject", "Cite pier 3.")
    assert get_item(ws, project, item.id).status == "rejected"
    with pytest.raises(InvalidInput, match="waits for its author to submit it again"):
        review_item(ws, project, item.id, "accept", item.version + 1, reviewer=team["rob"])


def test_a_reject_comes_back_to_the_authors_queue_assigned_or_not(team: dict[str, Any]) -> None:
    """ann wrote the item unasked: the reject puts it at the top of her queue with the
    reason; resubmitted, the task is done; rejected again, it is the same task again."""
    from assay.review.assignments import ItemFilter, assign
    from assay.review.tasks import queue_of

    ws, project = team["ws"], team["project"]
    given = create_item(ws, project, Item(turns=[Turn(query="Given?")]), author=team["lee"])
    assign(ws, project, ItemFilter(ids=[given.id]), ["ann"], assigned_by=team["lee"])
    item = submitted(ws, project, team["ann"])
    assert [t.item_id for t in queue_of(ws, project, team["ann"]).tasks] == [given.id]
    review_item(ws, project, item.id, "reject", item.version, reviewer=team["rita"], reason="Pier?")
    queue = queue_of(ws, project, team["ann"])
    assert [(t.item_id, t.state, t.returned) for t in queue.open] == [
        (item.id, "open", "Pier?"),
        (given.id, "open", ""),
    ]
    again = set_status(ws, project, item.id, "submitted", item.version + 1, actor=team["ann"])
    assert [t.state for t in queue_of(ws, project, team["ann"]).tasks if t.item_id == item.id] == [
        "done"
    ]
    review_item(ws, project, item.id, "reject", again.version, reviewer=team["rob"], reason="No.")
    mine = [t for t in queue_of(ws, project, team["ann"]).tasks if t.item_id == item.id]
    assert [(t.state, t.returned) for t in mine] == [("open", "No.")]
    assert queue_of(ws, project, team["lee"]).tasks == []  # the lead's own item was given away


def test_only_submitted_originals_are_reviewed(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    draft = create_item(ws, project, Item(turns=[Turn(query="Q?")]), author=team["ann"])
    with pytest.raises(InvalidInput, match="it is a draft: its author submits it first"):
        review_item(ws, project, draft.id, "accept", draft.version, reviewer=team["rita"])
    original = submitted(ws, project, team["ann"])
    copy = get_item(ws, project, copy_item(ws, project, original.id, team["ann"]))
    copy = set_status(ws, project, copy.id, "submitted", copy.version, actor=team["ann"])
    with pytest.raises(InvalidInput, match="copies are merged in adjudication"):
        review_item(ws, project, copy.id, "accept", copy.version, reviewer=team["rita"])
    other_kind = replace(editable_copy(original), kind="conversation")
    with pytest.raises(InvalidInput, match=r"^edits: kind stays 'qa' in a review"):
        review_item(
            ws, project, original.id, "accept", original.version, reviewer=team["rita"],
            edits=other_kind,
        )  # fmt: skip
    with pytest.raises(InvalidInput, match=r"^verdict: unknown verdict 'approve'"):
        review_item(ws, project, original.id, "approve", original.version, reviewer=team["rita"])


def test_a_verdict_on_an_old_version_is_a_conflict(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    item = submitted(ws, project, team["ann"])
    review_item(ws, project, item.id, "accept", item.version, reviewer=team["rob"])
    with pytest.raises(ReviewedMeanwhile, match=r"accepted by rob at .* UTC") as caught:
        review_item(
            ws, project, item.id, "reject", item.version, reviewer=team["rita"], reason="late"
        )
    assert "your verdict was not recorded" in str(caught.value)
    assert caught.value.current.status == "accepted"
    assert len(item_reviews(ws, project, item.id)) == 1


def run_together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls in threads released at the same moment; each result or exception."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = calls[index]()
        except Exception as exc:  # the test looks at what each call raised
            results[index] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_two_reviewers_accepting_at_once_one_wins(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    for _ in range(3):  # a few rounds: the threads meet at different points
        item = submitted(ws, project, team["ann"])
        edits = editable_copy(item)
        edits.turns[0].answer = "Rob's answer"

        def accept(reviewer: int, changed: Item | None, item: Item = item) -> Any:
            return review_item(
                ws, project, item.id, "accept", item.version, reviewer=reviewer, edits=changed
            )

        results = run_together(
            [partial(accept, team["rita"], None), partial(accept, team["rob"], edits)]
        )
        won = [r for r in results if not isinstance(r, Exception)]
        lost = [r for r in results if isinstance(r, Exception)]
        assert len(won) == 1 and len(lost) == 1, results
        assert isinstance(lost[0], ReviewedMeanwhile)
        assert "your verdict was not recorded" in str(lost[0])
        stored = get_item(ws, project, item.id)
        assert stored.status == "accepted"
        assert item_reviews(ws, project, item.id) == won
        winner_edited = won[0].verdict == "accept_edited"
        assert (stored.turns[0].answer == "Rob's answer") is winner_edited


def test_a_reviewer_edit_of_a_conversation_keeps_the_submitted_answer(
    team: dict[str, Any],
) -> None:
    ws, project = team["ws"], team["project"]
    turns = [Turn(query="Hi?", answer="Hello."), Turn(query="Ferry?", answer="At 22:40.")]
    item = create_item(ws, project, Item(kind="conversation", turns=turns), author=team["ann"])
    item = set_status(ws, project, item.id, "submitted", item.version, actor=team["ann"])
    data = editable_copy(item)
    data.turns[1].answer = "It leaves at 22:40 from pier 3."
    item = save_edit(ws, project, item.id, data, item.version, author=team["rita"])
    assert [(t.answer, t.original_answer) for t in item.turns] == [
        ("Hello.", ""),
        ("It leaves at 22:40 from pier 3.", "At 22:40."),
    ]
    again = editable_copy(item)
    again.turns[1].answer = "Pier 3, 22:40."
    item = save_edit(ws, project, item.id, again, item.version, author=team["rita"])
    assert item.turns[1].original_answer == "At 22:40."  # the first edit's stays
    stale = editable_copy(item)  # from a page that has not seen the original yet
    stale.turns[1].original_answer = ""
    stale.turns[1].answer = "Pier 3."
    item = save_edit(ws, project, item.id, stale, item.version, author=team["rita"])
    assert item.turns[1].original_answer == "At 22:40."
    # the author's own edits are plain saves, and keep no original
    own = editable_copy(item)
    own.turns[0].answer = "Hello!"
    item = save_edit(ws, project, item.id, own, item.version, author=team["ann"])
    assert item.turns[0].original_answer == ""
    assert [e["action"] for e in item_events(ws, project, item.id)][-4:] == [
        "review_edit",
        "review_edit",
        "review_edit",
        "save",
    ]


def test_a_reviewer_may_not_review_their_own_item(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    own = submitted(ws, project, team["rita"])
    rita = Actor(team["rita"], "rita")
    with pytest.raises(Forbidden, match="it is their own"):
        check_reviewer(ws, rita, project, own.id)
    check_reviewer(ws, rita, project, submitted(ws, project, team["ann"]).id)
    check_reviewer(ws, Actor(team["lee"], "lee"), project, submitted(ws, project, team["lee"]).id)
    check_reviewer(ws, Actor(1, "local", personal=True), project, own.id)


# ---------------------------------------------------------------- the queue


def test_the_queue_hands_out_each_item_once(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    first = submitted(ws, project, team["ann"], "First?")
    second = submitted(ws, project, team["ann"], "Second?")
    own = submitted(ws, project, team["rob"], "Rob's own?")
    rita, rob = team["rita"], team["rob"]

    assert next_review(ws, project, rita, include_own=False) == first.id
    assert next_review(ws, project, rita, include_own=False) == first.id  # held: the same again
    assert next_review(ws, project, rob, include_own=False) == second.id  # not first, not own
    assert next_review(ws, project, team["lee"], include_own=True) == own.id
    assert next_review(ws, project, team["lee"], include_own=True) == own.id
    assert {w.id: w.held_by for w in waiting_items(ws, project)} == {
        first.id: "rita",
        second.id: "rob",
        own.id: "lee",
    }

    # an expired reservation is free again
    later = utcnow() + timedelta(hours=1)
    assert next_review(ws, project, team["lee"], include_own=False, now=later) == first.id

    # a verdict closes the reservation; the reviewer's next is another item
    review_item(ws, project, second.id, "accept", second.version, reviewer=rob)
    assert next_review(ws, project, rob, include_own=False) is None  # first: lee's now
    progress = review_progress(ws, project, rob)
    assert (progress.reviewed, progress.total, progress.waiting, progress.by_you) == (1, 3, 2, 1)


def test_a_skipped_item_is_not_offered_again_until_it_changes(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    item = submitted(ws, project, team["ann"])
    rita = team["rita"]
    assert next_review(ws, project, rita, include_own=False) == item.id
    skip_review(ws, project, item.id, rita, "not my field")
    assert next_review(ws, project, rita, include_own=False) is None
    assert next_review(ws, project, team["rob"], include_own=False) == item.id
    changed = replace(editable_copy(item), notes="more")
    save_edit(ws, project, item.id, changed, item.version, author=team["ann"])
    skip_review(ws, project, item.id, team["rob"])
    assert next_review(ws, project, rita, include_own=False) == item.id


def test_reviewers_asking_at_once_never_get_the_same_item(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    extra = [create_account(ws, f"rev{i}", f"a long password {i}").id for i in range(4)]
    reviewers = [team["rita"], team["rob"], *extra]
    for _ in range(len(reviewers) - 2):
        submitted(ws, project, team["ann"])
    results = run_together(
        [lambda r=r: next_review(ws, project, r, include_own=False) for r in reviewers]
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    given = [r for r in results if r is not None]
    assert len(given) == len(reviewers) - 2  # every item once, two reviewers got nothing
    assert len(set(given)) == len(given)
