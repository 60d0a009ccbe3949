"""AutoRAG: ``qa.parquet`` and ``corpus.parquet`` in one folder, for one chunking.

Reading follows AutoRAG's casting: ``retrieval_gt`` as a string becomes ``[[s]]``; a 2-D list
is kept (outer = all needed, inner = alternatives); **a 1-D list ``[a, b]`` means all needed,
``[[a], [b]]``** (AutoRAG's docs say "and"; its code makes one "or" group; we follow the docs
and Assay's rule for flat lists). NumPy arrays are accepted like lists. ``generation_gt`` as a
string becomes ``[s]``. Each corpus row becomes a document plus one chunk of an imported
chunking named ``autorag`` whose chunk id is the row's ``doc_id``, so an export of that chunking
gives the ids back. ``last_modified_datetime`` may be a timestamp or an ISO string. Text is
not NFC-normalised or demojized here (AutoRAG does that when it loads).

Writing gives the corpus the chunks of the chosen chunking (``doc_id`` = chunk id) with
``metadata.last_modified_datetime`` (AutoRAG requires it: the document's recorded
``last_modified``, else when it last changed), ``prev_id``/``next_id`` and the
``start_end_idx`` of the chunk. A row that came from an AutoRAG import is written back as it
was; when every row did, the fields Assay adds (``path``, ``start_end_idx``,
``metadata.path``) are written only if those rows had them, so the files come back as read.
Each turn is a ``qa.parquet`` row whose ``retrieval_gt`` lists groups of chunk ids (see
:func:`assay.formats.groups.retrieval_groups`). AutoRAG's ``cast_qa_dataset`` reads
``retrieval_gt[0]``, so a question without one (unanswerable, or no passage maps to a chunk)
is left out and named in the notes, unless ``include_unanswerable`` writes it with an empty
``retrieval_gt`` for readers that accept it (Assay's import does).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, ChunkingRecord, ChunkRecord, DocumentRecord, Issue
from assay.formats.common import (
    FirstSeen,
    fewer_collections,
    parquet_rows,
    read_parquet,
    require_folder,
    text_document,
)
from assay.formats.groups import retrieval_groups
from assay.formats.jsontext import type_name
from assay.formats.query_ids import query_id
from assay.records import Evidence, Item, Turn

CHUNKING = "autorag"


# ---------------------------------------------------------------- the two files


QA_COLUMNS = ("qid", "query", "retrieval_gt", "generation_gt")
CORPUS_COLUMNS = ("doc_id", "contents")


def to_timestamp(value: Any, where: str) -> datetime | None:
    """A timestamp or an ISO string as a naive UTC datetime (AutoRAG's timestamp[us])."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(
                f"{where}: field 'last_modified_datetime' is not an ISO date and time"
            ) from exc
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise InvalidInput(
            f"{where}: field 'last_modified_datetime' must be a timestamp or a string"
        )
    stamp: datetime = value
    if stamp.tzinfo is not None:
        try:
            stamp = stamp.astimezone(UTC).replace(tzinfo=None)
        except (OverflowError, ValueError) as exc:
            raise InvalidInput(f"{where}: field 'last_modified_datetime' is out of range") from exc
    return stamp


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
    the module's notes on writing (questions without ``retrieval_gt`` are left out unless
    ``include_unanswerable``)."""
    return write_dataset(bundle, path, chunking, include_unanswerable)


ROW_GROUP = 20_000
"""Rows buffered per parquet row group, so a large dataset is written in bounded memory."""

Documented = tuple[dict[str, Any], str, int, str]
"""Per document: metadata, name, text length, when it last changed (ISO)."""


def write_dataset(
    bundle: Bundle, path: Path, chunking: str | None, include_unanswerable: bool = False
) -> list[str]:
    """Write ``corpus.parquet`` (the chunks of one chunking) and ``qa.parquet``; returns a
    note per question left out or written without all its passages."""
    with fewer_collections():
        return _write(bundle, path, chunking, include_unanswerable)


def _write(
    bundle: Bundle, path: Path, chunking: str | None, include_unanswerable: bool
) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = chunking or bundle.target_chunking
    chosen = next((c for c in bundle.chunkings if c.name == name), None)
    if chosen is None:
        raise InvalidInput(f"no chunking named {name!r} to write the AutoRAG corpus from")
    path.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    docs = {
        d.ref: (d.metadata, d.name, len(d.text or ""), d.updated_at or d.created_at)
        for d in bundle.documents
    }
    drop = _left_out(docs, notes)
    corpus_tmp, qa_tmp = path / ".corpus.parquet.tmp", path / ".qa.parquet.tmp"
    known: set[str] = set()
    try:
        with pq.ParquetWriter(corpus_tmp, _corpus_schema(pa, drop)) as out:
            columns = _CorpusColumns(drop)
            for chunk in chosen.chunks:
                known.add(chunk.chunk_id)
                columns.add(chunk, docs)
                if len(columns) > ROW_GROUP:
                    out.write_table(columns.table(pa, keep_last=True))
            if len(columns) or not known:
                out.write_table(columns.table(pa))
        with pq.ParquetWriter(qa_tmp, _qa_schema(pa)) as out:
            qa: dict[str, list[Any]] = {name: [] for name in QA_COLUMNS}
            for row in _qa_rows(bundle, name or "", known, notes, include_unanswerable):
                for key, value in row.items():
                    qa[key].append(value)
                if len(qa["qid"]) >= ROW_GROUP:
                    out.write_table(pa.Table.from_pydict(qa, schema=_qa_schema(pa)))
                    qa = {name: [] for name in QA_COLUMNS}
            out.write_table(pa.Table.from_pydict(qa, schema=_qa_schema(pa)))
        os.replace(corpus_tmp, path / "corpus.parquet")
        os.replace(qa_tmp, path / "qa.parquet")
    finally:
        corpus_tmp.unlink(missing_ok=True)
        qa_tmp.unlink(missing_ok=True)
    return notes


OPTIONAL = ("metadata.path", "path", "start_end_idx")
"""What Assay writes beyond AutoRAG's required corpus fields, left out of a corpus whose rows
all came from AutoRAG files without them (so it is written back as it was read)."""
META_KEYS = ("last_modified_datetime", "prev_id", "next_id", "path")


def _left_out(docs: dict[str, Documented], notes: list[str]) -> frozenset[str]:
    """The optional fields no row needs: none when a document was not imported from
    AutoRAG; else those its rows lacked. Other columns and metadata keys of imported rows
    cannot be written and are named in ``notes``."""
    found = [m.get("autorag") for m, _, _, _ in docs.values()]
    imported = [i for i in found if isinstance(i, dict)]
    if not imported or len(imported) < len(found):
        return frozenset()
    had: set[str] = set()
    others: set[str] = set()
    for info in imported:
        metadata, columns = info.get("metadata") or {}, info.get("columns") or {}
        had.update(f"metadata.{k}" for k in metadata if k == "path")
        had.update(k for k in columns if k in OPTIONAL)
        others.update(f"metadata.{k}" for k in metadata if k not in META_KEYS)
        others.update(k for k in columns if k not in OPTIONAL)
    if others:
        notes.append(
            f"corpus field(s) {', '.join(sorted(others))} of the imported AutoRAG rows are "
            "not written (kept in the project's document metadata)"
        )
    return frozenset(OPTIONAL) - had


def _corpus_schema(pa: Any, drop: frozenset[str] = frozenset()) -> Any:
    metadata = [
        ("last_modified_datetime", pa.timestamp("us")),
        ("prev_id", pa.string()),
        ("next_id", pa.string()),
        ("path", pa.string()),
    ]
    fields = [
        ("doc_id", pa.string()),
        ("contents", pa.string()),
        ("metadata", pa.struct([f for f in metadata if f"metadata.{f[0]}" not in drop])),
        ("path", pa.string()),
        ("start_end_idx", pa.list_(pa.int64())),
    ]
    return pa.schema([f for f in fields if f[0] not in drop])


def _qa_schema(pa: Any) -> Any:
    return pa.schema(
        [
            ("qid", pa.string()),
            ("query", pa.string()),
            ("retrieval_gt", pa.list_(pa.list_(pa.string()))),
            ("generation_gt", pa.list_(pa.string())),
        ]
    )


class _CorpusColumns:
    """Corpus rows collected column by column (a million chunks without a dict per row).

    ``prev_id``/``next_id`` link neighbouring chunks of one document; a row that came from an
    AutoRAG import keeps its own metadata and links to nothing. The last row may be held back
    when a row group is written, so its ``next_id`` can still be filled in.
    """

    NAMES = (
        "doc_id",
        "contents",
        "stamp",
        "prev_id",
        "next_id",
        "meta_path",
        "path",
        "span",
        "doc",
    )

    def __init__(self, drop: frozenset[str] = frozenset()) -> None:
        self.drop = drop
        self.cols: dict[str, list[Any]] = {name: [] for name in self.NAMES}
        self.doc_info: dict[str, tuple[datetime | None, str, dict[str, Any] | None, int]] = {}

    def __len__(self) -> int:
        return len(self.cols["doc_id"])

    def _info(
        self, ref: str, docs: dict[str, Documented]
    ) -> tuple[datetime | None, str, dict[str, Any] | None, int]:
        """Per document, once: the timestamp (the file's own ``last_modified`` when it was
        recorded, else when the document last changed), the path, AutoRAG's own metadata,
        the length."""
        metadata, name, length, changed = docs.get(ref, ({}, ref, 0, ""))
        info = metadata.get("autorag")
        when = None
        for stamp in (metadata.get("last_modified"), changed):
            try:
                when = to_timestamp(stamp, ref) if isinstance(stamp, str) else None
            except InvalidInput:
                when = None
            if when is not None:
                break
        given = metadata.get("path")
        path: str = given if isinstance(given, str) else name
        original = info if isinstance(info, dict) else None
        source = metadata.get("source_id")
        if original is not None and source is not None:
            original = {**original, "_source": source}
        found = (when, path, original, length)
        self.doc_info = {ref: found}  # chunks arrive document by document
        return found

    def add(self, chunk: ChunkRecord, docs: dict[str, Documented]) -> None:
        found = self.doc_info.get(chunk.doc_ref)
        when, path, info, length = found or self._info(chunk.doc_ref, docs)
        cols = self.cols
        whole = (
            info is not None
            and chunk.start == 0
            and chunk.end == length
            and info.get("_source") == chunk.chunk_id
        )
        cols["doc_id"].append(chunk.chunk_id)
        cols["contents"].append(chunk.text or "")
        if whole and info is not None:
            original = info.get("metadata") or {}
            extra = info.get("columns") or {}
            stamp = to_timestamp(original.get("last_modified_datetime"), chunk.chunk_id)
            cols["stamp"].append(stamp)
            cols["prev_id"].append(original.get("prev_id"))
            cols["next_id"].append(original.get("next_id"))
            cols["meta_path"].append(original.get("path"))
            cols["path"].append(extra.get("path"))
            cols["span"].append(extra.get("start_end_idx"))
            cols["doc"].append(None)
            return
        linked = len(cols["doc"]) > 0 and cols["doc"][-1] == chunk.doc_ref
        cols["stamp"].append(when)
        cols["prev_id"].append(cols["doc_id"][-2] if linked else None)
        cols["next_id"].append(None)
        if linked:
            cols["next_id"][-2] = chunk.chunk_id
        cols["meta_path"].append(path)
        cols["path"].append(path)
        cols["span"].append([chunk.start, chunk.end])
        cols["doc"].append(chunk.doc_ref)

    def table(self, pa: Any, keep_last: bool = False) -> Any:
        """The collected rows as a table (all but the last one when ``keep_last``)."""
        cols = self.cols
        cut = len(self) - 1 if keep_last else len(self)
        schema = _corpus_schema(pa, self.drop)
        meta_type = schema.field("metadata").type
        parts = [
            pa.array(cols["stamp"][:cut], pa.timestamp("us")),
            pa.array(cols["prev_id"][:cut], pa.string()),
            pa.array(cols["next_id"][:cut], pa.string()),
            pa.array(cols["meta_path"][:cut], pa.string()),
        ]
        metadata = pa.StructArray.from_arrays(parts[: meta_type.num_fields], fields=list(meta_type))
        arrays = {
            "doc_id": pa.array(cols["doc_id"][:cut], pa.string()),
            "contents": pa.array(cols["contents"][:cut], pa.string()),
            "metadata": metadata,
            "path": pa.array(cols["path"][:cut], pa.string()),
            "start_end_idx": pa.array(cols["span"][:cut], pa.list_(pa.int64())),
        }
        table = pa.Table.from_arrays([arrays[name] for name in schema.names], schema=schema)
        self.cols = {name: values[cut:] for name, values in cols.items()}
        return table


def _qa_rows(
    bundle: Bundle, chunking: str, known: set[str], notes: list[str], include_unanswerable: bool
) -> Iterator[dict[str, Any]]:
    others: set[str] = set()
    for item in bundle.items:
        imported = item.extra.get("autorag")
        others.update(imported if isinstance(imported, dict) else ())
        for index, turn in enumerate(item.turns):
            row_id = query_id(item, index)
            groups, unmapped = retrieval_groups(turn)
            if unmapped:
                notes.append(
                    f"item {row_id}: {unmapped} relevant passage(s) map to no chunk of "
                    f"{chunking!r}; left out of retrieval_gt"
                )
            for group in groups:
                for chunk_id in group:
                    if chunk_id not in known:
                        raise InvalidInput(
                            f"item {row_id}: retrieval_gt id {chunk_id!r} is not in the corpus "
                            f"of chunking {chunking!r}; nothing was written"
                        )
            if not groups and not include_unanswerable:
                why = "unanswerable" if turn.query_type == "unanswerable" else "no passage"
                notes.append(
                    f"item {row_id}: {why}, so no retrieval_gt; left out of qa.parquet "
                    "(AutoRAG's loader needs one; --include-unanswerable writes it)"
                )
                continue
            answers = [a for a in [turn.answer, *turn.alternatives] if a]
            query = turn.rewrite if len(item.turns) > 1 and turn.rewrite else turn.query
            yield {
                "qid": row_id,
                "query": query,
                "retrieval_gt": groups,
                "generation_gt": answers,
            }
    if others:
        notes.append(
            f"qa column(s) {', '.join(sorted(others))} of the imported AutoRAG rows are not "
            "written (kept in the items' extra)"
        )
