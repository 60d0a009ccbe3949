"""Production logs in: each input shape from small hand-written files, on SQLite and
PostgreSQL: candidates, groups, masks and reports; bad lines refused, naming line and field."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from assay.candidates.importing import import_candidates
from assay.candidates.listing import list_candidates, list_groups, list_imports
from assay.candidates.scrubbing import Scrubber, parse_patterns
from assay.corpus.documents import list_documents
from assay.corpus.ingest import ingest_bytes
from assay.errors import InvalidInput
from assay.records import Project
from assay.store.candidates_schema import candidates
from assay.store.projects import create_project
from assay.store.workspace import Workspace

HANDBOOK = (
    "Refunds. A ticket bought in the app is refunded in full up to one hour before departure.\n\n"
    "Lost property. Items left on a ferry are kept at the Auenweg depot for thirty days.\n"
)

LOG = [
    {
        "q": "Can I get my money back for an app ticket? Mail me at jane.doe@example.org",
        "a": "Up to one hour before departure. Call +49 30 1234 5678.",
        "ctx": [
            {"doc": "handbook.md", "text": "refunded in full up to one hour before departure"},
            {"doc": "faq-2019", "text": "Old refund rules from a page we no longer have."},
        ],
        "vote": "thumbs_down",
        "sid": "s-1",
        "ts": "2026-11-02T09:15:00Z",
    },
    {"q": "how do I get a refund for my ticket?", "a": "See the app.", "sid": "s-2"},
    {"q": "How do I get a refund for my tickets", "a": "See the app.", "sid": "s-3"},
    {
        "q": "And where is lost property kept? IBAN DE89 3704 0044 0532 0130 00",
        "a": "At the Auenweg depot.",
        "sid": "s-1",
        "ctx": ["Items left on a ferry are kept at the Auenweg depot for thirty days."],
    },
    {
        "q": "Can I pay with card 4111 1111 1111 1111 or 1234 5678 9012 3456? Customer K-123456",
        "a": "",
    },
]


def write_log(rows: list[dict[str, object]]) -> list[str]:
    return [json.dumps(row, ensure_ascii=False) for row in rows]


MAPPING = {
    "question": "q",
    "answer": "a",
    "passages": "ctx",
    "feedback": "vote",
    "session": "sid",
    "time": "ts",
}


@pytest.fixture
def shop(any_ws: Workspace) -> Project:
    project = create_project(any_ws, "shop")
    ingest_bytes(any_ws, project, "handbook.md", HANDBOOK.encode())
    return project


def test_a_json_lines_log_becomes_scrubbed_grouped_candidates(
    any_ws: Workspace, shop: Project
) -> None:
    scrubber = Scrubber(patterns=parse_patterns([r"CUSTOMER=K-\d{6}"]))
    report = import_candidates(
        any_ws, shop, write_log(LOG), name="log.jsonl", mapping=MAPPING, scrubber=scrubber
    )
    assert (report.lines, report.stored, report.skipped) == (5, 5, 0)
    # one e-mail, one phone, one valid IBAN, one card that passes Luhn (the other does not)
    assert report.masks == {"CUSTOMER": 1, "card": 1, "email": 1, "iban": 1, "phone": 1}
    assert report.anchored == 2 and report.unlocated == 1
    assert report.unlocated_examples[0]["source"] == "faq-2019"
    assert report.sessions == 1
    stored = list_candidates(any_ws, shop)["candidates"]
    first, _, _, follow_up, cards = stored
    assert first["question"] == "Can I get my money back for an app ticket? Mail me at [EMAIL]"
    assert first["answer"] == "Up to one hour before departure. Call [PHONE]."
    assert first["feedback"] == -1 and first["asked_at"].startswith("2026-11-02T09:15")
    anchored, unlocated = first["passages"]
    assert anchored["anchor"] == "ok"
    assert HANDBOOK[anchored["start"] : anchored["end"]] == anchored["text"]
    assert unlocated == {
        "doc_id": None, "start": None, "end": None, "anchor": "unlocated", "source": "faq-2019",
        "text": "Old refund rules from a page we no longer have.", "score": None, "rank": 2,
    }  # fmt: skip
    assert follow_up["session"] == "s-1" and follow_up["turn"] == 2
    assert "[IBAN]" in follow_up["question"] and follow_up["passages"][0]["anchor"] == "ok"
    assert "[CARD]" in cards["question"] and "1234 5678 9012 3456" in cards["question"]
    assert "[CUSTOMER]" in cards["question"]
    # the two rewordings of the refund question fold into one group, the first's id
    groups = {g["id"]: g for g in list_groups(any_ws, shop)["groups"]}
    assert len(groups) == 4
    assert groups[stored[1]["id"]]["asked"] == 2
    own = groups[first["id"]]
    assert (own["asked"], own["negative"], own["multi_turn"]) == (1, 1, True)
    assert own["documents"] == [anchored["doc_id"]]
    assert list_imports(any_ws, shop)[0]["report"]["masks"]["email"] == 1


def count(ws: Workspace, project: Project) -> int:
    with ws.engine.connect() as conn:
        return int(
            conn.scalar(
                sa.select(sa.func.count())
                .select_from(candidates)
                .where(candidates.c.project_id == project.id)
            )
            or 0
        )


def test_a_malformed_line_stops_the_import_naming_it_and_keeps_what_was_stored(
    any_ws: Workspace, shop: Project
) -> None:
    import_candidates(any_ws, shop, write_log(LOG[:2]), name="first.jsonl", mapping=MAPPING)
    lines = [*write_log(LOG[2:4]), '{"q": "broken', *write_log(LOG[4:])]
    with pytest.raises(InvalidInput, match=r"second.jsonl: line 3: not JSON") as caught:
        import_candidates(any_ws, shop, lines, name="second.jsonl", mapping=MAPPING)
    assert "Nothing of this file was stored" in str(caught.value)
    assert count(any_ws, shop) == 2
    assert [i["name"] for i in list_imports(any_ws, shop)] == ["first.jsonl"]


def test_a_missing_field_names_the_line_and_field_and_skip_bad_leaves_it_out(
    any_ws: Workspace, shop: Project
) -> None:
    lines = write_log([LOG[0], {"a": "an answer without its question"}, LOG[1]])
    with pytest.raises(InvalidInput, match=r"line 2, field 'question': missing or empty"):
        import_candidates(any_ws, shop, lines, name="log.jsonl", mapping=MAPPING)
    assert count(any_ws, shop) == 0
    report = import_candidates(
        any_ws, shop, lines, name="log.jsonl", mapping=MAPPING, skip_bad=True
    )
    assert (report.stored, report.skipped) == (2, 1)
    assert report.problems == ["line 2, field 'question': missing or empty (looked for q)"]


def test_usual_field_names_need_no_mapping(any_ws: Workspace, shop: Project) -> None:
    rows = [{"query": "Where is the depot?", "response": "Auenweg", "feedback": 1}]
    report = import_candidates(any_ws, shop, write_log(rows), name="plain.jsonl")
    assert report.stored == 1
    stored = list_candidates(any_ws, shop)["candidates"][0]
    assert (stored["answer"], stored["feedback"]) == ("Auenweg", 1)


def test_an_empty_file_is_refused(any_ws: Workspace, shop: Project) -> None:
    with pytest.raises(InvalidInput, match="holds no questions"):
        import_candidates(any_ws, shop, ["", "  "], name="empty.jsonl")


SPANS = [
    {  # the root span, flattened as Phoenix's span table writes it
        "name": "query",
        "span_kind": "CHAIN",
        "parent_id": None,
        "context.trace_id": "t1",
        "context.span_id": "a",
        "start_time": "2026-11-03T10:00:00+00:00",
        "attributes.input.value": "Where are items left on a ferry kept? call 030 1234567",
        "attributes.output.value": "At the Auenweg depot.",
        "attributes.session.id": "chat-9",
        "annotations": [{"name": "user_feedback", "result": {"label": "thumbs_down"}}],
    },
    {  # nested attributes, as the OpenInference JSON has them
        "name": "retrieve",
        "span_kind": "RETRIEVER",
        "parent_id": "a",
        "context": {"trace_id": "t1", "span_id": "b"},
        "attributes": {
            "retrieval": {
                "documents": [
                    {
                        "document": {
                            "id": "handbook.md",
                            "content": "kept at the Auenweg depot for thirty days",
                            "score": 0.82,
                        }
                    },
                    {"document": {"id": "x-9", "content": "A passage from elsewhere."}},
                ]
            }
        },
    },
    {
        "name": "other",
        "parent_id": None,
        "context.trace_id": "t2",
        "context.span_id": "c",
        "attributes.input.value": '{"query": "Refund after departure?"}',
    },
]


def test_openinference_spans_become_one_candidate_per_trace(
    any_ws: Workspace, shop: Project
) -> None:
    report = import_candidates(
        any_ws, shop, write_log(SPANS), name="spans.jsonl", shape="openinference"
    )
    assert (report.stored, report.masks) == (2, {"phone": 1})
    assert (report.anchored, report.unlocated) == (1, 1)
    first, second = list_candidates(any_ws, shop)["candidates"]
    assert first["question"] == "Where are items left on a ferry kept? call [PHONE]"
    assert (first["answer"], first["session"], first["feedback"]) == (
        "At the Auenweg depot.",
        "chat-9",
        -1,
    )
    assert first["passages"][0]["score"] == 0.82
    assert second["question"] == "Refund after departure?"


def test_a_span_without_its_trace_is_named(any_ws: Workspace, shop: Project) -> None:
    lines = write_log([{"name": "lost", "attributes.input.value": "hello"}])
    with pytest.raises(InvalidInput, match=r"line 1, field 'context.trace_id': missing"):
        import_candidates(any_ws, shop, lines, name="spans.jsonl", shape="openinference")


TRACES = [
    {
        "id": "tr-1",
        "timestamp": "2026-11-04T08:00:00.000Z",
        "sessionId": "sess-1",
        "input": {"messages": [{"role": "user", "content": "Refund for a ticket? I'm bob@x.io"}]},
        "output": {"answer": "Up to one hour before departure."},
        "scores": [{"name": "user-feedback", "value": -1}],
        "observations": [
            {
                "type": "SPAN",
                "name": "retrieve-context",
                "output": {
                    "documents": [
                        {
                            "pageContent": "refunded in full up to one hour",
                            "metadata": {"source": "handbook.md"},
                        }
                    ]
                },
            },
            {"type": "GENERATION", "name": "llm", "output": "Up to one hour before departure."},
        ],
    },
    {"id": "tr-2", "input": "", "output": "nothing asked"},
]


def test_langfuse_traces_become_candidates_and_a_trace_without_input_is_named(
    any_ws: Workspace, shop: Project
) -> None:
    lines = write_log(TRACES)
    with pytest.raises(InvalidInput, match=r"line 2, field 'input': missing"):
        import_candidates(any_ws, shop, lines, name="traces.jsonl", shape="langfuse")
    report = import_candidates(
        any_ws, shop, lines, name="traces.jsonl", shape="langfuse", skip_bad=True
    )
    assert (report.stored, report.skipped, report.masks, report.anchored) == (1, 1, {"email": 1}, 1)
    stored = list_candidates(any_ws, shop)["candidates"][0]
    assert stored["question"] == "Refund for a ticket? I'm [EMAIL]"
    assert (stored["answer"], stored["feedback"], stored["session"]) == (
        "Up to one hour before departure.",
        -1,
        "sess-1",
    )


def test_passages_given_by_chunk_id_take_the_chunks_offsets(
    any_ws: Workspace, shop: Project
) -> None:
    doc_id = list_documents(any_ws, shop)[0].id
    rows = [{"question": "Where are lost items kept?", "retrieved_ids": [f"{doc_id}#0", "x#9"]}]
    report = import_candidates(any_ws, shop, write_log(rows), name="ids.jsonl")
    assert (report.anchored, report.unlocated) == (1, 1)
    chunk, unknown = list_candidates(any_ws, shop)["candidates"][0]["passages"]
    assert chunk["anchor"] == "ok" and chunk["text"].startswith("Refunds.")
    assert HANDBOOK[chunk["start"] : chunk["end"]] == chunk["text"]
    assert (unknown["anchor"], unknown["source"]) == ("unlocated", "x#9")
