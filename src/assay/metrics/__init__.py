"""Metrics for judging a RAG system against a gold set: pure functions, no storage.

One module per concept:

``retrieval``  AutoRAG-style metrics on two-level ground truth (groups of alternatives)
               and RAGTools' substring hit and rank on gold context text
``ir``         standard IR measures on graded qrels, named as in ir_measures
``generation`` answer text against reference answers (EM, token F1, ROUGE-L, BLEU, ...)
``support``    RAGTools' trigram support of an answer by its contexts
``overlap``    RAGAPHENE's lexical overlap: copied phrases, similar sentences, coverage
``agreement``  Cohen's and Fleiss' kappa, Krippendorff's alpha
``judge_agreement``  an LLM judge's labels against people's: kappa, confusion, per-label P/R

``METRICS`` lists the per-item metrics by name, and ``parse_metric("nDCG@10")`` checks a
name and its ``@k`` cutoff, so experiments and the CLI can take metric names as text.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from assay.errors import InvalidInput
from assay.metrics.agreement import (
    category_counts,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
)
from assay.metrics.generation import (
    bleu,
    char_length,
    exact_match,
    normalize_answer,
    rouge_l,
    semantic_similarity,
    strip_think,
    token_f1,
    token_recall,
)
from assay.metrics.ir import MEASURES, Measure, evaluate, evaluate_per_query, parse_measure
from assay.metrics.overlap import coverage, covered_spans, phrase_overlaps, sentence_overlaps
from assay.metrics.retrieval import (
    RetrievalScores,
    mean_retrieval_scores,
    normalize_ground_truth,
    retrieval_f1,
    retrieval_map,
    retrieval_mrr,
    retrieval_ndcg,
    retrieval_precision,
    retrieval_recall,
    retrieval_scores,
    substring_hit,
    substring_rank,
)
from assay.metrics.support import SupportResult, annotate_support, support_score

MetricKind = Literal["retrieval", "ir", "generation", "support"]


class MetricSpec(NamedTuple):
    """A metric's name, the family it belongs to, and how to read its numbers."""

    name: str
    kind: MetricKind
    description: str
    higher_is_better: bool = True
    cutoff: Literal["none", "optional", "required"] = "none"


def _spec_table() -> dict[str, MetricSpec]:
    specs = [
        MetricSpec(
            "retrieval_recall",
            "retrieval",
            "share of ground-truth groups retrieved",
            cutoff="optional",
        ),
        MetricSpec(
            "retrieval_precision",
            "retrieval",
            "distinct relevant ids / number of retrieved ids",
            cutoff="optional",
        ),
        MetricSpec(
            "retrieval_f1",
            "retrieval",
            "harmonic mean of retrieval recall and precision",
            cutoff="optional",
        ),
        MetricSpec(
            "retrieval_ndcg",
            "retrieval",
            "binary nDCG with AutoRAG's ideal ranking",
            cutoff="optional",
        ),
        MetricSpec(
            "retrieval_mrr",
            "retrieval",
            "mean over groups of 1/rank of the first hit",
            cutoff="optional",
        ),
        MetricSpec(
            "retrieval_map", "retrieval", "mean over groups of average precision", cutoff="optional"
        ),
        MetricSpec(
            "substring_hit",
            "retrieval",
            "1 if a retrieved text contains the gold context or is contained in it",
            cutoff="optional",
        ),
        MetricSpec(
            "substring_rank",
            "retrieval",
            "1-based rank of the first retrieved text matching the gold context",
            higher_is_better=False,
            cutoff="optional",
        ),
    ]
    specs += [
        MetricSpec(name, "ir", info.description, cutoff=info.cutoff)
        for name, info in MEASURES.items()
    ]
    specs += [
        MetricSpec("exact_match", "generation", "normalised answer equals a reference"),
        MetricSpec("token_f1", "generation", "SQuAD token F1 against the best reference"),
        MetricSpec("token_recall", "generation", "share of reference tokens in the answer"),
        MetricSpec("rouge_l", "generation", "ROUGE-L F-measure against the best reference"),
        MetricSpec("bleu", "generation", "sacrebleu sentence BLEU, 0-100, all references"),
        MetricSpec(
            "char_length",
            "generation",
            "length of the answer in characters",
            higher_is_better=False,
        ),
        MetricSpec(
            "semantic_similarity",
            "generation",
            "cosine of answer and reference embeddings (best reference)",
        ),
        MetricSpec(
            "trigram_support", "support", "RAGTools trigram support of the answer by its contexts"
        ),
        MetricSpec(
            "lexical_coverage",
            "support",
            "share of answer characters copied from the contexts (RAGAPHENE)",
        ),
    ]
    return {spec.name: spec for spec in specs}


