"""What the gold already reaches: documents cited by gold evidence, and the questions of items.

*Gold* here is every item that is not an annotator's copy and not rejected (drafts included:
work already under way is not asked for twice); a document is covered when relevant evidence
of such an item cites it. Documents of candidate groups already taken into items count as
*in work*, so a second sample does not send the team back to them first.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.records import Project
from assay.store.candidates_schema import candidate_groups
from assay.store.schema import documents, evidence, items, turns

LIVE = ("draft", "submitted", "accepted")


def document_names(conn: sa.Connection, project: Project) -> dict[str, str]:
    return dict(
        conn.execute(
            sa.select(documents.c.id, documents.c.name)
            .where(documents.c.project_id == project.id)
            .order_by(documents.c.name)
        ).all()
    )


def gold_evidence(project: Project, *columns: Any) -> sa.Select[Any]:
    """``columns`` of the relevant evidence of the project's live items (placed evidence)."""
    return (
        sa.select(*columns)
        .select_from(
            evidence.join(turns, turns.c.id == evidence.c.turn_id).join(
                items, items.c.id == turns.c.item_id
            )
        )
        .where(
            items.c.project_id == project.id,
            items.c.copy_of.is_(None),
            items.c.status.in_(LIVE),
            evidence.c.label == "relevant",
            evidence.c.doc_id.is_not(None),
        )
    )


def gold_documents(conn: sa.Connection, project: Project) -> dict[str, int]:
    """Document id → how many live items cite it in relevant evidence."""
    rows = conn.execute(
        gold_evidence(project, evidence.c.doc_id, sa.func.count(sa.distinct(items.c.id))).group_by(
            evidence.c.doc_id
        )
    ).all()
    return {doc_id: int(count) for doc_id, count in rows}


def in_work_documents(conn: sa.Connection, project: Project) -> set[str]:
    """Documents the passages of groups already taken into items cite."""
    found: set[str] = set()
    for docs in conn.scalars(
        sa.select(candidate_groups.c.documents).where(
            candidate_groups.c.project_id == project.id,
            candidate_groups.c.item_id.is_not(None),
        )
    ):
        found.update(docs or ())
    return found


def gold_questions(conn: sa.Connection, project: Project) -> list[str]:
    """The first question of every live item (placed in topic clusters by coverage)."""
    return list(
        conn.scalars(
            sa.select(items.c.query).where(
                items.c.project_id == project.id,
                items.c.copy_of.is_(None),
                items.c.status.in_(LIVE),
                items.c.query != "",
            )
        )
    )
