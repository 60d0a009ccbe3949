"""Choosing which candidate groups to annotate next, and saying why each was chosen.

The policy (docs/production-to-gold.md explains it to leads), over the groups not yet taken:

1. **Coverage of documents.** Each document without gold (and not already in work) that
   production questions cite gets one pick, most-asked documents first: the best-scored group
   citing it, preferring one whose other documents are not picked yet. No document gets a
   second question while a cited document without gold is left.
2. **Coverage of topics.** Each topic cluster without gold and without a pick gets its
   best-scored group, largest clusters first.
3. **Stratified by topic.** The rest is shared among clusters in proportion to their
   questions (the cluster with the fewest picks per question goes next), each taking its
   best-scored group, a group whose documents were picked already counted down.

A group's *score* is ``log2(1 + times asked) + 3 × share of negative feedback`` plus the
difficulty found for the best-scored groups: ``+2`` when the project's retrievers find no
strong passage for the question (the unanswerable check's rule) and ``+1.5`` when they
disagree (their top documents overlap by less than a third). Difficulty asks the project's
pool (:mod:`assay.experiments.pools`) and is worked out for at most ``difficulty`` groups.
Every pick carries its reasons, as ``{"kind", "text", ...}`` with the figures a page needs.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from assay.candidates.clustering import nearest
from assay.candidates.gold_reach import (
    document_names,
    gold_documents,
    gold_questions,
    in_work_documents,
)
from assay.errors import AssayError, InvalidInput
from assay.experiments.pools import pool_strong_hits, question_pool
from assay.records import Project
from assay.search.pool_settings import pool_settings
from assay.store.candidates_schema import candidate_clusters, candidate_groups
from assay.store.db import reading
from assay.store.workspace import Workspace

MAX_SAMPLE = 500
DISAGREE_BELOW = 1 / 3
"""Retrievers disagree when their top documents overlap (Jaccard) less than this."""
TOP_DOCUMENTS = 5


@dataclass
class Pick:
    group_id: int
    question: str
    size: int
    negative: int
    cluster: int
    cluster_label: str
    documents: list[dict[str, str]]
    score: float
    reasons: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "question": self.question,
            "asked": self.size,
            "negative": self.negative,
            "cluster": self.cluster,
            "cluster_label": self.cluster_label,
            "documents": self.documents,
            "score": round(self.score, 3),
            "reasons": self.reasons,
        }


@dataclass
class Sample:
    picks: list[Pick]
    open_groups: int
    uncovered_documents: int
    difficulty_checked: int

    def as_json(self) -> dict[str, Any]:
        return {
            "picks": [p.as_json() for p in self.picks],
            "open_groups": self.open_groups,
            "uncovered_documents": self.uncovered_documents,
            "difficulty_checked": self.difficulty_checked,
        }


@dataclass
class _Group:
    id: int
    question: str
    size: int
    negative: int
    cluster: int
    documents: list[str]
    score: float = 0.0
    hard: list[dict[str, Any]] = field(default_factory=list)


def sample(
    ws: Workspace,
    project: Project,
    n: int,
    *,
    difficulty: int | None = None,
    conn: sa.Connection | None = None,
) -> Sample:
    """Pick ``n`` open groups by the policy of the module docstring."""
    if not 1 <= n <= MAX_SAMPLE:
        raise InvalidInput(f"a sample holds 1 to {MAX_SAMPLE} questions, not {n}")
    with reading(ws.engine, conn) as conn:
        names = document_names(conn, project)
        gold = gold_documents(conn, project)
        in_work = in_work_documents(conn, project)
        clusters = {
            row.number: row
            for row in conn.execute(
                sa.select(candidate_clusters).where(candidate_clusters.c.project_id == project.id)
            )
        }
        rows = conn.execute(
            sa.select(candidate_groups).where(
                candidate_groups.c.project_id == project.id,
                candidate_groups.c.item_id.is_(None),
            )
        ).all()
        taken_clusters = set(
            conn.scalars(
                sa.select(candidate_groups.c.cluster).where(
                    candidate_groups.c.project_id == project.id,
                    candidate_groups.c.item_id.is_not(None),
                )
            )
        )
        numbers = sorted(clusters)
        centres = [clusters[c].centroid for c in numbers]
        placed = nearest(gold_questions(conn, project), centres)
        gold_clusters = taken_clusters | {numbers[i] for i in placed}
    groups = [
        _Group(
            r.id,
            r.question,
            r.size,
            r.negative,
            r.cluster,
            [d for d in r.documents or () if d in names],
        )
        for r in rows
    ]
    for g in groups:
        g.score = math.log2(1 + g.size) + 3 * g.negative / max(1, g.size)
    groups.sort(key=lambda g: (-g.score, g.id))
    budget = difficulty if difficulty is not None else min(3 * n, 60)
    checked = _difficulty(ws, project, groups[:budget]) if budget else 0
    groups.sort(key=lambda g: (-g.score, g.id))
    uncovered = [d for d in names if d not in gold and d not in in_work]
    picker = _Picker(groups, names, {c: clusters[c].label for c in clusters})
    picker.cover_documents(uncovered, n)
    picker.cover_clusters(
        [c for c in sorted(clusters, key=lambda c: -clusters[c].questions)
         if c not in gold_clusters],
        {c: clusters[c].questions for c in clusters},
        n,
    )  # fmt: skip
    picker.stratified({c: clusters[c].questions for c in clusters}, n)
    cited = {d for g in groups for d in g.documents}
    return Sample(picker.picks, len(groups), len([d for d in uncovered if d in cited]), checked)


def _difficulty(ws: Workspace, project: Project, groups: list[_Group]) -> int:
    """Ask the pool about each group; add the difficulty to its score and reasons."""
    settings = pool_settings(project.settings)
    checked = 0
    for g in groups:
        try:
            pool = question_pool(ws, project, settings, query=g.question)
        except AssayError:
            continue
        checked += 1
        if not pool_strong_hits(pool, settings):
            g.score += 2
            g.hard.append({"kind": "no_strong", "text": "the retrievers find no strong passage"})
        tops = []
        for source in pool.sources:
            ranked = sorted(
                (e for e in pool.entries if source in e.found_by),
                key=lambda e: e.found_by[source],
            )
            tops.append({e.doc_id for e in ranked[:TOP_DOCUMENTS]})
        if len(tops) >= 2 and all(tops):
            union = set().union(*tops)
            shared = set.intersection(*tops)
            overlap = len(shared) / len(union) if union else 1.0
            if overlap < DISAGREE_BELOW:
                g.score += 1.5
                g.hard.append(
                    {
                        "kind": "disagree",
                        "overlap": round(overlap, 2),
                        "text": f"the retrievers disagree (top documents overlap {overlap:.0%})",
                    }
                )
    return checked


class _Picker:
    def __init__(self, groups: list[_Group], names: dict[str, str], labels: dict[int, str]) -> None:
        self.groups = groups  # best score first
        self.names = names
        self.labels = labels
        self.picks: list[Pick] = []
        self.chosen: set[int] = set()
        self.docs: Counter[str] = Counter()
        self.per_cluster: Counter[int] = Counter()

    def _take(self, g: _Group, reason: dict[str, Any]) -> None:
        reasons = [reason]
        if g.size > 1:
            reasons.append({"kind": "asked", "count": g.size, "text": f"asked {g.size} times"})
        if g.negative:
            reasons.append(
                {
                    "kind": "negative",
                    "count": g.negative,
                    "text": f"{g.negative} negative feedback",
                }
            )
        reasons += g.hard
        self.picks.append(
            Pick(
                g.id,
                g.question,
                g.size,
                g.negative,
                g.cluster,
                self.labels.get(g.cluster, ""),
                [{"doc_id": d, "name": self.names[d]} for d in g.documents],
                g.score,
                reasons,
            )
        )
        self.chosen.add(g.id)
        self.docs.update(g.documents)
        self.per_cluster[g.cluster] += 1

    def cover_documents(self, uncovered: list[str], n: int) -> None:
        demand: Counter[str] = Counter()
        citing: dict[str, list[_Group]] = {}
        for g in self.groups:
            for d in g.documents:
                demand[d] += g.size
                citing.setdefault(d, []).append(g)
        for doc in sorted((d for d in uncovered if d in citing), key=lambda d: -demand[d]):
            if len(self.picks) >= n:
                return
            if self.docs[doc]:
                continue  # an earlier pick covers it already
            free = [g for g in citing[doc] if g.id not in self.chosen]
            fresh = [g for g in free if not any(self.docs[d] for d in g.documents)]
            if free:
                self._take(
                    (fresh or free)[0],
                    {
                        "kind": "coverage",
                        "document": self.names[doc],
                        "text": f"covers {self.names[doc]}, which has no gold yet",
                    },
                )

    def cover_clusters(self, bare: list[int], sizes: dict[int, int], n: int) -> None:
        for number in bare:
            if len(self.picks) >= n:
                return
            if self.per_cluster[number]:
                continue
            best = next(
                (g for g in self.groups if g.cluster == number and g.id not in self.chosen), None
            )
            if best is not None:
                label = self.labels.get(number, "")
                self._take(
                    best,
                    {
                        "kind": "cluster",
                        "cluster": number,
                        "label": label,
                        "questions": sizes.get(number, 0),
                        "text": f"topic “{label}” ({sizes.get(number, 0)} questions) "
                        "has no gold yet",
                    },
                )

    def stratified(self, sizes: dict[int, int], n: int) -> None:
        remaining: dict[int, list[_Group]] = {}
        for g in self.groups:
            if g.id not in self.chosen:
                remaining.setdefault(g.cluster, []).append(g)
        while len(self.picks) < n and any(remaining.values()):
            number = min(
                (c for c, left in remaining.items() if left),
                key=lambda c: (self.per_cluster[c] / max(1, sizes.get(c, 1)), c),
            )
            left = remaining[number]
            best = max(
                left,
                key=lambda g: (g.score - sum(self.docs[d] > 0 for d in g.documents), -g.id),
            )
            left.remove(best)
            label = self.labels.get(number, "")
            self._take(
                best,
                {
                    "kind": "stratified",
                    "cluster": number,
                    "label": label,
                    "text": f"the best-scored question left in topic “{label}”",
                },
            )
