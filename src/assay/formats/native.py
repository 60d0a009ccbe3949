"""Assay's own format, version 1: a zip that carries a project without loss.

Entries: ``manifest.json`` (``{"format": "assay", "version": 1, "project": …}``),
``documents.jsonl`` (one document per line, referenced by its unique name),
``files/<sha256>`` (original bytes), ``chunkings.jsonl`` (method and parameters),
``chunks.jsonl`` (the chunks of imported chunkings only; the others are re-made from their
method), ``items.jsonl`` (items, turns and evidence with offsets and groups) and
``comments.jsonl`` (comments on the items, threads by ``parent``; absent in older files). Lines are
written with sorted keys and every entry has a fixed date, so the same project always gives
the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterator
from contextlib import closing
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import (
    Bundle,
    ChunkingRecord,
    ChunkRecord,
    DocumentRecord,
    Issue,
    ItemSource,
    ProjectInfo,
)
from assay.formats.common import (
    ArchiveLimits,
    FirstSeen,
    SafeZip,
    as_object,
    fewer_collections,
    field_dict,
    field_int,
    field_str,
    zip_entry,
    zip_writer,
)
from assay.formats.jsonrec import (
    ITEM_KEYS,
    UNKNOWN_KEYS,
    comment_from_json,
    comment_to_json,
    item_from_json,
    item_to_json,
)
from assay.formats.jsontext import (
    decode_text,
    dumps_line,
    jsonl_lines,
    jsonl_stream,
    loads,
    text_lines,
)
from assay.records import Comment, Item

FORMAT = "assay"
VERSION = 1
IMPORTED = "imported"
ZIP_LEVEL = 1
"""Deflate level: speed over size (three times faster than 6 on text, about 15 % larger)."""


def write(bundle: Bundle, path: Path, **options: Any) -> None:
    with fewer_collections():
        _write(bundle, path)


def _write(bundle: Bundle, path: Path) -> None:
    with zip_writer(path) as zf:
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "project": {
                "name": bundle.project.name,
                "language": bundle.project.language,
                "settings": bundle.project.settings,
                "notes": bundle.project.notes,
            },
            "extra": bundle.extra,
        }
        zf.writestr(_entry("manifest.json"), dumps_line(manifest) + "\n")
        names: dict[str, str] = {}
        lines: list[str] = []
        written: set[str] = set()
        for doc in bundle.documents:
            data = doc.original()
            sha256 = doc.sha256 or hashlib.sha256(data).hexdigest()
            if sha256 not in written:
                zf.writestr(_entry(f"files/{sha256}"), data)
                written.add(sha256)
            names[doc.ref] = doc.name
            text = doc.text or ""
            lines.append(
                dumps_line(
                    {
                        "name": doc.name,
                        "media_type": doc.media_type,
                        "sha256": sha256,
                        "size": len(data),
                        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                        "chars": len(text),
                        "metadata": doc.metadata,
                        "notes": doc.notes,
                        "author": doc.author,
                    }
                )
            )
        zf.writestr(_entry("documents.jsonl"), "".join(line + "\n" for line in lines))
        zf.writestr(
            _entry("chunkings.jsonl"),
            "".join(
                dumps_line(
                    {
                        "name": c.name,
                        "method": c.method,
                        "params": c.params,
                        "default": c.is_default,
                    }
                )
                + "\n"
                for c in bundle.chunkings
            ),
        )
        with zf.open(_entry("chunks.jsonl"), "w", force_zip64=True) as raw:
            out = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
            for chunking in bundle.chunkings:
                if chunking.method != IMPORTED:
                    continue
                out.writelines(_chunk_lines(chunking, names))
            out.flush()
            out.detach()
        with zf.open(_entry("items.jsonl"), "w", force_zip64=True) as raw:
            out = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
            for item in bundle.items:
                out.write(dumps_line(item_to_json(item, lambda ref: names.get(ref or ""))) + "\n")
            out.flush()
            out.detach()
        zf.writestr(
            _entry("comments.jsonl"),
            "".join(dumps_line(comment_to_json(c)) + "\n" for c in bundle.comments),
        )


def _entry(name: str) -> zipfile.ZipInfo:
    return zip_entry(name, ZIP_LEVEL)


def _chunk_lines(chunking: ChunkingRecord, names: dict[str, str]) -> Iterator[str]:
    """``chunks.jsonl`` lines, the same bytes as ``dumps_line`` gives (sorted keys), built
    with a template: a million chunks would spend most of their time in ``json.dumps``."""
    label = encode_basestring(chunking.name)
    encoded: dict[str, str] = {}
    for chunk in chunking.chunks:
        doc = encoded.get(chunk.doc_ref)
        if doc is None:
            name = names.get(chunk.doc_ref)
            doc = encode_basestring(name) if name is not None else "null"
            encoded = {chunk.doc_ref: doc}  # chunks arrive document by document
        yield (
            f'{{"chunk_id":{encode_basestring(chunk.chunk_id)},"chunking":{label},'
            f'"doc":{doc},"end":{int(chunk.end)},"start":{int(chunk.start)}}}\n'
        )


def read(path: Path, limits: ArchiveLimits | None = None) -> Bundle:
    bundle = stream(path, limits)
    bundle.items = list(bundle.items)
    return bundle


def stream(path: Path, limits: ArchiveLimits | None = None) -> Bundle:
    """:func:`read` with the items read as they are taken: ``items.jsonl`` is inflated and
    parsed line by line, never held whole (an import of 100,000 items)."""
    with SafeZip(path, limits) as zf:
        where = f"{path}: manifest.json"
        manifest = as_object(loads(zf.read("manifest.json"), where), where)
        if manifest.get("format") != FORMAT:
            raise InvalidInput(f"{where}: field 'format' must be {FORMAT!r}")
        version = manifest.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise InvalidInput(f"{where}: field 'version' must be an integer")
        if version > VERSION:
            raise InvalidInput(
                f"{where}: format version {version} needs a newer Assay (this one reads {VERSION})"
            )
        if version < 1:
            raise InvalidInput(f"{where}: unknown format version {version}")
        info = field_dict(manifest, "project", where)
        project = ProjectInfo(
            name=field_str(info, "name", where),
            language=field_str(info, "language", where, "en") or "en",
            settings=field_dict(info, "settings", where),
            notes=field_str(info, "notes", where),
        )
        issues: list[Issue] = []
        documents = _documents(zf, path, issues)
        chunkings = _chunkings(zf, path, {d.ref for d in documents}, issues)
        size = zf.entry("items.jsonl").file_size
        comments = _comments(zf, path) if zf.has("comments.jsonl") else []
    return Bundle(
        project=project,
        documents=documents,
        chunkings=chunkings,
        items=_items(path, limits, issues),
        item_source=ItemSource("native", path, size) if limits is None else None,
        provenance={"format": FORMAT, "version": version, "path": str(path)},
        extra=field_dict(manifest, "extra", where),
        issues=issues,
        comments=comments,
    )


def _comments(zf: SafeZip, path: Path) -> list[Comment]:
    found: list[Comment] = []
    ids: set[int] = set()
    for number, obj in jsonl_lines(_text(zf, "comments.jsonl"), f"{path}: comments.jsonl"):
        comment = comment_from_json(obj, f"{path}: comments.jsonl line {number}")
        if comment.id in ids:
            raise InvalidInput(f"{path}: comments.jsonl line {number}: id {comment.id} repeated")
        ids.add(comment.id)
        found.append(comment)
    return found


def stream_items(path: Path, issues: list[Issue], *, check_ids: bool = True) -> Iterator[Item]:
    """The items of the archive as they are read (see :class:`assay.formats.ItemSource`).
    ``check_ids=False`` skips the check for repeated ids, which remembers every id read (a
    file Assay wrote from its own items, checked against its hash: a frozen version)."""
    return _items(path, None, issues, check_ids)


def _items(
    path: Path, limits: ArchiveLimits | None, issues: list[Issue], check_ids: bool = True
) -> Iterator[Item]:
    seen = FirstSeen("field 'id'", issues) if check_ids else None
    with SafeZip(path, limits) as zf, closing(zf.lines("items.jsonl")) as raw:
        where = f"{path}: items.jsonl"
        lines = text_lines(raw, where, lambda: zf.read("items.jsonl"))
        warned: set[str] = set()
        for number, obj in jsonl_stream(lines, where):
            item = item_from_json(obj, f"{path}: items.jsonl line {number}")
            unknown = (
                {k: v for k, v in obj.items() if k not in ITEM_KEYS}
                if isinstance(obj, dict)
                else {}
            )
            if unknown:  # a newer Assay's field: kept, and said once per name
                item.extra[UNKNOWN_KEYS] = {**item.extra.get(UNKNOWN_KEYS, {}), **unknown}
                new = sorted(set(unknown) - warned)
                if new:
                    warned.update(new)
                    names = ", ".join(repr(k) for k in new)
                    issues.append(
                        Issue(
                            f"items.jsonl line {number}",
                            f"field(s) {names} are not known to this version: kept in the "
                            f"items' extra.{UNKNOWN_KEYS}",
                            "warning",
                        )
                    )
            if seen is None or seen.first(item.id, f"items.jsonl line {number}"):
                yield item


def _text(zf: SafeZip, name: str) -> str:
    return decode_text(zf.read(name), f"{zf.path}: {name}")


def _named_lines(
    zf: SafeZip, path: Path, member: str, issues: list[Issue]
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(where, name, object)`` per line of ``member``: a name is required, and a repeated
    one is reported and skipped (documents and chunkings are known by name)."""
    names = FirstSeen("field 'name'", issues)
    for number, obj in jsonl_lines(_text(zf, member), f"{path}: {member}"):
        where = f"{path}: {member} line {number}"
        name = field_str(obj, "name", where)
        if not name.strip():
            raise InvalidInput(f"{where}: field 'name' must not be empty")
        if names.first(name, f"{member} line {number}"):
            yield where, name, obj


