"""Anchoring evidence to documents: the offset invariant ``text[start:end] == evidence``.

Offsets win when given; text alone is located in the document (exactly, then ignoring white
space differences). What cannot be anchored is refused, except imported text (kept as
``unlocated``) and evidence whose document changed (kept as ``stale``): flagged, never moved.
"""

from __future__ import annotations

import re
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import InvalidInput
from assay.models import Span
from assay.schema import documents

Label = Literal["relevant", "distracting", "irrelevant"]
Origin = Literal["retrieved", "searched", "selected", "imported", "llm-suggestion"]
Anchor = Literal["ok", "unlocated", "stale"]
INT32 = 2**31 - 1
"""Largest value of an Integer column on PostgreSQL: offsets, grades and groups stay below."""


class EvidenceIn(BaseModel):
    """Evidence as an editor or importer sends it. Offsets win; text alone is located."""

    model_config = ConfigDict(extra="forbid")
    doc_id: str | None = None
    start: int | None = Field(default=None, ge=0, le=INT32)
    end: int | None = Field(default=None, ge=0, le=INT32)
    text: str = ""
    label: Label = "relevant"
    grade: int | None = Field(default=None, ge=-INT32, le=INT32)
    group: int | None = Field(default=None, ge=0, le=INT32)
    origin: Origin = "selected"
    anchor: Anchor | None = None
    author: str | None = None
    created_at: str | None = None


def locate(haystack: str, needle: str) -> Span | None:
    """Where ``needle`` occurs in ``haystack``: exactly, else ignoring differences in white
    space (PDF line breaks, doubled spaces). The first occurrence wins."""
    if not needle.strip():
        return None
    start = haystack.find(needle)
    if start >= 0:
        return start, start + len(needle)
    words = needle.split()
    pattern = r"\s+".join(re.escape(word) for word in words)
    found = re.search(pattern, haystack)
    return (found.start(), found.end()) if found else None


class DocumentTexts:
    """Document texts of one project, loaded once per save."""

    def __init__(self, conn: sa.Connection, project_id: int) -> None:
        self.conn = conn
        self.project_id = project_id
        self.cache: dict[str, str | None] = {}

    def get(self, doc_id: str) -> str | None:
        if doc_id not in self.cache:
            self.cache[doc_id] = self.conn.scalar(
                sa.select(documents.c.text).where(
                    documents.c.id == doc_id, documents.c.project_id == self.project_id
                )
            )
        return self.cache[doc_id]


def anchor_evidence(
    ev: EvidenceIn, texts: DocumentTexts, where: str
) -> tuple[str | None, int | None, int | None, str, str]:
    """Check or find the offsets of one evidence; returns doc_id, start, end, text, anchor."""
    if ev.doc_id is None:
        if ev.origin == "imported":
            return None, None, None, ev.text, "unlocated"
        raise InvalidInput(f"{where}: every evidence must point to a document")
    text = texts.get(ev.doc_id)
    if text is None:
        raise InvalidInput(f"{where}: no document {ev.doc_id!r} in this project")
    if ev.start is not None and ev.end is not None:
        if not ev.start < ev.end <= len(text):
            if ev.anchor in ("stale", "unlocated"):
                return ev.doc_id, ev.start, ev.end, ev.text, ev.anchor
            raise InvalidInput(
                f"{where}: offsets {ev.start}..{ev.end} are outside the document (0..{len(text)})"
            )
        passage = text[ev.start : ev.end]
        if not ev.text or ev.text == passage:
            return ev.doc_id, ev.start, ev.end, passage, "ok"
        if ev.anchor in ("stale", "unlocated"):
            return ev.doc_id, ev.start, ev.end, ev.text, ev.anchor
        raise InvalidInput(
            f"{where}: the text does not match the document at {ev.start}..{ev.end} "
            f"(document has {passage[:60]!r}, evidence has {ev.text[:60]!r})"
        )
    span = locate(text, ev.text)
    if span is not None:
        return ev.doc_id, span[0], span[1], text[span[0] : span[1]], "ok"
    if ev.origin == "imported" or ev.anchor in ("stale", "unlocated"):
        return ev.doc_id, None, None, ev.text, ev.anchor or "unlocated"
    raise InvalidInput(f"{where}: the text was not found in the document {ev.doc_id!r}")