METRICS: dict[str, MetricSpec] = _spec_table()
"""Every per-item metric, by canonical name."""

_METRIC_ALIASES: dict[str, str] = {
    "em": "exact_match",
    "f1": "token_f1",
    "recall_tokens": "token_recall",
    "rouge": "rouge_l",
    "rougel": "rouge_l",
    "rouge-l": "rouge_l",
    "sem_score": "semantic_similarity",
    "support": "trigram_support",
    "coverage": "lexical_coverage",
}


class ParsedMetric(NamedTuple):
    """A checked metric name with its cutoff (``k``), if any."""

    spec: MetricSpec
    k: int | None = None

    @property
    def name(self) -> str:
        return self.spec.name if self.k is None else f"{self.spec.name}@{self.k}"


def _valid_metrics() -> str:
    return ", ".join(
        name + {"none": "", "optional": "[@k]", "required": "@k"}[spec.cutoff]
        for name, spec in METRICS.items()
    )


def parse_metric(text: str) -> ParsedMetric:
    """Check a metric name such as ``"retrieval_recall@5"``, ``"nDCG@10"`` or ``"rouge_l"``.

    Names are matched case-insensitively; IR measures also take ir_measures' aliases
    (``mrr``, ``map``, ``recall@5``). Unknown names raise ``InvalidInput`` listing the valid
    ones.
    """
    raw = text.strip()
    base, has_cutoff, cutoff_text = raw.partition("@")
    key = base.strip().lower()
    lowered = {name.lower(): name for name in METRICS}
    name = lowered.get(key) or _METRIC_ALIASES.get(key)
    if name is None or METRICS[name].kind == "ir":
        try:
            measure = parse_measure(raw)
        except InvalidInput:
            if name is None:
                raise InvalidInput(
                    f"unknown metric {text!r}; valid metrics: {_valid_metrics()}"
                ) from None
            raise
        return ParsedMetric(METRICS[measure.name], measure.cutoff)
    spec = METRICS[name]
    if not has_cutoff:
        if spec.cutoff == "required":
            raise InvalidInput(f"metric {text!r} needs a cutoff, e.g. {spec.name}@10")
        return ParsedMetric(spec)
    if spec.cutoff == "none":
        raise InvalidInput(f"metric {spec.name!r} takes no '@k' cutoff, got {text!r}")
    cutoff_text = cutoff_text.strip()
    if not cutoff_text.isdigit() or int(cutoff_text) < 1:
        raise InvalidInput(
            f"metric {text!r}: the cutoff after '@' must be a positive integer, got {cutoff_text!r}"
        )
    return ParsedMetric(spec, int(cutoff_text))


__all__ = [
    "MEASURES",
    "METRICS",
    "Measure",
    "MetricKind",
    "MetricSpec",
    "ParsedMetric",
    "RetrievalScores",
    "SupportResult",
    "annotate_support",
    "bleu",
    "category_counts",
    "char_length",
    "cohen_kappa",
    "coverage",
    "covered_spans",
    "evaluate",
    "evaluate_per_query",
    "exact_match",
    "fleiss_kappa",
    "krippendorff_alpha",
    "mean_retrieval_scores",
    "normalize_answer",
    "normalize_ground_truth",
    "parse_measure",
    "parse_metric",
    "phrase_overlaps",
    "retrieval_f1",
    "retrieval_map",
    "retrieval_mrr",
    "retrieval_ndcg",
    "retrieval_precision",
    "retrieval_recall",
    "retrieval_scores",
    "rouge_l",
    "semantic_similarity",
    "sentence_overlaps",
    "strip_think",
    "substring_hit",
    "substring_rank",
    "support_score",
    "token_f1",
    "token_recall",
]
