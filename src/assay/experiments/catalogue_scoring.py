"""How each catalogue metric scores one task, following the method Ragas published.

- ``faithfulness``: the answer is split into claims (1 call), each claim is checked against
  the contexts (1 call); score = supported claims / claims. An answer that makes no claim
  has no score.
- ``answer_relevancy``: the judge writes ``questions`` questions the answer replies to and
  says whether it is noncommittal (1 call, where Ragas makes ``strictness`` calls: with a
  deterministic judge and a response cache, repeated calls would return one question);
  score = mean cosine of the task's question and each generated question (the workspace's
  embedder), 0 when noncommittal.
- ``context_precision``: per context, was it useful for reaching the reference answer
  (1 call each); score = Σ_k precision@k · v_k / Σ_k v_k (Ragas's average precision; 0
  when no context is useful).
- ``context_recall``: the reference answer's sentences, each checked against the contexts
  (1 call); score = supported sentences / sentences (0 when nothing was retrieved).
- ``answer_correctness``: claims of the answer and of the reference (2 calls), answer claims
  checked against the reference (TP/FP) and reference claims against the answer (covered or
  FN) (2 calls); F1 = TP / (TP + (FP + FN) / 2), blended with the cosine of answer and
  reference: (1 - w) · F1 + w · similarity (w = 0.25, as Ragas).

A reply the strict readers refuse, or a judge that fails, gives the value ``"error"`` with
the message and the reply in the details; the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from assay.errors import InvalidInput
from assay.experiments.catalogue import CatalogueMetric
from assay.experiments.catalogue_prompts import (
    ReplyError,
    claims_prompt,
    questions_prompt,
    read_claims,
    read_questions,
    read_useful,
    read_verdicts,
    useful_prompt,
    verify_prompt,
)
from assay.experiments.judge import ERROR
from assay.experiments.tasks import Task
from assay.llm.records import Generator, GeneratorError, Message
from assay.metrics import semantic_similarity
from assay.metrics.overlap import split_sentences

T = TypeVar("T")
Embed = Callable[[Sequence[str]], Any]
Value = float | str | None


@dataclass(slots=True)
class _Judge:
    """Asks the judge and keeps each reply and its usage, in order (for the details)."""

    generator: Generator
    model: str
    calls: list[dict[str, Any]] = field(default_factory=list)

    def ask(self, step: str, prompt: str, read: Callable[[str], T]) -> T:
        generation = self.generator.generate([Message("user", prompt)])
        call: dict[str, Any] = {"step": step, "reply": generation.text}
        if generation.usage:
            call["usage"] = {"model": self.model, **generation.usage}
        if generation.cached:
            call["cached"] = True
        self.calls.append(call)
        return read(generation.text)


@dataclass(frozen=True, slots=True)
class LLMScore:
    """A catalogue metric's value for one task and what the judge said on the way."""

    value: Value
    details: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Case:
    """One task as a method sees it; ``found`` gathers what goes into the details."""

    metric: CatalogueMetric
    judge: _Judge
    task: Task
    answer: str
    contexts: Sequence[str]
    embed: Embed | None
    found: dict[str, Any]

    @property
    def question(self) -> str:
        return self.task.turns[-1] if self.task.turns else ""

    @property
    def reference(self) -> str:
        refs = self.task.references
        return refs[0] if refs else ""

    def embedder(self) -> Embed:
        if self.embed is None:
            raise InvalidInput(f"{self.metric.name} needs an embedder")
        return self.embed


def score_catalogue(
    metric: CatalogueMetric,
    generator: Generator,
    task: Task,
    answer: str,
    contexts: Sequence[str],
    embed: Embed | None,
) -> LLMScore:
    """The metric's value for one task (None when it does not apply, ``"error"`` when the
    judge failed or replied out of shape), with the calls made in ``details``."""
    judge = _Judge(generator, metric.generator.model or metric.generator.kind)
    found: dict[str, Any] = {"metric": metric.metric}
    try:
        case = _Case(metric, judge, task, answer, contexts, embed, found)
        value = _METHODS[metric.metric](case)
    except ReplyError as exc:
        value = ERROR
        found["error"] = f"LLM metric {metric.name!r}: {exc}; reply: {exc.reply[:300]!r}"
        found["reply"] = exc.reply
    except (GeneratorError, InvalidInput) as exc:
        value = ERROR
        found["error"] = f"LLM metric {metric.name!r} failed: {exc}"
    found["calls"] = judge.calls
    usage = [c["usage"] for c in judge.calls if "usage" in c]
    if usage:
        found["usage"] = usage
    return LLMScore(value, found)


