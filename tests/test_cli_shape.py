"""The CLI's shape: version, help, flags, where the workspace comes from, errors, logs, imports."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay
from assay.cli import make_app
from assay.cli.common import summary
from assay.cli.projects import LANGUAGE_CODES
from assay.cli.reference import command_paths
from assay.cli.serve import bind
from assay.cli.synthesize import DEFAULT_TYPES
from assay.errors import BackendUnavailable
from assay.store.db import head_revision
from tests.conftest import ON_POSTGRES

ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str, input: str | None = None, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(make_app(), list(args), input=input, env=env)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "travel.md").write_text(
        "# Travel\n\nHotel costs are capped at 120 euros per night.\n"
    )
    (folder / "leave.txt").write_text("Every employee has 30 days of annual leave.\n")
    return folder


def cut(help_text: str) -> list[str]:
    """Lines of a --help text that end in click's '...' (the usage line aside)."""
    return [
        line
        for line in help_text.splitlines()
        if line.rstrip().endswith("...") and not line.startswith("Usage:")
    ]


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output == f"assay {assay.__version__}\n"


def test_help_summaries_are_whole() -> None:
    """click cuts a long first line at the terminal width with '...'; ours are whole."""
    result = CliRunner().invoke(make_app(), ["--help"], terminal_width=80)
    assert result.exit_code == 0
    assert not cut(result.output)
    flat = " ".join(result.output.split())
    from assay.cli.corpus import ingest

    assert summary(ingest.__doc__) in flat
    assert "--version" in result.output and "--verbose" in result.output


def test_every_command_has_a_summary_in_its_groups_help() -> None:
    for path in command_paths(make_app()):
        output = CliRunner().invoke(make_app(), [*path, "--help"], terminal_width=80).output
        assert not cut(output), f"cut summary in `assay {' '.join(path)} --help`"


def test_top_k_is_spelt_the_same_everywhere() -> None:
    for path in (["search"], ["eval"]):
        output = invoke(*path, "--help").output
        assert "-k, --top-k" in output, path
        assert "--k " not in output  # the old spelling of eval still works, unlisted


def test_constants_written_out_for_a_fast_help_match_the_code() -> None:
    from assay.gold.synthesis import DEFAULT_TYPES as types
    from assay.store.projects import LANGUAGES

    assert ", ".join(LANGUAGES) == LANGUAGE_CODES
    assert ",".join(types) == DEFAULT_TYPES


def test_head_revision_matches_alembic() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(ROOT / "src" / "assay" / "store" / "migrations"))
    assert head_revision() == ScriptDirectory.from_config(config).get_current_head()


