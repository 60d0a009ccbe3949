"""A project's dashboard: how far the work is and how it goes, in a few aggregate queries.

Every figure is counted by the database (GROUP BY, window functions); nothing loads the
items themselves, so it stays quick at 100k items. What each figure means:

- status funnel, items per query type, LLM drafts and coverage count gold items only:
  annotators' copies under overlap (``copy_of`` set) are counted apart (``funnel.copies``);
- throughput: submissions (``status`` events to ``submitted``) per annotator and UTC day,
  copies included (submitting a copy is work done), in the last ``days`` days; items deleted
  since are left out (see below);
- time per item: for each item an annotator first submitted in those days, the time from
  their first recorded change of it (creating it or their first save) to that submit;
  reading before the first save is not counted, and submitting with no change of one's own
  counts as no time. The median per annotator;
- agreement per ISO week: on items done by several annotators, the share whose copies (each
  submitted or accepted) name the same query type, by the week the last one changed; and
  from reviews, the share of verdicts that accept the work unchanged;
- LLM drafts: items of origin ``llm-*`` or ``synthesized`` by status (open: draft or
  submitted) and query type; evidence of origin ``llm-suggestion`` by its item's status;
- LLM suggestions: relevance suggestions accepted and rejected per suggested label and per
  model, rewrites per model (see :func:`assay.gold.suggestions.acceptance_rates`).

Throughput and time per item come from the items' history (``events``) and look at the
items changed in the period only: a submit changes its item, so every submit of the period is
an event of one of those, found through the indexes (project, updated_at) of items and
(project, item, at) of events. A project's events outgrow its items many times over (each
save keeps the item before and after), and reading them all took most of a second at 100k
items. Items deleted since are left out: their events stay, but they are no longer found
through the items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.gold.suggestions import acceptance_rates as suggestion_rates
from assay.gold.taxonomy import query_types
from assay.records import STATUSES, Project
from assay.review.agreement import reviewed_originals
from assay.store.db import reading, utcnow
from assay.store.review_schema import reviews
from assay.store.schema import accounts, documents, events, evidence, items, turns
from assay.store.workspace import Workspace

MAX_DAYS = 366
"""The longest throughput window a dashboard shows."""


WEEKS = 12
"""How many ISO weeks (up to the current one) the agreement figure spans."""


UNCOVERED_LISTED = 100
"""Documents with no questions listed by name (all of them are counted)."""


LLM_EVIDENCE = "llm-suggestion"


def dashboard(
    ws: Workspace,
    project: Project,
    *,
    days: int = 28,
    now: datetime | None = None,
    reviewed_only: bool = False,
    conn: sa.Connection | None = None,
) -> dict[str, Any]:
    """All figures of ``project``'s dashboard, as plain JSON-ready values; ``days`` is the
    window of throughput and time per item, ending today (UTC; ``now`` for tests).
    ``reviewed_only`` (blind mode, for annotators): agreement counts only the copies of
    accepted items, never another annotator's unreviewed copy."""
    if not 1 <= days <= MAX_DAYS:
        raise InvalidInput(f"days must be between 1 and {MAX_DAYS}, not {days}")
    today = (now or utcnow()).date()
    with reading(ws.engine, conn) as conn:
        counts = _item_counts(conn, project)
        return {
            "project": project.name,
            "generated_at": now or utcnow(),
            "funnel": _funnel(counts, _copies(conn, project)),
            "query_types": _by_query_type(project, counts),
            "coverage": _coverage(conn, project),
            "throughput": throughput(conn, project, today, days),
            "time_per_item": time_per_item(conn, project, today, days),
            "agreement": _agreement(conn, project, today, reviewed_only),
            "llm_drafts": _llm_drafts(conn, project, counts),
            "suggestions": suggestion_rates(ws, project, conn=conn),
        }


# --- items: one GROUP BY feeds the funnel, the query types and the LLM drafts ---------------


def _of_project(conn: sa.Connection, table: sa.Table, project: Project) -> Any:
    """``table``'s rows of ``project``. On SQLite the test is written so that the table is
    read in its own order, not through an index on ``project_id``: found that way, the rows
    come in random order, a page read each, and with a project that is most of the table
    that is several times slower (gold counts at 100k items: 350 ms against 110 ms; copies,
    20 ms against 230 ms; see benchmarks/dashboard.py)."""
    column = table.c.project_id
    return (column + 0 if conn.dialect.name == "sqlite" else column) == project.id


