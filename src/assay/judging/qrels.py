"""Document-mode ratings as graded qrels: ``{topic_id: {doc_id: grade}}``, and as TREC qrels
text (``topic_id 0 doc_id grade``, one line a judged document).

A rating's grade comes from the project's scale (setting ``judging_ratings``): its first value
means "not rated", the others are read best first and the last gets 0, the one before it 1,
and so on. The default scale gives Perfect 3, Mostly Good 2, So-so 1, Bad 0. A judgment left
at "not rated" gives no grade (spans or a comment alone do not rate), so a document nobody
rated is absent from the qrels: unjudged, not judged non-relevant.

Several judges of one unit: its grade is the *lower median* of their grades, the highest
grade that more than half of them gave or exceeded (Perfect and Bad give Bad; Perfect, So-so
and Bad give So-so). With :data:`RELEVANT` as the cut (trec_eval's relevance level 1), a
document is relevant when a strict majority of its judges found it at least So-so; a tie is
not relevant.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assay.errors import InvalidInput
from assay.gold.project_config import judging_ratings
from assay.judging.judgments import Judgment, list_judgments
from assay.judging.reports import get_topic
from assay.metrics.ir import Qrels
from assay.records import Project
from assay.store.workspace import Workspace

RELEVANT = 1
"""The lowest grade that counts as relevant (a document) or supporting (a citation)."""


def rating_grades(project: Project) -> dict[str, int]:
    """Every rating of the project's scale but "not rated", with its grade (best first)."""
    rated = judging_ratings(project)[1:]
    return {rating: len(rated) - 1 - index for index, rating in enumerate(rated)}


def consensus(grades: Sequence[int]) -> int:
    """The lower median of one unit's grades (see the module docstring)."""
    if not grades:
        raise InvalidInput("a consensus needs at least one grade")
    return sorted(grades)[(len(grades) - 1) // 2]


def grade_of(judgment: Judgment, project: Project, grades: dict[str, int]) -> int | None:
    """The judgment's grade; None when it is not rated. A rating the scale no longer holds
    (the scale was changed after judging) is an error naming the judgment."""
    if judgment.rating == judging_ratings(project)[0]:
        return None
    if judgment.rating not in grades:
        unit = judgment.unit
        raise InvalidInput(
            f"{judge_label(judgment)}'s {unit.mode} judgment of topic {unit.topic_id!r} "
            f"({unit.run_id or unit.doc_id}) has the rating {judgment.rating!r}, which the "
            f"project's scale no longer holds ({', '.join(judging_ratings(project))}); set "
            "judging_ratings back or change that judgment"
        )
    return grades[judgment.rating]


def judge_label(judgment: Judgment) -> str:
    return judgment.judge or f"judge {judgment.judge_id}"


def unit_grades(
    judgments: Iterable[Judgment], project: Project
) -> dict[str, list[tuple[Judgment, int]]]:
    """Per unit key, the rated judgments with their grades (oldest first)."""
    grades = rating_grades(project)
    found: dict[str, list[tuple[Judgment, int]]] = {}
    for judgment in judgments:
        grade = grade_of(judgment, project, grades)
        if grade is not None:
            found.setdefault(judgment.unit.key, []).append((judgment, grade))
    return found


def judged_qrels(
    ws: Workspace,
    project: Project,
    *,
    judge_id: int | None = None,
    topic_ids: Sequence[str] = (),
) -> dict[str, dict[str, int]]:
    """The project's document ratings as qrels, topics and doc ids sorted; one judge's only
    when ``judge_id`` is given, some topics only when ``topic_ids`` are."""
    for topic_id in topic_ids:
        get_topic(ws, project, topic_id)  # an unknown topic is an error, not empty qrels
    judgments = list_judgments(ws, project, mode="document", judge_id=judge_id)
    wanted = set(topic_ids)
    rated = unit_grades((j for j in judgments if not wanted or j.unit.topic_id in wanted), project)
    by_topic: dict[str, dict[str, int]] = {}
    for pairs in rated.values():
        unit = pairs[0][0].unit
        assert unit.doc_id is not None
        by_topic.setdefault(unit.topic_id, {})[unit.doc_id] = consensus([g for _, g in pairs])
    return {topic: dict(sorted(docs.items())) for topic, docs in sorted(by_topic.items())}


def trec_qrels(qrels: Qrels) -> str:
    """Qrels as TREC text: ``topic_id 0 doc_id grade`` lines. An id with white space in it
    cannot be written (the format splits on it): refused, naming the id."""
    lines = []
    for topic_id, docs in qrels.items():
        check_trec_id(topic_id, "topic id")
        for doc_id, grade in docs.items():
            check_trec_id(doc_id, "doc id")
            lines.append(f"{topic_id} 0 {doc_id} {grade}\n")
    return "".join(lines)


def check_trec_id(value: str, what: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise InvalidInput(
            f"{what} {value!r} is empty or holds white space, which a TREC file cannot hold"
        )
