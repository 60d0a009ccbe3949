"""Work done, from the items' history (``events``): submissions per annotator and day, and
the time an item takes. Figures of the project dashboard (:mod:`assay.review.dashboard`).

Both look at the items changed in the period only: a submit changes its item, so every
submit of the period is an event of one of those, found through the indexes (project,
updated_at) of items and (project, item, at) of events. A project's events outgrow its
items many times over (each save keeps the item before and after), and reading them all
took most of a second at 100k items. Items deleted since are left out: their events stay,
but they are no longer found through the items.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.records import Project
from assay.store.schema import accounts, events, items


def utc_day(conn: sa.Connection, column: Any) -> Any:
    """The UTC calendar day of a timestamp column, as ``YYYY-MM-DD`` text."""
    if conn.dialect.name == "postgresql":
        return sa.func.to_char(sa.func.timezone("UTC", column), "YYYY-MM-DD")
    return sa.func.substr(column, 1, 10)  # SQLite keeps UTC as 'YYYY-MM-DD HH:MM:SS...'


def _seconds_between(conn: sa.Connection, start: Any, end: Any) -> Any:
    if conn.dialect.name == "postgresql":
        return sa.extract("epoch", end - start)
    return (sa.func.julianday(end) - sa.func.julianday(start)) * 86400.0


def _submitted() -> Any:
    """Events that submitted an item for review."""
    return sa.and_(events.c.action == "status", events.c.after["status"].as_string() == "submitted")


def who() -> list[Any]:
    name = sa.func.coalesce(sa.func.nullif(accounts.c.display_name, ""), accounts.c.username)
    return [accounts.c.username, name.label("name")]


def _changed_since(project: Project, since: datetime) -> Any:
    """The ids of the items changed since ``since``. A submit changes its item, so every
    submit since then is an event of one of these: found through the indexes (project,
    updated_at) and (project, item, at) instead of reading the project's whole history
    (a project's events outgrow its items many times over)."""
    return sa.select(items.c.id).where(
        items.c.project_id == project.id, items.c.updated_at >= since
    )


def _firstutc_day(today: date, days: int) -> tuple[date, datetime]:
    first = today - timedelta(days=days - 1)
    return first, datetime(first.year, first.month, first.day)


def throughput(conn: sa.Connection, project: Project, today: date, days: int) -> dict[str, Any]:
    """Submissions per annotator per UTC day over the ``days`` days up to ``today``."""
    first, since = _firstutc_day(today, days)
    day = utc_day(conn, events.c.at).label("day")
    per_day = (
        sa.select(events.c.actor_id, day, sa.func.count().label("n"))
        .where(
            events.c.project_id == project.id,
            events.c.item_id.in_(_changed_since(project, since)),
            events.c.at >= since,
            _submitted(),
        )
        .group_by(events.c.actor_id, day)
        .subquery()
    )
    rows: Sequence[Any] = conn.execute(
        sa.select(*who(), per_day.c.day, per_day.c.n).join_from(
            per_day, accounts, accounts.c.id == per_day.c.actor_id
        )
    ).all()
    labels = [(first + timedelta(days=i)).isoformat() for i in range(days)]
    position = {label: i for i, label in enumerate(labels)}
    people: dict[str, dict[str, Any]] = {}
    for username, name, day_text, n in rows:
        if day_text not in position:
            continue  # a timestamp stored ahead of the clock
        person = people.setdefault(
            username, {"username": username, "name": name, "per_day": [0] * days}
        )
        person["per_day"][position[day_text]] += n
    annotators = sorted(people.values(), key=lambda p: (-sum(p["per_day"]), p["username"]))
    for person in annotators:
        person["total"] = sum(person["per_day"])
    return {
        "days": labels,
        "annotators": annotators,
        "per_day": [sum(p["per_day"][i] for p in annotators) for i in range(days)],
    }


def time_per_item(
    conn: sa.Connection, project: Project, today: date, days: int
) -> list[dict[str, Any]]:
    """Per annotator: the items they first submitted in the ``days`` days up to ``today``
    and the median seconds from their first change of each to that submit (see the
    module's docstring)."""
    _first, since = _firstutc_day(today, days)
    first_submit = sa.func.min(events.c.at)
    firsts = (  # each annotator's first submit of each item, when it falls in the window
        sa.select(events.c.item_id, events.c.actor_id, first_submit.label("at"))
        .where(
            events.c.project_id == project.id,
            events.c.item_id.in_(_changed_since(project, since)),
            _submitted(),
        )
        .group_by(events.c.item_id, events.c.actor_id)
        .having(first_submit >= since)
        .subquery()
    )
    change = events.alias("change")
    started = (  # their first change of it before then, through the index (project, item, at)
        sa.select(sa.func.min(change.c.at))
        .where(
            change.c.project_id == project.id,
            change.c.item_id == firsts.c.item_id,
            change.c.actor_id == firsts.c.actor_id,
            change.c.action != "status",
            change.c.at <= firsts.c.at,
        )
        .scalar_subquery()
    )
    # named once (no second use for the database to evaluate again): no change, no time
    seconds = _seconds_between(conn, sa.func.coalesce(started, firsts.c.at), firsts.c.at)
    spans = sa.select(firsts.c.actor_id, seconds.label("seconds")).subquery()
    ranked = sa.select(
        spans.c.actor_id,
        spans.c.seconds,
        sa.func.row_number()
        .over(partition_by=spans.c.actor_id, order_by=spans.c.seconds)
        .label("rank"),
        sa.func.count().over(partition_by=spans.c.actor_id).label("n"),
    ).subquery()
    middle = sa.or_(ranked.c.rank == (ranked.c.n + 1) // 2, ranked.c.rank == (ranked.c.n + 2) // 2)
    rows: Sequence[Any] = conn.execute(
        sa.select(*who(), ranked.c.n, sa.func.avg(ranked.c.seconds))
        .join_from(ranked, accounts, accounts.c.id == ranked.c.actor_id)
        .where(middle)
        .group_by(accounts.c.username, accounts.c.display_name, ranked.c.n)
        .order_by(accounts.c.username)
    ).all()
    return [
        {"username": u, "name": name, "items": n, "median_seconds": round(float(m), 1)}
        for u, name, n, m in rows
    ]
