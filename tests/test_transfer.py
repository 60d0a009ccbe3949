"""Bundles into and out of projects: one transaction, lenient reports, replace, overlap policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.anchoring import EvidenceIn
from assay.annotation import ItemIn, TurnIn, create_item, list_items
from assay.chunkings import count_chunks, create_chunking, import_chunking, list_chunkings
from assay.cli import make_app
from assay.documents import count_documents
from assay.errors import Conflict, InvalidInput
from assay.formats import (
    Bundle,
    DocumentRecord,
    EvidenceRecord,
    Issue,
    ItemRecord,
    TurnRecord,
    get_format,
)
from assay.formats.groups import retrieval_groups
from assay.ingest import ingest_bytes
from assay.models import Project
from assay.projects import get_project
from assay.transfer import chunks_for_span, export_bundle, import_bundle
from assay.workspace import Workspace

POLICY = (
    "Travel policy 2025.\n\nHotels are refunded up to 140 euros per night.\n"
    "Trains: second class, first class from four hours.\nTaxis only at night.\n"
)
LEAVE = (
    "Leave policy.\n\nEmployees get 30 days of paid leave per year.\nCarry-over ends in March.\n"
)


def counts(ws: Workspace, name: str) -> tuple[int, int, int, int]:
    """Documents, items, chunkings and chunks of a project: what must not change on failure."""
    project = get_project(ws, name)
    chunkings = list_chunkings(ws, project)
    return (
        count_documents(ws, project),
        list_items(ws, project, limit=1)[0],
        len(chunkings),
        sum(count_chunks(ws, c) for c in chunkings),
    )


def rich_project(ws: Workspace, project: Project) -> None:
    """Two documents, a generated and an imported chunking, items with groups and statuses."""
    policy = ingest_bytes(ws, project, "policy.txt", POLICY.encode())
    leave = ingest_bytes(ws, project, "leave.md", LEAVE.encode(), metadata={"path": "hr/leave.md"})
    create_chunking(ws, project, "small", "recursive", {"max_length": 60})
    import_chunking(
        ws,
        project,
        "paragraphs",
        [
            ("p-1", policy.id, 0, 19),
            ("p-2", policy.id, 21, len(POLICY)),
            ("l-1", leave.id, 0, len(LEAVE)),
        ],
    )
    hotel = "Hotels are refunded up to 140 euros per night."
    create_item(
        ws,
        project,
        ItemIn(
            turns=[
                TurnIn(
                    query="How much is refunded per hotel night?",
                    answer="Up to 140 euros.",
                    alternatives=["140 euros"],
                    evidence=[
                        EvidenceIn(doc_id=policy.id, text=hotel, group=1),
                        EvidenceIn(doc_id=leave.id, text="30 days of paid leave", group=1),
                        EvidenceIn(doc_id=policy.id, text="Taxis only at night.", group=2),
                        EvidenceIn(
                            doc_id=leave.id, text="Carry-over ends in March.", label="distracting"
                        ),
                    ],
                )
            ],
            extra={"note": "kept"},
        ),
        status="accepted",
    )
    create_item(
        ws,
        project,
        ItemIn(
            kind="conversation",
            turns=[
                TurnIn(
                    query="Leave?",
                    answer="30 days.",
                    evidence=[EvidenceIn(doc_id=leave.id, text="30 days")],
                ),
                TurnIn(query="And trains?", rewrite="Which train class?", answer="Second class."),
            ],
        ),
    )
    create_item(
        ws,
        project,
        ItemIn(
            turns=[
                TurnIn(
                    query="Who pays the parking?",
                    query_type="unanswerable",
                    answer="The policy does not say.",
                    evidence=[
                        EvidenceIn(text="Parking is free.", origin="imported", label="distracting")
                    ],
                )
            ]
        ),
        status="submitted",
    )


def test_overlap_policy() -> None:
    chunks = [("a", 0, 100), ("b", 100, 200), ("c", 200, 300)]
    assert chunks_for_span(10, 40, chunks) == ("a",)  # inside one chunk
    assert chunks_for_span(80, 130, chunks) == ("b",)  # 20 + 30: only b covers half
    assert chunks_for_span(90, 110, chunks) == ("a", "b")  # split evenly: both
    assert chunks_for_span(60, 300, chunks) == ("b", "c")  # a: 40 of 100, under half of each
    assert chunks_for_span(40, 260, chunks) == ("a", "b", "c")
    assert chunks_for_span(99, 180, [("a", 0, 100), ("b", 100, 1000)]) == ("b",)
    assert chunks_for_span(0, 10, [("x", 5, 1000), ("y", 8, 2000)]) == ("x",)  # best overlap
    assert chunks_for_span(400, 410, chunks) == ()


def test_groups_become_retrieval_gt() -> None:
    turn = TurnRecord(
        evidence=[
            EvidenceRecord(chunk_ids=("a",), group=1),
            EvidenceRecord(chunk_ids=("b", "a"), group=1),
            EvidenceRecord(chunk_ids=("c",), group=2),
            EvidenceRecord(chunk_ids=("d",)),
            EvidenceRecord(chunk_ids=("e",), label="distracting"),
            EvidenceRecord(),
        ]
    )
    assert retrieval_groups(turn) == ([["a", "b"], ["c"], ["d"]], 1)
    turn.query_type = "unanswerable"
    assert retrieval_groups(turn) == ([], 0)


def test_export_maps_evidence_to_the_chosen_chunking(ws: Workspace, project: Project) -> None:
    rich_project(ws, project)
    bundle = export_bundle(ws, project, chunking="paragraphs")
    first = next(i for i in bundle.items if i.status == "accepted")
    groups, _ = retrieval_groups(first.turns[0])
    assert groups == [["p-2", "l-1"], ["p-2"]]
    small = export_bundle(ws, project, chunking="small", statuses=["accepted"])
    items = list(small.items)
    assert len(items) == 1
    ids = [c for e in items[0].turns[0].evidence for c in e.chunk_ids]
    assert ids and all("#" in c for c in ids)


def test_strict_import_writes_nothing_on_error(ws: Workspace, project: Project) -> None:
    rich_project(ws, project)
    before = counts(ws, "test")
    bad = Bundle(
        documents=[DocumentRecord(ref="d", name="new.txt", data=b"Fresh text about trains.")],
        items=[
            ItemRecord(id="ok", turns=[TurnRecord(query="fine")]),
            ItemRecord(
                id="bad",
                turns=[
                    TurnRecord(
                        query="q",
                        evidence=[EvidenceRecord(doc_ref="d", start=0, end=999, text="x")],
                    )
                ],
            ),
        ],
    )
    with pytest.raises(InvalidInput, match="outside the document"):
        import_bundle(ws, "test", bad)
    assert counts(ws, "test") == before
    with pytest.raises(InvalidInput, match="row 3"):
        import_bundle(ws, "test", Bundle(issues=[Issue("file.csv row 3", "bad")]))
    assert counts(ws, "test") == before


def test_lenient_import_reports_each_record(ws: Workspace, project: Project) -> None:
    bundle = Bundle(
        documents=[
            DocumentRecord(ref="d", name="new.txt", data=b"Fresh text about trains."),
            DocumentRecord(ref="e", name="empty.txt", data=b""),
        ],
        items=[
            ItemRecord(
                id="ok",
                turns=[
                    TurnRecord(query="q", evidence=[EvidenceRecord(doc_ref="d", text="trains")])
                ],
            ),
            ItemRecord(
                id="lost",
                turns=[
                    TurnRecord(query="q", evidence=[EvidenceRecord(doc_ref="d", text="planes")])
                ],
            ),
            ItemRecord(
                id="bad",
                turns=[
                    TurnRecord(
                        query="q",
                        evidence=[EvidenceRecord(doc_ref="d", start=0, end=999, text="x")],
                    )
                ],
            ),
        ],
        issues=[Issue("file row 9", "field 'qid' is empty")],
    )
    report = import_bundle(ws, "test", bundle, lenient=True)
    by_ref = {(o.kind, o.ref): o for o in report.outcomes}
    assert by_ref[("document", "d")].status == "imported"
    assert by_ref[("document", "e")].status == "skipped"
    assert by_ref[("item", "ok")].status == "imported"
    assert by_ref[("item", "lost")].status == "flagged"
    assert "not found" in by_ref[("item", "lost")].message
    assert by_ref[("item", "bad")].status == "skipped"
    assert by_ref[("record", "file row 9")].status == "skipped"
    assert counts(ws, "test")[:2] == (1, 2)


def test_existing_items_are_not_overwritten_without_replace(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    rich_project(ws, project)
    native = get_format("native")
    native.write(export_bundle(ws, project), tmp_path / "p.zip")
    before = counts(ws, "test")
    with pytest.raises(Conflict, match="already has a chunking"):
        import_bundle(ws, "test", native.read(tmp_path / "p.zip"))
    assert counts(ws, "test") == before
    report = import_bundle(ws, "test", native.read(tmp_path / "p.zip"), replace=True)
    assert report.count("skipped") == 0
    assert counts(ws, "test") == before
    # the same ids in another project of the workspace: new ids, flagged
    other = import_bundle(ws, "copy", native.read(tmp_path / "p.zip"))
    assert other.count("flagged", "item") == 3
    assert counts(ws, "copy")[:2] == (2, 3)


def test_cli_import_and_export(tmp_path: Path, shared_fixtures: Path) -> None:
    runner = CliRunner()
    home = str(tmp_path / "ws")
    app = make_app()
    listed = runner.invoke(app, ["--home", home, "formats", "--json"])
    assert listed.exit_code == 0
    assert {f["name"] for f in json.loads(listed.output)} >= {"native", "ragold", "autorag"}
    imported = runner.invoke(
        app,
        [
            "--home",
            home,
            "import",
            "autorag",
            str(shared_fixtures / "autorag"),
            "-p",
            "a",
            "--json",
        ],
    )
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.output)["summary"]["item"]["imported"] == 10
    out = tmp_path / "out"
    exported = runner.invoke(
        app, ["--home", home, "export", "autorag", str(out), "--chunking", "autorag", "--json"]
    )
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.output)["items"] == 10
    assert (out / "qa.parquet").is_file()
    wrong = runner.invoke(app, ["--home", home, "export", "nope", str(out)])
    assert wrong.exit_code == 1
    assert "unknown format" in wrong.output
    bad_status = runner.invoke(app, ["--home", home, "export", "csv", "x.csv", "--status", "done"])
    assert bad_status.exit_code == 1
