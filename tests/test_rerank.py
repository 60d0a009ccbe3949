"""Rerankers over real HTTP (a fake rerank server on loopback) and through a fake LLM."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.errors import InvalidInput
from assay.llm import GeneratorSettings, make_generator
from assay.llm.outgoing import OutgoingPolicy
from assay.records import Hit
from assay.search.rerank import (
    RerankError,
    RerankerSettings,
    make_reranker,
    parse_reranker,
    rerank_hits,
)
from assay.search.rerank_http import HttpReranker
from assay.search.rerank_llm import LlmReranker, parse_rating
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.openai_server import Status as ChatStatus
from tests.fakes.rerank_server import FakeReranker, Overlap, Raw, Slow, Status

DOCS = ["Trains in second class.", "Hotel refund per night is 120 euros.", "Leave is 30 days."]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeReranker]:
    with FakeReranker() as server:
        yield server


def _http(url: str, **extra: object) -> HttpReranker:
    settings = RerankerSettings(url=url, retries=0, timeout_s=2.0, **extra)  # type: ignore[arg-type]
    return HttpReranker(settings, backoff_s=0.0)


def test_standard_shape_scores_every_document_in_order(fake: FakeReranker) -> None:
    fake.reset([Overlap(usage={"total_tokens": 42})])
    result = _http(fake.url, model="bge").rerank("hotel refund per night", DOCS)
    assert result.scores == (0.0, 4.0, 0.0)  # hotel, refund, per, night
    assert result.usage == {"total_tokens": 42}
    sent = fake.requests[0]
    assert sent == {
        "query": "hotel refund per night",
        "documents": DOCS,
        "top_n": 3,
        "model": "bge",
    }


def test_tei_shape(fake: FakeReranker) -> None:
    fake.reset([Overlap()])
    result = _http(fake.tei_url, api="tei").rerank("leave days", DOCS)
    assert result.scores == (0.0, 0.0, 2.0)
    assert fake.requests[0] == {"query": "leave days", "texts": DOCS}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("this is not json", "not JSON"),
        ('{"data": []}', "'results' list"),
        (
            '{"results": [{"index": 0, "relevance_score": 1}, {"index": 1, "relevance_score": 2}]}',
            "3 documents were sent but 2 scored; no score for index 2",
        ),
        ('{"results": [{"index": 7, "relevance_score": 1}]}', "index is 7, but 3 documents"),
        (
            '{"results": [{"index": 0, "relevance_score": 1}, {"index": 0, "relevance_score": 1}]}',
            "index 0 is scored twice",
        ),
        ('{"results": [{"index": "0", "relevance_score": 1}]}', "index must be a whole number"),
        ('{"results": [{"index": 0, "relevance_score": "high"}]}', "must be a finite number"),
        ('{"results": [1, 2, 3]}', "results[0] must be an object"),
    ],
)
def test_bad_replies_name_the_reranker_and_the_problem(
    fake: FakeReranker, body: str, problem: str
) -> None:
    fake.reset([Raw(body)])
    with pytest.raises(RerankError) as caught:
        _http(fake.url).rerank("q", DOCS)
    assert f"reranker {fake.url}" in str(caught.value)
    assert problem in str(caught.value)


def test_tei_reply_must_be_a_list(fake: FakeReranker) -> None:
    fake.reset([Raw('{"results": []}')])
    with pytest.raises(RerankError, match="TEI reply must be a list"):
        _http(fake.tei_url, api="tei").rerank("q", DOCS)


def test_error_status_is_not_retried_but_5xx_is(fake: FakeReranker) -> None:
    fake.reset([Status(400, '{"error": "bad model"}')])
    with pytest.raises(RerankError, match=r"HTTP 400: .*bad model"):
        _http(fake.url).rerank("q", DOCS)
    assert len(fake.requests) == 1
    fake.reset([Status(503), Overlap()])
    settings = RerankerSettings(url=fake.url, retries=1, timeout_s=2.0)
    assert HttpReranker(settings, backoff_s=0.0).rerank("leave", DOCS).scores[2] == 1.0
    assert len(fake.requests) == 2
    fake.reset([Status(500, "boom")])
    with pytest.raises(RerankError, match=r"HTTP 500: boom \(2 attempts\)"):
        HttpReranker(settings, backoff_s=0.0).rerank("q", DOCS)


def test_timeout_names_the_reranker(fake: FakeReranker) -> None:
    fake.reset([Slow(3.0)])
    settings = RerankerSettings(url=fake.url, retries=0, timeout_s=0.3)
    with pytest.raises(RerankError, match=r"reranker .*: timed out after 0.3 s \(1 attempt\)"):
        HttpReranker(settings).rerank("q", DOCS)


def test_refused_connection() -> None:
    with pytest.raises(RerankError, match="could not connect"):
        _http("http://127.0.0.1:9/v1/rerank").rerank("q", DOCS)


def test_key_goes_to_the_reranker_host_only(fake: FakeReranker) -> None:
    fake.reset([Overlap()])
    settings = RerankerSettings(url=fake.url, retries=0)
    HttpReranker(settings, api_key="sekret").rerank("q", DOCS)
    assert fake.headers[0]["authorization"] == "Bearer sekret"
    with pytest.raises(InvalidInput, match="api_key is not a setting"):
        RerankerSettings.from_mapping({"kind": "http", "url": fake.url, "api_key": "x"})


def test_outgoing_policy_refuses_private_hosts() -> None:
    settings = RerankerSettings(url="http://10.0.0.7:8080/v1/rerank")
    with pytest.raises(RerankError, match=r"reranker http://10.0.0.7.*private address"):
        HttpReranker(settings, policy=OutgoingPolicy())
    policy = OutgoingPolicy(allow_loopback=False)
    with pytest.raises(RerankError, match="loopback"):
        HttpReranker(RerankerSettings(url="http://127.0.0.1:1/v1/rerank"), policy=policy)


def test_settings_are_checked() -> None:
    assert parse_reranker(None) is None and parse_reranker({}) is None
    with pytest.raises(InvalidInput, match="unknown kind 'cross'; valid kinds: http, llm"):
        parse_reranker({"kind": "cross"})
    with pytest.raises(InvalidInput, match="unknown api 'cohere'; valid apis: standard, tei"):
        parse_reranker({"url": "http://x/rerank", "api": "cohere"})
    with pytest.raises(InvalidInput, match="depth must be from 1 to 1000"):
        parse_reranker({"url": "http://x/rerank", "depth": 0})
    with pytest.raises(InvalidInput, match=r"unknown field.*colour"):
        parse_reranker({"url": "http://x/rerank", "colour": "red"})
    with pytest.raises(InvalidInput, match="offline generator only quotes"):
        make_reranker(RerankerSettings(kind="llm"), generator={"kind": "offline"})


def _hit(rank: int, text: str) -> Hit:
    return Hit("d", f"c{rank}", 0, len(text), 1.0 / rank, rank, text, text)


def test_rerank_hits_reorders_and_keeps_k(fake: FakeReranker) -> None:
    fake.reset([Overlap()])
    hits = [_hit(i + 1, text) for i, text in enumerate(DOCS)]
    kept, result = rerank_hits(_http(fake.url), "leave days", hits, 2)
    assert [h.chunk_id for h in kept] == ["c3", "c1"]  # ties keep the first order
    assert [h.rank for h in kept] == [1, 2] and kept[0].score == 2.0
    assert result.scores == (0.0, 0.0, 2.0)


def test_parse_rating() -> None:
    assert parse_rating("8") == 8.0
    assert parse_rating("Rating: 7.5/10") == 7.5
    assert parse_rating("I'd say 42, no: 3") == 3.0
    assert parse_rating("no idea") is None


def test_llm_reranker_rates_each_passage_and_sums_usage() -> None:
    with FakeOpenAI([Reply("2"), Reply("Rating: 9"), Reply("0")]) as server:
        generator = make_generator(
            GeneratorSettings(kind="openai", base_url=server.url, model="m", retries=0)
        )
        result = LlmReranker(generator).rerank("hotel refund", DOCS)
        prompts = [r["messages"][-1]["content"] for r in server.requests]
    assert result.scores == (2.0, 9.0, 0.0)
    assert result.usage == {"prompt_tokens": 33, "completion_tokens": 15, "total_tokens": 48}
    assert "Query: hotel refund" in prompts[1] and DOCS[1] in prompts[1]


def test_llm_reranker_errors_name_the_passage() -> None:
    with FakeOpenAI([Reply("5"), Reply("I cannot rate this")]) as server:
        settings = {"kind": "openai", "base_url": server.url, "model": "judge", "retries": 0}
        reranker = make_reranker(RerankerSettings(kind="llm", generator=settings))
        with pytest.raises(RerankError, match=r"LLM reranker \(judge\): passage 1: no rating"):
            reranker.rerank("q", DOCS)
        server.reset([ChatStatus(400, "nope")])
        with pytest.raises(RerankError, match=r"passage 0: LLM endpoint .* 400"):
            reranker.rerank("q", DOCS)
