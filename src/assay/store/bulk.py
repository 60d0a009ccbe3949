"""Many rows into one table at the driver's speed: imports write hundreds of thousands.

``conn.execute(table.insert(), [dict, ...])`` spends most of its time in SQLAlchemy's
per-row parameter processing (a quarter of a 100,000-item import). Here the statement is
built once per call and the rows go to the driver's ``executemany`` as tuples (psycopg 3
pipelines it), each value converted by its column type's own bind processor, so what is
stored is exactly what SQLAlchemy stores. It runs in the connection's open transaction and
through SQLAlchemy's error handling (a busy SQLite database is still ``DatabaseBusy``).

Ids that later rows refer to (an evidence row's turn) are taken beforehand with
:func:`next_ids`, so no ``RETURNING`` round trip is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import sqlalchemy as sa

Processor = Callable[[Any], Any]
"""A column type's bind processor: a Python value as the driver takes it."""


def insert_rows(
    conn: sa.Connection, table: sa.Table, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert ``rows`` (tuples of values in the order of ``columns``) into ``table``."""
    if not rows:
        return
    dialect = conn.dialect
    quote = dialect.identifier_preparer.quote
    processors = [
        (i, table.c[name].type._cached_bind_processor(dialect)) for i, name in enumerate(columns)
    ]
    convert = [(i, p) for i, p in processors if p is not None]
    mark = "?" if dialect.paramstyle == "qmark" else "%s"
    names = ", ".join(quote(name) for name in columns)
    marks = ", ".join(mark for _ in columns)
    sql = f"INSERT INTO {quote(table.name)} ({names}) VALUES ({marks})"
    if convert:
        rows = [_converted(row, convert) for row in rows]
    # the driver's executemany, through SQLAlchemy for its error handling (busy → DatabaseBusy)
    conn.exec_driver_sql(sql, list(rows))


def insert_dicts(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]]) -> None:
    """:func:`insert_rows` for rows given as dicts that all have the same keys."""
    if rows:
        columns = list(rows[0])
        pick = itemgetter(*columns)
        insert_rows(
            conn, table, columns, [pick(row) if len(columns) > 1 else (pick(row),) for row in rows]
        )


def next_ids(conn: sa.Connection, table: sa.Table, count: int) -> list[int]:
    """``count`` new values of ``table``'s integer ``id``, in ascending order: the ids the
    database would have given the next rows (SQLite: after the largest, under the write lock
    the batch holds; PostgreSQL: taken from the column's sequence)."""
    if count <= 0:
        return []
    if conn.dialect.name == "postgresql":
        sequence = "pg_get_serial_sequence(%(table)s, 'id')"
        found = conn.exec_driver_sql(
            f"SELECT nextval({sequence}) FROM generate_series(1, %(n)s)",
            {"table": table.name, "n": count},
        ).scalars()
        return sorted(found)
    largest = conn.scalar(sa.select(sa.func.max(table.c.id))) or 0
    return list(range(largest + 1, largest + 1 + count))


def _converted(row: Sequence[Any], convert: Sequence[tuple[int, Processor]]) -> tuple[Any, ...]:
    values = list(row)
    for i, process in convert:
        values[i] = process(values[i])
    return tuple(values)


def _is_json(kind: sa.types.TypeEngine[Any]) -> bool:
    return isinstance(kind, sa.JSON)
