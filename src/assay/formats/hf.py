"""Hugging Face dataset folder: ``data/items.parquet``, ``data/documents.parquet`` and a
``README.md`` dataset card whose YAML header declares both as configs, so
``datasets.load_dataset("parquet", data_files=...)`` (or ``load_dataset(folder)``) reads them
offline.

``items``: one row per item with flat columns for the first turn (``query``, ``answer``,
``alternatives``, ``query_type``, ``retrieval_gt`` as groups of chunk ids of the chosen
chunking, ``relevant``/``distracting`` passages with ``doc_id``, offsets and text) and
``turns``, all turns as JSON (what the reader uses, so nothing is lost), ``extra`` and
``notes``. Columns a reader does not know (added to the dataset elsewhere) are kept in each
item's ``extra["columns"]`` with a warning. ``documents``:
``doc_id, name, text, metadata`` (JSON), and ``original``: the file's bytes for a document
without text (a scan), so it comes back as the same document; null otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, DocumentRecord, Issue, ProjectInfo
from assay.formats.autorag import jsonable
from assay.formats.common import (
    FirstSeen,
    one_of,
    parquet_rows,
    read_parquet,
)
from assay.formats.csv import OTHER_COLUMNS
from assay.formats.groups import retrieval_groups, source_id
from assay.formats.jsonrec import turn_from_json, turn_to_json
from assay.formats.jsontext import dumps_line, loads
from assay.records import KINDS, STATUSES, Item

ROW_GROUP = 10_000


def _schemas(pa: Any) -> tuple[Any, Any]:
    passage = pa.struct(
        [
            ("doc_id", pa.string()),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("text", pa.string()),
            ("group", pa.int64()),
            ("grade", pa.int64()),
        ]
    )
    items = pa.schema(
        [
            ("id", pa.string()),
            ("kind", pa.string()),
            ("status", pa.string()),
            ("query", pa.string()),
            ("answer", pa.string()),
            ("alternatives", pa.list_(pa.string())),
            ("query_type", pa.string()),
            ("retrieval_gt", pa.list_(pa.list_(pa.string()))),
            ("relevant", pa.list_(passage)),
            ("distracting", pa.list_(passage)),
            ("turns", pa.string()),
            ("extra", pa.string()),
            ("notes", pa.string()),
        ]
    )
    documents = pa.schema(
        [
            ("doc_id", pa.string()),
            ("name", pa.string()),
            ("text", pa.string()),
            ("metadata", pa.string()),
            ("original", pa.binary()),
        ]
    )
    return items, documents


def card(bundle: Bundle) -> str:
    language = bundle.project.language or "en"
    name = bundle.project.name or "assay dataset"
    return (
        "---\n"
        "configs:\n"
        "- config_name: items\n"
        "  data_files:\n"
        "  - split: test\n"
        "    path: data/items.parquet\n"
        "  default: true\n"
        "- config_name: documents\n"
        "  data_files:\n"
        "  - split: test\n"
        "    path: data/documents.parquet\n"
        f"language:\n- {language}\n"
        "task_categories:\n- question-answering\n"
        "tags:\n- rag\n- retrieval\n- assay\n"
        "---\n\n"
        f"# {name}\n\n"
        "A gold-standard RAG evaluation set exported by Assay.\n\n"
        + (f"{bundle.project.notes}\n\n" if bundle.project.notes else "")
        + "- `items`: questions (`query`), reference answers (`answer`, `alternatives`), the "
        "question type, and evidence: `relevant` and `distracting` passages as character "
        "offsets into `documents.text`; `retrieval_gt` lists groups of chunk ids (every group "
        "is needed, any id within a group suffices). `turns` holds all turns as JSON, "
        "`notes` the item's notes.\n"
        "- `documents`: the documents' ids, names and extracted text (`original` holds the "
        "file of a document without text).\n"
    )


def write(bundle: Bundle, path: Path, *, chunking: str | None = None, **_: Any) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    item_schema, doc_schema = _schemas(pa)
    data = path / "data"
    data.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(data / "documents.parquet", doc_schema) as out:
        batch: list[dict[str, Any]] = []
        for doc in bundle.documents:
            batch.append(
                {
                    "doc_id": doc.ref,
                    "name": doc.name,
                    "text": doc.text or "",
                    "metadata": dumps_line(doc.metadata),
                    "original": None if (doc.text or "").strip() else doc.original(),
                }
            )
            if len(batch) >= ROW_GROUP:
                out.write_table(pa.Table.from_pylist(batch, schema=doc_schema))
                batch = []
        out.write_table(pa.Table.from_pylist(batch, schema=doc_schema))
    with pq.ParquetWriter(data / "items.parquet", item_schema) as out:
        batch = []
        for item in bundle.items:
            batch.append(_row(item))
            if len(batch) >= ROW_GROUP:
                out.write_table(pa.Table.from_pylist(batch, schema=item_schema))
                batch = []
        out.write_table(pa.Table.from_pylist(batch, schema=item_schema))
    (path / "README.md").write_text(card(bundle), encoding="utf-8")
    return []


def _row(item: Item) -> dict[str, Any]:
    first = item.turns[0]

    def passages(label: str) -> list[dict[str, Any]]:
        return [
            {
                "doc_id": e.doc_id,
                "start": e.start,
                "end": e.end,
                "text": e.text,
                "group": e.group,
                "grade": e.grade,
            }
            for e in first.evidence
            if e.label == label
        ]

    return {
        "id": source_id(item),
        "kind": item.kind,
        "status": item.status,
        "query": first.query,
        "answer": first.answer,
        "alternatives": first.alternatives,
        "query_type": first.query_type,
        "retrieval_gt": retrieval_groups(first)[0],
        "relevant": passages("relevant"),
        "distracting": passages("distracting"),
        "turns": json.dumps([turn_to_json(t, lambda ref: ref) for t in item.turns]),
        "extra": dumps_line({k: v for k, v in item.extra.items() if k != "source_id"}),
        "notes": item.notes,
    }


def read(path: Path) -> Bundle:
    items_path = path / "data" / "items.parquet"
    if not items_path.is_file():
        raise InvalidInput(f"{items_path}: missing (a dataset exported by Assay has it)")
    issues: list[Issue] = []
    documents: list[DocumentRecord] = []
    docs_path = path / "data" / "documents.parquet"
    if docs_path.is_file():
        documents = _documents(docs_path, issues)
    items: list[Item] = []
    seen = FirstSeen("field 'id'", issues)
    rows = _rows(items_path, ("id", "turns"))
    known = set(_schemas(_arrow())[0].names)
    others = sorted({k for row in rows for k in row if k not in known})
    if others:
        issues.append(
            Issue(
                items_path.name,
                f"column(s) {', '.join(repr(c) for c in others)} are not Assay's: each row's "
                f"values are kept in its item's extra.{OTHER_COLUMNS}",
                "warning",
            )
        )
    for number, row in enumerate(rows, 1):
        where = f"{items_path.name} row {number}"
        item_id = row.get("id")
        if not isinstance(item_id, str) or not item_id:
            raise InvalidInput(f"{where}: field 'id' must be a non-empty string")
        if not seen.first(item_id, where):
            continue
        turns = loads(_string(row, "turns", where), f"{where}, field 'turns'")
        if not isinstance(turns, list) or not turns:
            raise InvalidInput(f"{where}: field 'turns' must be a non-empty JSON list")
        extra = loads(_string(row, "extra", where) or "{}", f"{where}, field 'extra'")
        if not isinstance(extra, dict):
            raise InvalidInput(f"{where}: field 'extra' must be a JSON object")
        kept = {k: jsonable(row[k]) for k in others if row.get(k) is not None}
        if kept:
            extra[OTHER_COLUMNS] = {**extra.get(OTHER_COLUMNS, {}), **kept}
        kind = one_of(_string(row, "kind", where) or "qa", KINDS, "kind", where)
        if kind == "qa" and len(turns) != 1:
            raise InvalidInput(f"{where}: a 'qa' item has exactly one turn")
        items.append(
            Item(
                origin="imported",
                id=item_id,
                kind=kind,
                status=one_of(_string(row, "status", where) or "draft", STATUSES, "status", where),
                notes=_string(row, "notes", where),  # absent in files written before it
                extra=extra,
                turns=[turn_from_json(t, f"{where}, turn {i}") for i, t in enumerate(turns, 1)],
            )
        )
    return Bundle(
        project=ProjectInfo(),
        documents=documents,
        items=items,
        provenance={"format": "hf", "path": str(path)},
        issues=issues,
    )


def _arrow() -> Any:
    import pyarrow as pa

    return pa


def _string(row: dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{where}: field {key!r} must be a string")
    return value


def _rows(path: Path, required: tuple[str, ...]) -> list[dict[str, Any]]:
    return parquet_rows(read_parquet(path), path, required)


def _documents(path: Path, issues: list[Issue]) -> list[DocumentRecord]:
    found: list[DocumentRecord] = []
    seen = FirstSeen("field 'doc_id'", issues)
    for number, row in enumerate(_rows(path, ("doc_id", "name", "text")), 1):
        where = f"{path.name} row {number}"
        doc_id, name, text = (_string(row, k, where) for k in ("doc_id", "name", "text"))
        if not doc_id or not name:
            raise InvalidInput(f"{where}: fields 'doc_id' and 'name' must not be empty")
        if not seen.first(doc_id, where):
            continue
        metadata = loads(_string(row, "metadata", where) or "{}", f"{where}, field 'metadata'")
        if not isinstance(metadata, dict):
            raise InvalidInput(f"{where}: field 'metadata' must be a JSON object")
        original = row.get("original")
        if not text.strip():
            if not isinstance(original, bytes) or not original:
                issues.append(Issue(where, "field 'text' is empty and there is no 'original'"))
                continue
            found.append(DocumentRecord(ref=doc_id, name=name, data=original, metadata=metadata))
            continue
        found.append(
            DocumentRecord(
                ref=doc_id,
                name=name if name.endswith((".txt", ".md")) else f"{name}.txt",
                text=text,
                data=text.encode("utf-8"),
                metadata=metadata,
            )
        )
    return found