def test_building_the_cli_loads_no_heavy_module() -> None:
    code = (
        "import sys, assay.cli; assay.cli.make_app();"
        "print(','.join(sorted(m for m in ('sqlalchemy', 'alembic', 'pydantic', 'numpy', "
        "'pyarrow', 'tantivy', 'fastapi', 'httpx', 'rich.progress') if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_commands_other_than_init_do_not_create_a_workspace(tmp_path: Path) -> None:
    home = tmp_path / "nowhere"
    result = invoke("--home", str(home), "documents")
    assert result.exit_code == 1
    assert f"no Assay workspace in {home.resolve()}" in result.output
    assert "--home" in result.output and "assay init" in result.output
    assert not home.exists()

    result = invoke("documents", env={"ASSAY_HOME": str(home)})
    assert result.exit_code == 1
    assert f"ASSAY_HOME={home}" in result.output
    assert not home.exists()

    assert invoke("--home", str(home), "init").exit_code == 0
    assert (home / "assay.db").is_file() != ON_POSTGRES  # the PostgreSQL pass: no SQLite file
    listed = invoke("--home", str(home), "projects", "--json")
    assert listed.exit_code == 0 and json.loads(listed.stdout) == []


def test_the_default_workspace_is_named_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_HOME", raising=False)
    result = invoke("documents")
    assert result.exit_code == 1
    assert "the default ./assay-data" in result.output and "ASSAY_HOME is not set" in result.output
    assert not (tmp_path / "assay-data").exists()


def test_an_empty_home_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("init", env={"ASSAY_HOME": ""})
    assert result.exit_code == 1
    assert "ASSAY_HOME is empty" in result.output
    result = invoke("--home", "", "init")
    assert result.exit_code == 1
    assert "--home is empty" in result.output
    assert list(tmp_path.iterdir()) == []


def test_documents_json_says_doc_id_and_search_shows_names(tmp_path: Path, corpus: Path) -> None:
    home = str(tmp_path / "ws")
    assert invoke("--home", home, "init", "--project", "handbook").exit_code == 0
    assert invoke("--home", home, "ingest", str(corpus)).exit_code == 0
    docs = json.loads(invoke("--home", home, "documents", "--json").stdout)
    assert all("doc_id" in d and "id" not in d for d in docs)
    found = invoke("--home", home, "search", "hotel night", "--top-k", "1")
    assert found.exit_code == 0
    assert "1. travel.md" in found.output


def test_projects_settings_choose_the_generator(tmp_path: Path, corpus: Path) -> None:
    home = str(tmp_path / "ws")
    invoke("--home", home, "init", "--project", "handbook")
    endpoint = '{"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}'
    result = invoke("--home", home, "projects", "settings", "--generator", endpoint, "--json")
    assert result.exit_code == 0, result.output
    generator = json.loads(result.stdout)["generator"]
    assert (generator["kind"], generator["model"]) == ("openai", "m")
    result = invoke("--home", home, "projects", "settings", "--generator", '{"api_key": "x"}')
    assert result.exit_code == 1 and "ASSAY_LLM_API_KEY" in result.output
    back = invoke("--home", home, "projects", "settings", "--generator", "offline", "--json")
    assert json.loads(back.stdout)["generator"]["kind"] == "offline"
    result = invoke("--home", home, "projects", "settings", "--generator", "gpt")
    assert result.exit_code == 1 and "offline, local" in result.output


def test_projects_settings_say_whether_annotators_see_every_item(tmp_path: Path) -> None:
    home = str(tmp_path / "ws")
    invoke("--home", home, "init", "--project", "handbook")
    shown = invoke("--home", home, "projects", "settings")
    assert "annotators see: only their own items" in shown.output
    result = invoke("--home", home, "projects", "settings", "--annotators-see-all", "--json")
    assert json.loads(result.stdout)["annotators_see_all"] is True
    again = invoke("--home", home, "projects", "settings", "--annotators-own-only")
    assert "annotators see: only their own items" in again.output, again.output
    reset = invoke(
        "--home", home, "projects", "settings", "--reset", "annotators_see_all", "--json"
    )
    assert json.loads(reset.stdout)["annotators_see_all"] is False


def test_a_busy_port_names_the_setting(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with pytest.raises(BackendUnavailable, match="--port or ASSAY_PORT"):
            bind("127.0.0.1", port)
        home = str(tmp_path / "ws")
        invoke("--home", home, "init")
        result = invoke("--home", home, "serve", "--port", str(port))
        assert result.exit_code == 1
        assert f"port {port} on 127.0.0.1 is already in use" in result.output
        assert "serving on" not in result.output and "Traceback" not in result.output
        demo_home = tmp_path / "demo"
        result = invoke("--home", str(demo_home), "demo", env={"ASSAY_PORT": str(port)})
        assert result.exit_code == 1
        assert "--port or ASSAY_PORT" in result.output
        assert "Created the demo project" not in result.output  # refused before the work
    finally:
        taken.close()


def test_serve_says_where_only_once_bound(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert invoke("--home", str(home), "init").exit_code == 0
    with subprocess.Popen(
        [sys.executable, "-m", "assay", "--home", str(home), "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            assert line.startswith("Assay is serving on http://127.0.0.1:")
            port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
            assert port != 0
            with socket.create_connection(("127.0.0.1", port), timeout=10):
                pass  # the socket was listening when the line was printed
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_serve_answers_to_the_host_it_was_told_to_bind(tmp_path: Path) -> None:
    """`--host ADDRESS` makes ADDRESS an allowed Host, as ASSAY_HOST does (127.0.0.2 stands
    in for a LAN address: it is not one of the loopback names allowed by default)."""
    import httpx

    home = tmp_path / "ws"
    assert invoke("--home", str(home), "init").exit_code == 0
    command = [sys.executable, "-m", "assay", "--home", str(home), "serve"]
    with subprocess.Popen(
        [*command, "--host", "127.0.0.2", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={
            k: v
            for k, v in os.environ.items()
            if not k.startswith("ASSAY_") or k == "ASSAY_DATABASE_URL"  # the test's database
        },
    ) as server:
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            assert line.startswith("Assay is serving on http://127.0.0.2:")
            base = line.split()[4]
            answer = httpx.get(f"{base}api/projects", timeout=30)
            assert answer.status_code == 200, answer.text
            other = httpx.get(f"{base}api/projects", headers={"Host": "evil.example"}, timeout=30)
            assert other.status_code == 400  # other names are still refused
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_library_logs_stay_quiet_unless_verbose(tmp_path: Path, corpus: Path) -> None:
    """pypdf logs warnings for damaged PDFs; they must not reach the terminal."""
    script = (
        "import logging, sys\n"
        "from assay.cli import quiet_logs\n"
        "quiet_logs(sys.argv[1] == 'verbose')\n"
        "logging.getLogger('pypdf._reader').warning('incorrect startxref pointer')\n"
    )
    quiet = subprocess.run(
        [sys.executable, "-c", script, "quiet"], capture_output=True, text=True, check=True
    )
    assert quiet.stderr == ""
    loud = subprocess.run(
        [sys.executable, "-c", script, "verbose"], capture_output=True, text=True, check=True
    )
    assert "WARNING pypdf._reader: incorrect startxref pointer" in loud.stderr


def test_a_damaged_pdf_is_ingested_without_log_lines(tmp_path: Path) -> None:
    """PDFium refuses a PDF with a broken header; pypdf reads it and logs a warning."""
    data = (ROOT / "tests" / "data" / "parsing" / "sample.pdf").read_bytes()
    home = tmp_path / "ws"
    run = [sys.executable, "-m", "assay", "--home", str(home)]
    subprocess.run([*run, "init", "-p", "p"], check=True, capture_output=True)
    outputs = []
    for number, flags in enumerate(([], ["--verbose"])):
        broken = tmp_path / f"broken-{number}.pdf"
        broken.write_bytes(b"%PDX" + data[4:] + b"%" + str(number).encode())
        done = subprocess.run([*run, *flags, "ingest", str(broken)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        outputs.append(done.stderr + done.stdout)
    assert "pypdf._reader" not in outputs[0] and "invalid pdf header" not in outputs[0]
    assert "WARNING pypdf._reader: invalid pdf header" in outputs[1]


def test_a_document_is_found_by_its_name(tmp_path: Path, corpus: Path) -> None:
    home = str(tmp_path / "ws")
    invoke("--home", home, "init", "--project", "handbook")
    invoke("--home", home, "ingest", str(corpus))
    shown = invoke("--home", home, "document", "leave.txt", "--text")
    assert shown.exit_code == 0 and shown.stdout == "Every employee has 30 days of annual leave.\n"
    missing = invoke("--home", home, "document", "nope.txt")
    assert missing.exit_code == 1
    assert "no document with id or name 'nope.txt'" in missing.output


def test_an_option_has_the_same_short_name_in_every_command() -> None:
    from typer.main import get_command

    short = {"--project": "-p", "--chunking": "-c", "--top-k": "-k", "--json": None}
    seen: dict[str, set[str]] = {}

    def walk(command: object, path: str) -> None:
        for param in getattr(command, "params", []):
            if getattr(param, "hidden", False):
                continue
            names = [n for n in param.opts if n.startswith("--")]
            for name in names:
                seen.setdefault(name, set()).add(path)
                if name in short and short[name] is not None:
                    assert short[name] in param.opts, f"{path}: {name} without {short[name]}"
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(get_command(make_app()), "assay")
    assert "--k" not in seen  # only the hidden old spelling of eval, never listed
    assert len(seen["--chunking"]) >= 5 and len(seen["--top-k"]) == 3  # search, eval, suggest


def test_eval_keeps_the_old_k_spelling(tmp_path: Path) -> None:
    (tmp_path / "qrels.tsv").write_text("q1 0 d1 1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d2 1 2.0 s\nq1 Q0 d1 2 1.0 s\n")
    args = ["eval", "--qrels", str(tmp_path / "qrels.tsv"), "--run", str(tmp_path / "run.trec")]
    values = {}
    for flag in ("-k", "--top-k", "--k"):
        result = invoke(*args, "--metric", "R@10", flag, "1", "--json")
        assert result.exit_code == 0, result.output
        values[flag] = json.loads(result.stdout)["metrics"]["R@10"]
    assert values == {"-k": 0.0, "--top-k": 0.0, "--k": 0.0}  # d1 is cut at depth 1
    whole = json.loads(invoke(*args, "--metric", "R@10", "--json").stdout)["metrics"]["R@10"]
    assert whole == 1.0


def test_opening_a_current_workspace_does_not_load_alembic(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert invoke("--home", str(home), "init").exit_code == 0  # creates it: migrations run
    code = (
        "import sys\nfrom assay import open_workspace\n"
        f"open_workspace({str(home)!r}).close()\nprint('alembic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