CountKey = tuple[str, str, bool]
"""(query_type, status, is an LLM draft) of gold items."""


def _item_counts(conn: sa.Connection, project: Project) -> dict[CountKey, int]:
    is_llm = sa.or_(items.c.origin.like("llm%"), items.c.origin == "synthesized")
    llm_col = sa.case((is_llm, 1), else_=0).label("llm")
    rows = conn.execute(
        sa.select(items.c.query_type, items.c.status, llm_col, sa.func.count())
        .where(_of_project(conn, items, project), items.c.copy_of.is_(None))
        .group_by(items.c.query_type, items.c.status, llm_col)
    ).all()
    return {(qt, status, bool(llm)): n for qt, status, llm, n in rows}


def _copies(conn: sa.Connection, project: Project) -> int:
    """Annotators' copies under overlap: counted apart, they are not gold."""
    where = (_of_project(conn, items, project), items.c.copy_of.is_not(None))
    return conn.scalar(sa.select(sa.func.count()).where(*where)) or 0


def _funnel(counts: Mapping[CountKey, int], copies: int) -> dict[str, int]:
    """Gold items by status and the stages they reached: created → submitted (for review
    or beyond) → reviewed (accepted or rejected)."""
    s = dict.fromkeys(STATUSES, 0)
    for (_qt, status, _llm), n in counts.items():
        s[status] = s.get(status, 0) + n
    return {
        **s,
        "total": sum(s.values()),
        "reached_submitted": s["submitted"] + s["accepted"] + s["rejected"],
        "reached_review": s["accepted"] + s["rejected"],
        "copies": copies,
    }


def _type_order(project: Project) -> dict[str, int]:
    return {q.id: i for i, q in enumerate(query_types(project))}


def _by_query_type(project: Project, counts: Mapping[CountKey, int]) -> list[dict[str, Any]]:
    """Gold items per query type (the first turn's), by status; the project's taxonomy
    order first, then types it no longer lists, then items with none (``""``)."""
    table: dict[str, dict[str, int]] = {}
    for (qt, status, _llm), n in counts.items():
        row = table.setdefault(qt, dict.fromkeys(STATUSES, 0))
        row[status] = row.get(status, 0) + n
    return [
        {"query_type": qt, "total": sum(row.values()), "by_status": row}
        for qt, row in sorted(table.items(), key=_type_sort(project))
    ]


def _type_sort(project: Project) -> Any:
    order = _type_order(project)
    return lambda entry: (entry[0] == "", order.get(entry[0], len(order)), entry[0])


def _llm_drafts(
    conn: sa.Connection, project: Project, counts: Mapping[CountKey, int]
) -> dict[str, Any]:
    """LLM-drafted gold items: accepted, rejected, still open (draft or submitted), overall
    and per query type; and LLM-suggested evidence by the status of its item."""
    table: dict[str, dict[str, int]] = {}
    for (qt, status, llm), n in counts.items():
        if llm:
            row = table.setdefault(qt, {"accepted": 0, "rejected": 0, "open": 0})
            row[status if status in ("accepted", "rejected") else "open"] += n
    per_type: list[dict[str, Any]] = [
        {"query_type": qt, **row, "total": sum(row.values())}
        for qt, row in sorted(table.items(), key=_type_sort(project))
    ]
    overall = {key: sum(r[key] for r in per_type) for key in ("accepted", "rejected", "open")}
    per_turn = (  # evidence has no index on origin: one pass over it, then to the items
        sa.select(evidence.c.turn_id, sa.func.count().label("n"))
        .where(evidence.c.origin == LLM_EVIDENCE)
        .group_by(evidence.c.turn_id)
        .subquery()
    )
    suggested = conn.execute(
        sa.select(items.c.status, sa.func.sum(per_turn.c.n))
        .select_from(per_turn.join(turns, turns.c.id == per_turn.c.turn_id))
        .join(items, items.c.id == turns.c.item_id)
        .where(items.c.project_id == project.id, items.c.copy_of.is_(None))
        .group_by(items.c.status)
    ).all()
    evidence_counts = {"accepted": 0, "rejected": 0, "open": 0}
    for status, n in suggested:
        evidence_counts[status if status in ("accepted", "rejected") else "open"] += int(n)
    return {
        "items": {**overall, "total": sum(overall.values())},
        "by_query_type": per_type,
        "evidence": {**evidence_counts, "total": sum(evidence_counts.values())},
    }


