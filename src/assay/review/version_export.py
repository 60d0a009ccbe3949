"""A frozen version put to use: as a Bundle any format writes (exports from a version), and
as gold items for an experiment. Both read the version's zip, never the live items.

Texts: a version holds its documents' files and the hash of each extracted text. An export
takes a document's text from the live document when its file and text hashes still match,
else extracts it from the frozen file again and checks it against the frozen hash (a
document replaced or deleted since is no obstacle). Chunks are made again from the frozen
chunking's method and parameters (an imported chunking's chunks are in the zip), with the
ids the project gives chunks (``<document id>#<ordinal>``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace

import sqlalchemy as sa

from assay.corpus.anchoring import gold_span
from assay.corpus.chunker_registry import chunk_text
from assay.corpus.chunkings import IMPORTED
from assay.corpus.evidence_mapping import chunks_for_span
from assay.errors import InvalidInput
from assay.formats import Bundle, ChunkingRecord, ChunkRecord, DocumentRecord, Lazy, ProjectInfo
from assay.parsing import parse
from assay.records import Evidence, Item, Project
from assay.review.versions import SNAPSHOT_KEY, Snapshot
from assay.store.db import reading
from assay.store.schema import documents
from assay.store.workspace import Workspace


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _live_texts(ws: Workspace, project: Project) -> dict[tuple[str, str], tuple[str, str]]:
    """(file sha256, text sha256) → (document id, text) of the project's documents now."""
    with reading(ws.engine, None) as conn:
        rows = conn.execute(
            sa.select(documents.c.id, documents.c.sha256, documents.c.text).where(
                documents.c.project_id == project.id
            )
        ).all()
    return {(r.sha256, _sha(r.text or "")): (r.id, r.text or "") for r in rows}


def _frozen_text(ws: Workspace, doc: DocumentRecord, version: str) -> str:
    """The document's text extracted again from its frozen file, checked by its hash."""
    parsed = parse(
        doc.name,
        doc.original(),
        doc.media_type or None,
        fallback_encoding=ws.settings.text_fallback_encoding or None,
    )
    if _sha(parsed.text) != doc.text_sha256:
        raise InvalidInput(
            f"dataset version {version!r}: document {doc.name!r} was changed or deleted since "
            "the version was frozen, and its frozen file no longer gives the same text (the "
            "text extraction changed); export the version with the Assay release that froze it"
        )
    return parsed.text


def _chunks(chunking: ChunkingRecord, doc_id: str, name: str, text: str) -> list[ChunkRecord]:
    if chunking.method == IMPORTED:
        spans = [(c.chunk_id, c.start, c.end) for c in chunking.chunks if c.doc_ref == name]
    else:
        made = chunk_text(text, chunking.method, chunking.params)
        spans = [(f"{doc_id}#{n}", start, end) for n, (start, end) in enumerate(made)]
    return [ChunkRecord(cid, doc_id, start, end, text[start:end]) for cid, start, end in spans]


def export_bundle_of(ws: Workspace, project: Project, snapshot: Snapshot) -> Bundle:
    """The version as a Bundle for any format's writer: documents with their frozen texts,
    the frozen chunking's chunks, items whose evidence names its chunks; the version's name
    and hash in the project notes and in ``extra`` (where a format keeps metadata)."""
    version = snapshot.version
    live = _live_texts(ws, project)
    frozen = snapshot.bundle.chunkings[0]
    docs: list[DocumentRecord] = []
    chunks: list[ChunkRecord] = []
    refs: dict[str, str] = {}
    for doc in snapshot.bundle.documents:
        doc_id = snapshot.document_ids.get(doc.name, doc.name)
        found = live.get((doc.sha256, doc.text_sha256))
        text = found[1] if found else _frozen_text(ws, doc, version.name)
        docs.append(replace(doc, ref=doc_id, text=text))
        refs[doc.name] = doc_id
        chunks.extend(_chunks(frozen, doc_id, doc.name, text))
    by_doc: dict[str, list[tuple[str, int, int]]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_ref, []).append((chunk.chunk_id, chunk.start, chunk.end))
    label = f"Assay dataset version {version.name!r} of project {project.name!r}"
    return Bundle(
        project=ProjectInfo(
            name=project.name,
            language=snapshot.bundle.project.language,
            notes=f"{label}, sha256 {version.hash}",
        ),
        documents=docs,
        chunkings=[replace(frozen, chunks=chunks)],
        items=Lazy(lambda: (_with_chunks(item, refs, by_doc) for item in snapshot.items)),
        target_chunking=frozen.name,
        provenance={"tool": "assay", "project": project.name, "version": version.name},
        extra={SNAPSHOT_KEY: {"name": version.name, "hash": version.hash}},
    )


def _with_chunks(
    item: Item, refs: dict[str, str], by_doc: dict[str, list[tuple[str, int, int]]]
) -> Item:
    """A copy of the item whose evidence names document ids and the chunks it maps to."""

    def placed(ev: Evidence) -> Evidence:
        doc_id = refs.get(ev.doc_id or "", ev.doc_id)
        span = gold_span(ev.anchor, ev.start, ev.end)
        ids = chunks_for_span(*span, by_doc.get(doc_id or "", [])) if span else ()
        return replace(ev, doc_id=doc_id, chunk_ids=ids)

    turns = [replace(t, evidence=[placed(e) for e in t.evidence]) for t in item.turns]
    return replace(item, turns=turns)


def experiment_items(ws: Workspace, project: Project, snapshot: Snapshot) -> Iterator[Item]:
    """The version's items for an experiment, their evidence naming the live documents.
    Retrieval runs on the live corpus, so every document the gold cites must still be there
    with the text it had when frozen; otherwise refused, naming the documents."""
    live = _live_texts(ws, project)
    refs: dict[str, str] = {}
    changed: list[str] = []
    for doc in snapshot.bundle.documents:
        found = live.get((doc.sha256, doc.text_sha256))
        if found:
            refs[doc.name] = found[0]
        else:
            changed.append(doc.name)
    cited = {e.doc_id for i in snapshot.items for t in i.turns for e in t.evidence if e.doc_id}
    missing = sorted(cited & set(changed))
    if missing:
        raise InvalidInput(
            f"dataset version {snapshot.version.name!r} cites documents that were changed or "
            f"deleted since it was frozen: {', '.join(missing)}; an experiment retrieves from "
            "the live documents, so it cannot run on this version (export the version instead)"
        )
    for item in snapshot.items:
        turns = [
            replace(t, evidence=[replace(e, doc_id=refs.get(e.doc_id or "", e.doc_id))
                                 for e in t.evidence])
            for t in item.turns
        ]  # fmt: skip
        yield replace(item, turns=turns)
