"""The LLM metric catalogue: named, ready-to-use judge metrics with a published method.

A catalogue metric is chosen by its name (``faithfulness``, ``answer_relevancy``,
``context_precision``, ``context_recall``, ``answer_correctness``); the judge is then the
project's generator, which must be an LLM. The JSON form names the judge itself and may
rename the metric (two judges of one method in one experiment):

    {"kind": "llm", "metric": "faithfulness", "name": "faithfulness_large",
     "generator": {"kind": "openai", "base_url": "...", "model": "..."}}

Each metric scores one task in [0, 1] (higher is better); how is in
:mod:`assay.experiments.catalogue_scoring`, the prompts in
:mod:`assay.experiments.catalogue_prompts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from assay.errors import InvalidInput
from assay.llm import GeneratorSettings
from assay.metrics import parse_metric

Needs = Literal["answer", "contexts"]


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """What a catalogue metric judges, what it needs, and its calls per task."""

    name: str
    needs: tuple[str, ...]
    """``answer`` (the system's answer), ``contexts`` (its passages), ``reference``."""
    embeds: bool
    """Whether it compares texts with the workspace's embedder as well."""
    calls: str
    """Judge calls per task, as the docs and the form say it."""


CATALOGUE: dict[str, CatalogueEntry] = {
    e.name: e
    for e in (
        CatalogueEntry("faithfulness", ("answer", "contexts"), False, "2"),
        CatalogueEntry("answer_relevancy", ("answer",), True, "1"),
        CatalogueEntry("context_precision", ("contexts", "reference"), False, "k"),
        CatalogueEntry("context_recall", ("contexts", "reference"), False, "1"),
        CatalogueEntry("answer_correctness", ("answer", "reference"), True, "4"),
    )
}
"""Every catalogue metric by name."""

QUESTIONS = 3
"""Questions answer_relevancy asks the judge for (Ragas's default strictness)."""
SIMILARITY_WEIGHT = 0.25
"""answer_correctness: the weight of semantic similarity beside the claims' F1 (Ragas's)."""
_FIELDS = ("kind", "metric", "name", "generator", "questions", "similarity_weight")


@dataclass(frozen=True, slots=True)
class CatalogueMetric:
    """A catalogue metric with its judge, as stored with an experiment."""

    metric: str
    generator: GeneratorSettings
    name: str = ""
    questions: int = QUESTIONS
    similarity_weight: float = SIMILARITY_WEIGHT

    def __post_init__(self) -> None:
        if self.metric not in CATALOGUE:
            raise InvalidInput(
                f"unknown LLM metric {self.metric!r}; the catalogue has: {', '.join(CATALOGUE)}"
            )
        if not self.name:
            object.__setattr__(self, "name", self.metric)
        where = f"LLM metric {self.name!r}"
        if self.generator.kind == "offline":
            raise InvalidInput(
                f"{where} needs an LLM as judge, but the generator is the offline one: set the "
                "project's generator (assay projects settings --generator ...) or give "
                f'{{"kind": "llm", "metric": "{self.metric}", "generator": {{...}}}}'
            )
        if isinstance(self.questions, bool) or not isinstance(self.questions, int):
            raise InvalidInput(f"{where}: questions must be a whole number from 1 to 10")
        if not 1 <= self.questions <= 10:
            raise InvalidInput(f"{where}: questions must be a whole number from 1 to 10")
        weight = self.similarity_weight
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
            raise InvalidInput(f"{where}: similarity_weight must be a number from 0 to 1")

    @property
    def entry(self) -> CatalogueEntry:
        return CATALOGUE[self.metric]

    def to_json(self) -> dict[str, Any]:
        settings = {f: getattr(self.generator, f) for f in GeneratorSettings.__dataclass_fields__}
        data: dict[str, Any] = {
            "kind": "llm",
            "metric": self.metric,
            "name": self.name,
            "generator": settings,
        }
        if self.metric == "answer_relevancy":
            data["questions"] = self.questions
        if self.metric == "answer_correctness":
            data["similarity_weight"] = self.similarity_weight
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], judge: GeneratorSettings | None) -> CatalogueMetric:
        """The JSON form; without a ``generator`` the judge is ``judge`` (the project's)."""
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            raise InvalidInput(
                f"LLM metric: unknown field(s) {', '.join(unknown)}; valid: {', '.join(_FIELDS)}"
            )
        given = data.get("generator")
        if given is not None and not isinstance(given, Mapping):
            raise InvalidInput("LLM metric: generator must be an object of generator settings")
        generator = GeneratorSettings.from_mapping(given) if given else judge
        metric = str(data.get("metric") or data.get("name") or "")
        if generator is None:
            raise InvalidInput(f"LLM metric {metric!r}: no judge; give a generator object")
        return cls(
            metric=metric,
            generator=generator,
            name=str(data.get("name") or ""),
            questions=data.get("questions", QUESTIONS),
            similarity_weight=data.get("similarity_weight", SIMILARITY_WEIGHT),
        )


def catalogue_name(text: str) -> str | None:
    """The catalogue metric a metric name means (case and ``-`` forgiven), or None."""
    key = text.strip().lower().replace("-", "_")
    return key if key in CATALOGUE else None


def metric_name(text: str) -> str:
    """The canonical name of a metric given as text: a catalogue metric's, else the
    registry's (:func:`assay.metrics.parse_metric`, which names the valid ones)."""
    return catalogue_name(text) or parse_metric(text).name
