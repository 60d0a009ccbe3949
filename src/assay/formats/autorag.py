"""AutoRAG: ``qa.parquet`` and ``corpus.parquet`` in one folder, for one chunking.

Reading follows AutoRAG's casting: ``retrieval_gt`` as a string becomes ``[[s]]``; a 2-D list
is kept (outer = all needed, inner = alternatives); **a 1-D list ``[a, b]`` means all needed,
``[[a], [b]]``** (AutoRAG's docs say "and"; its code makes one "or" group; we follow the docs
and Assay's rule for flat lists). NumPy arrays are accepted like lists. ``generation_gt`` as a
string becomes ``[s]``. Each corpus row becomes a document plus one chunk of an imported
chunking named ``autorag`` whose chunk id is the row's ``doc_id``, so an export of that chunking
gives the ids back. ``last_modified_datetime`` may be a timestamp or an ISO string. Text is
not NFC-normalised or demojized here (AutoRAG does that when it loads). Writing, as
AutoRAG's loader accepts it, is in :mod:`assay.formats.autorag_write`.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, ChunkingRecord, ChunkRecord, DocumentRecord, Issue
from assay.formats.autorag_schema import CORPUS_COLUMNS, QA_COLUMNS, to_timestamp
from assay.formats.common import (
    FirstSeen,
    parquet_rows,
    read_parquet,
    require_folder,
    text_document,
)
from assay.formats.jsontext import type_name
from assay.records import Evidence, Item, Turn

CHUNKING = "autorag"


# ---------------------------------------------------------------- casting


def cast_retrieval_gt(value: Any, where: str) -> list[list[str]]:
    """AutoRAG's ``retrieval_gt`` as groups: outer list all needed, inner list alternatives."""
    value = _plain(value)
    if value is None:
        return []
    if isinstance(value, str):
        return [[value]] if value else []
    if not isinstance(value, list):
        raise InvalidInput(f"{where}: field 'retrieval_gt' must be a string or a list")
    groups: list[list[str]] = []
    for element in value:
        element = _plain(element)
        if isinstance(element, str):
            groups.append([element])
        elif isinstance(element, list) and all(isinstance(e, str) for e in element):
            if element:
                groups.append(list(element))
        else:
            raise InvalidInput(
                f"{where}: field 'retrieval_gt' may hold strings or lists of strings, "
                f"found {type_name(element)}"
            )
    return groups


def cast_generation_gt(value: Any, where: str) -> list[str]:
    value = _plain(value)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidInput(f"{where}: field 'generation_gt' must be a string or a list of strings")


def _plain(value: Any) -> Any:
    """NumPy arrays and tuples as lists (pandas hands list cells over as arrays)."""
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()
    if isinstance(value, tuple):
        value = list(value)
    return value


