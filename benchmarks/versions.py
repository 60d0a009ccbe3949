"""Frozen dataset versions at scale: freezing, diffing and exporting a version of N items.

Seeds a workspace as benchmarks/export.py does (bulk inserts; accepted single-turn items with
two anchored passages each, documents with an imported chunking), then times in fresh
processes (wall time, CPU seconds, peak resident memory):

- ``create``: ``create_version`` of every accepted item with the imported chunking;
- ``diff``: ``diff_versions`` of two versions between which 1 % of the items changed;
- ``export``: the native zip of a version (from its snapshot) against the native zip of the
  live project (``transfer.export_bundle``), alternating, the same items.

    python benchmarks/versions.py [--items 10000 100000] [--docs 200] [--chunks-per-doc 50]
        [--rounds 3] [--home DIR]

Prints min / median per step and the load average (os.getloadavg) before and after, per item
count, then the peak memory of each step by item count (flat: a version is never held whole).
``--items 2000`` is a quick run.

Peak memory is each step's own (``VmHWM``: the parent that seeded the workspace is not
counted, as ``ru_maxrss`` would count it). Recorded on SQLite, 200 documents, 10,000 imported
chunks, on 2 cores shared with other work (load average 28 to 35, so wall times are stretched
several times; CPU seconds are the steadier figure). 10,000 items (20,000 passages), 3 rounds,
min / median: create 2.14 / 2.22 s CPU, 71 MB; diff of two versions (1 % of the items changed)
2.80 / 2.87 s CPU, 70 MB; export of the version to native 2.21 / 2.38 s CPU, 67 MB, against the
live export of the same items 2.14 / 2.17 s CPU, 110 MB. 100,000 items, one round (the CPU
seconds from a run just before the id pages and the scratch-file hash): create 14.2 s CPU,
84 MB; diff 21.8 s CPU, 70 MB; export of the version 14.1 s CPU, 67 MB; live export 16.8 s
CPU, 185 MB. Before versions streamed (the same 10,000-item workspace): create 128 MB,
diff 153 MB, export of the version 122 MB. A version's zip is 1.46 MB at 10,000 items; versions
of the same content share one blob (freezing unchanged gold again writes the same bytes).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export import seed  # the same seeded project as the export benchmark


def _workspace(home: Path):  # type: ignore[no-untyped-def]
    from assay.store.projects import get_project
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace

    ws = Workspace.open(Settings(home=home))
    return ws, get_project(ws, "bench")


def run_step(home: Path, step: str, arg: str, out: Path) -> None:
    """One step in this process (the parent times it)."""
    ws, project = _workspace(home)
    if step == "create":
        from assay.review.versions import create_version

        create_version(ws, project, arg, chunking="bench")
    elif step == "diff":
        from assay.review.version_diff import diff_versions

        a, b = arg.split(",")
        diff_versions(ws, project, a, b)
    elif step == "export-version":
        from assay.formats import get_format
        from assay.review.version_export import export_bundle_of
        from assay.review.versions import get_version, read_snapshot

        bundle = export_bundle_of(ws, project, read_snapshot(ws, get_version(ws, project, arg)))
        get_format("native").write(bundle, out)
    elif step == "export-live":
        from assay.formats import get_format
        from assay.transfer import export_bundle

        get_format("native").write(export_bundle(ws, project, chunking="bench"), out)
    ws.close()
    print(peak_mb())


def peak_mb() -> float:
    """This process's peak resident memory in MB: ``VmHWM``, which starts afresh with the
    program (``ru_maxrss`` is carried over from the parent that forked it, which seeded the
    workspace, so every step would show at least the parent's size)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(home: Path, step: str, arg: str, out: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of one step in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, __file__, "--home", str(home), "--run", step, "--arg", arg]
    done = subprocess.run([*command, "--out", str(out)], check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, float(done.stdout.split()[-1])


def _change_one_percent(home: Path) -> None:
    """Change the answer of every hundredth item (through save_item, as the editor would)."""
    from assay.gold.item_lists import item_ids
    from assay.gold.items import editable_copy, get_item, save_item

    ws, project = _workspace(home)
    for item_id in item_ids(ws, project)[::100]:
        item = get_item(ws, project, item_id)
        edited = editable_copy(item)
        edited.turns[0].answer = "a changed answer"
        save_item(ws, project, item_id, edited, item.version)
    ws.close()


def _report(name: str, runs: list[tuple[float, float, float]]) -> float:
    walls = [r[0] for r in runs]
    cpus = [r[1] for r in runs]
    peak = max(r[2] for r in runs)
    print(
        f"{name:15} wall min {min(walls):6.2f} s, median {statistics.median(walls):6.2f} s; "
        f"CPU min {min(cpus):6.2f} s, median {statistics.median(cpus):6.2f} s; "
        f"peak memory {peak:5.0f} MB"
    )
    return peak


def measure(home: Path, rounds: int, out: Path) -> dict[str, float]:
    """Every step ``rounds`` times on the seeded workspace; the peak memory of each."""
    print(f"load before: {os.getloadavg()}")
    tag = str(int(time.time()))
    peaks = {}
    creates = [timed(home, "create", f"v{tag}-{n}", out) for n in range(rounds)]
    peaks["create"] = _report("create", creates)
    _change_one_percent(home)
    timed(home, "create", f"v{tag}-changed", out)
    diffs = [timed(home, "diff", f"v{tag}-0,v{tag}-changed", out) for _ in range(rounds)]
    peaks["diff (1 %)"] = _report("diff (1 %)", diffs)
    from_version, live = [], []
    for _ in range(rounds):  # alternating sides
        from_version.append(timed(home, "export-version", f"v{tag}-0", out))
        live.append(timed(home, "export-live", "", out))
    peaks["export version"] = _report("export version", from_version)
    peaks["export live"] = _report("export live", live)
    size = sum(p.stat().st_size for p in (home / "blobs").rglob("*") if p.is_file())
    print(f"blob store: {size / 1e6:.1f} MB; load after: {os.getloadavg()}")
    return peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--items", type=int, nargs="+", default=[10_000, 100_000], help="item counts to run"
    )
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--chunks-per-doc", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--home", type=Path, help="reuse this workspace (one item count)")
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--arg", default="", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_step(args.home, args.run, args.arg, args.out)
        return
    if args.home and len(args.items) > 1:
        parser.error("--home holds one workspace: give one --items count with it")
    peaks: dict[int, dict[str, float]] = {}
    for count in args.items:
        with tempfile.TemporaryDirectory() as scratch:
            home = args.home or Path(scratch) / "ws"
            if not (home / "assay.db").exists():
                started = time.perf_counter()
                seed(home, count, args.docs, args.chunks_per_doc)
                print(f"seeded {count} items in {time.perf_counter() - started:.1f} s")
            peaks[count] = measure(home, args.rounds, Path(scratch) / "out.zip")
    print("peak memory (MB) by item count:")
    for step in next(iter(peaks.values())):
        figures = ", ".join(f"{count}: {peaks[count][step]:.0f}" for count in peaks)
        print(f"  {step:15} {figures}")


if __name__ == "__main__":
    main()
