"""Searching a project with keyword, dense and hybrid retrievers through the index sync."""

from __future__ import annotations

from assay.corpus.documents import delete_document
from assay.corpus.ingest import ingest_bytes
from assay.records import Project
from assay.search.embeddings import HashingEmbedder
from assay.search.indexes import search
from assay.search.retriever import RetrieverSettings
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
