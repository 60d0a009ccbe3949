"""``assay serve --workers N`` on a busy machine: with every core busy, the workers still
start (the supervisor gives each ``--worker-start-timeout`` seconds, not uvicorn's 5), answer
requests, and each one's start is logged.

A real ``assay serve`` subprocess on a free loopback port, beside CPU hogs this test starts
(one per core) and stops.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.conftest import free_port, stop_process
from tests.test_serve_processes import SRC, _serve_process_of, _workers_of

pytestmark = pytest.mark.serial(
    "starts CPU hogs on every core and an `assay serve` with several worker processes"
)

BOUND = 900.0
"""Seconds the test waits for the server at most: only a bound against a hang."""
STARTED = re.compile(r"Assay worker process \[(\d+)\] opened the workspace")


@contextlib.contextmanager
def cpu_hogs() -> Iterator[None]:
    """One busy process per core, for as long as the block runs."""
    spin = [sys.executable, "-c", "while True: pass"]
    hogs = [subprocess.Popen(spin) for _ in range(os.cpu_count() or 2)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_workers_start_and_answer_while_the_cores_are_busy(
    any_ws: Workspace, tmp_path: Path
) -> None:
    create_project(any_ws, "handbook", "en")
    any_ws.engine.dispose()  # the server opens its own connections
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(
        ASSAY_HOME=str(any_ws.settings.home), ASSAY_DATABASE_URL=any_ws.settings.database_url
    )
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    env["ASSAY_WORKER_START_TIMEOUT"] = "600"
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "assay", "serve", "--port", str(port), "--workers", "2"]
    with cpu_hogs(), log.open("w") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=BOUND) as client:
                deadline = time.monotonic() + BOUND
                while len(set(STARTED.findall(log.read_text()))) < 2:
                    assert process.poll() is None, log.read_text()
                    assert time.monotonic() < deadline, log.read_text()
                    time.sleep(0.2)
                answers = [client.get("/api/projects") for _ in range(6)]
                assert [a.status_code for a in answers] == [200] * 6
                assert [p["name"] for p in answers[0].json()] == ["handbook"]
                workers = set(_workers_of(_serve_process_of(client)))
        finally:
            stop_process(process)
    text = log.read_text()
    assert "2 processes, each given 600 s to start" in text
    started = {int(pid) for pid in STARTED.findall(text)}
    assert started == workers and len(workers) == 2, text  # none was replaced
    assert "died" not in text and "was not ready" not in text, text
