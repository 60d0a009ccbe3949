"""How well an LLM judge's labels agree with people's labels of the same things.

``label_agreement(pairs)`` takes ``(key, judge_label, human_label)`` triples (a key names what
both labelled: a task, a task × system …) and gives, over the pairs where both labels are
present:

- ``kappa``: Cohen's kappa of judge and human (None when undefined: one label everywhere);
- ``accuracy``: the share of pairs where they give the same label;
- ``confusion``: a labels × labels matrix of counts, rows the human's label (the truth),
  columns the judge's, labels in sorted order (as scikit-learn's ``confusion_matrix``);
- ``per_label``: for each label, precision (of the judge's uses of it, the share the human
  agrees with), recall (of the human's uses, the share the judge found), F1 and support (how
  often the human used it); None where a ratio has nothing to divide by (scikit-learn's
  ``zero_division=nan``); F1 is 2·TP / (2·TP + FP + FN), so a label the judge never used
  has no precision but an F1 of 0;
- ``disagreements``: the first ``examples`` pairs where they differ, in the order given.

Labels are compared as given; ``normalise_label`` (trim, case-fold) is what callers use to
put a judge's "Yes" and a person's "yes" on one scale, and ``mapping`` renames human labels
onto the judge's scale first (``{"Perfect": "yes", "Bad": "no"}``). Pure: no storage.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from assay.metrics.agreement import cohen_kappa


@dataclass(frozen=True, slots=True)
class LabelScores:
    label: str
    precision: float | None
    recall: float | None
    f1: float | None
    support: int
    predicted: int
    """How often the judge used the label."""


@dataclass(frozen=True, slots=True)
class Disagreement:
    key: Hashable
    judge: str
    human: str


@dataclass(frozen=True, slots=True)
class LabelAgreement:
    pairs: int
    agreed: int
    kappa: float | None
    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    per_label: tuple[LabelScores, ...]
    disagreements: tuple[Disagreement, ...] = field(default_factory=tuple)

    @property
    def accuracy(self) -> float | None:
        return self.agreed / self.pairs if self.pairs else None


def normalise_label(value: object) -> str | None:
    """A label as compared: text trimmed and case-folded; numbers as their shortest text
    (4.0 → "4"); None, empty text and booleans' absence stay None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip().casefold()
    return text or None


def _ratio(top: int, bottom: int) -> float | None:
    return top / bottom if bottom else None


def label_agreement(
    pairs: Iterable[tuple[Hashable, str | None, str | None]],
    *,
    mapping: Mapping[str, str] | None = None,
    examples: int = 10,
) -> LabelAgreement:
    """Agreement of judge and human labels (see the module docstring)."""
    kept: list[tuple[Hashable, str, str]] = []
    for key, judge, human in pairs:
        if human is not None and mapping:
            human = mapping.get(human, human)
        if judge is None or human is None:
            continue
        kept.append((key, judge, human))
    labels = tuple(sorted({j for _, j, _ in kept} | {h for _, _, h in kept}))
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for _, judge, human in kept:
        matrix[index[human]][index[judge]] += 1
    per_label = []
    for i, label in enumerate(labels):
        hits = matrix[i][i]
        predicted = sum(row[i] for row in matrix)
        support = sum(matrix[i])
        precision, recall = _ratio(hits, predicted), _ratio(hits, support)
        f1 = _ratio(2 * hits, predicted + support)  # 2TP / (2TP + FP + FN)
        per_label.append(LabelScores(label, precision, recall, f1, support, predicted))
    agreed = sum(matrix[i][i] for i in range(len(labels)))
    differing = [Disagreement(k, j, h) for k, j, h in kept if j != h]
    return LabelAgreement(
        pairs=len(kept),
        agreed=agreed,
        kappa=cohen_kappa([j for _, j, _ in kept], [h for _, _, h in kept]) if kept else None,
        labels=labels,
        confusion=tuple(tuple(row) for row in matrix),
        per_label=tuple(per_label),
        disagreements=tuple(differing[:examples]),
    )
