"""Gold items become tasks: turn selection, statuses, history, gold chunk ids, snapshots."""

from __future__ import annotations

import pytest

from assay.corpus.chunkings import document_chunks, get_chunking
from assay.corpus.evidence_mapping import chunks_for_span
from assay.corpus.ingest import replace_document
from assay.errors import InvalidInput
from assay.experiments.tasks import (
    build_tasks,
    select_turns,
    skipped_items,
    task_from_json,
    task_lookup,
    task_to_json,
)
from assay.gold.items import create_item
from assay.records import Evidence, Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.experiments_corpus import Corpus, build_corpus, ev


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Corpus:
    return build_corpus(ws, project)


def test_turn_selection_strategies() -> None:
    assert select_turns(4, "all") == [0, 1, 2, 3]
    assert select_turns(4, "first") == [0]
    assert select_turns(4, "last") == [3]
    assert select_turns(0, "all") == []
    picks = {select_turns(5, "random", seed=1, key=f"item-{n}")[0] for n in range(40)}
    assert picks == {0, 1, 2, 3, 4}  # every turn can be drawn
    assert select_turns(5, "random", 7, "x") == select_turns(5, "random", 7, "x")  # repeatable
    with pytest.raises(InvalidInput, match="unknown turn selection 'middle'"):
        select_turns(3, "middle")


def test_accepted_items_give_one_task_per_turn(ws: Workspace, corpus: Corpus) -> None:
    tasks = build_tasks(ws, corpus.project)
    conversation = corpus.items[2]
    assert len(tasks) == 5  # two single-turn items + three turns; the draft is left out
    ids = [t.task_id for t in tasks]
    assert ids[2:] == [f"{conversation.id}::{n}" for n in (1, 2, 3)]
    second = tasks[3]
    assert second.turn == 2
    assert second.turns == ("How long must passwords be?", "And how are laptops protected?")
    assert second.history == (
        {"role": "user", "content": "How long must passwords be?"},
        {"role": "assistant", "content": "At least 14 characters."},
    )
    assert second.query("last_turn") == "And how are laptops protected?"
    assert second.query("all_turns") == "\n".join(second.turns)
    assert second.query("rewrite") == "How are laptops protected?"
    assert tasks[0].query("rewrite") == tasks[0].turns[-1]  # no rewrite: the last turn
    assert tasks[0].references == ["Up to 120 euros per night.", "120 euros"]
    assert "conv-7<::>2" in second.aliases and "conv-7::2" in second.aliases
    assert task_lookup(tasks)["conv-7<::>2"] is second


def test_first_last_random_and_statuses(ws: Workspace, corpus: Corpus) -> None:
    conversation = corpus.items[2].id
    first = [t.task_id for t in build_tasks(ws, corpus.project, turns="first")]
    last = [t.task_id for t in build_tasks(ws, corpus.project, turns="last")]
    assert f"{conversation}::1" in first and f"{conversation}::3" in last
    assert len(first) == len(last) == 3
    one = build_tasks(ws, corpus.project, turns="random", seed=3)
    again = build_tasks(ws, corpus.project, turns="random", seed=3)
    assert [t.task_id for t in one] == [t.task_id for t in again]
    assert len(build_tasks(ws, corpus.project, statuses="all")) == 6
    assert len(build_tasks(ws, corpus.project, statuses=["draft"])) == 1
    with pytest.raises(InvalidInput, match="unknown item status"):
        build_tasks(ws, corpus.project, statuses="finished")


def test_unanswerable_is_kept_and_marked(ws: Workspace, corpus: Corpus) -> None:
    tasks = build_tasks(ws, corpus.project)
    moon = tasks[4]
    assert moon.unanswerable and moon.query_type == "unanswerable"
    assert moon.chunk_groups() == [] and moon.qrels() == {}
    assert not any(t.unanswerable for t in tasks[:4])


def test_gold_groups_follow_evidence_groups(ws: Workspace, corpus: Corpus) -> None:
    tasks = build_tasks(ws, corpus.project)
    laptops = tasks[3]
    groups = laptops.chunk_groups()
    assert len(groups) == 2  # two groups: both needed
    assert laptops.doc_groups() == [[corpus.security.id], [corpus.security.id]]
    assert laptops.qrels("doc") == {corpus.security.id: 1}
    chunking = get_chunking(ws, corpus.project)
    chunks = {c.chunk_id: c for c in document_chunks(ws, chunking, corpus.security.id)}
    text = corpus.security.text
    for group, passage in zip(groups, ("full disk encryption", "security desk"), strict=True):
        (chunk_id,) = group
        chunk = chunks[chunk_id]
        assert passage in text[chunk.start : chunk.end]


def test_overlap_policy() -> None:
    chunks = [("a", 0, 100), ("b", 100, 200), ("c", 200, 300)]
    assert chunks_for_span(10, 50, chunks) == ("a",)  # contained
    assert chunks_for_span(90, 130, chunks) == ("b",)  # 30 of 40 characters in b
    assert chunks_for_span(80, 120, chunks) == ("a", "b")  # half in each
    assert chunks_for_span(50, 250, chunks) == ("a", "b", "c")  # half of a and c, all of b
    assert chunks_for_span(400, 500, chunks) == ()


def test_evidence_over_two_chunks_counts_both_as_alternatives(
    ws: Workspace, corpus: Corpus
) -> None:
    travel = corpus.travel
    span = (
        "First class is allowed for trips longer than four hours.\n\n"
        "Hotel costs are refunded up to 120 euros per night in large cities and 90 euros "
        "elsewhere."
    )
    item = create_item(
        ws,
        corpus.project,
        Item(turns=[Turn(query="Trains and hotels?", evidence=[ev(travel, span)])]),
        status="accepted",
    )
    (task,) = [t for t in build_tasks(ws, corpus.project) if t.item_id == item.id]
    (group,) = task.chunk_groups()
    assert len(group) == 2  # the span straddles two chunks; either one will do


def test_only_anchored_evidence_names_gold_chunks_and_stale_items_make_no_task(
    any_ws: Workspace,
) -> None:
    """Imported text kept ``unlocated`` at offsets where the document says something else
    maps to no chunk; an item whose passage went stale makes no task at all (as exports
    leave it out)."""
    project = create_project(any_ws, "gold")
    corpus = build_corpus(any_ws, project)
    travel = corpus.travel
    start = travel.text.index("First class")
    unlocated = Evidence(
        doc_id=travel.id, start=start, end=start + 11, text="Second class", origin="imported",
        anchor="unlocated",
    )  # fmt: skip
    odd = create_item(
        any_ws,
        project,
        Item(turns=[Turn(query="Class?", evidence=[unlocated])]),
        status="accepted",
    )
    before = {t.item_id: t for t in build_tasks(any_ws, project)}
    assert before[odd.id].evidence[0].chunk_ids == ()
    on_travel = {
        item.id
        for item in corpus.items
        if item.status == "accepted"
        and any(e.doc_id == travel.id for turn in item.turns for e in turn.evidence)
    }
    assert on_travel
    replace_document(any_ws, project, travel, "travel.txt", b"A new travel policy.")
    assert skipped_items(any_ws, project) == on_travel
    assert {t.item_id for t in build_tasks(any_ws, project)} == set(before) - on_travel


def test_snapshot_round_trip(ws: Workspace, corpus: Corpus) -> None:
    for task in build_tasks(ws, corpus.project):
        assert task_from_json(task_to_json(task)) == task
