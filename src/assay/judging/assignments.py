"""Which topics a lead gave to which judges, per mode.

An assignment names a topic, a mode and a judge: the judge's overview lists their topics first
and marks them, and ``assay judge progress --judge`` follows how far they got. Several judges
may share a topic (agreement needs them to); judges may still judge topics nobody gave them.
Judges are checked as the team workflow's assignees are
(:func:`review.assignments.check_assignees`): in team mode members who may annotate, in
personal mode any account.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.judging.judgments import MODES
from assay.people.actors import AUTHOR_NAME
from assay.records import Project
from assay.review.assignments import check_assignees
from assay.store.db import reading, transaction, utcnow
from assay.store.judging_schema import judging_assignments, judging_topics
from assay.store.schema import accounts
from assay.store.workspace import Workspace


@dataclass(frozen=True, slots=True)
class JudgingAssignment:
    topic_id: str
    mode: str
    judge_id: int
    judge: str
    """The judge's display name (or user name)."""


def _check(conn: sa.Connection, project: Project, mode: str, topic_ids: Sequence[str]) -> None:
    if mode not in MODES:
        raise InvalidInput(f"unknown judging mode {mode!r}; choose one of: {', '.join(MODES)}")
    if not topic_ids:
        raise InvalidInput("name at least one topic")
    known = set(
        conn.scalars(
            sa.select(judging_topics.c.topic_id).where(
                judging_topics.c.project_id == project.id,
                judging_topics.c.topic_id.in_(set(topic_ids)),
            )
        )
    )
    unknown = [t for t in dict.fromkeys(topic_ids) if t not in known]
    if unknown:
        raise InvalidInput(
            f"project {project.name!r} has no judging topic {', '.join(map(repr, unknown))}"
        )


def assign_topics(
    ws: Workspace,
    project: Project,
    mode: str,
    topic_ids: Sequence[str],
    judges: Sequence[str],
    *,
    assigned_by: int,
) -> int:
    """Give each topic in ``mode`` to each judge (user names); returns how many assignments
    are new (one already made is left as it is)."""
    with transaction(ws.engine, None) as conn:
        _check(conn, project, mode, topic_ids)
        checked = check_assignees(ws, project, judges, conn=conn)
        if not checked:
            raise InvalidInput("name at least one judge")
        held = {
            (row.topic_id, row.judge_id)
            for row in conn.execute(
                sa.select(judging_assignments.c.topic_id, judging_assignments.c.judge_id).where(
                    judging_assignments.c.project_id == project.id,
                    judging_assignments.c.mode == mode,
                )
            )
        }
        fresh = [
            {
                "project_id": project.id,
                "topic_id": topic_id,
                "mode": mode,
                "judge_id": judge_id,
                "assigned_by": assigned_by,
                "created_at": utcnow(),
            }
            for topic_id in dict.fromkeys(topic_ids)
            for _, judge_id in checked
            if (topic_id, judge_id) not in held
        ]
        if fresh:
            conn.execute(judging_assignments.insert(), fresh)
    return len(fresh)


def unassign_topics(
    ws: Workspace, project: Project, mode: str, topic_ids: Sequence[str], judges: Sequence[str]
) -> int:
    """Take topics back from judges; their judgments stay. Returns how many were removed."""
    with transaction(ws.engine, None) as conn:
        _check(conn, project, mode, topic_ids)
        rows = conn.execute(
            sa.select(accounts.c.username, accounts.c.id).where(
                accounts.c.username.in_(set(judges))
            )
        )
        found = {row.username: row.id for row in rows}
        unknown = [j for j in dict.fromkeys(judges) if j not in found]
        if unknown:
            raise InvalidInput(f"no account named {', '.join(map(repr, unknown))}")
        ids = list(found.values())
        done = conn.execute(
            judging_assignments.delete().where(
                judging_assignments.c.project_id == project.id,
                judging_assignments.c.mode == mode,
                judging_assignments.c.topic_id.in_(set(topic_ids)),
                judging_assignments.c.judge_id.in_(ids),
            )
        )
    return int(done.rowcount or 0)


def list_assignments(
    ws: Workspace,
    project: Project,
    *,
    mode: str | None = None,
    judge_id: int | None = None,
    conn: sa.Connection | None = None,
) -> list[JudgingAssignment]:
    """The project's assignments, by mode, topic and judge name."""
    query = (
        sa.select(
            judging_assignments.c.topic_id,
            judging_assignments.c.mode,
            judging_assignments.c.judge_id,
            AUTHOR_NAME.label("judge"),
        )
        .join(accounts, accounts.c.id == judging_assignments.c.judge_id)
        .where(judging_assignments.c.project_id == project.id)
        .order_by(judging_assignments.c.mode, judging_assignments.c.topic_id, "judge")
    )
    if mode is not None:
        query = query.where(judging_assignments.c.mode == mode)
    if judge_id is not None:
        query = query.where(judging_assignments.c.judge_id == judge_id)
    with reading(ws.engine, conn) as reader:
        return [JudgingAssignment(*row) for row in reader.execute(query)]