def _verify(
    judge: _Judge, step: str, statements: Sequence[str], passages: Sequence[str]
) -> list[int]:
    prompt = verify_prompt(statements, passages)
    return judge.ask(step, prompt, lambda reply: read_verdicts(reply, len(statements)))


def _faithfulness(case: _Case) -> Value:
    if not case.answer.strip() or not case.contexts:
        return None
    prompt = claims_prompt(case.question, case.answer)
    claims = case.found["claims"] = case.judge.ask("claims", prompt, read_claims)
    if not claims:
        case.found["note"] = "the answer makes no claim"
        return None
    verdicts = case.found["verdicts"] = _verify(case.judge, "verify", claims, case.contexts)
    return sum(verdicts) / len(verdicts)


def _answer_relevancy(case: _Case) -> Value:
    if not case.answer.strip():
        return None
    embed = case.embedder()
    prompt = questions_prompt(case.answer, case.metric.questions)
    questions, noncommittal = case.judge.ask("questions", prompt, read_questions)
    case.found["questions"], case.found["noncommittal"] = questions, noncommittal
    vectors = np.asarray(embed([case.question, *questions]), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    cosines = (vectors[1:] @ vectors[0]) / (norms[1:] * norms[0])
    case.found["similarities"] = [round(float(c), 6) for c in cosines]
    return float(np.mean(cosines)) * (1 - noncommittal)


def _context_precision(case: _Case) -> Value:
    if not case.reference or not case.contexts:
        return None
    useful = [
        case.judge.ask(
            f"useful {n}", useful_prompt(case.question, context, case.reference), read_useful
        )
        for n, context in enumerate(case.contexts, start=1)
    ]
    case.found["verdicts"] = useful
    return average_precision(useful)


def average_precision(verdicts: Sequence[int]) -> float:
    """Σ_k precision@k · v_k / Σ_k v_k over ranked 0/1 verdicts; 0 when none is 1."""
    hits = 0
    total = 0.0
    for rank, verdict in enumerate(verdicts, start=1):
        if verdict:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def _context_recall(case: _Case) -> Value:
    reference = case.reference
    if not reference:
        return None
    sentences = [reference[start:end] for start, end in split_sentences(reference)]
    case.found["sentences"] = sentences
    if not case.contexts:
        return 0.0
    verdicts = _verify(case.judge, "attribute", sentences, case.contexts)
    case.found["verdicts"] = verdicts
    return sum(verdicts) / len(verdicts)


def claims_f1(tp: int, fp: int, fn: int) -> float:
    """F1 of claims (Ragas's ``fbeta_score`` with beta 1): 0 when nothing matches."""
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _answer_correctness(case: _Case) -> Value:
    answer, reference, judge = case.answer, case.reference, case.judge
    if not reference:
        return None
    if not answer.strip():
        return 0.0
    answer_claims = judge.ask("answer claims", claims_prompt(case.question, answer), read_claims)
    reference_claims = judge.ask(
        "reference claims", claims_prompt(case.question, reference), read_claims
    )
    supported = (
        _verify(judge, "answer vs reference", answer_claims, [reference]) if answer_claims else []
    )
    covered = (
        _verify(judge, "reference vs answer", reference_claims, [answer])
        if reference_claims
        else []
    )
    tp, fp = sum(supported), len(supported) - sum(supported)
    fn = len(covered) - sum(covered)
    f1 = claims_f1(tp, fp, fn) if answer_claims or reference_claims else 1.0
    case.found.update(
        answer_claims=answer_claims, reference_claims=reference_claims, tp=tp, fp=fp, fn=fn, f1=f1
    )
    weight = case.metric.similarity_weight
    if weight == 0:
        return f1
    similarity = semantic_similarity(answer, [reference], case.embedder())
    case.found["similarity"] = round(similarity, 6)
    return (1 - weight) * f1 + weight * similarity


_METHODS = {
    "faithfulness": _faithfulness,
    "answer_relevancy": _answer_relevancy,
    "context_precision": _context_precision,
    "context_recall": _context_recall,
    "answer_correctness": _answer_correctness,
}
