"""The tests' PostgreSQL databases: copies of one migrated template, emptied and lent again.

``CREATE DATABASE ... TEMPLATE`` copies the system catalogues with the tables, about 10 MB:
0.1-0.7 s on the 2-core machine as its load goes, and a ``make test`` needs about a thousand.
Emptying a database a test has finished with (``DELETE`` from each table, sequences restarted)
takes a tenth of that, so each xdist worker keeps the databases its tests gave back and lends
them again. A database is only lent again when, emptied, its schema is still the template's
(tables, columns, indexes, sequences, functions, triggers, extensions and the Alembic
revision); one a test changed is dropped, and the next test gets a new copy.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator

import sqlalchemy as sa

SCHEMA_FINGERPRINT = """
SELECT md5(concat_ws('|',
  (SELECT string_agg(c.relname || ':' || c.relkind::text || ':' || coalesce(a.cols, ''), ','
                     ORDER BY c.relname)
     FROM pg_class c
     LEFT JOIN (SELECT attrelid,
                       string_agg(attname || ' ' || format_type(atttypid, atttypmod)
                                  || CASE WHEN attnotnull THEN ' not null' ELSE '' END, ','
                                  ORDER BY attnum) AS cols
                  FROM pg_attribute WHERE attnum > 0 AND NOT attisdropped GROUP BY attrelid) a
       ON a.attrelid = c.oid
    WHERE c.relnamespace = 'public'::regnamespace),
  (SELECT string_agg(proname || '(' || pg_get_function_arguments(oid) || ')', ','
                     ORDER BY proname, pg_get_function_arguments(oid))
     FROM pg_proc WHERE pronamespace = 'public'::regnamespace),
  (SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger WHERE NOT tgisinternal),
  (SELECT string_agg(conname, ',' ORDER BY conname)
     FROM pg_constraint WHERE connamespace = 'public'::regnamespace),
  (SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension),
  (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace),
  (SELECT string_agg(version_num, ',') FROM alembic_version)
))
"""
"""One text for everything a test could change in a database apart from its rows."""
TABLES = (
    "SELECT quote_ident(tablename) FROM pg_tables"
    " WHERE schemaname = 'public' AND tablename <> 'alembic_version' ORDER BY tablename"
)
RECORD = "json_populate_record(NULL::{table}, :row)"
SEQUENCES = (  # a sequence never used gets its start value, not yet called
    "SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename),"
    " coalesce(last_value, start_value), last_value IS NOT NULL"
    " FROM pg_sequences WHERE schemaname = 'public'"
)


def join_job_threads(timeout: float) -> None:
    """Wait (bounded) for this process's job threads to end: ``assay-jobs`` runs a server's
    jobs until the server stops (a stopped server's thread may take a while on a busy
    machine), ``assay-jobs-now`` the jobs a process submitted and runs itself until its queue
    is empty. A thread still working would otherwise write into the database after it was
    emptied or dropped, and its rows or its error land in the worker's next test."""
    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name in ("assay-jobs", "assay-jobs-now"):
            thread.join(timeout=max(0.0, deadline - time.monotonic()))


def new_database_name() -> str:
    return f"assay_test_{uuid.uuid4().hex[:10]}"


def database_url(server_url: str, name: str) -> str:
    return sa.make_url(server_url).set(database=name).render_as_string(hide_password=False)


@contextlib.contextmanager
def fresh_postgres_database(server_url: str) -> Iterator[str]:
    """The URL of a new, empty database on the test server; dropped on exit (open
    connections included)."""
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    name = new_database_name()
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield database_url(server_url, name)
        finally:
            join_job_threads(60.0)
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


class DatabasePool:
    """Copies of ``template`` (a migrated database on the server at ``server_url``) for one
    process: :meth:`lend` gives a database in the template's state, :meth:`close` drops them
    all. Not for threads: one pytest worker lends one at a time (a test may hold several)."""

    def __init__(self, server_url: str, template: str) -> None:
        self.server_url = server_url
        self.template = template
        self.admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
        self.idle: list[str] = []
        self.made: list[str] = []
        with self._connect(template) as conn:
            self.template_fingerprint = str(conn.exec_driver_sql(SCHEMA_FINGERPRINT).scalar_one())
            self.tables = list(conn.exec_driver_sql(TABLES).scalars())
            self.rows = {  # what the migrations wrote (the local account), as JSON
                table: list(
                    conn.exec_driver_sql(f"SELECT row_to_json(t)::text FROM {table} t").scalars()
                )
                for table in self.tables
            }
            self.sequences = conn.exec_driver_sql(SEQUENCES).all()

    @contextlib.contextmanager
    def lend(self) -> Iterator[str]:
        """The URL of a database in the template's state (the template's rows, newest
        schema), emptied or dropped when the block ends."""
        name = self.idle.pop() if self.idle else self._copy()
        try:
            yield database_url(self.server_url, name)
        finally:
            join_job_threads(60.0)
            self._give_back(name)

    def close(self) -> None:
        with self.admin.connect() as conn:
            for name in self.made:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.admin.dispose()

    def _copy(self) -> str:
        name = new_database_name()
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
        self.made.append(name)
        return name

    def _give_back(self, name: str) -> None:
        """Bring ``name`` back to the template's state for the next test, or drop it when
        its schema is no longer the template's."""
        with self.admin.connect() as conn:  # the test's pooled connections, and any it leaked
            conn.execute(
                sa.text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": name},
            )
        if self._reset_if_unchanged(name):
            self.idle.append(name)
            return
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.made.remove(name)

    def _reset_if_unchanged(self, name: str) -> bool:
        try:
            with self._connect(name) as conn, conn.begin():
                if (
                    conn.exec_driver_sql(SCHEMA_FINGERPRINT).scalar_one()
                    != self.template_fingerprint
                ):
                    return False
                self._reset(conn)
        except sa.exc.SQLAlchemyError:
            return False
        return True

    def _reset(self, conn: sa.Connection) -> None:
        """Every table back to the template's rows and every sequence to its value, in the
        transaction of ``conn`` (foreign keys are not checked meanwhile: every table is
        rewritten)."""
        conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
        for table in self.tables:
            conn.exec_driver_sql(f"DELETE FROM {table}")
            for row in self.rows[table]:
                conn.execute(
                    sa.text(f"INSERT INTO {table} SELECT * FROM {RECORD.format(table=table)}"),
                    {"row": row},
                )
        for sequence, value, called in self.sequences:
            conn.execute(
                sa.text("SELECT setval(:s, :v, :c)"), {"s": sequence, "v": value, "c": called}
            )

    @contextlib.contextmanager
    def _connect(self, name: str) -> Iterator[sa.Connection]:
        engine = sa.create_engine(database_url(self.server_url, name), poolclass=sa.NullPool)
        try:
            with engine.connect() as conn:
                yield conn
        finally:
            engine.dispose()
