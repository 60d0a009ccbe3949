"""Metrics of one task's outcome, and their aggregates over many tasks.

Metric names come from :data:`assay.metrics.METRICS` (``retrieval_recall@5``, ``nDCG@10``,
``token_f1`` …), name the LLM metric catalogue (``faithfulness`` …,
:mod:`assay.experiments.catalogue`) or are judge metrics (:class:`JudgeMetric`). Per task a
metric is a number, a judge's label, or None when it does not apply: retrieval metrics skip
unanswerable tasks (no relevant evidence) and tasks whose evidence maps to no chunk; answer
metrics skip tasks without a reference answer. Aggregates are means over the tasks where a
metric applies, overall and per query type; judge metrics aggregate to a count per label.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from assay.errors import InvalidInput
from assay.experiments.catalogue import CatalogueMetric, catalogue_name
from assay.experiments.judge import ERROR, JudgeMetric, Verdict
from assay.experiments.tasks import Task
from assay.llm import GeneratorSettings
from assay.metrics import (
    ParsedMetric,
    bleu,
    char_length,
    coverage,
    evaluate_per_query,
    exact_match,
    parse_metric,
    retrieval_scores,
    rouge_l,
    semantic_similarity,
    substring_rank,
    support_score,
    token_f1,
    token_recall,
)

Mode = Literal["retrieval", "generation", "rag"]
MODES: tuple[str, ...] = ("retrieval", "generation", "rag")
Level = Literal["chunk", "doc"]
Value = float | str | None
Embed = Callable[[Sequence[str]], Any]

DEFAULT_METRICS: dict[str, tuple[str, ...]] = {
    "retrieval": (
        "retrieval_recall",
        "retrieval_precision",
        "retrieval_ndcg",
        "retrieval_mrr",
        "nDCG@10",
        "R@10",
    ),
    "generation": ("token_f1", "exact_match", "rouge_l", "trigram_support"),
    "rag": ("retrieval_recall", "retrieval_ndcg", "nDCG@10", "token_f1", "rouge_l"),
}
_ANSWER_KINDS = ("generation", "support")
_GENERATION = {
    "exact_match": exact_match,
    "token_f1": token_f1,
    "token_recall": token_recall,
    "rouge_l": rouge_l,
    "bleu": bleu,
}
_AUTORAG = {
    "retrieval_recall": 0,
    "retrieval_precision": 1,
    "retrieval_f1": 2,
    "retrieval_ndcg": 3,
    "retrieval_mrr": 4,
    "retrieval_map": 5,
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a pipeline produced for a task. ``retrieved`` entries hold ``chunk_id``,
    ``doc_id``, ``start``, ``end``, ``score``, ``rank`` and ``text``; ``contexts`` are the
    texts given to the generator (or, in retrieval mode, the retrieved texts)."""

    retrieved: tuple[dict[str, Any], ...] = ()
    answer: str = ""
    contexts: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    """What the stages did: ``rewrite`` (the rewritten query), ``usage`` per stage."""


@dataclass(frozen=True, slots=True)
class MetricPlan:
    """The checked metrics of an experiment or an ``assay eval`` call."""

    metrics: tuple[ParsedMetric, ...]
    judges: tuple[JudgeMetric, ...] = ()
    llm: tuple[CatalogueMetric, ...] = ()

    @property
    def names(self) -> list[str]:
        named = [m.name for m in self.metrics] + [j.name for j in self.judges]
        return named + [m.name for m in self.llm]

    def to_json(self) -> list[Any]:
        stored = [m.name for m in self.metrics] + [j.to_json() for j in self.judges]
        return stored + [m.to_json() for m in self.llm]


