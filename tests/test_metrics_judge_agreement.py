"""Judge against human labels: kappa, confusion matrix and per-label precision/recall equal
scikit-learn's on the same labels (scikit-learn is in the 'oracle' extra)."""

from __future__ import annotations

import math
import random

import pytest

from assay.metrics.judge_agreement import label_agreement, normalise_label
from tests.test_metrics_agreement import oracle

SCALES = [("yes", "no"), ("perfect", "mostly good", "so-so", "bad"), ("a", "b", "c")]


def _same(ours: float | None, theirs: float) -> bool:
    if ours is None:
        return math.isnan(theirs)
    return ours == pytest.approx(theirs)


@pytest.mark.parametrize("seed", range(12))
def test_equals_scikit_learn(seed: int) -> None:
    metrics = oracle("sklearn.metrics")
    rng = random.Random(seed)
    scale = SCALES[seed % len(SCALES)]
    size = rng.randint(3, 60)
    human = [rng.choice(scale) for _ in range(size)]
    # a judge that mostly agrees, sometimes never uses a label the people used
    judge = [h if rng.random() < 0.6 else rng.choice(scale[:-1]) for h in human]
    found = label_agreement(zip(range(size), judge, human, strict=True))

    labels = list(found.labels)
    assert labels == sorted(set(judge) | set(human))
    confusion = metrics.confusion_matrix(human, judge, labels=labels)
    assert [list(row) for row in found.confusion] == confusion.tolist()
    kappa = metrics.cohen_kappa_score(judge, human)
    assert _same(found.kappa, kappa)
    precision, recall, f1, support = metrics.precision_recall_fscore_support(
        human, judge, labels=labels, zero_division=float("nan")
    )
    for index, scores in enumerate(found.per_label):
        assert scores.label == labels[index]
        assert _same(scores.precision, precision[index])
        assert _same(scores.recall, recall[index])
        assert _same(scores.f1, f1[index])
        assert scores.support == support[index]
    assert found.accuracy == pytest.approx(metrics.accuracy_score(human, judge))


def test_missing_labels_mapping_and_examples() -> None:
    pairs = [
        ("t1", "yes", "Perfect"),
        ("t2", "no", "Bad"),
        ("t3", "yes", "Bad"),
        ("t4", None, "Perfect"),  # the judge failed: left out
        ("t5", "no", None),  # nobody labelled it: left out
        ("t6", "no", "So-so"),
    ]
    found = label_agreement(
        pairs, mapping={"Perfect": "yes", "So-so": "no", "Bad": "no"}, examples=1
    )
    assert found.pairs == 4 and found.agreed == 3 and found.accuracy == 0.75
    assert found.labels == ("no", "yes")
    assert found.confusion == ((2, 1), (0, 1))  # rows: the human's label
    assert [(d.key, d.judge, d.human) for d in found.disagreements] == [("t3", "yes", "no")]
    by_label = {s.label: s for s in found.per_label}
    assert by_label["yes"].precision == 0.5 and by_label["yes"].recall == 1.0
    assert by_label["no"].precision == 1.0 and by_label["no"].support == 3


def test_undefined_cases() -> None:
    empty = label_agreement([])
    assert empty.pairs == 0 and empty.kappa is None and empty.accuracy is None
    one_label = label_agreement([(1, "yes", "yes"), (2, "yes", "yes")])
    assert one_label.kappa is None and one_label.accuracy == 1.0
    never_used = label_agreement([(1, "yes", "no"), (2, "yes", "yes")])
    no = next(s for s in never_used.per_label if s.label == "no")
    assert no.precision is None and no.recall == 0.0 and no.f1 == 0.0


@pytest.mark.parametrize(
    ("value", "label"),
    [(" Yes ", "yes"), (4.0, "4"), (3.5, "3.5"), (True, "yes"), ("", None), (None, None)],
)
def test_normalise_label(value: object, label: str | None) -> None:
    assert normalise_label(value) == label
