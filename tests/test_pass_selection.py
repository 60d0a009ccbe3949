"""What each pass of scripts/run-tests selects (tests/conftest.py): the parallel part writes how
many tests marked serial its pass leaves for the serial part, and their modules; the script
skips that part when the number is 0, and the serial part collects only those modules.
Checked on pytest itself, collecting only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERIAL_FILES = ["tests/test_serve_start.py", "tests/test_llm_local_server.py"]
"""Two serial and both-database tests (any_ws), six serial tests that open no database."""


OTHER_FILE = "tests/test_layout.py"
"""A module with no serial test: the serial part must not collect it."""


def collect(record: Path, database: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env |= {
        "ASSAY_TEST_DATABASE": database,
        "ASSAY_TEST_SERIAL_LEFT_RECORD": str(record),
        # only collected, never connected to
        "ASSAY_TEST_POSTGRES_URL": "postgresql+psycopg://nobody@127.0.0.1:1/postgres",
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def serial_left(tmp_path: Path, database: str) -> list[str]:
    record = tmp_path / f"serial-left-{database}"
    done = collect(record, database, "--serial-tests=without", *SERIAL_FILES)
    assert done.returncode == 5, done.stdout + done.stderr  # every test is serial: none left
    return record.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize(("database", "left"), [("sqlite", "8"), ("postgres", "0")])
def test_the_parallel_part_says_how_many_serial_tests_its_pass_left(
    tmp_path: Path, database: str, left: str
) -> None:
    assert serial_left(tmp_path, database)[0] == left


def test_the_serial_part_collects_only_the_modules_the_parallel_part_named(
    tmp_path: Path,
) -> None:
    record = tmp_path / "serial-left"
    parallel = collect(record, "sqlite", "--serial-tests=without", *SERIAL_FILES, OTHER_FILE)
    assert parallel.returncode == 0, parallel.stdout + parallel.stderr
    assert record.read_text(encoding="utf-8").splitlines() == [
        "8",
        *sorted(str(ROOT / name) for name in SERIAL_FILES),
    ]
    # as in make test: no file named, so every test module would be collected without it
    serial = collect(record, "sqlite", "--serial-tests=only")
    assert serial.returncode == 0, serial.stdout + serial.stderr
    listed = [line for line in serial.stdout.splitlines() if "::" in line]
    assert len(listed) == 8
    assert {line.split("::")[0] for line in listed} == set(SERIAL_FILES)
    assert "deselected" not in serial.stdout  # no other module was collected