def _catalogue_metric(
    entry: str | Mapping[str, Any], mode: str, judge: GeneratorSettings | None
) -> CatalogueMetric:
    if isinstance(entry, Mapping):
        metric = CatalogueMetric.from_json(entry, judge)
    else:
        if judge is None:
            raise InvalidInput(
                f"LLM metric {entry!r} needs a judge: give "
                f'{{"kind": "llm", "metric": "{entry}", "generator": {{...}}}}'
            )
        metric = CatalogueMetric(str(catalogue_name(entry)), judge)
    needs = metric.entry.needs
    if mode == "retrieval" and "answer" in needs:
        raise InvalidInput(
            f"LLM metric {metric.name!r} judges answers, but mode 'retrieval' makes none; "
            "use mode 'generation' or 'rag'"
        )
    if mode == "generation" and "contexts" in needs and "answer" not in needs:
        raise InvalidInput(
            f"LLM metric {metric.name!r} judges retrieved passages, but mode 'generation' "
            "gives the gold passages; use mode 'retrieval' or 'rag'"
        )
    return metric


def metric_plan(
    entries: Iterable[str | Mapping[str, Any]] | None,
    mode: str,
    judge: GeneratorSettings | None = None,
) -> MetricPlan:
    """Check metric names (and judge definitions) for a mode; none given → the defaults.
    ``judge`` judges the catalogue metrics named without a generator (the project's)."""
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")
    given = list(entries or [])
    if not given:
        given = list(DEFAULT_METRICS[mode])
    parsed: list[ParsedMetric] = []
    judges: list[JudgeMetric] = []
    llm: list[CatalogueMetric] = []
    for entry in given:
        if isinstance(entry, Mapping) and entry.get("kind") == "llm":
            llm.append(_catalogue_metric(entry, mode, judge))
            continue
        if isinstance(entry, Mapping):
            judged = JudgeMetric.from_json(entry)
            if mode == "retrieval":
                raise InvalidInput(f"judge metric {judged.name!r} needs answers: use mode rag")
            judges.append(judged)
            continue
        if catalogue_name(str(entry)):
            llm.append(_catalogue_metric(str(entry), mode, judge))
            continue
        metric = parse_metric(str(entry))
        kind = metric.spec.kind
        if mode == "retrieval" and kind in _ANSWER_KINDS:
            raise InvalidInput(
                f"metric {metric.name!r} scores answers, but mode 'retrieval' makes none; "
                "use mode 'generation' or 'rag'"
            )
        if mode == "generation" and kind in ("retrieval", "ir"):
            raise InvalidInput(
                f"metric {metric.name!r} scores retrieval, but mode 'generation' gives the "
                "gold passages instead of retrieving; use mode 'retrieval' or 'rag'"
            )
        if metric not in parsed:
            parsed.append(metric)
    plan = MetricPlan(tuple(parsed), tuple(judges), tuple(llm))
    clash = sorted({n for n in plan.names if plan.names.count(n) > 1})
    if clash:
        raise InvalidInput(f"metric name(s) used twice: {', '.join(clash)}")
    return plan


def ranked_ids(retrieved: Sequence[Mapping[str, Any]], level: Level = "chunk") -> list[str]:
    """Ids in rank order, first occurrence kept; an unplaced context stands as a miss."""
    ids: list[str] = []
    for entry in retrieved:
        value = entry.get("chunk_id" if level == "chunk" else "doc_id")
        ids.append(str(value) if value else f"(unplaced {entry.get('rank')})")
    return ids


def _ir_value(metric: ParsedMetric, task: Task, ids: Sequence[str], level: Level) -> Value:
    qrels = task.qrels(level)
    if not qrels:
        return None
    run: dict[str, float] = {}
    for rank, id_ in enumerate(ids):
        run.setdefault(id_, float(len(ids) - rank))  # scores that keep the system's order
    values = evaluate_per_query({"q": qrels}, {"q": run}, [metric.name])
    return next(iter(values["q"].values()))


