"""Which items a list holds beyond its filters: annotators' copies (overlap), and the items
an account may work on as its own."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.store.review_schema import assignments
from assay.store.schema import items

COPIES = ("exclude", "include", "only")
"""How a list treats annotators' copies of items (overlap): left out (gold reads), shown
too, or alone."""


IS_COPY = items.c.copy_of > ""
"""An annotator's copy (``copy_of`` names its original; ids are never empty). Written as a
range, which SQLite's copy_of index serves (``IS NOT NULL`` it answers with a scan). Counts
of gold items are all less these, where ``copy_of IS NULL`` would read every row."""


def copies_of_project(project_id: int) -> list[sa.ColumnElement[bool]]:
    """The project's copies, found by the copy_of index: ``project_id + 0`` keeps SQLite
    (which keeps no statistics) from walking the project's index and reading every row."""
    return [IS_COPY, (items.c.project_id + 0) == project_id]


def copies_condition(copies: str) -> list[sa.ColumnElement[bool]]:
    if copies not in COPIES:
        raise InvalidInput(f"unknown copies {copies!r}; choose one of: {', '.join(COPIES)}")
    if copies == "exclude":
        return [items.c.copy_of.is_(None)]
    return [IS_COPY] if copies == "only" else []


def assigned_to(project_id: int, account_id: int) -> sa.CompoundSelect[tuple[str]]:
    """The ids of the project's items assigned to the account: annotate tasks of its queue,
    and pool tasks it holds. Two selects, each served by its own index (project, task,
    account; holder, project, task): one ``account = X OR holder = X`` read every annotate
    task of the project."""
    annotate = [assignments.c.project_id == project_id, assignments.c.task == "annotate"]
    return sa.union_all(
        sa.select(assignments.c.item_id).where(*annotate, assignments.c.account_id == account_id),
        sa.select(assignments.c.item_id).where(
            assignments.c.holder_id == account_id, *annotate, assignments.c.account_id.is_(None)
        ),
    )


@dataclass(frozen=True, slots=True)
class Part:
    """One of the disjoint parts a list is read in: the conditions that find its items, and,
    for the items assigned to an account, their ids from the assignments alone (so that the
    part is counted there when no filter needs the items' rows), how many tasks name them
    and the project (so a page of them can walk the project's sort index instead,
    ``assigned_walk``)."""

    where: list[sa.ColumnElement[bool]]
    ids: sa.CompoundSelect[tuple[str]] | None = None
    tasks: int = 0
    project_id: int = 0


def own_parts(conn: sa.Connection, project_id: int, account_id: int) -> list[Part]:
    """The items the account may work on as its own, as disjoint parts: those assigned to it
    (when it has tasks in the project), and those it wrote that are not.

    The parts are counted and paged one by one (see ``item_lists``): the written part reads
    the (project, author) indexes alone, the assigned part (no project condition: its ids are
    the project's) looks up only the assigned items by id. One ``author = X OR id IN
    (tasks)`` made SQLite walk every item of the project (benchmarks/own_list.py)."""
    written: list[sa.ColumnElement[bool]] = [
        items.c.project_id == project_id,
        items.c.author_id == account_id,
    ]
    tasks = assigned_to(project_id, account_id)
    # how many: read from the two indexes alone (about 0.1 ms for 2,000 tasks)
    count = int(conn.scalar(sa.select(sa.func.count()).select_from(tasks.subquery())) or 0)
    if not count:
        return [Part(written)]
    assigned = Part([items.c.id.in_(tasks)], tasks, count, project_id)
    return [Part([*written, items.c.id.not_in(tasks)]), assigned]
