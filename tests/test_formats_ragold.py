"""RAGold: our export passes RAGold's schema rules; v1 imports; newer versions are refused."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from assay.errors import InvalidInput
from assay.formats import get_format
from assay.formats.ragold import read
from assay.gold.item_lists import list_items
from assay.gold.items import get_item
from assay.records import Project
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from tests.test_transfer import LEAVE, POLICY, counts, rich_project

DOC_A = "0b5a7c3e-0000-11ef-8000-000000000001"
DOC_B = "0b5a7c3e-0000-11ef-8000-000000000002"
ANN = "1c6b8d4f-0000-11ef-8000-000000000003"


def check_ragold_schema(data: dict[str, Any]) -> None:
    """RAGold's zod schema v2 (notes §1.2), reproduced: names, types, language enum, version."""
    strings = ("author", "project", "notes", "createdAt", "updatedAt")
    assert data["version"] == 2
    assert all(isinstance(data[k], str) for k in strings)
    assert data["language"] in ("en", "de")
    assert isinstance(data["annotations"], dict) and isinstance(data["documents"], dict)
    for annotation in data["annotations"].values():
        for key in ("query", "queryType", "response", "notes", "createdAt", "updatedAt"):
            assert isinstance(annotation[key], str), key
        for key in ("relevantChunks", "distractingChunks"):
            for chunk in annotation[key]:
                assert isinstance(chunk["content"], str) and chunk["content"].strip()
                assert chunk.get("documentId") in data["documents"]  # UI rule: chunks name a doc
        if annotation["queryType"] == "unanswerable":
            assert annotation["relevantChunks"] == []
    for doc in data["documents"].values():
        assert isinstance(doc["name"], str) and doc["name"]
        assert isinstance(doc["size"], int)
        for key in ("notes", "createdAt", "updatedAt"):
            assert isinstance(doc[key], str)
    iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
    assert iso.match(data["createdAt"])
    for doc in data["documents"].values():  # the documents' own dates, not ""
        assert iso.match(doc["createdAt"]) and iso.match(doc["updatedAt"])


def test_export_passes_ragold_schema(ws: Workspace, project: Project, tmp_path: Path) -> None:
    rich_project(ws, project)
    notes = get_format("ragold").write(export_bundle(ws, project), tmp_path / "r.zip")
    assert any("first turn" in n for n in notes)
    with zipfile.ZipFile(tmp_path / "r.zip") as zf:
        raw = zf.read("annotations.json").decode()
        data = json.loads(raw)
        check_ragold_schema(data)
        assert raw.startswith('{\n  "version": 2')
        for key, doc in data["documents"].items():
            assert zf.read(f"files/{key}/{doc['name']}") in (POLICY.encode(), LEAVE.encode())
    # and it comes back: items, documents, evidence located again
    report = import_bundle(ws, "back", read(tmp_path / "r.zip"))
    assert report.count("skipped") == 0
    assert counts(ws, "back")[:2] == (2, 3)


def test_or_groups_are_named_and_come_back(ws: Workspace, project: Project, tmp_path: Path) -> None:
    """RAGold has no alternatives: the export says so per item and keeps the groups in an
    extra key that RAGold ignores and our import reads back."""
    rich_project(ws, project)
    notes = get_format("ragold").write(export_bundle(ws, project), tmp_path / "r.zip")
    grouped = [n for n in notes if "OR groups" in n]
    assert len(grouped) == 1 and "'relevantGroups'" in grouped[0]
    with zipfile.ZipFile(tmp_path / "r.zip") as zf:
        data = json.loads(zf.read("annotations.json"))
    check_ragold_schema(data)
    (annotation,) = [a for a in data["annotations"].values() if "relevantGroups" in a]
    assert annotation["relevantGroups"] == [[0, 1], [2]]
    assert len(annotation["relevantChunks"]) == 3
    import_bundle(ws, "back", read(tmp_path / "r.zip"))
    back = get_project(ws, "back")
    grouping = []
    for summary in list_items(ws, back, limit=10)[1]:
        for turn in get_item(ws, back, summary.id).turns:
            groups: dict[int | None, set[str]] = {}
            for e in turn.evidence:
                if e.label == "relevant":
                    groups.setdefault(e.group, set()).add(e.text)
            grouping.append(sorted(groups.values(), key=len))
    assert [
        {"Taxis only at night."},
        {"Hotels are refunded up to 140 euros per night.", "30 days of paid leave"},
    ] in grouping


