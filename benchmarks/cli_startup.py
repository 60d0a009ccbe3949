"""CLI start-up time: `assay --help`, `assay --version` and `assay documents`, before and after.

Run: python benchmarks/cli_startup.py [--rounds N] [--before COMMIT]

"before" is the source tree of COMMIT (default: the commit before the CLI's imports were made
lazy), unpacked with `git archive` into a temporary folder and run with the same interpreter
through PYTHONPATH; "after" is this checkout. Each round runs every command once per side,
alternating sides, so both see the same machine load. `assay documents` lists a small
workspace (3 text files) that each side creates with its own code.

Recorded on the shared 2-core development machine (load average 3.2 from other test runs),
min / median of 5 rounds, seconds:

    command            before (1c22ad6)   after
    assay --help       0.871 / 0.969      0.117 / 0.130
    assay --version    (no such option)   0.119 / 0.131
    assay documents    0.962 / 1.000      0.571 / 0.594

`--help` and `--version` import typer and the `assay.cli` modules only. `assay documents` also
has to import SQLAlchemy (~0.2 s on its own here), pydantic-settings, and typer 0.29's
pydantic-based parameter coercion; Alembic is no longer loaded when the schema is current.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "1c22ad6"
COMMANDS: dict[str, list[str]] = {
    "assay --help": ["--help"],
    "assay --version": ["--version"],
    "assay documents": ["documents"],
}


def unpack(commit: str, folder: Path) -> Path:
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as archive:
        archive.extractall(folder, filter="data")
    return folder / "src"


def assay(src: Path, home: Path, args: list[str]) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(src), "ASSAY_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], env=env, capture_output=True, check=False
    )


def make_workspace(src: Path, home: Path, docs: Path) -> None:
    assay(src, home, ["init", "--project", "bench"])
    done = assay(src, home, ["ingest", str(docs), "--project", "bench"])
    if done.returncode:
        raise SystemExit(f"ingest failed for {src}: {done.stderr.decode()[-500:]}")


def timed(src: Path, home: Path, args: list[str]) -> float | None:
    start = time.perf_counter()
    done = assay(src, home, args)
    elapsed = time.perf_counter() - start
    return elapsed if done.returncode == 0 else None


def show(label: str, times: list[float | None]) -> str:
    ok = [t for t in times if t is not None]
    if not ok:
        return f"{label}: fails"
    return f"{label}: min {min(ok):.3f} s, median {statistics.median(ok):.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", default=BEFORE, help="commit to compare with")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        docs = base / "docs"
        docs.mkdir()
        for i, topic in enumerate(("travel", "leave", "safety")):
            (docs / f"{topic}.txt").write_text(f"Policy {i}: the {topic} rules. " * 40)
        sides = {"before": unpack(options.before, base / "before"), "after": ROOT / "src"}
        homes = {side: base / f"home-{side}" for side in sides}
        for side, src in sides.items():
            make_workspace(src, homes[side], docs)
        results: dict[tuple[str, str], list[float | None]] = {
            (side, name): [] for side in sides for name in COMMANDS
        }
        for round_no in range(options.rounds):
            order = list(sides) if round_no % 2 == 0 else list(reversed(sides))
            for name, args in COMMANDS.items():
                for side in order:
                    results[(side, name)].append(timed(sides[side], homes[side], args))
        print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{options.rounds} rounds, alternating; before = {options.before}, after = HEAD+")
        for name in COMMANDS:
            for side in sides:
                print(show(f"{name:<16} {side:<6}", results[(side, name)]))


if __name__ == "__main__":
    main()
