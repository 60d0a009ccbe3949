"""Finding one experiment of a project by id or by name (an id wins over a name of digits)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.errors import NotFound
from assay.people.actors import AUTHOR_NAME
from assay.records import Project
from assay.store.schema import accounts, experiments


def _where(project: Project, ref: int | str) -> Any:
    # an id is up to 9 ASCII digits ("³".isdigit() is true too; longer ones overflow the column)
    digits = isinstance(ref, str) and ref.isascii() and ref.isdigit() and len(ref) <= 9
    if (isinstance(ref, int) and 0 <= ref < 2**31) or digits:
        by_id = experiments.c.id == int(ref)
        by_name = experiments.c.name == str(ref)
        return sa.and_(experiments.c.project_id == project.id, sa.or_(by_id, by_name))
    return sa.and_(experiments.c.project_id == project.id, experiments.c.name == str(ref))


def select_experiments() -> sa.Select[Any]:
    """Experiments with their author's shown name (``author``)."""
    return sa.select(experiments, AUTHOR_NAME.label("author")).join(
        accounts, accounts.c.id == experiments.c.author_id
    )


def find_experiment(conn: sa.Connection, project: Project, ref: int | str) -> Any:
    rows = conn.execute(select_experiments().where(_where(project, ref))).all()
    if not rows:
        raise NotFound(
            f"project {project.name!r} has no experiment {ref!r}",
            key="raised.no_experiment",
            project=project.name,
            ref=ref,
        )
    # an id wins over a name that happens to be digits
    return next((r for r in rows if str(r.id) == str(ref)), rows[0])
