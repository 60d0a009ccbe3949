"""Taking a sample into the gold work: each picked group becomes a draft item, assigned.

A group becomes a ``qa`` item with its first candidate's question; a candidate from a session
of several turns becomes a ``conversation`` with the session's turns up to it. Each turn keeps
the production answer as ``original_answer`` (the system's answer, to compare the reference
answer with; the reference answer is left for the annotator) and the retrieved passages as
``retrieved`` contexts, anchored ones with their offsets. The item's origin is ``production``,
its ``extra.candidate`` names the group, how often it was asked and why it was picked. All
candidates of the group point to the item, so the group leaves the open list. The items are
then assigned (:func:`assay.review.assignments.assign`) in the same transaction: on any
refusal nothing is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from assay.candidates.sampling import Pick
from assay.errors import Conflict, InvalidInput
from assay.gold.items import create_item
from assay.records import Context, Item, Project, Turn
from assay.review.assignments import Assigned, ItemFilter, assign
from assay.store.candidates_schema import candidate_groups, candidates
from assay.store.db import transaction
from assay.store.workspace import Workspace

ORIGIN = "production"


@dataclass
class Taken:
    items: list[str]
    assigned: Assigned

    def as_json(self) -> dict[str, Any]:
        return {"item_ids": self.items, **self.assigned.as_json()}


def _context(passage: dict[str, Any]) -> Context:
    found: Context = {"text": str(passage.get("text") or "")}
    if passage.get("anchor") == "ok":
        found["doc_id"] = passage["doc_id"]
        found["start"] = passage["start"]
        found["end"] = passage["end"]
    elif passage.get("source"):
        found["title"] = str(passage["source"])
    if passage.get("score") is not None:
        found["score"] = float(passage["score"])
    if passage.get("rank") is not None:
        found["rank"] = int(passage["rank"])
    return found


def _turn(row: Any) -> Turn:
    return Turn(
        query=row.question,
        original_answer=row.answer,
        generation={"source": ORIGIN} if row.answer else {},
        retrieved=[_context(p) for p in row.passages or ()],
    )


def _item(conn: sa.Connection, project: Project, pick: Pick) -> Item:
    first = conn.execute(
        sa.select(candidates).where(
            candidates.c.project_id == project.id, candidates.c.id == pick.group_id
        )
    ).first()
    if first is None:
        raise InvalidInput(f"no candidate group {pick.group_id} in project {project.name!r}")
    rows = [first]
    if first.session:
        rows = list(
            conn.execute(
                sa.select(candidates)
                .where(
                    candidates.c.project_id == project.id,
                    candidates.c.session == first.session,
                    candidates.c.turn <= first.turn,
                )
                .order_by(candidates.c.turn, candidates.c.id)
            )
        ) or [first]
    return Item(
        kind="conversation" if len(rows) > 1 else "qa",
        origin=ORIGIN,
        notes="; ".join(r["text"] for r in pick.reasons),
        extra={
            "candidate": {
                "group": pick.group_id,
                "asked": pick.size,
                "negative": pick.negative,
                "cluster": pick.cluster_label,
                "reasons": pick.reasons,
            }
        },
        turns=[_turn(r) for r in rows],
    )


def take(
    ws: Workspace,
    project: Project,
    picks: Sequence[Pick],
    annotators: Sequence[str],
    *,
    assigned_by: int,
    overlap: int = 1,
    method: str = "round-robin",
    conn: sa.Connection | None = None,
) -> Taken:
    """Make the picks' items and assign them (see the module docstring)."""
    if not picks:
        raise InvalidInput("the sample is empty: there is nothing to take")
    with transaction(ws.engine, conn) as conn:
        made: list[str] = []
        for pick in picks:
            taken = conn.scalar(
                sa.select(candidate_groups.c.item_id).where(
                    candidate_groups.c.project_id == project.id,
                    candidate_groups.c.id == pick.group_id,
                )
            )
            if taken:
                raise Conflict(
                    f"candidate group {pick.group_id} was taken already (item {taken}); "
                    "look at the sample again"
                )
            item = create_item(ws, project, _item(conn, project, pick), author=assigned_by,
                               conn=conn)  # fmt: skip
            made.append(item.id)
            conn.execute(
                candidates.update()
                .where(
                    candidates.c.project_id == project.id,
                    candidates.c.group_id == pick.group_id,
                )
                .values(item_id=item.id)
            )
            conn.execute(
                candidate_groups.update()
                .where(
                    candidate_groups.c.project_id == project.id,
                    candidate_groups.c.id == pick.group_id,
                )
                .values(item_id=item.id)
            )
        assigned = assign(
            ws, project, ItemFilter(ids=made), annotators, assigned_by=assigned_by,
            overlap=overlap, method=method, conn=conn,
        )  # fmt: skip
    return Taken(made, assigned)
