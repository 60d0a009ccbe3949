"""Reading candidates back: imports with their reports, groups (most asked first), clusters,
and the candidates of one group."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.records import Project
from assay.store.candidates_schema import (
    candidate_clusters,
    candidate_groups,
    candidate_imports,
    candidates,
)
from assay.store.db import reading
from assay.store.workspace import Workspace

PAGE = 50


def list_imports(ws: Workspace, project: Project) -> list[dict[str, Any]]:
    with reading(ws.engine, None) as conn:
        rows = conn.execute(
            sa.select(candidate_imports)
            .where(candidate_imports.c.project_id == project.id)
            .order_by(candidate_imports.c.id.desc())
        ).all()
    return [
        {
            "id": r.id,
            "name": r.name,
            "shape": r.shape,
            "lines": r.lines,
            "stored": r.stored,
            "skipped": r.skipped,
            "created_at": r.created_at.isoformat(),
            "report": r.report,
        }
        for r in rows
    ]


def list_groups(
    ws: Workspace,
    project: Project,
    *,
    cluster: int | None = None,
    open_only: bool = False,
    limit: int = PAGE,
    offset: int = 0,
) -> dict[str, Any]:
    """Groups, most asked first: ``{"total", "groups": [...]}``."""
    where = [candidate_groups.c.project_id == project.id]
    if cluster is not None:
        where.append(candidate_groups.c.cluster == cluster)
    if open_only:
        where.append(candidate_groups.c.item_id.is_(None))
    with reading(ws.engine, None) as conn:
        total = conn.scalar(sa.select(sa.func.count()).select_from(candidate_groups).where(*where))
        rows = conn.execute(
            sa.select(candidate_groups)
            .where(*where)
            .order_by(candidate_groups.c.size.desc(), candidate_groups.c.id)
            .limit(limit)
            .offset(offset)
        ).all()
    return {
        "total": int(total or 0),
        "groups": [
            {
                "id": r.id,
                "question": r.question,
                "asked": r.size,
                "negative": r.negative,
                "positive": r.positive,
                "cluster": r.cluster,
                "documents": list(r.documents or ()),
                "multi_turn": r.multi_turn,
                "item_id": r.item_id,
            }
            for r in rows
        ],
    }


def list_clusters(ws: Workspace, project: Project) -> list[dict[str, Any]]:
    with reading(ws.engine, None) as conn:
        rows = conn.execute(
            sa.select(
                candidate_clusters.c.number,
                candidate_clusters.c.label,
                candidate_clusters.c.groups,
                candidate_clusters.c.questions,
            )
            .where(candidate_clusters.c.project_id == project.id)
            .order_by(candidate_clusters.c.questions.desc(), candidate_clusters.c.number)
        ).all()
    return [
        {"cluster": r.number, "label": r.label, "groups": r.groups, "questions": r.questions}
        for r in rows
    ]


def list_candidates(
    ws: Workspace,
    project: Project,
    *,
    group: int | None = None,
    limit: int = PAGE,
    offset: int = 0,
) -> dict[str, Any]:
    """Candidates in import order (one group's when ``group`` is given)."""
    where = [candidates.c.project_id == project.id]
    if group is not None:
        where.append(candidates.c.group_id == group)
    with reading(ws.engine, None) as conn:
        total = conn.scalar(sa.select(sa.func.count()).select_from(candidates).where(*where))
        rows = conn.execute(
            sa.select(candidates)
            .where(*where)
            .order_by(candidates.c.id)
            .limit(limit)
            .offset(offset)
        ).all()
    return {
        "total": int(total or 0),
        "candidates": [
            {
                "id": r.id,
                "import_id": r.import_id,
                "line": r.line,
                "session": r.session,
                "turn": r.turn,
                "question": r.question,
                "answer": r.answer,
                "passages": r.passages,
                "feedback": r.feedback,
                "asked_at": r.asked_at.isoformat() if r.asked_at else None,
                "group_id": r.group_id,
                "item_id": r.item_id,
            }
            for r in rows
        ],
    }
