"""Ingest: files and folders become documents; bad files are named and skipped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from assay.corpus.chunkings import document_chunks, get_chunking
from assay.corpus.documents import (
    count_documents,
    delete_document,
    get_document,
    get_document_by_name,
    list_documents,
    original_bytes,
)
from assay.corpus.ingest import ingest_bytes, ingest_paths
from assay.errors import InvalidInput
from assay.records import Project
from assay.search.indexes import search
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace

DATA = Path(__file__).parent / "data" / "parsing"


def check_consistent(ws: Workspace, project: Project) -> None:
    """Every document has its blob, valid text offsets, and chunks covering its text."""
    chunking = get_chunking(ws, project)
    for summary in list_documents(ws, project):
        doc = get_document(ws, project, summary.id)
        assert ws.blobs.path(doc.sha256).exists(), doc.name
        chunks = document_chunks(ws, chunking, doc.id)
        if doc.text.strip():
            assert chunks, f"{doc.name} has text but no chunks"
        for chunk in chunks:
            assert 0 <= chunk.start < chunk.end <= len(doc.text)


def test_text_is_normalised_once_and_offsets_refer_to_it(ws: Workspace, project: Project) -> None:
    doc = ingest_bytes(ws, project, "crlf.txt", "Caf\u0065\u0301 one.\r\nLine two.\r\n".encode())
    assert doc.text == "Café one.\nLine two.\n"
    assert "\r" not in doc.text
    for chunk in document_chunks(ws, get_chunking(ws, project), doc.id):
        assert doc.text[chunk.start : chunk.end].strip()


def test_same_bytes_twice_is_one_document(ws: Workspace, project: Project, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("identical")
    (tmp_path / "b.txt").write_text("identical")
    report = ingest_paths(ws, project, [tmp_path / "a.txt", tmp_path / "b.txt"])
    assert [o.status for o in report.outcomes] == ["added", "duplicate"]
    assert "same content as document 'a.txt'" in report.duplicates[0].message
    assert count_documents(ws, project) == 1


def test_same_name_gets_a_number(ws: Workspace, project: Project) -> None:
    names = [ingest_bytes(ws, project, "report.pdf.txt", f"v{i}".encode()).name for i in range(3)]
    assert names == ["report.pdf.txt", "report.pdf-1.txt", "report.pdf-2.txt"]
    assert ingest_bytes(ws, project, "README", b"x").name == "README"
    assert ingest_bytes(ws, project, "README", b"y").name == "README-1"


def test_numbered_names_stay_unique_past_a_batch_and_fill_gaps(any_ws: Workspace) -> None:
    project = create_project(any_ws, "names")
    names = [ingest_bytes(any_ws, project, "50%_off.md", f"v{i}".encode()).name for i in range(36)]
    assert names[:3] == ["50%_off.md", "50%_off-1.md", "50%_off-2.md"]
    assert names[-1] == "50%_off-35.md"
    assert len(set(names)) == 36
    delete_document(any_ws, get_document_by_name(any_ws, project, "50%_off-7.md"))
    assert ingest_bytes(any_ws, project, "50%_off.md", b"again").name == "50%_off-7.md"
    assert ingest_bytes(any_ws, project, "50%_OFF.md", b"case").name == "50%_OFF.md"


def test_unknown_type_is_stored_without_text(ws: Workspace, project: Project) -> None:
    data = bytes(range(256)) * 4
    doc = ingest_bytes(ws, project, "table.xlsx", data)
    assert doc.text == ""
    assert any("no text extracted" in w for w in doc.parse_info.warnings)
    assert original_bytes(ws, doc) == data


@pytest.mark.skipif(not DATA.is_dir(), reason="tests/data/parsing not generated")
def test_real_pdf_and_docx(ws: Workspace, project: Project) -> None:
    report = ingest_paths(ws, project, sorted(DATA.glob("*.pdf")) + sorted(DATA.glob("*.docx")))
    assert report.errors == []
    assert len(report.added) >= 2
    for outcome in report.added:
        doc = get_document(ws, project, outcome.doc_id)
        assert len(doc.text) > 50, doc.name
        assert doc.parse_info.parser in {"pdfium", "pypdf", "docx"}
    check_consistent(ws, project)


def test_folder_with_a_thousand_files_and_some_bad_ones(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    for i in range(1000):
        (folder / ("sub" if i % 2 else "") / f"note{i:04d}.txt").write_text(
            f"Note {i}. The quarterly figure for unit {i} is {i * 7} euros.\n"
        )
    (folder / "empty.txt").write_bytes(b"")
    (folder / "binary.txt").write_bytes(b"\x00\x01\x02\xff" * 100)
    (folder / "latin1.txt").write_bytes("Gr\xfc\xdfe aus K\xf6ln".encode("latin-1"))
    (folder / "big.txt").write_text("x" * 30_000)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n this is not really a pdf \n%%EOF")
    (folder / ".hidden.txt").write_text("skipped")
    ws = Workspace.open(Settings(home=tmp_path / "ws", max_file_mb=0.02))
    from assay.store.projects import create_project

    project = create_project(ws, "bulk")
    report = ingest_paths(ws, project, [folder])
    errors = {o.source: o.message for o in report.errors}
    assert set(errors) == {"empty.txt", "binary.txt", "latin1.txt", "big.txt", "broken.pdf"}
    assert errors["empty.txt"].startswith("empty.txt: ")
    assert "binary" in errors["binary.txt"]
    assert "UTF-8" in errors["latin1.txt"]
    assert errors["big.txt"].startswith("big.txt: 0.0286 MB is over the 0.02 MB limit")
    assert "broken.pdf" in errors["broken.pdf"] and "PDF" in errors["broken.pdf"]
    assert len(report.added) == 1000
    assert count_documents(ws, project) == 1000
    check_consistent(ws, project)
    hits = search(ws, project, "unit 417 euros", k=3)
    assert hits[0].text.startswith("Note 417.")
    ws.close()


def test_fallback_encoding_setting(tmp_path: Path) -> None:
    ws = Workspace.open(Settings(home=tmp_path / "ws", text_fallback_encoding="cp1252"))
    from assay.store.projects import create_project

    project = create_project(ws, "legacy", "de")
    doc = ingest_bytes(ws, project, "alt.txt", "Grüße aus Köln".encode("cp1252"))
    assert doc.text == "Grüße aus Köln"
    assert any("cp1252" in w for w in doc.parse_info.warnings)
    ws.close()


def test_file_over_limit_names_file_and_limit(tmp_path: Path) -> None:
    ws = Workspace.open(Settings(home=tmp_path / "ws", max_file_mb=1))
    from assay.store.projects import create_project

    project = create_project(ws, "p")
    with pytest.raises(InvalidInput, match=r"huge\.txt: 2 MB is over the 1 MB limit"):
        ingest_bytes(ws, project, "huge.txt", b"a" * (2 * 1024 * 1024))
    assert count_documents(ws, project) == 0
    ws.close()


KILLED_FILES = 1200
"""Enough that the ingest is killed well inside (after 100 stored, seen within 0.2 s)."""


@pytest.mark.slow
def test_killed_ingest_leaves_a_consistent_database(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    paragraph = "The archive keeps minutes, budgets and travel rules for every team. " * 40
    for i in range(KILLED_FILES):
        (folder / f"doc{i:05d}.txt").write_text(f"Document {i}.\n\n{paragraph}\n")
    home = tmp_path / "ws"
    env = {**os.environ, "ASSAY_HOME": str(home)}
    subprocess.run(
        [sys.executable, "-m", "assay", "init"], env=env, check=True, capture_output=True
    )
    command = [sys.executable, "-m", "assay", "ingest", str(folder), "--project", "big"]
    log = (tmp_path / "ingest.log").open("wb")
    proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = Settings(home=home).resolved_database_url()  # SQLite file or PostgreSQL database
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        try:
            with engine.connect() as conn:
                stored = conn.exec_driver_sql("SELECT count(*) FROM documents").scalar_one()
        except sa.exc.OperationalError:
            continue
        if stored >= 100:
            break
    assert proc.poll() is None, (
        "ingest ended before it could be killed: " + (tmp_path / "ingest.log").read_text()
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    log.close()

    if engine.dialect.name == "sqlite":  # PostgreSQL checks its foreign keys itself
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
            assert conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall() == []
    engine.dispose()
    ws = Workspace.open(Settings(home=home))
    from assay.store.projects import get_project

    project = get_project(ws, "big")
    partial = count_documents(ws, project)
    assert 100 <= partial < KILLED_FILES
    check_consistent(ws, project)
    hits = search(ws, project, "Document 42", k=200)  # the index catches up with the database
    assert {h.doc_id for h in hits} <= {d.id for d in list_documents(ws, project)}
    report = ingest_paths(ws, project, [folder])
    assert len(report.duplicates) == partial
    assert len(report.added) == KILLED_FILES - partial
    assert count_documents(ws, project) == KILLED_FILES
    ws.close()


def test_offsets_refer_to_the_normalised_text_for_any_input(tmp_path: Path) -> None:
    """Property: whatever text comes in, every stored chunk is a non-blank slice of the stored,
    normalised text, and the stored text is the parser's normalisation of the input."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from assay.parsing import normalize_text
    from assay.store.projects import create_project

    ws = Workspace.open(Settings(home=tmp_path / "ws"))
    project = create_project(ws, "prop")
    chunking = get_chunking(ws, project)
    alphabet = st.characters(blacklist_categories=("Cs",))
    counter = iter(range(10**6))

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.text(alphabet=alphabet, min_size=1, max_size=3000))
    def check(text: str) -> None:
        data = text.encode("utf-8")
        try:
            doc = ingest_bytes(ws, project, f"t{next(counter)}.txt", data)
        except InvalidInput:
            return  # e.g. text that looks binary: refused with a message, nothing stored
        assert doc.text == normalize_text(data.decode("utf-8").removeprefix("\ufeff"))
        for chunk in document_chunks(ws, chunking, doc.id):
            piece = doc.text[chunk.start : chunk.end]
            assert piece.strip() and piece == piece.strip()

    check()
    ws.close()