def score_task(
    plan: MetricPlan,
    task: Task,
    outcome: Outcome,
    *,
    level: Level = "chunk",
    embed: Embed | None = None,
    verdicts: Mapping[str, Verdict] | None = None,
    llm_values: Mapping[str, Value] | None = None,
) -> dict[str, Value]:
    """Every metric of the plan for one task (judge verdicts and the catalogue metrics'
    values are computed by the caller)."""
    ids = ranked_ids(outcome.retrieved, level)
    groups = task.chunk_groups() if level == "chunk" else task.doc_groups()
    scores: dict[str, Value] = {}
    autorag_cache: dict[int | None, Any] = {}
    for metric in plan.metrics:
        name, kind = metric.spec.name, metric.spec.kind
        value: Value = None
        if name in _AUTORAG:
            if metric.k not in autorag_cache:
                autorag_cache[metric.k] = retrieval_scores(groups, ids, metric.k)
            result = autorag_cache[metric.k]
            value = None if result is None else float(result[_AUTORAG[name]])
        elif name in ("substring_hit", "substring_rank"):
            value = _substring(name, task, outcome, metric.k)
        elif kind == "ir":
            value = _ir_value(metric, task, ids, level)
        elif name == "char_length":
            value = char_length(outcome.answer)
        elif name in _GENERATION:
            refs = task.references
            value = _GENERATION[name](outcome.answer, refs) if refs else None
        elif name == "semantic_similarity":
            if embed is None:
                raise InvalidInput("semantic_similarity needs an embedder")
            refs = task.references
            value = semantic_similarity(outcome.answer, refs, embed) if refs else None
        elif name == "trigram_support" and outcome.contexts:
            value = support_score(outcome.answer, outcome.contexts) if outcome.answer else 0.0
        elif name == "lexical_coverage" and outcome.contexts:
            value = coverage(outcome.answer, outcome.contexts)
        scores[metric.name] = value
    for judge_metric in plan.judges:
        verdict = (verdicts or {}).get(judge_metric.name)
        scores[judge_metric.name] = verdict.value if verdict else None
    for llm_metric in plan.llm:
        scores[llm_metric.name] = (llm_values or {}).get(llm_metric.name)
    return scores


def _substring(name: str, task: Task, outcome: Outcome, k: int | None) -> Value:
    gold = [e.text for e in task.relevant if e.text.strip()]
    if task.unanswerable or not gold:
        return None
    candidates = [str(entry.get("text") or "") for entry in outcome.retrieved]
    ranks = [r for r in (substring_rank(text, candidates, k) for text in gold) if r is not None]
    if name == "substring_hit":
        return 1.0 if ranks else 0.0
    return float(min(ranks)) if ranks else None


def _numeric(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def summarise(values: Sequence[Value]) -> dict[str, Any]:
    """``{"mean", "count", "skipped"}`` for numbers; labels also get ``"counts"`` per label
    (their mean is given when every label is a number, e.g. a 1-5 scale)."""
    present = [v for v in values if v is not None]
    summary: dict[str, Any] = {"count": len(present), "skipped": len(values) - len(present)}
    labels = [v for v in present if isinstance(v, str)]
    if labels:
        counts: dict[str, int] = {}
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        summary["counts"] = counts
        numbers = [_numeric(v) for v in present if v != ERROR]
        ok = [n for n in numbers if n is not None]
        summary["mean"] = float(np.mean(ok)) if ok and len(ok) == len(numbers) else None
        summary["errors"] = counts.get(ERROR, 0)
        return summary
    summary["mean"] = float(np.mean([float(v) for v in present])) if present else None
    return summary


def aggregate(
    rows: Iterable[tuple[str, Mapping[str, Value]]], names: Sequence[str]
) -> dict[str, Any]:
    """Aggregates of per-task metrics ``(query_type, {metric: value})``: overall and by
    query type, each ``{metric: summary}`` (see :func:`summarise`)."""
    overall: dict[str, list[Value]] = {name: [] for name in names}
    by_type: dict[str, dict[str, list[Value]]] = {}
    tasks = 0
    for query_type, metrics in rows:
        tasks += 1
        bucket = by_type.setdefault(query_type or "", {name: [] for name in names})
        for name in names:
            value = metrics.get(name)
            overall[name].append(value)
            bucket[name].append(value)
    return {
        "tasks": tasks,
        "overall": {name: summarise(values) for name, values in overall.items()},
        "by_query_type": {
            query_type: {name: summarise(values) for name, values in bucket.items()}
            for query_type, bucket in sorted(by_type.items())
        },
    }


def means(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """``{metric: mean}`` of an aggregate's ``overall`` part (for tables and gates)."""
    return {name: part.get("mean") for name, part in summary["overall"].items()}
