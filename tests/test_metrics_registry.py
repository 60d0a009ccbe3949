"""The metric registry and name parsing."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInput
from assay.metrics import MEASURES, METRICS, ParsedMetric, parse_metric


def test_every_kind_is_present_and_described() -> None:
    kinds = {spec.kind for spec in METRICS.values()}
    assert kinds == {"retrieval", "ir", "generation", "support"}
    for name, spec in METRICS.items():
        assert spec.name == name
        assert spec.description
    assert set(MEASURES) <= set(METRICS)
    assert METRICS["char_length"].higher_is_better is False
    assert METRICS["substring_rank"].higher_is_better is False
    assert METRICS["rouge_l"].higher_is_better is True


@pytest.mark.parametrize(
    ("text", "name", "kind", "k"),
    [
        ("retrieval_recall", "retrieval_recall", "retrieval", None),
        ("Retrieval_nDCG@5", "retrieval_ndcg", "retrieval", 5),
        ("nDCG@10", "nDCG", "ir", 10),
        ("ndcg@10", "nDCG", "ir", 10),
        ("recall@5", "R", "ir", 5),
        ("mrr", "RR", "ir", None),
        ("map@100", "AP", "ir", 100),
        ("rouge_l", "rouge_l", "generation", None),
        ("ROUGE-L", "rouge_l", "generation", None),
        ("em", "exact_match", "generation", None),
        ("trigram_support", "trigram_support", "support", None),
        ("coverage", "lexical_coverage", "support", None),
    ],
)
def test_parse_metric(text: str, name: str, kind: str, k: int | None) -> None:
    parsed = parse_metric(text)
    assert isinstance(parsed, ParsedMetric)
    assert (parsed.spec.name, parsed.spec.kind, parsed.k) == (name, kind, k)


def test_parsed_name_includes_the_cutoff() -> None:
    assert parse_metric("ndcg@10").name == "nDCG@10"
    assert parse_metric("retrieval_map@3").name == "retrieval_map@3"
    assert parse_metric("bleu").name == "bleu"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bertscore", "unknown metric 'bertscore'; valid metrics: retrieval_recall"),
        ("rouge_l@5", "takes no '@k' cutoff"),
        ("retrieval_recall@0", "positive integer"),
        ("retrieval_recall@x", "positive integer"),
        ("P", "needs a cutoff"),
        ("nDCG@-1", "positive integer"),
    ],
)
def test_parse_metric_errors(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_metric(text)


def test_unknown_metric_lists_every_name() -> None:
    with pytest.raises(InvalidInput) as error:
        parse_metric("nope")
    for name in METRICS:
        assert name in str(error.value)
