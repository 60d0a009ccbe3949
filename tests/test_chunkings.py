"""Named chunkings in a project: every chunking covers every document, re-chunking adds."""

from __future__ import annotations

import pytest

from assay.corpus.chunkings import (
    IMPORTED,
    count_chunks,
    create_chunking,
    delete_chunking,
    document_chunks,
    get_chunking,
    import_chunking,
    list_chunkings,
    set_default_chunking,
)
from assay.corpus.ingest import ingest_bytes
from assay.errors import Conflict, InvalidInput, NotFound
from assay.records import Project
from assay.search.indexes import search
from assay.store.workspace import Workspace

TEXT = "First sentence here. Second one follows.\n\nA new paragraph with a third sentence."


def test_new_chunking_covers_existing_and_later_documents(ws: Workspace, project: Project) -> None:
    first = ingest_bytes(ws, project, "a.txt", TEXT.encode())
    default_before = document_chunks(ws, get_chunking(ws, project), first.id)
    sentences = create_chunking(ws, project, "sent", "sentences", {"sentences": 1})
    assert [first.text[c.start : c.end] for c in document_chunks(ws, sentences, first.id)] == [
        "First sentence here.",
        "Second one follows.",
        "A new paragraph with a third sentence.",
    ]
    second = ingest_bytes(ws, project, "b.txt", b"Later text. Two sentences.")
    assert len(document_chunks(ws, sentences, second.id)) == 2
    # re-chunking touched nothing else
    assert document_chunks(ws, get_chunking(ws, project), first.id) == default_before


def test_default_switch_and_delete(ws: Workspace, project: Project) -> None:
    create_chunking(ws, project, "small", "recursive", {"max_length": 20})
    with pytest.raises(Conflict):
        create_chunking(ws, project, "small", "recursive", {"max_length": 30})
    set_default_chunking(ws, project, "small")
    assert get_chunking(ws, project).name == "small"
    with pytest.raises(InvalidInput, match="is the project's default"):
        delete_chunking(ws, project, "small")
    delete_chunking(ws, project, "default")
    assert [c.name for c in list_chunkings(ws, project)] == ["small"]
    with pytest.raises(NotFound, match="no chunking named 'default'"):
        get_chunking(ws, project, "default")


def test_bad_method_or_params_store_nothing(ws: Workspace, project: Project) -> None:
    with pytest.raises(InvalidInput, match="unknown chunker 'nope'"):
        create_chunking(ws, project, "x", "nope")
    with pytest.raises(InvalidInput, match="max_length"):
        create_chunking(ws, project, "x", "recursive", {"max_length": -1})
    assert [c.name for c in list_chunkings(ws, project)] == ["default"]


def test_imported_chunking_keeps_ids(ws: Workspace, project: Project) -> None:
    doc = ingest_bytes(ws, project, "a.txt", TEXT.encode())
    spans = [("corpus-7", doc.id, 0, 20), ("corpus-9", doc.id, 42, len(TEXT))]
    chunking = import_chunking(ws, project, "autorag", spans)
    assert chunking.method == IMPORTED
    got = document_chunks(ws, chunking, doc.id)
    assert [(c.chunk_id, c.start, c.end) for c in got] == [
        ("corpus-7", 0, 20),
        ("corpus-9", 42, len(TEXT)),
    ]
    hits = search(ws, project, "paragraph third", chunking="autorag")
    assert hits[0].chunk_id == "corpus-9"
    later = ingest_bytes(ws, project, "b.txt", b"Unchunked later document.")
    assert document_chunks(ws, chunking, later.id) == []
    assert count_chunks(ws, chunking) == 2


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([("c1", "DOC", 0, 5), ("c1", "DOC", 5, 9)], "chunk 'c1': chunk ids must be unique"),
        ([("c1", "missing", 0, 5)], "chunk 'c1': no document 'missing'"),
        ([("c2", "DOC", 5, 500)], "chunk 'c2': offsets 5..500 are outside document"),
        ([("c3", "DOC", 9, 9)], "chunk 'c3': offsets 9..9"),
    ],
)
def test_imported_chunking_errors_store_nothing(
    ws: Workspace, project: Project, spans: list[tuple[str, str, int, int]], message: str
) -> None:
    doc = ingest_bytes(ws, project, "a.txt", TEXT.encode())
    fixed = [(cid, doc.id if d == "DOC" else d, s, e) for cid, d, s, e in spans]
    with pytest.raises(InvalidInput, match=message):
        import_chunking(ws, project, "bad", fixed)
    assert [c.name for c in list_chunkings(ws, project)] == ["default"]
