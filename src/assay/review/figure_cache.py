"""Dashboard and agreement figures computed once per change, not on every request.

A project's *change mark* is read in one round trip of index lookups: the newest event,
review and suggestion decision, the newest item change of the project, its documents (count
and newest change), its settings (the query types the figures are ordered by) and the day
(throughput and agreement end today). Every change a figure counts moves one of these: item
edits, status changes, deletions and imports write an event; verdicts a review; anchoring an
event. Figures are stored in ``figure_cache`` (migration 0025) with the mark read *before*
they were computed, so a change made while they are computed moves the mark past them and the
next request computes them again. The table is in the database, so every server process and
worker shares it, and a figure is computed once per change whichever process is asked.

What the mark does not follow: an account renamed since (its old name shows until the next
change). Each figure set carries when it was computed; the pages show it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from assay import __version__
from assay.errors import DatabaseBusy
from assay.records import Project, to_json
from assay.review.agreement import AgreementReport, Categorical, Measures, Row, agreement_report
from assay.review.dashboard import dashboard
from assay.store.db import as_utc, read_only, transaction, utcnow
from assay.store.review_schema import figure_cache, reviews
from assay.store.schema import documents, events, items
from assay.store.suggestion_schema import suggestions
from assay.store.workspace import Workspace

FIGURES = "1"
"""Bumped when a figure's shape changes, so figures stored by an older release are computed
again (with the release's version, part of every mark)."""


def change_mark(conn: sa.Connection, project: Project, day: str) -> str:
    """The project's change mark (see the module's doc): equal marks, equal figures."""

    def newest(column: Any, *where: Any) -> Any:
        return sa.select(sa.func.max(column)).where(*where).scalar_subquery()

    of_project = suggestions.c.project_id == project.id
    row = conn.execute(
        sa.select(
            newest(events.c.id),
            newest(reviews.c.id),
            newest(items.c.updated_at, items.c.project_id == project.id),
            sa.select(sa.func.count())
            .where(documents.c.project_id == project.id)
            .scalar_subquery(),
            newest(documents.c.updated_at, documents.c.project_id == project.id),
            newest(suggestions.c.id, of_project),
            sa.select(sa.func.count(suggestions.c.decided_at)).where(of_project).scalar_subquery(),
        )
    ).one()
    settings = json.dumps(project.settings, sort_keys=True, default=str)
    parts = [FIGURES, __version__, day, *(str(v) for v in row)]
    parts.append(hashlib.sha256(settings.encode()).hexdigest()[:16])
    return "|".join(parts)


def cached(
    ws: Workspace, project: Project, name: str, day: str, compute: Callable[[], Any]
) -> tuple[Any, datetime]:
    """The figures called ``name`` as JSON values and when they were computed: the stored
    ones while the project's change mark stands, else ``compute()`` stored anew."""
    with read_only(ws.engine, None) as conn:
        mark = change_mark(conn, project, day)
        row = conn.execute(
            sa.select(figure_cache.c.mark, figure_cache.c.value, figure_cache.c.computed_at).where(
                figure_cache.c.project_id == project.id, figure_cache.c.name == name
            )
        ).first()
    if row is not None and row.mark == mark:
        return row.value, as_utc(row.computed_at)
    value, at = to_json(compute()), utcnow()
    values = {"project_id": project.id, "name": name, "mark": mark, "value": value}
    try:
        with transaction(ws.engine, None) as conn:
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            statement = insert(figure_cache).values(**values, computed_at=at)
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[figure_cache.c.project_id, figure_cache.c.name],
                    set_={"mark": mark, "value": value, "computed_at": at},
                )
            )
    except DatabaseBusy:  # SQLite's write lock held by a long import: serve, store next time
        pass
    return value, at


def cached_dashboard(
    ws: Workspace,
    project: Project,
    *,
    days: int = 28,
    now: datetime | None = None,
    reviewed_only: bool = False,
) -> dict[str, Any]:
    """:func:`assay.review.dashboard.dashboard` as JSON values, computed once per change;
    ``generated_at`` is when the figures were computed. The blind view (``reviewed_only``:
    figures from accepted copies only) is cached apart from the full one."""
    day = (now or utcnow()).date().isoformat()
    value, at = cached(
        ws,
        project,
        f"dashboard:{days}:{'reviewed' if reviewed_only else 'all'}",
        day,
        lambda: dashboard(ws, project, days=days, now=now, reviewed_only=reviewed_only),
    )
    return {**value, "generated_at": at.isoformat()}


def cached_agreement(
    ws: Workspace, project: Project, *, chunking: str | None = None, reviewed_only: bool = False
) -> tuple[AgreementReport, datetime]:
    """:func:`assay.review.agreement.agreement_report`, computed once per change, and when;
    the blind view (``reviewed_only``) is cached apart from the full one."""
    day = utcnow().date().isoformat()
    value, at = cached(
        ws,
        project,
        f"agreement:{chunking or ''}:{'reviewed' if reviewed_only else 'all'}",
        day,
        lambda: agreement_report(ws, project, chunking=chunking, reviewed_only=reviewed_only),
    )
    return report_from_json(value), at


def _measures(data: dict[str, Any]) -> Measures:
    categories = {k: Categorical(**data[k]) for k in ("query_type", "unanswerable")}
    return Measures(**{**data, **categories})


def report_from_json(data: dict[str, Any]) -> AgreementReport:
    """An agreement report from its JSON (as stored)."""

    def rows(key: str) -> list[Row]:
        return [Row(r["name"], _measures(r["measures"])) for r in data[key]]

    return AgreementReport(
        **{
            **data,
            "overall": _measures(data["overall"]),
            "pairs": rows("pairs"),
            "gold": rows("gold"),
            "query_types": rows("query_types"),
        }
    )
