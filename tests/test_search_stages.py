"""Retrieval stages on a real workspace: expansion, metadata filters, rewrites, reranking."""

from __future__ import annotations

import pytest

from assay.corpus.chunkings import create_chunking, document_chunks, get_chunking
from assay.corpus.ingest import ingest_bytes
from assay.errors import InvalidInput
from assay.records import Project
from assay.search.filters import filters_text, matches, parse_filters
from assay.search.retriever import RetrieverSettings
from assay.search.rewrite import RewriteError
from assay.search.stages import Stages, make_stage_tools, retrieve
from assay.store.workspace import Workspace
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rerank_server import FakeReranker, Overlap

HANDBOOK = "\n\n".join(
    [
        "Chapter one is about trains and second class tickets.",
        "Chapter two says hotels are refunded up to 120 euros per night.",
        "Chapter three covers the daily meal allowance of 28 euros.",
        "Chapter four lists the rules for rental cars and fuel.",
        "Chapter five explains bicycles and how they are reimbursed.",
    ]
)
LEAVE = "Leave rules.\n\nEvery employee has 30 days of paid leave.\n\nHotels are not leave."


@pytest.fixture
def setup(ws: Workspace, project: Project) -> tuple[Workspace, Project]:
    ingest_bytes(
        ws, project, "handbook.txt", HANDBOOK.encode(), metadata={"dept": "travel", "year": 2024}
    )
    ingest_bytes(
        ws, project, "leave.txt", LEAVE.encode(), metadata={"dept": ["hr", "people"], "year": 2023}
    )
    create_chunking(
        ws, project, "small", "recursive", {"max_length": 70, "overlap": 0}, make_default=True
    )
    return ws, project


def _retrieve(ws: Workspace, project: Project, query: str, k: int = 5, **stages: object):  # type: ignore[no-untyped-def]
    parsed = Stages.parse(**stages)  # type: ignore[arg-type]
    return retrieve(
        ws,
        project,
        query,
        k=k,
        chunking=get_chunking(ws, project),
        retriever=RetrieverSettings(),
        stages=parsed,
        tools=make_stage_tools(parsed, {}),
    )


def test_expansion_merges_neighbours_with_exact_offsets(setup: tuple[Workspace, Project]) -> None:
    ws, project = setup
    found = _retrieve(ws, project, "meal allowance", k=1, expand=1)
    context = found.contexts[0]
    doc_id = context.hit.doc_id
    text = next(d for d in [HANDBOOK] if "meal" in d)
    assert text[context.start : context.end] == context.text
    chunks = document_chunks(ws, get_chunking(ws, project), doc_id)
    ids = [c.chunk_id for c in chunks]
    where = ids.index(context.hit.chunk_id)
    assert context.chunk_ids == tuple(ids[where - 1 : where + 2])
    assert context.start == chunks[where - 1].start and context.end == chunks[where + 1].end
    assert "hotels" in context.text and "rental cars" in context.text
    entry = found.entries()[0]
    assert entry["chunk_id"] == context.hit.chunk_id and entry["chunk_ids"] == list(
        context.chunk_ids
    )
    assert (entry["start"], entry["end"], entry["text"]) == (
        context.start,
        context.end,
        context.text,
    )
    # at the start of a document there is nothing before
    first = _retrieve(ws, project, "trains second class tickets", k=1, expand=2).contexts[0]
    assert first.start == 0 and first.chunk_ids == tuple(ids[:3])
    assert HANDBOOK[first.start : first.end] == first.text
    # 0 neighbours: the chunk itself
    plain = _retrieve(ws, project, "meal allowance", k=1).contexts[0]
    assert plain.chunk_ids == (plain.hit.chunk_id,) and plain.text == plain.hit.text


def test_expansion_is_checked() -> None:
    with pytest.raises(InvalidInput, match="from 0 to 10, got 11"):
        Stages.parse(expand=11)


def test_filters_parse_and_match() -> None:
    assert parse_filters({"dept": ["hr", "it"], "year": 2024}) == {
        "dept": ("hr", "it"),
        "year": ("2024",),
    }
    parsed = parse_filters("dept = hr; year in 2023 | 2024")
    assert parsed == {"dept": ("hr",), "year": ("2023", "2024")}
    assert filters_text(parsed) == "dept = hr; year in 2023 | 2024"
    assert matches({"dept": ["people", "hr"], "year": 2023}, parsed)
    assert not matches({"dept": "hr", "year": 2022}, parsed)
    assert not matches({"year": 2023}, parsed)  # no key, no match
    assert matches({"draft": True}, parse_filters({"draft": "true"}))
    with pytest.raises(InvalidInput, match="line 2: 'dept hr'"):
        parse_filters("year = 1\ndept hr")
    with pytest.raises(InvalidInput, match="'dept' needs a value"):
        parse_filters({"dept": []})
    with pytest.raises(InvalidInput, match="must be an object"):
        parse_filters(["dept"])  # type: ignore[arg-type]


