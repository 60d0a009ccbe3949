"""Schemathesis against the OpenAPI (``/api/openapi.json``): requests generated from the schema,
valid and invalid, never get a server error (5xx) or crash the app.

Bounded and repeatable: a fixed number of examples per operation and mode, derandomized, no
example database. Each request is generated once and sent to the app on SQLite and on
PostgreSQL (generating costs more than answering). Path parameters are pointed at a real
project, item and document half of the time so the generated values reach the code behind
the 404s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import zlib
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item
from assay.records import Item, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.conftest import IN_CI

pytestmark = pytest.mark.slow

EXAMPLES = 25
SHARDS = 4
"""The operations are split over this many tests (every fourth operation each), so parallel
workers share the run instead of one worker finishing it alone."""
TOKEN = "schemathesis-csrf-token-0123456789"
BASE_URL = "http://127.0.0.1:8765"


def real_ids(case: Any, known: dict[str, str]) -> None:
    """Point path parameters at existing records for half of the cases (deterministically)."""
    params = case.path_parameters or {}
    if "name" in params:
        params["name"] = "test"
    if zlib.crc32(repr(sorted(params.items())).encode()) % 2:
        for key, value in known.items():
            if key in params:
                params[key] = value
    if isinstance(case.body, dict) and "start" in case.body:
        case.body["start"] = False  # create experiments, do not run them in threads here


def _app(ws: Workspace) -> tuple[Any, dict[str, str]]:
    """The app over ``ws`` with a project, a document and an item the cases can point at."""
    project = create_project(ws, "test", "en")
    document = ingest_bytes(ws, project, "ferries.md", b"# Ferries\n\nThe night ferry at 22:40.")
    item = create_item(ws, project, Item(turns=[Turn(query="When does the ferry leave?")]))
    known = {"item_id": item.id, "doc_id": document.id, "ref": "1", "number": "1"}
    # background jobs (experiment runs, imports, exports) are queued, not run: a worker's
    # connection pool (PostgreSQL) draws from `random` in its own threads, which Hypothesis
    # takes for randomness in its strategies
    quiet = dataclasses.replace(
        ws, settings=ws.settings.model_copy(update={"server_runs_jobs": False})
    )
    return create_app(quiet), known


@pytest.mark.postgres
@pytest.mark.parametrize("shard", range(SHARDS))
def test_generated_requests_get_no_server_error(
    ws: Workspace, request: pytest.FixtureRequest, shard: int
) -> None:
    """Each generated request goes to the app on SQLite and to the app on PostgreSQL (when a
    server is configured, always in ``make test``): generated once, checked on both."""
    databases = {"sqlite": ws}
    if os.environ.get("ASSAY_TEST_POSTGRES_URL") or IN_CI:
        databases["postgres"] = request.getfixturevalue("pg_ws")
    apps = {name: _app(database) for name, database in databases.items()}
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", apps["sqlite"][0])
    errors: list[str] = []
    calls = 0
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations[shard::SHARDS]:
        if operation.path.endswith("/events"):
            continue  # server-sent event streams stay open while a job runs
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            def call(case: Any) -> None:
                nonlocal calls
                generated = dict(case.path_parameters or {})
                calls += 1
                label = f"{case.method} {case.path}"
                for name, (app, known) in apps.items():
                    if case.path_parameters is not None:
                        case.path_parameters = dict(generated)
                    real_ids(case, known)  # each database's own ids
                    try:
                        response = case.call(
                            base_url=BASE_URL,
                            headers={"X-CSRF-Token": TOKEN},
                            cookies={"assay_csrf": TOKEN},
                            app=app,
                        )
                    except Exception as exc:  # the app raised: a 500 in a real server
                        errors.append(f"{name}, {label}: {exc!r}\n  {case.as_curl_command()}")
                        continue
                    if response.status_code >= 500:
                        errors.append(
                            f"{name}, {label}: {response.status_code} {response.text[:200]}\n"
                            f"  {case.as_curl_command()}"
                        )

            with contextlib.suppress(Unsatisfiable):  # nothing invalid to send for some
                call()
    for app, _ in apps.values():
        app.state.jobs.close()
    assert calls > 500 // SHARDS  # 500 or more over the shards together
    assert errors == [], f"{len(errors)} server errors:\n" + "\n".join(errors[:20])
