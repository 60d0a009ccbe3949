"""CSV and Hugging Face folders: round trips, the dataset card, and bad files."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from assay.errors import InvalidInput
from assay.formats import get_format
from assay.gold.item_lists import iter_items, list_items
from assay.records import Project
from assay.store.projects import get_project, list_projects
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from tests.test_transfer import counts, rich_project


def exported_csv(ws: Workspace, project: Project, tmp_path: Path) -> Path:
    """The rich project's items as CSV."""
    rich_project(ws, project)
    path = tmp_path / "items.csv"
    get_format("csv").write(export_bundle(ws, project), path)
    return path


def test_csv_round_trip_into_the_same_documents(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    path = exported_csv(ws, project, tmp_path)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3
    assert {r["status"] for r in rows} == {"accepted", "draft", "submitted"}
    # the same items into a copy of the project: passages find their documents by name
    native = tmp_path / "docs.zip"
    get_format("native").write(export_bundle(ws, project, statuses=[]), native)
    import_bundle(ws, "copy", get_format("native").read(native))
    report = import_bundle(ws, "copy", get_format("csv").read(path))
    assert report.count("skipped") == 0
    copy = get_project(ws, "copy")
    assert list_items(ws, copy)[0] == 3
    again = tmp_path / "again.csv"
    get_format("csv").write(export_bundle(ws, copy), again)
    with open(again, newline="", encoding="utf-8") as handle:
        back = {r["query"]: r for r in csv.DictReader(handle)}
    for row in rows:
        for column in (
            "kind",
            "status",
            "query_type",
            "answer",
            "relevant",
            "distracting",
            "turns",
        ):
            assert back[row["query"]][column] == row[column], column


def test_csv_plain_text_passages_and_bad_files(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    rich_project(ws, project)
    before = counts(ws, "test")
    path = tmp_path / "plain.csv"
    path.write_text(
        'query,answer,relevant\nHotel?,140,"Hotels are refunded up to 140 euros\n\nNowhere"\n'
    )
    bundle = get_format("csv").read(path)
    assert [e.text for e in next(iter(bundle.items)).turns[0].evidence] == [
        "Hotels are refunded up to 140 euros",
        "Nowhere",
    ]
    cases = {
        "no query": ("answer\nx\n", "column 'query' is missing"),
        "json": ('query,relevant\nq,"[{""doc"": 5}]"\n', "line 2, column 'relevant', passage 1"),
        "status": ("query,status\nq,done\n", "field 'status' is 'done'"),
        "duplicate": (
            "id,query\na,q\na,q\n",
            "line 3: field 'id' repeats the one at duplicate.csv line 2",
        ),
        "cells": ("query\nq,extra\n", "more cells than columns"),
    }
    for label, (text, message) in cases.items():
        bad = tmp_path / f"{label}.csv"
        bad.write_text(text)
        with pytest.raises(InvalidInput, match=message):
            import_bundle(ws, "test", get_format("csv").read(bad))
        assert counts(ws, "test") == before, label


def test_hf_folder_loads_with_datasets_offline(
    ws: Workspace, project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rich_project(ws, project)
    folder = tmp_path / "hf"
    get_format("hf").write(export_bundle(ws, project, chunking="paragraphs"), folder)
    card = (folder / "README.md").read_text()
    header = card.split("---\n")[1]
    assert "path: data/items.parquet" in header and "config_name: documents" in header
    rows = pq.read_table(folder / "data" / "items.parquet").to_pylist()
    accepted = next(r for r in rows if r["status"] == "accepted")
    assert accepted["retrieval_gt"] == [["p-2", "l-1"], ["p-2"]]
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    loaded = datasets.load_dataset(
        "parquet",
        data_files={"test": str(folder / "data" / "items.parquet")},
        cache_dir=str(tmp_path / "cache"),
    )
    assert loaded["test"].num_rows == 3
    assert set(loaded["test"].column_names) >= {"query", "answer", "retrieval_gt", "relevant"}
    # and back into a project
    report = import_bundle(ws, "from-hf", get_format("hf").read(folder))
    assert report.count("skipped") == 0
    assert counts(ws, "from-hf")[:2] == (2, 3)


def test_bad_hf_files(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with pytest.raises(InvalidInput, match=r"items\.parquet: missing"):
        get_format("hf").read(tmp_path)
    (tmp_path / "data" / "items.parquet").write_bytes(b"garbage")
    with pytest.raises(InvalidInput, match="not a readable parquet"):
        get_format("hf").read(tmp_path)


def test_csv_cells_never_start_a_formula_and_read_back_exactly(tmp_path: Path) -> None:
    from assay.formats.csv import guard, unguard

    for text in ('=HYPERLINK("http://x")', "+1", "-5 euros", "@SUM(A1)", "'quoted", "'=x", "plain"):
        written = guard(text)
        assert not written.startswith(("=", "+", "-", "@")), text
        assert unguard(written) == text
    assert unguard("'hello") == "'hello"  # a spreadsheet's own apostrophe stays


def test_hf_document_without_text_comes_back(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    """A document without text (a scanned PDF) is exported and imported back."""
    import io

    from pypdf import PdfWriter

    from assay.corpus.documents import list_documents
    from assay.corpus.ingest import ingest_bytes

    rich_project(ws, project)
    blank = PdfWriter()
    blank.add_blank_page(200, 200)
    scan = io.BytesIO()
    blank.write(scan)
    assert ingest_bytes(ws, project, "scan.pdf", scan.getvalue()).text == ""
    folder = tmp_path / "hf"
    get_format("hf").write(export_bundle(ws, project, chunking="paragraphs"), folder)
    bundle = get_format("hf").read(folder)
    assert bundle.issues == []
    report = import_bundle(ws, "from-hf", bundle)
    assert report.count("skipped") == 0
    names = {d.name: d.chars for d in list_documents(ws, get_project(ws, "from-hf"))}
    assert names.get("scan.pdf") == 0 and len(names) == 3


def test_a_streamed_csv_is_read_as_it_is_imported(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    path = exported_csv(ws, project, tmp_path)
    bundle = get_format("csv").stream(path)
    assert not isinstance(bundle.items, list)  # nothing read yet
    assert list(bundle.items) == get_format("csv").read(path).items
    bad = tmp_path / "bad.csv"
    bad.write_bytes(path.read_bytes() + b'x,qa,draft,fact_single,"\xff"\n')
    streamed = get_format("csv").stream(bad)
    with pytest.raises(InvalidInput, match=r"not UTF-8 text \(line 5, byte \d+\)"):
        import_bundle(ws, "copy", streamed)
    with pytest.raises(InvalidInput, match=r"not UTF-8 text \(line 5, byte \d+\)"):
        get_format("csv").read(bad)
    assert [p.name for p in list_projects(ws)] == ["test"]


def test_hf_keeps_the_items_notes(ws: Workspace, project: Project, tmp_path: Path) -> None:
    """Notes are a column of their own (they were lost before, silently)."""
    from assay.gold.items import create_item
    from assay.records import Item, Turn

    rich_project(ws, project)
    create_item(ws, project, Item(turns=[Turn(query="Q?", answer="A.")], notes="ask HR"))
    folder = tmp_path / "hf"
    get_format("hf").write(export_bundle(ws, project, statuses=None), folder)
    rows = pq.read_table(folder / "data" / "items.parquet").to_pylist()
    assert sorted(r["notes"] for r in rows) == ["", "", "", "ask HR"]
    import_bundle(ws, "from-hf", get_format("hf").read(folder))
    copy = get_project(ws, "from-hf")
    assert sorted(i.notes for i in iter_items(ws, copy, statuses=None)) == ["", "", "", "ask HR"]


def test_csv_columns_of_a_spreadsheet_are_kept_and_warned_about(
    ws: Workspace, tmp_path: Path
) -> None:
    """A column Assay does not know (a team's own) is never dropped: each row's cell goes to
    the item's ``extra.columns``, the import says so, and the export carries it."""
    path = tmp_path / "sheet.csv"
    path.write_text("query,answer,priority,owner\nHotel?,140,high,\nTrain?,second,,ann\n")
    report = import_bundle(ws, "sheet", get_format("csv").read(path))
    (flagged,) = [o for o in report.outcomes if o.status == "flagged"]
    assert "'priority', 'owner' are not Assay's" in flagged.message
    project = get_project(ws, "sheet")
    items = iter_items(ws, project, statuses=None)
    kept = {i.turns[0].query: i.extra.get("columns") for i in items}
    assert kept == {"Hotel?": {"priority": "high"}, "Train?": {"owner": "ann"}}
    out = tmp_path / "out.csv"
    get_format("csv").write(export_bundle(ws, project, statuses=None), out)
    back = {i.turns[0].query: i.extra.get("columns") for i in get_format("csv").read(out).items}
    assert back == kept


def test_hf_columns_added_elsewhere_are_kept_and_warned_about(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    import pyarrow as pa

    rich_project(ws, project)
    folder = tmp_path / "hf"
    get_format("hf").write(export_bundle(ws, project, statuses=None), folder)
    table = pq.read_table(folder / "data" / "items.parquet")
    scores = list(range(table.num_rows))
    table = table.append_column("difficulty", pa.array(scores, pa.int64()))
    pq.write_table(table, folder / "data" / "items.parquet")
    report = import_bundle(ws, "from-hf", get_format("hf").read(folder))
    (flagged,) = [o for o in report.outcomes if o.status == "flagged" and o.kind == "record"]
    assert "'difficulty' are not Assay's" in flagged.message
    items = iter_items(ws, get_project(ws, "from-hf"), statuses=None)
    assert sorted(i.extra["columns"]["difficulty"] for i in items) == scores