# --- documents -------------------------------------------------------------------------------


def _coverage(conn: sa.Connection, project: Project) -> dict[str, Any]:
    """Documents no gold item cites as evidence: how many, and the first by name."""
    cited = (
        sa.select(sa.literal(1))
        .select_from(evidence.join(turns, turns.c.id == evidence.c.turn_id))
        .join(items, items.c.id == turns.c.item_id)
        .where(evidence.c.doc_id == documents.c.id, items.c.copy_of.is_(None))
        .exists()
    )
    mine = documents.c.project_id == project.id
    total = conn.scalar(sa.select(sa.func.count()).where(mine)) or 0
    listed = conn.execute(  # the count of them all comes with the first hundred
        sa.select(documents.c.id, documents.c.name, sa.func.count().over())
        .where(mine, ~cited)
        .order_by(documents.c.name)
        .limit(UNCOVERED_LISTED)
    ).all()
    uncovered = listed[0][2] if listed else 0
    return {
        "documents": total,
        "covered": total - uncovered,
        "uncovered": uncovered,
        "uncovered_documents": [{"doc_id": i, "name": name} for i, name, _n in listed],
    }


# --- agreement -------------------------------------------------------------------------------


def _week(day_text: str) -> str:
    """The Monday of the ISO week of a ``YYYY-MM-DD`` day."""
    day = date.fromisoformat(day_text)
    return (day - timedelta(days=day.weekday())).isoformat()


def _agreement(
    conn: sa.Connection, project: Project, today: date, reviewed_only: bool = False
) -> dict[str, Any]:
    """Per ISO week (the last :data:`WEEKS`): overlapped items finished and the share
    whose copies agree on the query type (``reviewed_only``: of accepted items only);
    reviews and the share accepting unchanged."""
    this_monday = today - timedelta(days=today.weekday())
    weeks = [(this_monday - timedelta(weeks=WEEKS - 1 - i)).isoformat() for i in range(WEEKS)]
    since = datetime.fromisoformat(weeks[0])
    done: sa.ColumnElement[bool] = items.c.status.in_(("submitted", "accepted"))
    if reviewed_only:
        done = done & items.c.copy_of.in_(reviewed_originals(project))
    groups = (
        sa.select(
            sa.func.max(items.c.updated_at).label("finished"),
            sa.func.count(sa.distinct(items.c.query_type)).label("types"),
        )
        .where(_of_project(conn, items, project), items.c.copy_of.is_not(None), done)
        .group_by(items.c.copy_of)
        .having(sa.func.count() >= 2)
        .subquery()
    )
    overlap_day = utc_day(conn, groups.c.finished).label("day")
    same = sa.func.sum(sa.case((groups.c.types == 1, 1), else_=0))
    overlap = conn.execute(
        sa.select(overlap_day, sa.func.count(), same)
        .where(groups.c.finished >= since)
        .group_by(overlap_day)
    ).all()
    review_day = utc_day(conn, reviews.c.at).label("day")
    verdicts = conn.execute(
        sa.select(review_day, reviews.c.verdict, sa.func.count())
        .where(_of_project(conn, reviews, project), reviews.c.at >= since)
        .group_by(review_day, reviews.c.verdict)
    ).all()
    table: dict[str, dict[str, Any]] = {
        w: {"week": w, "overlapped": 0, "same_type": 0, "reviews": 0, "accepted_unchanged": 0}
        for w in weeks
    }
    for day_text, n, agreeing in overlap:
        row = table.get(_week(day_text))
        if row is not None:
            row["overlapped"] += n
            row["same_type"] += int(agreeing or 0)
    for day_text, verdict, n in verdicts:
        row = table.get(_week(day_text))
        if row is not None:
            row["reviews"] += n
            row["accepted_unchanged"] += n if verdict == "accept" else 0
    rows = [table[w] for w in weeks]
    for row in rows:
        row["type_agreement"] = _share(row["same_type"], row["overlapped"])
        row["review_acceptance"] = _share(row["accepted_unchanged"], row["reviews"])
    return {"weeks": rows, "empty": not any(r["overlapped"] or r["reviews"] for r in rows)}


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


# --- throughput and time per item, from the history ------------------------------------------


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
