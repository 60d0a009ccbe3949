"""The README, followed literally: a copy of the repository, a fresh virtual environment, the
quick start's `make demo`, the Install lines, the CLI tour and the Python tour.

The code blocks are read from README.md (never copied here) and run line by line in bash, in a
copy of the working tree's files (tracked and new, as `git ls-files` lists them), so what is
tested is what a user gets from the checkout. Exported variables carry from line to line, as
in one terminal. A line fails the test when it exits non-zero or prints a traceback.

What the test adds, and only that (it brings no file: every file a line reads must have
been made by an earlier line, from the shipped samples or by a command):
- `make demo` and `assay serve` run until they say where they serve; the page is fetched, then
  they are stopped with Ctrl+C (SIGINT);
- ASSAY_PORT is a free port, so a server already on 8765 does not fail the test;
- `make test` is not run (it would run this suite).

pip needs PyPI (its cache makes repeated runs quick); without it that test is skipped (and
fails under CI=true, like every missing component). A second test follows the two tours alone
with this environment's Assay, so a file the tour names but nobody makes fails without PyPI.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
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

    def __init__(
        self, folder: Path, port: int, *, path: Path | None = None, pythonpath: Path | None = None
    ) -> None:
        self.folder = folder
        self.state = folder.parent / "terminal-state.sh"
        keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
        env = {name: os.environ[name] for name in keep if name in os.environ}
        env |= {
            "PATH": f"{path}:/usr/local/bin:/usr/bin:/bin"
            if path
            else "/usr/local/bin:/usr/bin:/bin",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "ASSAY_PORT": str(port),
        }
        if pythonpath is not None:
            env["PYTHONPATH"] = str(pythonpath)
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


def copy_checkout(target: Path, under: str = "") -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if not name.startswith(under):
            continue
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def named_inputs(line: str) -> list[str]:
    """The files and folders a tour line reads, which must exist before it runs: what
    ``ingest``, ``import``, ``cat`` and ``cp`` read, and ``--run``/``--qrels`` files."""
    words = shlex.split(line.split("#", 1)[0])
    found: list[str] = []
    for command in " ".join(words).split("|"):
        args = command.split()
        if not args:
            continue
        if args[0] == "cat":
            found += args[1:]
        elif args[0] == "cp":
            found += [a for a in args[1:-1] if not a.startswith("-")]
        elif args[:2] == ["assay", "ingest"]:
            found += [a for a in _positional(args[2:]) if a != "-"]
        elif args[:2] == ["assay", "import"]:
            found += _positional(args[3:])[:1]
        found += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--run", "--qrels")]
    return found


def _positional(args: list[str]) -> list[str]:
    """Arguments that are not options or option values (every tour option takes a value)."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-") and arg != "-":
            skip = "=" not in arg
        else:
            kept.append(arg)
    return kept


def serves(line: str) -> bool:
    command = line.split("#", 1)[0].split()
    return command in (["make", "demo"], ["assay", "serve"]) or (
        command[:2] == ["assay", "demo"] and "--no-serve" not in command
    )


@pytest.mark.sqlite_only(
    "follows the README literally in a clean environment: its tours use the default SQLite file"
)
@pytest.mark.sqlite_only(
    "a new user's terminal: no ASSAY_DATABASE_URL, so it runs on the SQLite default in both passes"
)
def test_the_readme_works_as_written(tmp_path: Path) -> None:
    if not pypi_reachable():
        missing("PyPI is not reachable: the README's pip install lines cannot run")
    folder = tmp_path / "assay"
    copy_checkout(folder)
    terminal = Terminal(folder, free_port())

    quick_start = commands(blocks("Quick start", "sh")[0])
    assert [line.split("#")[0].split() for line in quick_start] == [
        ["make", "demo"],
        ["make", "test"],
    ], "the quick start is exactly `make demo` and `make test`"
    terminal.serve(quick_start[0])  # make demo: a fresh .venv, the install, the demo, served

    for line in commands(blocks("Install", "sh")[0]):
        terminal.run(line, timeout=INSTALL_TIMEOUT)
    follow_tours(terminal, folder)


@pytest.mark.sqlite_only("the tours use the default SQLite file of their workspace")
def test_the_tours_run_as_pasted_with_only_what_they_name(tmp_path: Path) -> None:
    """The CLI and Python tours in a fresh folder with this environment's Assay (no pip):
    every file a line reads exists because a line before it made it."""
    folder = tmp_path / "assay"
    copy_checkout(folder, under="src/")
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, args in (("assay", "-m assay"), ("python", "")):
        (tools / name).write_text(f'#!/bin/sh\nexec "{sys.executable}" {args} "$@"\n')
        (tools / name).chmod(0o755)
    terminal = Terminal(folder, free_port(), path=tools, pythonpath=ROOT / "src")
    follow_tours(terminal, folder)


def test_a_line_that_reads_a_file_names_it() -> None:
    assert named_inputs("assay ingest notes.txt memo.pdf   # two files") == [
        "notes.txt",
        "memo.pdf",
    ]
    assert named_inputs("cat minutes.txt | assay ingest -") == ["minutes.txt"]
    assert named_inputs("assay ingest handbook/ --project handbook") == ["handbook/"]
    assert named_inputs("assay import beir mtrag-cloud/ --project cloud") == ["mtrag-cloud/"]
    assert named_inputs("cp -r src/assay/demo/samples/. .") == ["src/assay/demo/samples/."]
    assert named_inputs("assay eval --qrels q.tsv --run r.trec -m nDCG@10") == ["q.tsv", "r.trec"]
    assert named_inputs("assay export ragold ragold.zip --project demo") == []


def follow_tours(terminal: Terminal, folder: Path) -> None:
    """The CLI tour line by line, then the Python tour; a line fails when a file it reads
    is missing, when it fails, or when it prints a traceback."""
    for block in blocks("CLI tour", "sh"):
        for line in commands(block):
            for name in named_inputs(line):
                assert (folder / name).exists(), (
                    f"`{line}` reads {name}, which no earlier line of the tour makes"
                )
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
