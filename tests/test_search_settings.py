"""Retriever settings: defaults, validation messages, and picking the query text."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from assay.errors import InvalidInput
from assay.search.retriever import RetrieverSettings, parse_retriever_settings, query_text


def test_defaults() -> None:
    settings = parse_retriever_settings()
    assert settings == RetrieverSettings()
    assert (settings.kind, settings.k, settings.query_from, settings.embedder) == (
        "keyword",
        10,
        "last_turn",
        "minilm",
    )
    assert settings.weights == {"keyword": 1.0, "dense": 1.0}
    assert settings.k_rrf == 60
    assert settings.model_dump(mode="json")["weights"] == {"keyword": 1.0, "dense": 1.0}


def test_valid_hybrid_settings_round_trip() -> None:
    values = {"kind": "hybrid", "k": 5, "embedder": "Hashing", "weights": {"dense": 2}}
    settings = parse_retriever_settings(values)
    assert settings.embedder == "hashing"
    assert settings.fusion_weights() == {"keyword": 1.0, "dense": 2.0}
    assert parse_retriever_settings(settings.model_dump()) == settings


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"kind": "bm25"}, "kind must be one of 'keyword', 'dense' or 'hybrid' (got 'bm25')"),
        ({"k": 0}, "k must be >= 1 (got 0)"),
        ({"k": 5000}, "k must be <= 1000 (got 5000)"),
        ({"query_from": "first"}, "query_from must be one of"),
        ({"embedder": "word2vec"}, "unknown embedder 'word2vec'; choose one of: hashing, minilm"),
        ({"weights": {"bm25": 1}}, "unknown index 'bm25'; weights may name: keyword, dense"),
        ({"weights": {"dense": -0.5}}, "the weight of 'dense' must be >= 0"),
        ({"kind": "hybrid", "weights": {"keyword": 0, "dense": 0}}, "needs a weight above 0"),
        ({"k_rrf": -1}, "k_rrf must be >= 0"),
        ({"depth": 3}, "unknown setting 'depth'; known: kind, k, query_from"),
    ],
)
def test_invalid_settings_explain_themselves(values: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_retriever_settings(values)
    assert str(caught.value).startswith("retriever settings: ")
    assert message in str(caught.value)


def test_settings_are_frozen() -> None:
    with pytest.raises(ValidationError):
        RetrieverSettings().k = 3  # type: ignore[misc]


def test_query_text() -> None:
    turns = ["What is KelmFlex?", "  And what does it cost at night? "]
    assert query_text(turns, None, "last_turn") == "And what does it cost at night?"
    assert query_text(turns, None, "all_turns") == (
        "What is KelmFlex?\nAnd what does it cost at night?"
    )
    assert query_text(turns, " KelmFlex night fare ", "rewrite") == "KelmFlex night fare"
    assert query_text([], "KelmFlex night fare", "rewrite") == "KelmFlex night fare"


def test_query_text_needs_its_input() -> None:
    with pytest.raises(InvalidInput, match="no rewritten query"):
        query_text(["a question"], None, "rewrite")
    with pytest.raises(InvalidInput, match="no rewritten query"):
        query_text(["a question"], "  ", "rewrite")
    with pytest.raises(InvalidInput, match="has no turns"):
        query_text([], None, "last_turn")
    with pytest.raises(InvalidInput, match="unknown query_from"):
        query_text(["q"], None, "middle")  # type: ignore[arg-type]
