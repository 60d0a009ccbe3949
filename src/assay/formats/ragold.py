"""RAGold's export zip: ``annotations.json`` (schema version 2) and ``files/<uuid>/<name>``.

Writing produces exactly schema v2 (all fields, ``language`` "en" or "de", 2-space indent).
Reading accepts v2 and v1 like RAGold's loose schema (missing fields take defaults, unknown
keys are kept and written back); v1's ``description``/``filename`` are read as ``notes`` and
``name``. A file with a version above 2 is refused with RAGold's own reason. Chunk texts carry
no offsets: the import locates them in their document and keeps what it cannot find as
unverified evidence. RAGold has no alternatives (OR groups): the writer names every item that
has them and keeps the groups in an extra ``relevantGroups`` key that the reader takes back.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, DocumentRecord, Issue, ProjectInfo
from assay.formats.common import (
    SafeZip,
    as_object,
    field_dict,
    field_list,
    field_str,
    is_uuid,
    parse_iso,
    safe_name,
    sub_dict,
    zip_entry,
    zip_writer,
)
from assay.formats.groups import source_id
from assay.formats.jsontext import loads, type_name
from assay.records import Evidence, Item, Turn

SCHEMA_VERSION = 2
LANGUAGES = ("en", "de")
TOP_KEYS = ("version", "author", "project", "notes", "language", "createdAt", "updatedAt")
ANNOTATION_KEYS = (
    "query",
    "queryType",
    "relevantChunks",
    "distractingChunks",
    "response",
    "notes",
    "createdAt",
    "updatedAt",
)
DOCUMENT_KEYS = ("name", "size", "notes", "createdAt", "updatedAt")
GROUPS_KEY = "relevantGroups"
"""Written by Assay when passages are alternatives: positions in ``relevantChunks`` grouped
(any one of a group suffices, every group is needed). RAGold keeps and ignores it."""
RECORDS = ("annotations", "documents")
"""Top-level objects keyed by record id (uuid): a repeated key is a repeated record."""


def read(path: Path) -> Bundle:
    with SafeZip(path) as zf:
        where = f"{path}: annotations.json"
        data = as_object(loads(zf.read("annotations.json"), where, keyed=RECORDS), where)
        version = data.get("version", SCHEMA_VERSION)
        if isinstance(version, bool) or not isinstance(version, int | float):
            raise InvalidInput(f"{where}: field 'version' must be a number")
        if version > SCHEMA_VERSION:
            raise InvalidInput(
                f"{where}: schema version {version} requires a newer version of RAGold "
                f"(this reader knows version {SCHEMA_VERSION})"
            )
        language = data.get("language", "en")
        if language not in LANGUAGES:
            raise InvalidInput(f"{where}: field 'language' must be 'en' or 'de', not {language!r}")
        notes_key = "notes" if version >= 2 or "notes" in data else "description"
        project = ProjectInfo(
            name=field_str(data, "project", where),
            language=language,
            notes=field_str(data, notes_key, where),
            author=field_str(data, "author", where),
            created_at=field_str(data, "createdAt", where),
            updated_at=field_str(data, "updatedAt", where),
        )
        issues: list[Issue] = []
        for key in RECORDS:
            _repeated_keys(data.get(key), key, issues)
        documents = _documents(zf, field_dict(data, "documents", where), where, issues)
    items = [
        _item(key, value, f"{where}: annotation {key!r}")
        for key, value in field_dict(data, "annotations", where).items()
    ]
    unknown = {k: v for k, v in data.items() if k not in (*TOP_KEYS, "annotations", "documents")}
    return Bundle(
        project=project,
        documents=documents,
        items=items,
        provenance={"format": "ragold", "version": version, "path": str(path)},
        extra={"ragold": unknown} if unknown else {},
        issues=issues,
    )


def _repeated_keys(records: Any, key: str, issues: list[Issue]) -> None:
    """A key repeated in ``annotations`` or ``documents`` (JSON keeps one value per key: the
    first is kept, the repeat is reported like a repeated id in any other format)."""
    for record_id, first, later in getattr(records, "repeats", ()):
        issues.append(
            Issue(
                f"annotations.json: {key} entry {later} ({record_id!r})",
                f"the id repeats the one at {key} entry {first}",
            )
        )


def _documents(
    zf: SafeZip, documents: dict[str, Any], where: str, issues: list[Issue]
) -> list[DocumentRecord]:
    found: list[DocumentRecord] = []
    for key, value in documents.items():
        here = f"{where}: document {key!r}"
        doc = as_object(value, here)
        name = field_str(doc, "name", here) or field_str(doc, "filename", here)
        notes = field_str(doc, "notes", here) or field_str(doc, "description", here)
        size = doc.get("size", 0)
        if isinstance(size, bool) or not isinstance(size, int | float):
            raise InvalidInput(f"{here}: field 'size' must be a number, found {type_name(size)}")
        entry = f"files/{key}/{name}"
        if not name or not zf.has(entry):
            issues.append(Issue(here, f"its file {entry!r} is missing from the archive"))
            continue
        kept = {k: v for k, v in doc.items() if k not in DOCUMENT_KEYS}
        found.append(
            DocumentRecord(
                ref=key,
                name=name,
                data=zf.read(entry),
                notes=notes,
                metadata={
                    "source_id": key,
                    "ragold": {
                        "createdAt": field_str(doc, "createdAt", here),
                        "updatedAt": field_str(doc, "updatedAt", here),
                        **({"unknown": kept} if kept else {}),
                    },
                },
            )
        )
    return found


def _chunks(
    annotation: dict[str, Any], key: str, label: str, where: str, keep_blank: bool = False
) -> list[Evidence]:
    found: list[Evidence] = []
    for index, value in enumerate(field_list(annotation, key, where), 1):
        here = f"{where}, {key}[{index}]"
        chunk = as_object(value, here)
        content = field_str(chunk, "content", here)
        doc_id = chunk.get("documentId")
        if doc_id is not None and not isinstance(doc_id, str):
            raise InvalidInput(f"{here}: field 'documentId' must be a string")
        if content.strip() or keep_blank:  # RAGold drops blank chunks on save
            found.append(
                Evidence(doc_id=doc_id or None, text=content, label=label, origin="imported")
            )
    return found


def _item(key: str, value: Any, where: str) -> Item:
    annotation = as_object(value, where)
    relevant = _chunks(annotation, "relevantChunks", "relevant", where, keep_blank=True)
    _read_groups(annotation, relevant, where)
    evidence = [e for e in relevant if e.text.strip()]  # RAGold drops blank chunks on save
    evidence += _chunks(annotation, "distractingChunks", "distracting", where)
    unknown = {k: v for k, v in annotation.items() if k not in (*ANNOTATION_KEYS, GROUPS_KEY)}
    ragold = {
        "createdAt": field_str(annotation, "createdAt", where),
        "updatedAt": field_str(annotation, "updatedAt", where),
        **({"unknown": unknown} if unknown else {}),
    }
    return Item(
        origin="imported",
        id=key,
        notes=field_str(annotation, "notes", where),
        extra={"ragold": ragold},
        turns=[
            Turn(
                query=field_str(annotation, "query", where),
                query_type=field_str(annotation, "queryType", where, "fact_single")
                or "fact_single",
                answer=field_str(annotation, "response", where),
                evidence=evidence,
            )
        ],
    )


# ---------------------------------------------------------------- writing


def iso_ms(value: datetime | str | None) -> str:
    """A time as RAGold writes it (``2026-01-01T00:00:00.000Z``); "" when unknown, an
    unreadable string as it is."""
    moment = parse_iso(value)
    if moment is None:
        return value if isinstance(value, str) else ""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def write(bundle: Bundle, path: Path, **_: Any) -> list[str]:
    notes: list[str] = []
    language = bundle.project.language if bundle.project.language in LANGUAGES else "en"
    if language != bundle.project.language:
        notes.append(f"RAGold knows only en and de; language {bundle.project.language!r} → en")
    uuids: dict[str, str] = {}
    documents: dict[str, Any] = {}
    with zip_writer(path) as zf:
        for doc in bundle.documents:
            original = doc.metadata.get("source_id")
            key = original if isinstance(original, str) and is_uuid(original) else doc.ref
            uuids[doc.ref] = key
            data = doc.original()
            info = sub_dict(doc.metadata, "ragold")
            name = safe_name(doc.name, "document")
            documents[key] = {
                "name": name,
                "size": len(data),
                "notes": doc.notes,
                "createdAt": str(info.get("createdAt") or iso_ms(doc.created_at)),
                "updatedAt": str(info.get("updatedAt") or iso_ms(doc.updated_at)),
            }
            zf.writestr(zip_entry(f"files/{key}/{name}"), data)
        annotations: dict[str, Any] = {}
        authors: list[str] = []
        for item in bundle.items:
            if len(item.turns) > 1:
                notes.append(f"item {item.id}: RAGold has single questions; kept the first turn")
            annotation = _annotation(item, uuids)
            annotations[source_id(item)] = annotation
            dropped = annotation.pop("_dropped")
            if GROUPS_KEY in annotation:
                notes.append(
                    f"item {item.id}: RAGold has no alternatives (OR groups); its relevant "
                    f"chunks read as all needed there, the groups are kept in {GROUPS_KEY!r} "
                    "(Assay reads them back)"
                )
            if dropped:
                notes.append(
                    f"item {item.id}: {dropped} passage(s) without a document left out "
                    "(RAGold requires a document for every chunk)"
                )
            authors.append(item.author)
        payload = {
            "version": SCHEMA_VERSION,
            "author": bundle.project.author
            or (max(set(authors), key=authors.count) if authors else ""),
            "project": bundle.project.name,
            "notes": bundle.project.notes,
            "language": language,
            "createdAt": iso_ms(bundle.project.created_at),
            "updatedAt": iso_ms(bundle.project.updated_at),
            "annotations": annotations,
            "documents": documents,
        }
        zf.writestr(
            zip_entry("annotations.json"), json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
        )
    return notes


def _annotation(item: Item, uuids: dict[str, str]) -> dict[str, Any]:
    turn = item.turns[0]
    info = sub_dict(item.extra, "ragold")

    def chunk(ev: Evidence) -> dict[str, Any]:
        out: dict[str, Any] = {"content": ev.text}
        if ev.doc_id is not None and ev.doc_id in uuids:
            out["documentId"] = uuids[ev.doc_id]
        return out

    unknown = sub_dict(info, "unknown")
    kept = [e for e in turn.evidence if e.text.strip() and e.doc_id in uuids]
    dropped = sum(1 for e in turn.evidence if e.text.strip() and e.doc_id not in uuids)
    relevant = [e for e in kept if e.label == "relevant" and turn.query_type != "unanswerable"]
    groups = or_groups(relevant)
    return {
        "_dropped": dropped,
        **{k: v for k, v in unknown.items() if k not in (*ANNOTATION_KEYS, GROUPS_KEY)},
        "query": turn.query,
        "queryType": turn.query_type,
        "relevantChunks": [chunk(e) for e in relevant],
        "distractingChunks": [chunk(e) for e in kept if e.label == "distracting"],
        "response": turn.answer,
        "notes": item.notes,
        "createdAt": str(info.get("createdAt") or iso_ms(item.created_at)),
        "updatedAt": str(info.get("updatedAt") or iso_ms(item.updated_at)),
        **({GROUPS_KEY: groups} if any(len(g) > 1 for g in groups) else {}),
    }


def or_groups(relevant: list[Evidence]) -> list[list[int]]:
    """Positions in ``relevantChunks`` grouped: one group per group number (alternatives),
    a passage without a number is a group of its own."""
    groups: dict[object, list[int]] = {}
    for index, ev in enumerate(relevant):
        groups.setdefault(ev.group if ev.group else ("single", index), []).append(index)
    return list(groups.values())


def _read_groups(annotation: dict[str, Any], relevant: list[Evidence], where: str) -> None:
    """Group numbers from the ``relevantGroups`` an Assay export wrote (RAGold ignores it)."""
    if GROUPS_KEY not in annotation:
        return
    here = f"{where}, field {GROUPS_KEY!r}"
    seen: set[int] = set()
    for number, members in enumerate(field_list(annotation, GROUPS_KEY, where), 1):
        if not isinstance(members, list):
            raise InvalidInput(f"{here}: each group must be a list of positions")
        for index in members:
            if isinstance(index, bool) or not isinstance(index, int):
                raise InvalidInput(f"{here}: positions must be whole numbers")
            if not 0 <= index < len(relevant) or index in seen:
                raise InvalidInput(
                    f"{here}: position {index} is not a relevant chunk or is in two groups"
                )
            seen.add(index)
            relevant[index].group = number
