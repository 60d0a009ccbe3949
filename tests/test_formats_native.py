"""Native format: project → zip → project → zip is identical; bad archives are refused."""

from __future__ import annotations

import json
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.errors import InvalidInput
from assay.formats import get_format
from assay.formats.common import ArchiveLimits
from assay.formats.native import read
from assay.records import Project
from assay.store.projects import get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from tests.test_transfer import counts, rich_project


def exported(ws: Workspace, project: Project, path: Path) -> bytes:
    get_format("native").write(export_bundle(ws, project), path)
    return path.read_bytes()


def test_native_round_trip_is_identical(
    ws: Workspace, project: Project, tmp_path: Path, new_database: Callable[[], str]
) -> None:
    rich_project(ws, project)
    first = exported(ws, project, tmp_path / "one.zip")
    other = Workspace.open(Settings(home=tmp_path / "other", database_url=new_database()))
    report = import_bundle(other, "test", read(tmp_path / "one.zip"))
    assert report.count("skipped") == 0
    second = exported(other, get_project(other, "test"), tmp_path / "two.zip")
    assert first == second
    with zipfile.ZipFile(tmp_path / "one.zip") as zf:
        manifest = json.loads(zf.read("manifest.json"))
        items = [json.loads(line) for line in zf.read("items.jsonl").splitlines()]
    assert manifest["format"] == "assay" and manifest["version"] == 1
    statuses = sorted(i["status"] for i in items)
    assert statuses == ["accepted", "draft", "submitted"]
    groups = [e["group"] for i in items for t in i["turns"] for e in t["evidence"]]
    assert {1, 2} <= set(groups)
    anchors = {e["anchor"] for i in items for t in i["turns"] for e in t["evidence"]}
    assert anchors == {"ok", "unlocated"}
    other.close()


def write_zip(path: Path, entries: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return path


def valid_entries(tmp_path: Path, ws: Workspace, project: Project) -> dict[str, bytes]:
    rich_project(ws, project)
    exported(ws, project, tmp_path / "good.zip")
    with zipfile.ZipFile(tmp_path / "good.zip") as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_bad_archives_are_refused_and_nothing_changes(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    entries = valid_entries(tmp_path, ws, project)
    before = counts(ws, "test")
    manifest = json.loads(entries["manifest.json"])
    docs = entries["documents.jsonl"].decode()
    first_file = next(n for n in entries if n.startswith("files/"))
    cases: dict[str, tuple[dict[str, bytes | str], str]] = {
        "missing file": (
            {k: v for k, v in entries.items() if k != first_file},
            "missing from the archive",
        ),
        "traversal": ({**entries, "../evil.txt": b"x"}, "unsafe entry name"),
        "absolute": ({**entries, "/etc/evil": b"x"}, "unsafe entry name"),
        "newer": (
            {**entries, "manifest.json": json.dumps({**manifest, "version": 2})},
            "needs a newer Assay",
        ),
        "wrong format": (
            {**entries, "manifest.json": json.dumps({**manifest, "format": "x"})},
            "'format'",
        ),
        "malformed json": ({**entries, "manifest.json": "{not json"}, "malformed JSON at line 1"),
        "malformed line": (
            {**entries, "documents.jsonl": docs + "{oops\n"},
            "documents.jsonl line 3",
        ),
        "duplicate items": (
            {**entries, "items.jsonl": entries["items.jsonl"] + entries["items.jsonl"]},
            "repeats the one at items.jsonl line 1",
        ),
        "wrong type": (
            {**entries, "documents.jsonl": docs.replace('"notes":""', '"notes":5', 1)},
            "field 'notes' must be a string",
        ),
        "no manifest": ({k: v for k, v in entries.items() if k != "manifest.json"}, "no file"),
    }
    for label, (content, message) in cases.items():
        path = write_zip(tmp_path / f"{label}.zip", content)
        with pytest.raises(InvalidInput, match=message):
            import_bundle(ws, "test", read(path), replace=True)
        assert counts(ws, "test") == before, label
    (tmp_path / "garbage.zip").write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(InvalidInput, match="not a readable zip"):
        read(tmp_path / "garbage.zip")


def test_zip_bombs_are_refused(tmp_path: Path) -> None:
    bomb = write_zip(tmp_path / "bomb.zip", {"manifest.json": b"0" * 50_000_000})
    with pytest.raises(InvalidInput, match="zip bomb"):
        read(bomb)
    big = write_zip(tmp_path / "big.zip", {"manifest.json": b"{}", "files/x": b"1" * 2000})
    with pytest.raises(InvalidInput, match="expands past"):
        read(big, ArchiveLimits(max_total_bytes=1000))


def test_a_lying_size_header_is_caught(tmp_path: Path) -> None:
    path = write_zip(tmp_path / "liar.zip", {"manifest.json": json.dumps({"a": "b" * 5000})})
    data = bytearray(path.read_bytes())
    # shrink the declared uncompressed size in the central directory and the local header
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 10)
    struct.pack_into("<I", data, 22, 10)
    path.write_bytes(bytes(data))
    with pytest.raises(InvalidInput, match=r"manifest\.json"):
        read(path)


def test_an_items_unknown_fields_are_kept_and_warned_about(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    """A field this version does not know (a newer Assay's) is kept in the item's extra and
    reported once per name, never refused or dropped."""
    entries: dict[str, bytes | str] = dict(valid_entries(tmp_path, ws, project))
    lines = [json.loads(line) for line in entries["items.jsonl"].splitlines()]  # type: ignore[union-attr]
    lines[0]["priority"] = "high"
    lines[1]["priority"] = "low"
    entries["items.jsonl"] = "".join(json.dumps(line) + "\n" for line in lines)
    path = write_zip(tmp_path / "newer.zip", entries)
    report = import_bundle(ws, "newer", read(path))
    (flagged,) = [o for o in report.outcomes if o.kind == "record"]
    assert flagged.status == "flagged" and "'priority' are not known" in flagged.message
    from assay.gold.item_lists import iter_items

    kept = sorted(
        i.extra["unknown_fields"]["priority"]
        for i in iter_items(ws, get_project(ws, "newer"), statuses=None)
        if "unknown_fields" in i.extra
    )
    assert kept == ["high", "low"]
