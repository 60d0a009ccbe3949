"""Searching a project with keyword, dense and hybrid retrievers through the index sync."""

from __future__ import annotations

from assay.corpus.chunkings import create_chunking, delete_chunking
from assay.corpus.documents import delete_document, get_document, update_document
from assay.corpus.ingest import ingest_bytes, replace_document
from assay.records import Project
from assay.search.embeddings import HashingEmbedder
from assay.search.indexes import search
from assay.search.retriever import RetrieverSettings
from assay.store.projects import corpus_version, create_project
from assay.store.workspace import Workspace


def test_every_retriever_follows_the_database(ws: Workspace, project: Project) -> None:
    ferry = ingest_bytes(ws, project, "ferry.txt", b"The night ferry leaves the harbour at ten.")
    ingest_bytes(ws, project, "bus.txt", b"Buses run every twenty minutes in the city.")
    embedder = HashingEmbedder()
    for kind in ("keyword", "dense", "hybrid"):
        retriever = RetrieverSettings(kind=kind, embedder="hashing")
        hits = search(ws, project, "night ferry harbour", 2, retriever=retriever, embedder=embedder)
        assert hits[0].doc_id == ferry.id, kind
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    delete_document(ws, ferry)
    for kind in ("keyword", "dense", "hybrid"):
        retriever = RetrieverSettings(kind=kind, embedder="hashing")
        hits = search(ws, project, "night ferry harbour", 5, retriever=retriever, embedder=embedder)
        assert ferry.id not in {h.doc_id for h in hits}, kind


def _version(ws: Workspace, project: Project) -> int:
    with ws.engine.connect() as conn:
        return corpus_version(conn, project.id)


def test_corpus_version_moves_with_every_write_that_changes_the_index(any_ws: Workspace) -> None:
    project = create_project(any_ws, "fresh")
    seen = [_version(any_ws, project)]

    def moved() -> bool:
        seen.append(_version(any_ws, project))
        return seen[-1] != seen[-2]

    doc = ingest_bytes(any_ws, project, "a.txt", b"alpha")
    assert moved()
    ingest_bytes(any_ws, project, "again.txt", b"alpha")  # same bytes: nothing added
    assert not moved()
    update_document(any_ws, doc, name="renamed.txt", notes="metadata only")
    assert not moved()
    replace_document(any_ws, project, doc, "a.txt", b"beta")
    assert moved()
    create_chunking(any_ws, project, "small", "recursive", {"max_length": 100})
    assert moved()
    delete_chunking(any_ws, project, "small")
    assert moved()
    delete_document(any_ws, get_document(any_ws, project, doc.id))
    assert moved()


def test_search_follows_documents_written_after_the_index_was_built(any_ws: Workspace) -> None:
    project = create_project(any_ws, "follow")
    ingest_bytes(any_ws, project, "bus.txt", b"Buses run every twenty minutes in the city.")
    assert search(any_ws, project, "ferry harbour") == []
    ferry = ingest_bytes(any_ws, project, "ferry.txt", b"The night ferry leaves the harbour.")
    assert [h.doc_id for h in search(any_ws, project, "ferry harbour")] == [ferry.id]
    replace_document(any_ws, project, ferry, "ferry.txt", b"The morning tram leaves the depot.")
    assert search(any_ws, project, "ferry harbour") == []
    assert [h.doc_id for h in search(any_ws, project, "tram depot")] == [ferry.id]
    delete_document(any_ws, get_document(any_ws, project, ferry.id))
    assert search(any_ws, project, "tram depot") == []
