"""Gold items: anchoring, AND/OR groups, conflict-safe saves, completeness, listing."""

from __future__ import annotations

import pytest

from assay.corpus.anchoring import locate
from assay.corpus.documents import delete_document
from assay.corpus.ingest import ingest_bytes, replace_document
from assay.errors import Conflict, InvalidInput
from assay.gold.checks import check_item
from assay.gold.item_lists import list_items
from assay.gold.items import (
    StaleItem,
    create_item,
    delete_item,
    editable_copy,
    get_item,
    item_events,
    parse_item,
    save_item,
    set_status,
    submit_item,
)
from assay.people.actors import account_for
from assay.records import Document, Evidence, Item, Project
from assay.store.projects import create_project
from assay.store.workspace import Workspace

POLICY = (
    "Travel policy 2025.\n\nHotels are refunded up to 140 euros per night.\n"
    "Trains:   second class,\nfirst class from four hours.\n"
)


@pytest.fixture
def doc(ws: Workspace, project: Project) -> Document:
    return ingest_bytes(ws, project, "policy.txt", POLICY.encode())


def qa(doc: Document, **turn: object) -> Item:
    base: dict[str, object] = {
        "query": "How much is refunded for a hotel night?",
        "answer": "Up to 140 euros per night.",
        "evidence": [{"doc_id": doc.id, "text": "Hotels are refunded up to 140 euros per night."}],
    }
    base.update(turn)
    return parse_item({"turns": [base]}, "test item")


def test_locate_exact_then_whitespace_insensitive() -> None:
    assert locate("a b  c", "b  c") == (2, 6)
    assert locate("one\ntwo   three", "two three") == (4, 15)
    assert locate("text", "   ") is None
    assert locate("text", "missing") is None


def test_evidence_is_anchored_by_text_or_offsets(
    ws: Workspace, project: Project, doc: Document
) -> None:
    start = POLICY.index("second class")
    item = create_item(
        ws,
        project,
        qa(
            doc,
            evidence=[
                {"doc_id": doc.id, "text": "Hotels are refunded up to 140 euros per night."},
                {"doc_id": doc.id, "start": start, "end": start + len("second class")},
                {
                    "doc_id": doc.id,
                    "text": "Trains: second class, first class",
                    "label": "distracting",
                },
            ],
        ),
        author=account_for(ws, "ann"),
    )
    ev = item.turns[0].evidence
    for e in ev:
        assert e.anchor == "ok"
        assert doc.text[e.start : e.end] == e.text  # the invariant
    assert ev[1].text == "second class"
    assert ev[2].text == "Trains:   second class,\nfirst class"  # located despite white space
    assert [e.group for e in ev] == [1, 2, 0]  # each relevant passage is its own AND group
    assert item.author == "ann" and item.version == 1 and item.status == "draft"


def test_or_groups_are_kept(ws: Workspace, project: Project, doc: Document) -> None:
    data = qa(
        doc,
        evidence=[
            {"doc_id": doc.id, "text": "140 euros", "group": 1},
            {"doc_id": doc.id, "text": "per night", "group": 1},
            {"doc_id": doc.id, "text": "Travel policy 2025.", "group": 2},
        ],
    )
    item = create_item(ws, project, data)
    assert [e.group for e in item.turns[0].evidence] == [1, 1, 2]


@pytest.mark.parametrize(
    ("evidence", "message"),
    [
        (
            {"doc_id": "DOC", "start": 0, "end": 6, "text": "Hotels"},
            "the text does not match the document at 0..6",
        ),
        ({"doc_id": "DOC", "start": 5, "end": 900}, "offsets 5..900 are outside the document"),
        ({"doc_id": "DOC", "text": "never written"}, "the text was not found in the document"),
        ({"doc_id": None, "text": "free text"}, "every evidence must point to a document"),
        ({"doc_id": "nope", "text": "x"}, "no document 'nope' in this project"),
        ({"doc_id": "nope", "start": 0, "end": 3}, "no document 'nope' in this project"),
    ],
)
def test_bad_evidence_is_refused_and_nothing_is_stored(
    ws: Workspace, project: Project, doc: Document, evidence: dict[str, object], message: str
) -> None:
    ev = {k: (doc.id if v == "DOC" else v) for k, v in evidence.items()}
    with pytest.raises(InvalidInput, match="turn 1, evidence 1: " + message):
        create_item(ws, project, qa(doc, evidence=[ev]))
    assert list_items(ws, project)[0] == 0


