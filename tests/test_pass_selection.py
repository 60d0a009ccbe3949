"""What each pass of scripts/run-tests selects (tests/conftest.py): the parallel part writes how
many tests marked serial its pass leaves for the serial part, and the script skips that part
when the number is 0. Checked on pytest itself, collecting only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERIAL_FILES = ["tests/test_serve_start.py", "tests/test_llm_local_server.py"]
"""Two serial and both-database tests (any_ws), six serial tests that open no database."""


def serial_left(tmp_path: Path, database: str) -> str:
    record = tmp_path / f"serial-left-{database}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env |= {
        "ASSAY_TEST_DATABASE": database,
        "ASSAY_TEST_SERIAL_LEFT_RECORD": str(record),
        # only collected, never connected to
        "ASSAY_TEST_POSTGRES_URL": "postgresql+psycopg://nobody@127.0.0.1:1/postgres",
    }
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*collect, "--serial-tests=without", *SERIAL_FILES],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 5, done.stdout + done.stderr  # every test is serial: none left
    return record.read_text(encoding="utf-8").strip()


@pytest.mark.parametrize(("database", "left"), [("sqlite", "8"), ("postgres", "0")])
def test_the_parallel_part_says_how_many_serial_tests_its_pass_left(
    tmp_path: Path, database: str, left: str
) -> None:
    assert serial_left(tmp_path, database) == left
