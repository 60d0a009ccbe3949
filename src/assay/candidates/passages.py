"""Anchoring the passages a production system retrieved in the project's documents.

A passage is anchored when its text is found in a document (by the rules of
:func:`assay.corpus.anchoring.locate`: exactly, else ignoring white space): the document its
reference names (an id, a file name with or without its extension, or a chunk id, whose
chunk's offsets stand in when the log gives no text), else one of the documents the keyword
index finds for the passage's first words. A passage that matches no document is kept with
``anchor: "unlocated"`` and its text and reference as the log gave them, and counted in the
import's report, so nothing the system retrieved is dropped silently.

The same passage is retrieved again and again in a log; answers are remembered for the last
:data:`REMEMBERED` distinct passages.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from pathlib import PurePosixPath
from typing import Any

import sqlalchemy as sa

from assay.candidates.logs import RawPassage
from assay.corpus.anchoring import DocumentTexts
from assay.corpus.chunkings import get_chunking
from assay.errors import AssayError
from assay.records import Project
from assay.search.indexes import search
from assay.store.schema import chunkings, chunks, documents
from assay.store.workspace import Workspace

REMEMBERED = 20_000
SEARCHED_DOCUMENTS = 3
"""Documents the keyword index suggests for a passage without a usable reference."""
SEARCH_WORDS = 40
TEXT_CHARS = 20_000_000
"""Document text kept in memory while anchoring (least recently used goes first)."""


class PassageAnchors:
    """Anchors passages for one import (one connection, one project)."""

    def __init__(self, ws: Workspace, project: Project, conn: sa.Connection) -> None:
        self.ws = ws
        self.project = project
        self.conn = conn
        self.texts = DocumentTexts(conn, project.id, max_chars=TEXT_CHARS)
        self.names: dict[str, str] = {}
        rows = conn.execute(
            sa.select(documents.c.id, documents.c.name).where(documents.c.project_id == project.id)
        ).all()
        for doc_id, name in rows:
            self.names[doc_id] = doc_id
            self.names.setdefault(name, doc_id)
            self.names.setdefault(PurePosixPath(name).stem, doc_id)
        self.chunking = get_chunking(ws, project, None) if rows else None
        self.memory: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.anchored = 0
        self.unlocated = 0

    def anchor(self, passage: RawPassage) -> dict[str, Any]:
        """The passage as stored: offsets and ``anchor: ok`` when it matched a document."""
        key = hashlib.blake2b(f"{passage.ref}\0{passage.text}".encode(), digest_size=16).hexdigest()
        found = self.memory.get(key)
        if found is None:
            found = self._anchor(passage)
            self.memory[key] = found
            if len(self.memory) > REMEMBERED:
                self.memory.popitem(last=False)
        else:
            self.memory.move_to_end(key)
        self.anchored += found["anchor"] == "ok"
        self.unlocated += found["anchor"] != "ok"
        return {**found, "score": passage.score, "rank": passage.rank}

    def _anchor(self, passage: RawPassage) -> dict[str, Any]:
        doc_id, span = self._reference(passage.ref)
        if doc_id is not None:
            text = self.texts.get(doc_id) or ""
            if passage.text:
                where = self.texts.locate(doc_id, text, passage.text)
                if where is not None:
                    return _placed(doc_id, where, text, passage.ref)
            elif span is not None:
                return _placed(doc_id, span, text, passage.ref)
        if passage.text and self.chunking is not None:
            for other in self._suggested(passage.text):
                text = self.texts.get(other) or ""
                where = self.texts.locate(other, text, passage.text)
                if where is not None:
                    return _placed(other, where, text, passage.ref)
        return {
            "doc_id": None,
            "start": None,
            "end": None,
            "text": passage.text,
            "anchor": "unlocated",
            "source": passage.ref,
        }

    def _reference(self, ref: str) -> tuple[str | None, tuple[int, int] | None]:
        """The document a reference names, and a chunk's offsets when it names a chunk."""
        if not ref:
            return None, None
        if ref in self.names:
            return self.names[ref], None
        row = self.conn.execute(
            sa.select(chunks.c.doc_id, chunks.c.start, chunks.c.end)
            .join(chunkings, chunkings.c.id == chunks.c.chunking_id)
            .where(chunkings.c.project_id == self.project.id, chunks.c.chunk_id == ref)
            .limit(1)
        ).first()
        if row is not None:
            return row.doc_id, (row.start, row.end)
        return None, None

    def _suggested(self, text: str) -> list[str]:
        query = " ".join(text.split()[:SEARCH_WORDS])
        try:
            hits = search(self.ws, self.project, query, SEARCHED_DOCUMENTS * 2, self.chunking)
        except AssayError:
            return []
        return list(dict.fromkeys(hit.doc_id for hit in hits))[:SEARCHED_DOCUMENTS]


def _placed(doc_id: str, span: tuple[int, int], text: str, ref: str) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "start": span[0],
        "end": span[1],
        "text": text[span[0] : span[1]],
        "anchor": "ok",
        "source": ref,
    }