def test_offsets_count_characters_not_bytes(ws: Workspace, project: Project) -> None:
    """Offsets are characters, not bytes, on both databases."""
    text = "Größe 😀 über alles.\nDie Straße ist 5 km lang.\n"
    doc = ingest_bytes(ws, project, "de.txt", text.encode())
    start = text.index("Straße")
    item = create_item(
        ws,
        project,
        qa(doc, evidence=[{"doc_id": doc.id, "start": start, "end": start + 6, "text": "Straße"}]),
    )
    assert item.turns[0].evidence[0].text == "Straße"
    end = len(text.rstrip("\n"))
    with pytest.raises(InvalidInput, match=f"offsets 0..{end + 2} are outside the document"):
        create_item(ws, project, qa(doc, evidence=[{"doc_id": doc.id, "start": 0, "end": end + 2}]))


def test_imported_text_that_cannot_be_located_is_kept_and_flagged(
    ws: Workspace, project: Project, doc: Document
) -> None:
    item = create_item(
        ws,
        project,
        qa(
            doc,
            evidence=[
                {"doc_id": doc.id, "text": "not in the file", "origin": "imported"},
                {"doc_id": None, "text": "no document", "origin": "imported"},
            ],
        ),
    )
    assert [e.anchor for e in item.turns[0].evidence] == ["unlocated", "unlocated"]
    codes = {f.code for f in check_item(item, project)}
    assert "evidence_unlocated" in codes


def test_unanswerable_drops_relevant_keeps_distracting(
    ws: Workspace, project: Project, doc: Document
) -> None:
    item = create_item(
        ws,
        project,
        qa(
            doc,
            query_type="unanswerable",
            evidence=[
                {"doc_id": doc.id, "text": "140 euros"},
                {"doc_id": doc.id, "text": "Travel policy 2025.", "label": "distracting"},
            ],
        ),
    )
    assert [e.label for e in item.turns[0].evidence] == ["distracting"]
    assert not [f for f in check_item(item, project) if f.level == "error"]


def test_stale_save_conflicts_and_loses_nothing(
    ws: Workspace, project: Project, doc: Document
) -> None:
    item = create_item(ws, project, qa(doc))
    first = editable_copy(item)
    first.turns[0].answer = "Tab one: 140 euros."
    saved = save_item(ws, project, item.id, first, base_version=1)
    assert saved.version == 2
    second = editable_copy(item)
    second.turns[0].answer = "Tab two: something else."
    with pytest.raises(StaleItem) as caught:
        save_item(ws, project, item.id, second, base_version=1)
    assert caught.value.current.turns[0].answer == "Tab one: 140 euros."
    assert "version 1" in str(caught.value) and "version 2" in str(caught.value)
    assert get_item(ws, project, item.id).turns[0].answer == "Tab one: 140 euros."
    merged = save_item(ws, project, item.id, second, base_version=2)
    assert merged.version == 3 and merged.turns[0].answer == "Tab two: something else."
    assert [e["action"] for e in item_events(ws, project, item.id)] == ["create", "save", "save"]


def test_submit_needs_a_complete_item(ws: Workspace, project: Project, doc: Document) -> None:
    draft = create_item(ws, project, qa(doc, answer="", evidence=[]))
    with pytest.raises(InvalidInput, match="the answer is empty; mark at least one relevant"):
        submit_item(ws, project, draft.id, draft.version)
    data = editable_copy(draft)
    data.turns[0].answer = "Up to 140 euros."
    data.turns[0].evidence = [Evidence(doc_id=doc.id, text="140 euros per night")]
    fixed = save_item(ws, project, draft.id, data, draft.version)
    submitted = submit_item(ws, project, fixed.id, fixed.version)
    assert submitted.status == "submitted"
    accepted = set_status(ws, project, fixed.id, "accepted", submitted.version)
    assert accepted.status == "accepted"
    with pytest.raises(InvalidInput, match="unknown status 'done'"):
        set_status(ws, project, fixed.id, "done", accepted.version)


def test_answer_without_shared_words_is_a_warning(
    ws: Workspace, project: Project, doc: Document
) -> None:
    item = create_item(ws, project, qa(doc, answer="Ask the manager."))
    found = {f.code: f.level for f in check_item(item, project)}
    assert found == {"answer_unsupported": "warning"}


def test_list_filters_sorts_and_pages(ws: Workspace, project: Project, doc: Document) -> None:
    for i in range(30):
        create_item(
            ws,
            project,
            qa(
                doc,
                query=f"question {i:02d} about hotels" if i % 3 else f"question {i:02d} trains",
                query_type="summary" if i % 2 else "fact_single",
            ),
            author=account_for(ws, "ann" if i < 10 else "bob"),
        )
    total, page = list_items(ws, project, limit=10)
    assert total == 30 and len(page) == 10
    assert page[0].query == "question 29 about hotels"  # newest first
    total, page = list_items(ws, project, query_type="summary", author="bob", sort="query")
    assert total == 10 and [p.query for p in page][:2] == [
        "question 11 about hotels",
        "question 13 about hotels",
    ]
    total, _ = list_items(ws, project, text="TRAINS")
    assert total == 10
    uncounted, same = list_items(
        ws, project, query_type="summary", author="bob", sort="query", count=False
    )
    assert uncounted == 0 and same == page  # the rows without the count
    total, _ = list_items(ws, project, text="140 euros")  # matches answers too
    assert total == 30
    with pytest.raises(InvalidInput, match="unknown sort 'size'"):
        list_items(ws, project, sort="size")