def jsonable(value: Any) -> Any:
    """A parquet cell as a JSON value (timestamps as ISO strings)."""
    value = _plain(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and value != value:  # NaN
        return None
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------- reading


def read(path: Path) -> Bundle:
    require_folder(path, "an AutoRAG dataset (qa.parquet and corpus.parquet)")
    issues: list[Issue] = []
    corpus_path, qa_path = path / "corpus.parquet", path / "qa.parquet"
    for needed in (corpus_path, qa_path):
        if not needed.is_file():
            raise InvalidInput(f"{needed}: missing (an AutoRAG dataset has both parquet files)")
    documents, chunks = _read_corpus(corpus_path, issues)
    known = {c.chunk_id for c in chunks}
    items = _read_qa(qa_path, known, issues)
    chunking = ChunkingRecord(CHUNKING, "imported", {"source": "autorag"}, True, chunks)
    return Bundle(
        documents=documents,
        chunkings=[chunking],
        items=items,
        provenance={"format": "autorag", "path": str(path)},
        issues=issues,
    )


def _rows(table: Any, path: Path, required: tuple[str, ...]) -> list[dict[str, Any]]:
    return parquet_rows(table, path, required, strings=("qid", "query", "doc_id", "contents"))


def _keyed_rows(
    rows: list[dict[str, Any]], path: Path, key: str, issues: list[Issue]
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(where, id, row)`` per row whose ``key`` column holds an id, the first of each id:
    an empty id and a repeat are reported and the row skipped."""
    seen = FirstSeen(f"field {key!r}", issues)
    for number, row in enumerate(rows, 1):
        value = row.get(key)
        where = f"{path.name} row {number} ({key} {value!r})"
        if not isinstance(value, str) or not value.strip():
            issues.append(Issue(where, f"field {key!r} is empty"))
        elif seen.first(value, f"{path.name} row {number}"):
            yield where, value, row


def _read_corpus(path: Path, issues: list[Issue]) -> tuple[list[DocumentRecord], list[ChunkRecord]]:
    import pyarrow as pa

    table = read_parquet(path)
    rows = _rows(table, path, CORPUS_COLUMNS)
    if "metadata" in table.schema.names:
        kind = table.schema.field("metadata").type
        if not (pa.types.is_struct(kind) or pa.types.is_map(kind) or pa.types.is_null(kind)):
            raise InvalidInput(f"{path}: column 'metadata' must be a struct or a map, found {kind}")
    documents: list[DocumentRecord] = []
    chunks: list[ChunkRecord] = []
    for where, doc_id, row in _keyed_rows(rows, path, "doc_id", issues):
        contents = row.get("contents")
        if not isinstance(contents, str) or not contents.strip():
            issues.append(
                Issue(where, "field 'contents' is empty: left out, as AutoRAG drops it", "omitted")
            )
            continue
        metadata = _plain(row.get("metadata"))
        if isinstance(metadata, list):  # a map column: [(key, value), ...]
            metadata = {str(k): v for k, v in metadata}
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput(f"{where}: field 'metadata' must be a struct or a map")
        metadata = dict(metadata or {})
        stamp = to_timestamp(metadata.get("last_modified_datetime"), where)
        metadata["last_modified_datetime"] = stamp.isoformat() if stamp else None
        others = {
            k: jsonable(v) for k, v in row.items() if k not in ("doc_id", "contents", "metadata")
        }
        info = {"metadata": jsonable(metadata), "columns": others}
        about = {"source_id": doc_id, "autorag": info}
        documents.append(text_document(doc_id, doc_id, "row", contents, about))
        chunks.append(ChunkRecord(doc_id, doc_id, 0, len(contents), contents))
    return documents, chunks


def _read_qa(path: Path, known: set[str], issues: list[Issue]) -> list[Item]:
    table = read_parquet(path)
    items: list[Item] = []
    for where, qid, row in _keyed_rows(_rows(table, path, QA_COLUMNS), path, "qid", issues):
        groups = cast_retrieval_gt(row.get("retrieval_gt"), where)
        answers = cast_generation_gt(row.get("generation_gt"), where)
        missing = [doc_id for group in groups for doc_id in group if doc_id not in known]
        if missing:
            issues.append(
                Issue(where, f"field 'retrieval_gt': {missing[0]!r} is not a doc_id of the corpus")
            )
            continue
        evidence = [
            Evidence(chunk_ids=(doc_id,), group=group_no, label="relevant", origin="imported")
            for group_no, group in enumerate(groups, 1)
            for doc_id in group
        ]
        extra = {k: jsonable(v) for k, v in row.items() if k not in QA_COLUMNS}
        items.append(
            Item(
                origin="imported",
                id=qid,
                extra={"autorag": extra} if extra else {},
                turns=[
                    Turn(
                        query=row.get("query") or "",
                        query_type="fact_single" if groups else "unanswerable",
                        answer=answers[0] if answers else "",
                        alternatives=answers[1:],
                        evidence=evidence,
                    )
                ],
            )
        )
    return items


# ---------------------------------------------------------------- writing


def write(
    bundle: Bundle,
    path: Path,
    *,
    chunking: str | None = None,
    include_unanswerable: bool = False,
    **_: Any,
) -> list[str]:
    """Write ``corpus.parquet`` (the chunks of one chunking) and ``qa.parquet``; see
    :mod:`assay.formats.autorag_write` (questions without ``retrieval_gt`` are left out
    unless ``include_unanswerable``)."""
    from assay.formats.autorag_write import write_dataset

    return write_dataset(bundle, path, chunking, include_unanswerable)