def test_filters_keep_only_matching_documents(setup: tuple[Workspace, Project]) -> None:
    ws, project = setup
    unfiltered = _retrieve(ws, project, "hotels", k=5)
    assert {h.doc_id for h in unfiltered.hits} == {
        c.hit.doc_id for c in unfiltered.contexts
    } and len({h.doc_id for h in unfiltered.hits}) == 2
    found = _retrieve(ws, project, "hotels", k=5, filters={"dept": "hr"})
    names = {h.doc_id for h in found.hits}
    assert len(names) == 1 and "Hotels are not leave" in found.hits[0].text
    assert [h.rank for h in found.hits] == list(range(1, len(found.hits) + 1))
    assert _retrieve(ws, project, "hotels", filters={"dept": "finance"}).hits == []
    by_year = _retrieve(ws, project, "hotels", filters="year in 2024")
    assert by_year.hits and all("Hotels are not" not in h.text for h in by_year.hits)


def test_rewrites_through_the_generator(setup: tuple[Workspace, Project]) -> None:
    ws, project = setup
    with FakeOpenAI([Reply('"hotel refund per night"\nsecond line ignored')]) as server:
        generator = {"kind": "openai", "base_url": server.url, "model": "rw", "retries": 0}
        stages = Stages.parse(rewrite="rephrase")
        found = retrieve(
            ws,
            project,
            "and how much for that?",
            k=3,
            chunking=get_chunking(ws, project),
            retriever=RetrieverSettings(),
            stages=stages,
            tools=make_stage_tools(stages, generator),
            history=[{"role": "user", "content": "Are hotels refunded?"}],
        )
        prompt = server.requests[0]["messages"][-1]["content"]
        assert "User: Are hotels refunded?" in prompt and "and how much for that?" in prompt
        assert found.query == "hotel refund per night"
        assert "120 euros" in found.hits[0].text
        assert found.details()["rewrite"]["original"] == "and how much for that?"
        assert found.usage() == {
            "rewrite": {
                "model": "fake-model",
                "prompt_tokens": 11,
                "completion_tokens": 5,
                "total_tokens": 16,
            }
        }
        server.reset([Reply("Hotels are refunded up to 120 euros a night in big cities.")])
        hyde = Stages.parse(rewrite="hyde")
        passage = retrieve(
            ws,
            project,
            "hotel money?",
            k=1,
            chunking=get_chunking(ws, project),
            retriever=RetrieverSettings(),
            stages=hyde,
            tools=make_stage_tools(hyde, generator),
        )
        assert passage.query.startswith("Hotels are refunded up to 120 euros")
        assert "Write one short passage" in server.requests[0]["messages"][-1]["content"]
        server.reset([Reply("   ")])
        with pytest.raises(RewriteError, match="replied with no text"):
            retrieve(
                ws,
                project,
                "q",
                k=1,
                chunking=get_chunking(ws, project),
                retriever=RetrieverSettings(),
                stages=hyde,
                tools=make_stage_tools(hyde, generator),
            )
    with pytest.raises(InvalidInput, match="offline generator only quotes"):
        make_stage_tools(Stages.parse(rewrite="hyde"), {"kind": "offline"})
    with pytest.raises(InvalidInput, match="unknown rewrite 'expand'"):
        Stages.parse(rewrite="expand")


def test_rerank_stage_searches_deeper_and_keeps_k(setup: tuple[Workspace, Project]) -> None:
    ws, project = setup
    with FakeReranker([Overlap()]) as fake:
        found = _retrieve(
            ws,
            project,
            "chapter bicycles reimbursed",
            k=2,
            reranker={"url": fake.url, "depth": 4, "retries": 0},
        )
        sent = fake.requests[0]
    # every handbook chunk says "chapter": the search had 5 and the reranker got 4 of them
    assert sent["query"] == "chapter bicycles reimbursed" and len(sent["documents"]) == 4
    assert len(found.hits) == 2 and "bicycles" in found.hits[0].text
    assert found.hits[0].score == 3.0 and found.hits[1].score == 1.0
    assert found.reranking is not None and len(found.reranking.scores) == 4
    assert "rerank_ms" in found.timings