def _documents(zf: SafeZip, path: Path, issues: list[Issue]) -> list[DocumentRecord]:
    found: list[DocumentRecord] = []
    for where, name, obj in _named_lines(zf, path, "documents.jsonl", issues):
        sha256 = field_str(obj, "sha256", where)
        entry = f"files/{sha256}"
        if not zf.has(entry):
            raise InvalidInput(f"{where}: its file {entry!r} is missing from the archive")
        data = zf.read(entry)
        if hashlib.sha256(data).hexdigest() != sha256:
            raise InvalidInput(f"{where}: {entry} does not match its sha256")
        found.append(
            DocumentRecord(
                ref=name,
                name=name,
                media_type=field_str(obj, "media_type", where),
                data=data,
                metadata=field_dict(obj, "metadata", where),
                notes=field_str(obj, "notes", where),
                author=field_str(obj, "author", where),
                sha256=sha256,
                text_sha256=field_str(obj, "text_sha256", where),
            )
        )
    return found


def _chunkings(
    zf: SafeZip, path: Path, doc_refs: set[str], issues: list[Issue]
) -> list[ChunkingRecord]:
    chunkings: dict[str, ChunkingRecord] = {}
    for where, name, obj in _named_lines(zf, path, "chunkings.jsonl", issues):
        default = obj.get("default", False)
        if not isinstance(default, bool):
            raise InvalidInput(f"{where}: field 'default' must be true or false")
        chunkings[name] = ChunkingRecord(
            name=name,
            method=field_str(obj, "method", where),
            params=field_dict(obj, "params", where),
            is_default=default,
            chunks=[],
        )
    if not zf.has("chunks.jsonl"):
        return list(chunkings.values())
    seen = FirstSeen("field 'chunk_id'", issues)
    for number, obj in jsonl_lines(_text(zf, "chunks.jsonl"), f"{path}: chunks.jsonl"):
        where = f"{path}: chunks.jsonl line {number}"
        chunking = chunkings.get(field_str(obj, "chunking", where))
        if chunking is None or chunking.method != IMPORTED:
            raise InvalidInput(f"{where}: field 'chunking' names no imported chunking")
        chunk_id = field_str(obj, "chunk_id", where)
        doc = field_str(obj, "doc", where)
        start = field_int(obj, "start", where)
        end = field_int(obj, "end", where)
        if doc not in doc_refs:
            raise InvalidInput(f"{where}: field 'doc' names no document of the archive")
        if start is None or end is None or not 0 <= start < end:
            raise InvalidInput(f"{where}: fields 'start' and 'end' must be 0 <= start < end")
        if not chunk_id:
            raise InvalidInput(f"{where}: field 'chunk_id' must not be empty")
        if not seen.first((chunking.name, chunk_id), f"chunks.jsonl line {number}"):
            continue
        assert isinstance(chunking.chunks, list)
        chunking.chunks.append(ChunkRecord(chunk_id, doc, start, end))
    return list(chunkings.values())
