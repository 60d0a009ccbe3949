"""Folding a project's candidates into groups of the same question, and the groups into topics.

Every import groups the whole project again (a later log may hold a near-duplicate of an
earlier question): candidates with equal normalised text are one question; distinct texts
are joined by MinHash near-duplicate search (:mod:`assay.candidates.minhash`). A group
counts its candidates and their negative and positive feedback, lists the documents their
anchored passages cite, and is marked taken when any of its candidates became an item. Its
id is its first candidate's id; only candidates whose group changed are written again.
Groups are then clustered by topic (:mod:`assay.candidates.clustering`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from assay.candidates.clustering import cluster
from assay.candidates.minhash import near_duplicates, signatures
from assay.records import Project
from assay.store.candidates_schema import candidate_clusters, candidate_groups, candidates
from assay.store.db import transaction
from assay.store.workspace import Workspace

WRITE_BATCH = 2_000


@dataclass(slots=True)
class _Group:
    question: str = ""
    ids: list[int] = field(default_factory=list)
    negative: int = 0
    positive: int = 0
    documents: Counter[str] = field(default_factory=Counter)
    multi_turn: bool = False
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class Grouping:
    candidates: int
    groups: int
    clusters: int
    folded: int
    """Candidates that joined another's group (exact or near duplicates)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "candidates": self.candidates,
            "groups": self.groups,
            "clusters": self.clusters,
            "folded": self.folded,
        }


def regroup(ws: Workspace, project: Project, *, conn: sa.Connection | None = None) -> Grouping:
    """Group and cluster all candidates of the project again (see the module docstring)."""
    with transaction(ws.engine, conn) as conn:
        sessions = _multi_turn_sessions(conn, project)
        by_norm: dict[str, int] = {}
        slots: list[_Group] = []  # one per distinct normalised question, in order of id
        old_group: dict[int, int | None] = {}
        rows = conn.execute(
            sa.select(
                candidates.c.id,
                candidates.c.norm,
                candidates.c.question,
                candidates.c.feedback,
                candidates.c.session,
                candidates.c.item_id,
                candidates.c.group_id,
                candidates.c.passages,
            )
            .where(candidates.c.project_id == project.id)
            .order_by(candidates.c.id)
            .execution_options(yield_per=WRITE_BATCH)
        )
        for cid, norm, question, feedback, session, item_id, group_id, passages in rows:
            slot = by_norm.setdefault(norm, len(by_norm))
            if slot == len(slots):
                slots.append(_Group(question))
            group = slots[slot]
            group.ids.append(cid)
            group.negative += feedback == -1
            group.positive += feedback == 1
            group.documents.update({p["doc_id"] for p in passages or () if p.get("anchor") == "ok"})
            group.multi_turn |= session in sessions
            group.item_id = group.item_id or item_id
            old_group[cid] = group_id
        roots = near_duplicates(signatures(list(by_norm))) if by_norm else []
        by_norm.clear()
        groups: dict[int, _Group] = {}
        for slot, root in enumerate(roots):  # a root is its group's first slot
            if root == slot:
                groups[root] = slots[slot]
                continue
            group, part = groups[root], slots[slot]
            group.ids += part.ids
            group.negative += part.negative
            group.positive += part.positive
            group.documents.update(part.documents)
            group.multi_turn |= part.multi_turn
            group.item_id = group.item_id or part.item_id
        ordered = sorted(groups.items(), key=lambda kv: min(kv[1].ids))
        topics = cluster([group.question for _, group in ordered])
        _write(conn, project, [g for _, g in ordered], topics.numbers, old_group)
        conn.execute(
            candidate_clusters.delete().where(candidate_clusters.c.project_id == project.id)
        )
        sizes: Counter[int] = Counter()
        groups_in: Counter[int] = Counter()
        for (_, group), number in zip(ordered, topics.numbers, strict=True):
            sizes[number] += len(group.ids)
            groups_in[number] += 1
        if groups_in:
            conn.execute(
                candidate_clusters.insert(),
                [
                    {
                        "project_id": project.id,
                        "number": number,
                        "label": label[:200],
                        "groups": groups_in[number],
                        "questions": sizes[number],
                        "centroid": [round(float(v), 5) for v in topics.centres[number]],
                    }
                    for number, label in enumerate(topics.labels)
                    if groups_in[number]
                ],
            )
        total = len(old_group)
        return Grouping(total, len(ordered), len(groups_in), total - len(ordered))


def _multi_turn_sessions(conn: sa.Connection, project: Project) -> set[str]:
    return set(
        conn.scalars(
            sa.select(candidates.c.session)
            .where(candidates.c.project_id == project.id, candidates.c.session != "")
            .group_by(candidates.c.session)
            .having(sa.func.count() > 1)
        )
    )


def _write(
    conn: sa.Connection,
    project: Project,
    ordered: list[_Group],
    numbers: list[int],
    old_group: dict[int, int | None],
) -> None:
    """Write the groups and move the candidates whose group changed, a batch at a time."""
    conn.execute(candidate_groups.delete().where(candidate_groups.c.project_id == project.id))
    update = (
        candidates.update()
        .where(candidates.c.id == sa.bindparam("cid"))
        .values(group_id=sa.bindparam("gid"))
    )
    rows: list[dict[str, Any]] = []
    moved: list[dict[str, int]] = []
    for group, number in zip(ordered, numbers, strict=True):
        first = min(group.ids)
        rows.append(
            {
                "project_id": project.id,
                "id": first,
                "question": group.question,
                "size": len(group.ids),
                "negative": group.negative,
                "positive": group.positive,
                "cluster": number,
                "documents": [d for d, _ in group.documents.most_common(20)],
                "multi_turn": group.multi_turn,
                "item_id": group.item_id,
            }
        )
        moved += [{"cid": c, "gid": first} for c in group.ids if old_group.get(c) != first]
        if len(rows) >= WRITE_BATCH:
            conn.execute(candidate_groups.insert(), rows)
            rows = []
        if len(moved) >= WRITE_BATCH:
            conn.execute(update, moved)
            moved = []
    if rows:
        conn.execute(candidate_groups.insert(), rows)
    if moved:
        conn.execute(update, moved)
