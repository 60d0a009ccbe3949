"""Import speed, before and after: seconds to import ``--items`` items, old code against new.

Each run imports the same Bundle as benchmarks/import_autosave.py (one document, ``--items``
items with one evidence passage each) into a fresh workspace (SQLite) or a fresh database
(PostgreSQL), in its own process, with nothing else writing. "before" runs the source tree of
``--before`` (default 1c22ad6, the last commit that imported in one transaction) and "after"
this checkout's ``src``, both with this interpreter through PYTHONPATH. Each round runs every
side once per database, alternating which side goes first, so both see the same machine load.
Printed: every run, then min / median per side and the after/before ratio of the medians,
and the load average before and after.

The old tree is unpacked with ``git archive`` into a temporary folder. To use a checkout of
your own instead (not committed, remove it afterwards with ``git worktree remove``):

    git worktree add /tmp/assay-before 1c22ad6
    python benchmarks/import_speed.py --before-src /tmp/assay-before/src

    python benchmarks/import_speed.py [--items 4000] [--rounds 3] [--only sqlite|postgres]
        [--before COMMIT | --before-src PATH] [--profile FILE]

``--profile FILE`` runs one "after" SQLite import under cProfile instead and writes the
statistics to FILE (read them with ``python -m pstats FILE``).

Recorded on the shared 2-core development machine (load average 1.3–2.7 from other test
runs), 4,000 items, min / median of 3 rounds, seconds:

    database     before (1c22ad6)   batches, 25 ms pause (bcdd1cd)   after
    SQLite       7.76 / 7.90        12.75 / 13.50                    3.18 / 3.20
    PostgreSQL   14.75 / 15.34      18.20 / 18.74                    8.23 / 8.82

(the bcdd1cd column is a separate run against its own "before", ratios 1.65 and 1.07). 20,000
items on SQLite, one round: 38.4 s before, 17.2 s after.

The one record family (``--before 758d41e``), 4,000 items, SQLite, 3 rounds, load 1.7–2.2:
before 2.41 / 2.63 s, after 2.67 / 2.68 s (after/before of the medians 1.02).

PostgreSQL comes from ``ASSAY_TEST_POSTGRES_URL`` or a throwaway server on loopback, as in
import_autosave.py; without either, the PostgreSQL runs are skipped with a note.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path

from import_autosave import IMPORTER, fresh_database, postgres_server

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "1c22ad6"


@contextmanager
def source_tree(commit: str) -> Iterator[Path]:
    """The ``src`` folder of ``commit``, unpacked into a temporary folder."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src"], capture_output=True, check=True
    ).stdout
    folder = Path(tempfile.mkdtemp(prefix="assay-import-before-"))
    try:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        yield folder / "src"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def one_import(src: Path, kind: str, items: int, pg_url: str | None, profile: str = "") -> float:
    """Seconds one import of ``items`` items took, run by the code in ``src``."""
    home = Path(tempfile.mkdtemp(prefix="assay-speed-"))
    env = {**os.environ, "PYTHONPATH": str(src)}
    try:
        with fresh_database(kind, home, pg_url) as url:
            code = ["-c", IMPORTER]
            if profile:  # cProfile runs scripts, not -c
                (home / "importer.py").write_text(IMPORTER)
                code = ["-m", "cProfile", "-o", profile, str(home / "importer.py")]
            out = subprocess.run(
                [sys.executable, *code, str(home), url, str(items)],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode != 0:
                raise SystemExit(f"import with {src} failed:\n{out.stderr[-3000:]}")
            seconds, imported = out.stdout.split()
            assert int(imported) == items, f"imported {imported} of {items}"
            return float(seconds)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--before", default=BEFORE, help="commit of the 'before' side")
    parser.add_argument("--before-src", type=Path, help="a 'src' folder to use as 'before'")
    parser.add_argument("--profile", help="profile one 'after' SQLite import into this file")
    args = parser.parse_args()
    after = ROOT / "src"
    if args.profile:
        took = one_import(after, "sqlite", args.items, None, profile=args.profile)
        print(f"profiled import of {args.items} items: {took:.2f} s -> {args.profile}")
        return
    print(f"load average before: {os.getloadavg()}")
    old = source_tree(args.before) if args.before_src is None else _given(args.before_src)
    with postgres_server() as pg_url, old as before:
        kinds = [k for k in ("sqlite", "postgres") if args.only in (None, k)]
        if "postgres" in kinds and pg_url is None:
            print("note: no PostgreSQL (set ASSAY_TEST_POSTGRES_URL or install it): skipped")
            kinds.remove("postgres")
        sides = {"before": before, "after": after}
        took: dict[tuple[str, str], list[float]] = {(k, s): [] for k in kinds for s in sides}
        for number in range(1, args.rounds + 1):
            order = list(sides) if number % 2 else list(sides)[::-1]
            for kind in kinds:
                for side in order:
                    seconds = one_import(sides[side], kind, args.items, pg_url)
                    took[kind, side].append(seconds)
                    print(
                        f"round {number} {kind:8} {side:6} import of {args.items} items "
                        f"{seconds:6.2f} s  load {os.getloadavg()[0]:.2f}",
                        flush=True,
                    )
    for kind in kinds:
        medians = {side: statistics.median(took[kind, side]) for side in sides}
        for side in sides:
            print(
                f"{kind:8} {side:6} min {min(took[kind, side]):6.2f} / "
                f"median {medians[side]:6.2f} s"
            )
        print(f"{kind:8} after/before (medians): {medians['after'] / medians['before']:.2f}")
    print(f"load average after: {os.getloadavg()}")


@contextmanager
def _given(src: Path) -> Iterator[Path]:
    if not (src / "assay" / "__init__.py").is_file():
        raise SystemExit(f"{src} is not a 'src' folder holding the assay package")
    yield src.resolve()


if __name__ == "__main__":
    main()
