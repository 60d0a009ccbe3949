"""Coverage: which documents, sections and topics of real questions the gold reaches, and the
gaps as the next work.

Per document: the live items citing it (:mod:`assay.candidates.gold_reach`), its *sections*
(the chunks of the default chunking) reached by their relevant evidence, and how many
production questions cite it. Per topic cluster: its questions and groups, groups already
taken into items, and gold items whose question falls in it. The gaps are documents and
topics without gold, most-asked first: what the next sample will go for.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import sqlalchemy as sa

from assay.candidates.clustering import nearest
from assay.candidates.gold_reach import (
    document_names,
    gold_documents,
    gold_evidence,
    gold_questions,
    in_work_documents,
)
from assay.records import Project
from assay.store.candidates_schema import candidate_clusters, candidate_groups
from assay.store.db import reading
from assay.store.schema import chunkings, chunks, evidence
from assay.store.workspace import Workspace

GAPS_LISTED = 50


def _sections(conn: sa.Connection, project: Project) -> tuple[Counter[str], Counter[str]]:
    """Chunks of the default chunking per document, and those relevant gold evidence reaches."""
    default = conn.scalar(
        sa.select(chunkings.c.id).where(
            chunkings.c.project_id == project.id, chunkings.c.is_default.is_(True)
        )
    )
    total: Counter[str] = Counter()
    reached: Counter[str] = Counter()
    if default is None:
        return total, reached
    spans: dict[str, list[tuple[int, int]]] = {}
    placed = gold_evidence(project, evidence.c.doc_id, evidence.c.start, evidence.c.end)
    for doc_id, start, end in conn.execute(placed.where(evidence.c.start.is_not(None))):
        spans.setdefault(doc_id, []).append((start, end))
    for doc_id, start, end in conn.execute(
        sa.select(chunks.c.doc_id, chunks.c.start, chunks.c.end).where(
            chunks.c.chunking_id == default
        )
    ):
        total[doc_id] += 1
        if any(s < end and start < e for s, e in spans.get(doc_id, ())):
            reached[doc_id] += 1
    return total, reached


def coverage(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> dict[str, Any]:
    """The coverage view as JSON (see the module docstring)."""
    with reading(ws.engine, conn) as conn:
        names = document_names(conn, project)
        gold = gold_documents(conn, project)
        in_work = in_work_documents(conn, project)
        total, reached = _sections(conn, project)
        asked: Counter[str] = Counter()
        per_cluster: dict[int, dict[str, int]] = {}
        for size, docs, number, item_id in conn.execute(
            sa.select(
                candidate_groups.c.size,
                candidate_groups.c.documents,
                candidate_groups.c.cluster,
                candidate_groups.c.item_id,
            ).where(candidate_groups.c.project_id == project.id)
        ):
            for doc_id in docs or ():
                asked[doc_id] += size
            figures = per_cluster.setdefault(number, {"groups": 0, "taken": 0})
            figures["groups"] += 1
            figures["taken"] += item_id is not None
        clusters = list(
            conn.execute(
                sa.select(candidate_clusters)
                .where(candidate_clusters.c.project_id == project.id)
                .order_by(candidate_clusters.c.number)
            )
        )
        placed = Counter(nearest(gold_questions(conn, project), [c.centroid for c in clusters]))
    documents: list[dict[str, Any]] = [
        {
            "doc_id": doc_id,
            "name": name,
            "gold_items": gold.get(doc_id, 0),
            "in_work": doc_id in in_work,
            "sections": total.get(doc_id, 0),
            "sections_covered": reached.get(doc_id, 0),
            "questions": asked.get(doc_id, 0),
        }
        for doc_id, name in names.items()
    ]
    topic_rows = [
        {
            "cluster": c.number,
            "label": c.label,
            "questions": c.questions,
            "groups": c.groups,
            "taken": per_cluster.get(c.number, {}).get("taken", 0),
            "gold_items": placed.get(n, 0),
        }
        for n, c in enumerate(clusters)
    ]
    doc_gaps = sorted(
        (d for d in documents if not d["gold_items"]),
        key=lambda d: (-int(str(d["questions"])), str(d["name"])),
    )
    topic_gaps = sorted(
        (t for t in topic_rows if not t["gold_items"] and not t["taken"]),
        key=lambda t: -int(t["questions"]),
    )
    gaps = [
        {"kind": "document", "doc_id": d["doc_id"], "name": d["name"], "questions": d["questions"],
         "in_work": d["in_work"]}
        for d in doc_gaps
    ] + [
        {"kind": "cluster", "cluster": t["cluster"], "label": t["label"],
         "questions": t["questions"]}
        for t in topic_gaps
    ]  # fmt: skip
    gaps.sort(key=lambda g: -int(str(g["questions"])))
    covered = sum(1 for d in documents if d["gold_items"])
    return {
        "documents": documents,
        "clusters": topic_rows,
        "totals": {
            "documents": len(documents),
            "documents_covered": covered,
            "sections": sum(total.values()),
            "sections_covered": sum(reached.values()),
            "clusters": len(topic_rows),
            "clusters_covered": sum(1 for t in topic_rows if t["gold_items"] or t["taken"]),
        },
        "gaps": gaps[:GAPS_LISTED],
    }
