"""``assay items list|show|export-one``: the operations the web list, the editor and the JSON
API offer on items, on a real SQLite workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.documents import list_documents
from assay.corpus.ingest import replace_document
from assay.formats import get_format
from assay.gold.item_lists import list_items
from assay.gold.items import create_item
from assay.people.actors import account_for
from assay.records import Evidence, Item, Turn, to_json
from assay.store.projects import get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace

LEAVE = "Every employee has 30 days of annual leave. Leave must be requested in advance.\n"


def invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(make_app(), ["--home", str(home), *args])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "leave.txt").write_text(LEAVE)
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    result = invoke(home, "ingest", str(corpus), "--project", "handbook")
    assert result.exit_code == 0, result.output
    return home


@pytest.fixture
def ids(home: Path) -> dict[str, str]:
    """Three items made through the library: an accepted one with evidence, a draft, and a
    submitted conversation."""
    ws = Workspace.open(Settings(home=home))
    try:
        project = get_project(ws, "handbook")
        doc = list_documents(ws, project)[0]
        start = LEAVE.index("30 days")
        evidence = Evidence(doc_id=doc.id, start=start, end=start + 7, text="30 days")
        leave = create_item(
            ws,
            project,
            Item(
                notes="checked twice",
                turns=[
                    Turn(
                        query="How many days of leave?",
                        answer="30 days.",
                        evidence=[evidence],
                    )
                ],
            ),
            author=account_for(ws, "ana"),
            status="accepted",
        )
        draft = create_item(
            ws,
            project,
            Item(turns=[Turn(query="Who approves travel?")]),
            author=account_for(ws, "ben"),
        )
        chat = create_item(
            ws,
            project,
            Item(
                kind="conversation",
                turns=[Turn(query="Leave?", answer="30 days."), Turn(query="And travel?")],
            ),
            author=account_for(ws, "ana"),
            status="submitted",
        )
        return {"leave": leave.id, "draft": draft.id, "chat": chat.id}
    finally:
        ws.close()


def listed(home: Path, *args: str) -> dict[str, object]:
    result = invoke(home, "items", "list", "--json", *args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert isinstance(data, dict)
    return data


def test_list_filters_like_the_web_list(home: Path, ids: dict[str, str]) -> None:
    def found(*args: str) -> set[str]:
        return {row["id"] for row in listed(home, *args)["items"]}  # type: ignore[attr-defined]

    assert found() == set(ids.values())
    assert found("--status", "accepted") == {ids["leave"]}
    assert found("--kind", "conversation") == {ids["chat"]}
    assert found("--author", "ben") == {ids["draft"]}
    assert found("--text", "TRAVEL") == {ids["draft"], ids["chat"]}
    assert found("--type", "unanswerable") == set()


def test_list_json_is_the_library_page(home: Path, ids: dict[str, str]) -> None:
    first = listed(home, "--page-size", "2", "--sort", "created")
    second = listed(home, "--page-size", "2", "--sort", "created", "--page", "2")
    ws = Workspace.open(Settings(home=home))
    try:
        project = get_project(ws, "handbook")
        total, rows = list_items(ws, project, sort="created", limit=2)
    finally:
        ws.close()
    assert first == {
        "total": 3, "total_exact": True, "offset": 0, "limit": 2, "items": to_json(rows)
    }  # fmt: skip
    assert [row["id"] for row in second["items"]] == [ids["chat"]]  # type: ignore[attr-defined]
    assert total == 3


def test_list_table_and_a_bad_sort(home: Path, ids: dict[str, str]) -> None:
    result = invoke(home, "items", "list", "--status", "draft")
    assert result.exit_code == 0, result.output
    assert ids["draft"] in result.output and "Who approves travel?" in result.output
    assert "page 1 of 1, 1 item(s)" in result.output
    bad = invoke(home, "items", "list", "--sort", "size")
    assert bad.exit_code == 1
    assert "unknown sort 'size'" in bad.output


def test_show_prints_turns_evidence_and_findings(home: Path, ids: dict[str, str]) -> None:
    result = invoke(home, "items", "show", ids["leave"])
    assert result.exit_code == 0, result.output
    assert "How many days of leave?" in result.output
    start = LEAVE.index("30 days")
    assert f"relevant group 1: leave.txt, chars {start}–{start + 7}" in result.output
    assert "notes: checked twice" in result.output

    chat = invoke(home, "items", "show", ids["chat"]).output
    assert "Turn 1" in chat and "Turn 2" in chat and "question: And travel?" in chat
    data = json.loads(invoke(home, "items", "show", ids["chat"], "--json").output)
    assert [t["query"] for t in data["item"]["turns"]] == ["Leave?", "And travel?"]
    assert data["item"]["status"] == "submitted"
    assert isinstance(data["findings"], list)

    cited = json.loads(invoke(home, "items", "show", ids["leave"], "--json").output)
    evidence = cited["item"]["turns"][0]["evidence"][0]
    assert evidence["text"] == "30 days" and evidence["anchor"] == "ok"
    assert cited["documents"] == {evidence["doc_id"]: "leave.txt"}


def test_show_an_unknown_item_names_it(home: Path, ids: dict[str, str]) -> None:
    result = invoke(home, "items", "show", "no-such-item")
    assert result.exit_code == 1
    assert "no-such-item" in result.output


def test_export_one_writes_only_that_item_whatever_its_status(
    home: Path, ids: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "draft.zip"
    result = invoke(home, "items", "export-one", ids["draft"], "native", str(target))
    assert result.exit_code == 0, result.output
    bundle = get_format("native").read(target)
    items = list(bundle.items)
    assert [i.id for i in items] == [ids["draft"]]
    assert items[0].status == "draft"
    assert items[0].turns[0].query == "Who approves travel?"
    assert [d.name for d in bundle.documents] == ["leave.txt"]


def test_export_one_of_an_unknown_item_writes_nothing(
    home: Path, ids: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "nothing.zip"
    result = invoke(home, "items", "export-one", "no-such-item", "native", str(target))
    assert result.exit_code == 1
    assert "no item 'no-such-item'" in result.output
    assert not target.exists()


def test_items_needing_review_are_listed_and_not_exported_one_by_one(
    home: Path, ids: dict[str, str], tmp_path: Path
) -> None:
    ws = Workspace.open(Settings(home=home))
    try:
        project = get_project(ws, "handbook")
        doc = list_documents(ws, project)[0]
        replace_document(ws, project, doc, "leave.txt", LEAVE.replace("30", "28").encode())
    finally:
        ws.close()
    rows = listed(home, "--needs-review")["items"]
    assert [(r["id"], r["needs_review"]) for r in rows] == [(ids["leave"], True)]  # type: ignore[attr-defined]
    assert "needs review" in invoke(home, "items", "list").output
    refused = invoke(home, "items", "export-one", ids["leave"], "csv", str(tmp_path / "x.csv"))
    assert refused.exit_code == 1 and ids["leave"] in refused.output
    assert not (tmp_path / "x.csv").exists()
