"""The CLI, driven in-process like a user would type it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import make_app


@pytest.fixture
def cli(tmp_path: Path):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    home = tmp_path / "ws"

    def invoke(*args: str, input: str | None = None, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(make_app(), ["--home", str(home), *args], input=input, env=env)

    return invoke


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "travel.md").write_text(
        "# Travel\n\nTrain tickets are reimbursed in second class.\n\n"
        "Hotel costs are capped at 120 euros per night.\n"
    )
    (folder / "leave.txt").write_text("Every employee has 30 days of annual leave.\r\n")
    return folder


def test_help_lists_the_commands(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("--help")
    assert result.exit_code == 0
    for command in (
        "init",
        "projects",
        "ingest",
        "documents",
        "document",
        "chunk",
        "chunkings",
        "search",
        "serve",
        "demo",
    ):
        assert command in result.output


def test_tour(cli, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("init").exit_code == 0
    result = cli("ingest", str(corpus), "--project", "handbook", "--language", "en")
    assert result.exit_code == 0, result.output
    assert "2 added, 0 duplicate(s), 0 error(s)" in result.output

    listed = json.loads(cli("projects", "--json").stdout)
    assert [(p["name"], p["documents"]) for p in listed] == [("handbook", 2)]

    docs = json.loads(cli("documents", "--json").stdout)
    assert sorted(d["name"] for d in docs) == ["leave.txt", "travel.md"]
    assert set(docs[0]) >= {"doc_id", "name", "media_type", "size", "sha256", "warnings"}
    assert "id" not in docs[0]
    leave = next(d for d in docs if d["name"] == "leave.txt")

    text = cli("document", leave["doc_id"], "--text")
    assert text.stdout == "Every employee has 30 days of annual leave.\n"
    assert cli("document", leave["doc_id"][:8], "--text").stdout == text.stdout

    hits = json.loads(cli("search", "hotel night", "-k", "3", "--json").stdout)
    assert hits[0]["rank"] == 1
    assert set(hits[0]) >= {
        "doc_id",
        "chunk_id",
        "start",
        "end",
        "score",
        "rank",
        "text",
        "snippet",
        "highlights",
    }
    assert "120 euros" in hits[0]["text"]

    made = cli("chunk", "--method", "sentences", "--name", "sent", "--param", "sentences=1")
    assert made.exit_code == 0, made.output
    chunkings = json.loads(cli("chunkings", "--json").stdout)
    assert {c["name"]: c["chunks"] for c in chunkings}["sent"] >= 3
    by_sentence = json.loads(cli("search", "train", "--chunking", "sent", "--json").stdout)
    assert by_sentence[0]["text"].startswith("Train tickets are reimbursed")

    chunks = json.loads(cli("document", leave["doc_id"], "--chunks", "sent", "--json").stdout)
    assert chunks[0]["text"] == "Every employee has 30 days of annual leave."


def test_errors_name_what_is_wrong(cli, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli("init")
    result = cli("documents", "--project", "nope")
    assert result.exit_code == 1
    assert "no project named 'nope'" in result.output

    cli("ingest", str(corpus), "--project", "p")
    result = cli("chunk", "--method", "magic", "--name", "x")
    assert result.exit_code == 1
    assert "unknown chunker 'magic'" in result.output

    big = tmp_path / "big.txt"
    big.write_text("x" * 3000)
    result = cli("ingest", str(big), env={"ASSAY_MAX_FILE_MB": "0.001"})
    assert result.exit_code == 1
    assert "big.txt: " in result.output and "over the 0.001 MB limit" in result.output

    result = cli("chunk", "--method", "recursive", "--name", "y", "--param", "max_length=0")
    assert result.exit_code == 1
    assert "max_length" in result.output

    cli("projects", "create", "second")
    result = cli("documents")
    assert result.exit_code == 1
    assert "several projects" in result.output


def test_delete_asks_first(cli, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    cli("init")
    cli("ingest", str(corpus), "--project", "p")
    refused = cli("projects", "delete", "p", input="n\n")
    assert refused.exit_code == 1
    assert json.loads(cli("projects", "--json").stdout)[0]["name"] == "p"
    accepted = cli("projects", "delete", "p", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert json.loads(cli("projects", "--json").stdout) == []


def test_stdin_ingest(cli) -> None:  # type: ignore[no-untyped-def]
    cli("init")
    result = cli("ingest", "-", "--project", "notes", input="Pasted text about ferries.\n")
    assert result.exit_code == 0, result.output
    docs = json.loads(cli("documents", "--json").stdout)
    assert docs[0]["name"] == "stdin.txt"
