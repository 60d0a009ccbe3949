"""The README, followed literally: a copy of the repository, a fresh virtual environment, the
quick start's `make demo`, the Install lines, the CLI tour and the Python tour.

The code blocks are read from README.md (never copied here) and run line by line in bash, in a
copy of the working tree's files (tracked and new, as `git ls-files` lists them), so what is
tested is what a user gets from the checkout. Exported variables carry from line to line, as
in one terminal. A line fails the test when it exits non-zero or prints a traceback.

What the test adds, and only that:
- the input files the tour names but a reader brings (notes.txt, memo.pdf, minutes.txt, a
  BEIR folder, a run file, qrels) are created just before the first line that names them;
- `make demo` and `assay serve` run until they say where they serve; the page is fetched, then
  they are stopped with Ctrl+C (SIGINT);
- ASSAY_PORT is a free port, so a server already on 8765 does not fail the test;
- `make test` is not run (it would run this suite).

pip needs PyPI (its cache makes repeated runs quick); without it the test is skipped (and
fails under CI=true, like every missing component).
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import missing

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
INSTALL_TIMEOUT = 900
LINE_TIMEOUT = 300

pytestmark = pytest.mark.slow


def section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, flags=re.M | re.S)
    assert found, f"README has no section {title!r}"
    return found.group(1)


def blocks(title: str, language: str) -> list[str]:
    found = re.findall(rf"```{language}\n(.*?)```", section(title), flags=re.S)
    assert found, f"README section {title!r} has no {language} block"
    return found


def commands(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


class Terminal:
    """One bash session, line by line: the exported variables of each line are kept."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.state = folder.parent / "terminal-state.sh"
        keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
        env = {name: os.environ[name] for name in keep if name in os.environ}
        env |= {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "ASSAY_PORT": str(port),
        }
        self.state.write_text("".join(f"export {k}={_quote(v)}\n" for k, v in env.items()))

    def script(self, line: str, *, keep: bool = True) -> list[str]:
        save = f'export -p > "{self.state}"\n' if keep else ""
        body = f'set -o pipefail\nsource "{self.state}"\n{line}\nstatus=$?\n{save}exit $status\n'
        return ["env", "-i", "bash", "-c", body]

    def run(self, line: str, *, timeout: float = LINE_TIMEOUT, keep: bool = True) -> str:
        print(f"$ {line}", flush=True)
        done = subprocess.run(
            self.script(line, keep=keep),
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"`{line}` exited with {done.returncode}:\n{output[-3000:]}"
        assert "Traceback" not in output, f"`{line}` printed a traceback:\n{output[-3000:]}"
        return output

    def serve(self, line: str, *, timeout: float = INSTALL_TIMEOUT) -> str:
        """Run a line that serves until stopped: wait for its address, fetch the page, stop."""
        print(f"$ {line}", flush=True)
        process = subprocess.Popen(
            self.script(line, keep=False),
            cwd=self.folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        assert process.stdout is not None
        stream = process.stdout

        def read() -> None:
            for text in stream:
                lines.put(text)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        seen: list[str] = []
        url = ""
        deadline = time.monotonic() + timeout
        try:
            while not url and time.monotonic() < deadline:
                try:
                    text = lines.get(timeout=5)
                except queue.Empty:
                    continue
                if text is None:
                    break
                seen.append(text)
                found = re.search(r"serving on (http://\S+/)", text)
                url = found.group(1) if found else ""
            assert url, f"`{line}` never said where it serves:\n{''.join(seen)[-3000:]}"
            with urllib.request.urlopen(url, timeout=30) as page:
                assert page.status == 200
        finally:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            stream.close()
        rest = []
        while (text := lines.get()) is not None:
            rest.append(text)
        output = "".join(seen + rest)
        assert "Traceback" not in output, f"`{line}` printed a traceback:\n{output[-3000:]}"
        return output


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def copy_checkout(target: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def trec_run_from_qrels(rows: list[tuple[str, str]], path: Path) -> None:
    """A run that ranks each query's relevant ids first (a good system, for the CI gate)."""
    ranks: dict[str, int] = {}
    lines = []
    for query, doc in rows:
        ranks[query] = ranks.get(query, 0) + 1
        lines.append(f"{query} Q0 {doc} {ranks[query]} {100 - ranks[query]} my-system")
    path.write_text("\n".join(lines) + "\n")


def inputs(terminal: Terminal, folder: Path) -> dict[str, Callable[[], None]]:
    """The files the tour names, made the way a reader would bring them."""
    scratch = folder.parent / "scratch"

    def export(kind: str) -> Path:
        target = scratch / kind
        if not target.exists():
            terminal.run(f"assay export {kind} {target} --project demo", keep=False)
        return target

    def notes() -> None:
        (folder / "notes.txt").write_text(
            "Notes from the travel desk.\n\nRail travel abroad is booked in second class; "
            "hotel costs abroad follow the national rates.\n"
        )

    def minutes() -> None:
        (folder / "minutes.txt").write_text(
            "Minutes of the works council, 3 March.\n\nThe council agreed on new rules for "
            "travel expenses and asked for a shorter approval path.\n"
        )

    def memo() -> None:
        shutil.copy(folder / "tests" / "data" / "parsing" / "sample.pdf", folder / "memo.pdf")

    def beir() -> None:
        shutil.copytree(export("beir"), folder / "mtrag-cloud")

    def qrels_rows() -> list[tuple[str, str]]:
        text = (export("beir") / "qrels" / "test.tsv").read_text()
        return [(r.split("\t")[0], r.split("\t")[1]) for r in text.splitlines()[1:] if r]

    def my_system() -> None:
        qrels_txt = (export("trec") / "qrels.txt").read_text()  # query 0 doc relevance
        rows = [(parts[0], parts[2]) for parts in map(str.split, qrels_txt.splitlines()) if parts]
        trec_run_from_qrels(rows, folder / "my-system.trec")

    def qrels() -> None:
        shutil.copy(export("beir") / "qrels" / "test.tsv", folder / "qrels.tsv")

    def run() -> None:
        trec_run_from_qrels(qrels_rows(), folder / "run.trec")

    return {
        "notes.txt": notes,
        "minutes.txt": minutes,
        "memo.pdf": memo,
        "mtrag-cloud/": beir,
        "my-system.trec": my_system,
        "qrels.tsv": qrels,
        "run.trec": run,
    }


def serves(line: str) -> bool:
    command = line.split("#", 1)[0].split()
    return command in (["make", "demo"], ["assay", "serve"]) or (
        command[:2] == ["assay", "demo"] and "--no-serve" not in command
    )


@pytest.mark.sqlite_only(
    "follows the README literally in a clean environment: its tours use the default SQLite file"
)
def test_the_readme_works_as_written(tmp_path: Path) -> None:
    if not pypi_reachable():
        missing("PyPI is not reachable: the README's pip install lines cannot run")
    folder = tmp_path / "assay"
    copy_checkout(folder)
    terminal = Terminal(folder, free_port())
    makers = inputs(terminal, folder)

    quick_start = commands(blocks("Quick start", "sh")[0])
    assert [line.split("#")[0].split() for line in quick_start] == [
        ["make", "demo"],
        ["make", "test"],
    ], "the quick start is exactly `make demo` and `make test`"
    terminal.serve(quick_start[0])  # make demo: a fresh .venv, the install, the demo, served

    for line in commands(blocks("Install", "sh")[0]):
        terminal.run(line, timeout=INSTALL_TIMEOUT)

    for block in blocks("CLI tour", "sh"):
        for line in commands(block):
            for name, make in makers.items():
                if name in line.split("#", 1)[0] and not (folder / name).exists():
                    make()
            output = terminal.serve(line) if serves(line) else terminal.run(line)
            if line.startswith("assay search") and "--json" not in line:
                assert "1. " in output, f"`{line}` found nothing:\n{output}"
            if line.startswith("assay experiments run"):
                assert " 0 error(s)" in output, output

    (python_tour,) = blocks("Python tour", "python")
    (folder / "python_tour.py").write_text(python_tour)
    output = terminal.run("python python_tour.py")
    printed = output.splitlines()
    assert printed[0].split()[1:] == ["added;", "[]"], output
    assert any(line.startswith("1 ") for line in printed[1:]), f"no hit printed:\n{output}"