def test_bad_relevant_groups_are_refused(tmp_path: Path) -> None:
    chunks = [{"content": "Hotels.", "documentId": DOC_A}]
    for groups, message in (
        ("x", "must be a list"),
        ([[0], [0]], "position 0 is not a relevant chunk or is in two groups"),
        ([[3]], "position 3"),
        ([["0"]], "whole numbers"),
    ):
        data = {
            "annotations": {
                ANN: {"query": "q", "relevantChunks": chunks, "relevantGroups": groups}
            },
            "documents": {DOC_A: {"name": "a.txt"}},
        }
        path = ragold_zip(tmp_path / "g.zip", data, {f"files/{DOC_A}/a.txt": b"Hotels."})
        with pytest.raises(InvalidInput, match=f"relevantGroups.*{message}"):
            read(path)


def ragold_zip(path: Path, data: dict[str, Any], files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("annotations.json", json.dumps(data))
        for name, content in files.items():
            zf.writestr(name, content)
    return path


def test_v1_file_imports_leniently(ws: Workspace, tmp_path: Path) -> None:
    data = {
        "version": 1,
        "author": "Ana",
        "project": "Old",
        "description": "from 2024",
        "language": "de",
        "annotations": {
            ANN: {
                "query": "Wie viel für Hotels?",
                "queryType": "fact_single",
                "relevantChunks": [
                    {"content": "Hotels are refunded  up to 140 euros", "documentId": DOC_A},
                    {"content": "Not in the document at all", "documentId": DOC_A},
                    {"content": "   "},
                ],
                "response": "140 Euro",
                "reviewer": "kept as unknown key",
            }
        },
        "documents": {DOC_A: {"filename": "policy.txt", "description": "travel"}},
    }
    path = ragold_zip(tmp_path / "v1.zip", data, {f"files/{DOC_A}/policy.txt": POLICY.encode()})
    bundle = read(path)
    assert bundle.project.notes == "from 2024" and bundle.project.language == "de"
    report = import_bundle(ws, "old", bundle)
    item_outcome = next(o for o in report.outcomes if o.kind == "item")
    assert item_outcome.status == "flagged" and "1 passage(s) not found" in item_outcome.message
    item = get_item(ws, get_project(ws, "old"), ANN)
    anchors = [e.anchor for e in item.turns[0].evidence]
    assert anchors == ["ok", "unlocated"]
    assert item.turns[0].evidence[0].text == "Hotels are refunded up to 140 euros"
    assert item.extra["ragold"]["unknown"] == {"reviewer": "kept as unknown key"}
    get_format("ragold").write(export_bundle(ws, get_project(ws, "old")), tmp_path / "again.zip")
    with zipfile.ZipFile(tmp_path / "again.zip") as zf:
        again = json.loads(zf.read("annotations.json"))
    check_ragold_schema(again)
    assert again["annotations"][ANN]["reviewer"] == "kept as unknown key"
    assert list(again["documents"]) == [DOC_A]


def test_bad_ragold_files(ws: Workspace, project: Project, tmp_path: Path) -> None:
    rich_project(ws, project)
    before = counts(ws, "test")
    base = {"version": 2, "annotations": {}, "documents": {DOC_B: {"name": "x.txt"}}}
    cases: dict[str, tuple[dict[str, Any], str]] = {
        "newer": ({**base, "version": 3}, "requires a newer version of RAGold"),
        "language": ({**base, "language": "fr"}, "'language' must be 'en' or 'de'"),
        "types": ({**base, "annotations": {ANN: {"query": 5}}}, f"annotation '{ANN}'.*'query'"),
        "missing file": (base, f"document '{DOC_B}': its file 'files/{DOC_B}/x.txt' is missing"),
    }
    for label, (data, message) in cases.items():
        path = ragold_zip(tmp_path / f"{label}.zip", data, {})
        with pytest.raises(InvalidInput, match=message):
            import_bundle(ws, "test", read(path))
        assert counts(ws, "test") == before, label
    lenient = import_bundle(ws, "test", read(tmp_path / "missing file.zip"), lenient=True)
    assert lenient.count("skipped") == 1
    path = tmp_path / "bad.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("annotations.json", "{ nope")
    with pytest.raises(InvalidInput, match=r"annotations\.json: malformed JSON"):
        read(path)