def test_document_delete_is_blocked_while_cited(
    ws: Workspace, project: Project, doc: Document
) -> None:
    item = create_item(ws, project, qa(doc))
    with pytest.raises(Conflict, match=r"cannot delete 'policy.txt': evidence in 1 item\(s\)"):
        delete_document(ws, doc)
    delete_item(ws, project, item.id)
    delete_document(ws, doc)


def test_replacing_a_document_flags_evidence_and_never_moves_it(
    ws: Workspace, project: Project, doc: Document
) -> None:
    item = create_item(
        ws,
        project,
        qa(
            doc,
            evidence=[
                {"doc_id": doc.id, "text": "Hotels are refunded up to 140 euros per night."},
                {"doc_id": doc.id, "text": "Travel policy 2025."},
            ],
        ),
    )
    old = item.turns[0].evidence
    report = replace_document(
        ws,
        project,
        doc,
        "policy.txt",
        b"Travel policy 2025.\n\nNEW: Hotels are refunded up to 150 euros per night.\n",
    )
    assert report.stale_evidence == 1
    now = get_item(ws, project, item.id).turns[0].evidence
    assert [e.anchor for e in now] == ["stale", "ok"]
    assert (now[0].start, now[0].end, now[0].text) == (old[0].start, old[0].end, old[0].text)
    # the editor can still autosave the item as it is
    again = save_item(ws, project, item.id, editable_copy(get_item(ws, project, item.id)), 1)
    assert [e.anchor for e in again.turns[0].evidence] == ["stale", "ok"]
    assert "evidence_stale" in {f.code for f in check_item(again, project)}


def test_items_are_per_project(ws: Workspace, project: Project, doc: Document) -> None:
    other = create_project(ws, "other")
    with pytest.raises(InvalidInput, match="no document"):
        create_item(ws, other, qa(doc))


def test_replacing_a_cited_document_puts_the_item_in_needs_review_until_fixed(
    any_ws: Workspace,
) -> None:
    project = create_project(any_ws, "review")
    doc = ingest_bytes(any_ws, project, "policy.txt", POLICY.encode())
    cited = create_item(
        any_ws, project, qa(doc), status="accepted", author=account_for(any_ws, "ann")
    )
    other = create_item(
        any_ws, project, qa(doc, evidence=[{"doc_id": doc.id, "text": "Travel policy 2025."}])
    )
    new_text = POLICY.replace("140", "150")
    replace_document(
        any_ws, project, doc, "policy.txt", new_text.encode(), actor=account_for(any_ws, "lead")
    )
    total, rows = list_items(any_ws, project, review=True)
    assert (total, [r.id for r in rows]) == (1, [cited.id])
    assert rows[0].needs_review and rows[0].status == "accepted"  # the status is not rewritten
    assert {r.id: r.needs_review for r in list_items(any_ws, project)[1]} == {
        cited.id: True,
        other.id: False,
    }
    flagged = item_events(any_ws, project, cited.id)[-1]
    assert (flagged["actor"], flagged["action"]) == ("lead", "needs_review")
    assert flagged["after"]["reason"] == "document_replaced"
    assert flagged["after"]["passages"] == [{"turn": 1, "passage": 1}]
    assert [e["action"] for e in item_events(any_ws, project, other.id)] == ["create"]
    # a person selects the passage again in the new text: the state clears itself
    fixed = editable_copy(get_item(any_ws, project, cited.id))
    fixed.turns[0].evidence = [
        Evidence(doc_id=doc.id, text="Hotels are refunded up to 150 euros per night.")
    ]
    saved = save_item(any_ws, project, cited.id, fixed, 1, author=account_for(any_ws, "ann"))
    assert [e.anchor for e in saved.turns[0].evidence] == ["ok"]
    assert list_items(any_ws, project, review=True) == (0, [])
    # the same file again makes nothing stale and records nothing more
    replace_document(
        any_ws, project, doc, "policy.txt", new_text.encode(), actor=account_for(any_ws, "lead")
    )
    assert [e["action"] for e in item_events(any_ws, project, cited.id)][-1] == "save"
