"""Many rows into one table at the driver's speed: imports write hundreds of thousands.

``conn.execute(table.insert(), [dict, ...])`` spends most of its time in SQLAlchemy's
per-row parameter processing (a quarter of a 100,000-item import). Here the statement is
built once per table and columns (:class:`RowFormat`) and the rows go to the driver's
``executemany`` as tuples (psycopg 3 pipelines it), each value converted by its column type's
own bind processor, so what is stored is exactly what SQLAlchemy stores. It runs in the
connection's open transaction and through SQLAlchemy's error handling (a busy SQLite database
is still ``DatabaseBusy``).

The conversion is plain data in, plain data out, so rows may be converted in another process
than the one that writes them (an import prepares its rows in a second process): JSON values
become their text there, on PostgreSQL too, where the statement casts that text to ``json``
(what SQLAlchemy's own JSON parameter sends is the same text, made by the same serializer).

Ids that later rows refer to (an evidence row's turn) are taken beforehand with
:func:`next_ids`, so no ``RETURNING`` round trip is needed. On PostgreSQL more than a few rows
go in by ``COPY`` (:data:`COPY_FROM`), which takes the same converted values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any

import sqlalchemy as sa

Processor = Callable[[Any], Any]
"""A column type's bind processor: a Python value as the driver takes it."""


class RowFormat:
    """The insert of ``columns`` into ``table`` on ``dialect``: its SQL (:attr:`sql`) and the
    conversion of one row of values to what the driver takes (:meth:`row`)."""

    def __init__(
        self,
        dialect: sa.Dialect,
        table: sa.Table,
        columns: Sequence[str],
        dates: dict[str, Processor] | None = None,
    ) -> None:
        """``dates``: the date conversions of several formats, shared (see :func:`_remembering`)."""
        self.table = table
        self.columns = tuple(columns)
        quote = dialect.identifier_preparer.quote
        mark = "?" if dialect.paramstyle == "qmark" else "%s"
        postgres = dialect.name == "postgresql"
        self.convert: list[tuple[int, Processor]] = []
        marks: list[str] = []
        for i, name in enumerate(self.columns):
            kind = table.c[name].type
            process: Processor | None
            if postgres and isinstance(kind, sa.JSON):
                process = _json_text(kind, dialect)
                marks.append(f"{mark}::json")
            else:
                process = kind._cached_bind_processor(dialect)
                marks.append(mark)
                if process is not None and isinstance(kind, sa.DateTime):
                    shared = {} if dates is None else dates
                    process = shared.setdefault(repr(kind), _remembering(process))
            if process is not None:
                self.convert.append((i, process))
        names = ", ".join(quote(name) for name in self.columns)
        self.sql = f"INSERT INTO {quote(table.name)} ({names}) VALUES ({', '.join(marks)})"
        self.copy = f"COPY {quote(table.name)} ({names}) FROM STDIN" if postgres else None
        """PostgreSQL's bulk load of the same columns (it takes the same converted values)."""
        self._pick = itemgetter(*self.columns)

    def row(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """One row's values (in the order of the columns) as the driver takes them."""
        if not self.convert:
            return tuple(values)
        converted = list(values)
        for i, process in self.convert:
            converted[i] = process(converted[i])
        return tuple(converted)

    def dict_row(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """:meth:`row` of a row given as a dict holding (at least) the columns."""
        picked = self._pick(values)
        return self.row(picked if len(self.columns) > 1 else (picked,))


def insert_converted(conn: sa.Connection, form: RowFormat, rows: Sequence[Sequence[Any]]) -> None:
    """Insert rows already converted by :meth:`RowFormat.row` (of ``form``'s columns)."""
    if not rows:
        return
    if form.copy is not None and len(rows) >= COPY_FROM:
        _copy(conn, form.copy, rows)
    else:
        # the driver's executemany, through SQLAlchemy for its error handling (busy → DatabaseBusy)
        conn.exec_driver_sql(form.sql, rows if isinstance(rows, list) else list(rows))


COPY_FROM = 10
"""Rows from which PostgreSQL gets them by ``COPY`` rather than an ``INSERT`` each: the
server parses and plans no statement per row (50,000 evidence rows, 250 at a time: 0.90–1.20 s
as inserts, 0.49–0.62 s as copies; rows of 2 kB of JSON take about as long either way)."""


def _copy(conn: sa.Connection, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    """``COPY … FROM STDIN`` of ``rows`` in the connection's open transaction; the driver's
    errors come out as SQLAlchemy's, as those of a statement would."""
    raw: Any = conn.connection.driver_connection
    dbapi: Any = conn.dialect.dbapi
    try:
        with raw.cursor() as cursor, cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)
    except dbapi.Error as exc:
        raise sa.exc.DBAPIError.instance(sql, None, exc, dbapi.Error, dialect=conn.dialect) from exc


def insert_rows(
    conn: sa.Connection, table: sa.Table, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert ``rows`` (tuples of values in the order of ``columns``) into ``table``."""
    if rows:
        form = RowFormat(conn.dialect, table, columns)
        insert_converted(conn, form, [form.row(row) for row in rows])


def insert_dicts(conn: sa.Connection, table: sa.Table, rows: Sequence[dict[str, Any]]) -> None:
    """:func:`insert_rows` for rows given as dicts that all have the same keys."""
    if rows:
        form = RowFormat(conn.dialect, table, list(rows[0]))
        insert_converted(conn, form, [form.dict_row(row) for row in rows])


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


def _json_text(kind: sa.JSON, dialect: sa.Dialect) -> Processor:
    """A JSON value as the text SQLAlchemy's JSON parameter would send (the engine's JSON
    serializer; ``None`` is JSON ``null`` unless the column stores it as SQL NULL)."""
    serialize: Callable[[Any], str] = getattr(dialect, "_json_serializer", None) or json.dumps

    def process(value: Any) -> str | None:
        if value is None and kind.none_as_null:
            return None
        return serialize(value)

    return process


def _remembering(process: Processor) -> Processor:
    """``process`` that converts the value it converted last at once: an item's rows carry
    the same moment several times, in several tables (SQLite's dates are text, formatted in
    Python), so the formats of one import share it."""
    last: list[Any] = [_NOTHING, None]

    def remembered(value: Any) -> Any:
        if value is not last[0]:
            last[0], last[1] = value, process(value)
        return last[1]

    return remembered


_NOTHING = object()
"""What no value is."""
