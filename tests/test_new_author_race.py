"""Two requests that meet a new author name at once both get its one account (PostgreSQL:
the second insert waits on the first's uncommitted row, then clashes on the unique name)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import sqlalchemy as sa

from assay.people.actors import account_ids
from assay.store.schema import accounts
from assay.store.workspace import Workspace


@pytest.mark.postgres
def test_second_request_takes_the_account_the_first_made(pg_ws: Workspace) -> None:
    engine = pg_ws.engine
    results: dict[str, Any] = {}

    def second() -> None:
        try:
            with engine.begin() as conn:
                results["pid"] = conn.scalar(sa.text("select pg_backend_pid()"))
                results["second"] = account_ids(conn, ["Grete Neu"])["Grete Neu"]
        except Exception as exc:  # reported below, with the thread's own error
            results["error"] = exc

    with engine.begin() as conn:
        made = account_ids(conn, ["Grete Neu"])["Grete Neu"]  # inserted, not yet committed
        thread = threading.Thread(target=second)
        thread.start()
        with engine.connect() as watcher:  # wait until the second insert waits on this one
            for _ in range(600):
                waiting = watcher.scalar(
                    sa.text(
                        "select count(*) from pg_stat_activity "
                        "where pid = :pid and wait_event_type = 'Lock'"
                    ),
                    {"pid": results.get("pid", -1)},
                )
                watcher.rollback()  # pg_stat_activity is read once per transaction
                if waiting or not thread.is_alive():
                    break
                thread.join(0.05)
            if not waiting:
                pytest.fail(
                    "the second request never waited on the first one's account: "
                    f"{'it ended with ' + repr(results) if not thread.is_alive() else 'no lock'}"
                )
    thread.join(30)
    assert "error" not in results, results.get("error")
    assert results["second"] == made
    with engine.connect() as conn:
        names = conn.scalars(
            sa.select(accounts.c.username).where(accounts.c.display_name == "Grete Neu")
        ).all()
    assert len(names) == 1
