"""Embedded keyword search: BM25 over chunks in an on-disk tantivy index.

One index folder per project and chunking. Every chunk is one tantivy document; every indexed
document also gets one small marker record holding its fingerprint, so ``indexed()`` can tell
the sync code what the index holds (including documents without chunks) without touching
chunk text. Queries are analysed into plain terms and OR-ed together, so user input is never
parsed as query syntax. Why tantivy and the measurements behind it: docs/backends.md.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import tantivy

from assay.errors import InvalidInput
from assay.records import Hit, IndexedDocument, Span
from assay.search import planned_update
from assay.search.analysis import (
    ELLIPSIS,
    SNIPPET_CHARS,
    Snippets,
    build_analyzer,
    highlight_terms,
    query_terms,
    snowball_name,
    stop_terms,
)
from assay.search.locking import wait_for_lock

FORMAT = 1
"""Bumped whenever the schema or the analyzer changes; an index of another format is rebuilt."""

META_FILE = "assay-keyword.json"
WRITER_HEAP_BYTES = 128_000_000
LOCK_TIMEOUT_SECONDS = 30.0
WHOLE_TEXT = 1 << 40
"""A passage length (bytes) beyond any chunk: tantivy then marks every match of a hit."""
PASSAGE_BYTES = SNIPPET_CHARS - 2 * len(ELLIPSIS)

# Field names.
KIND = "kind"
DOC_ID = "doc_id"
CHUNK_ID = "chunk_id"
START = "start"
END = "end"
TEXT = "text"
FINGERPRINT = "fingerprint"
KIND_CHUNK = "chunk"
KIND_MARKER = "doc"


def _schema(tokenizer: str) -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(KIND, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(DOC_ID, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(CHUNK_ID, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field(START, stored=True)
    builder.add_integer_field(END, stored=True)
    # Term frequencies are all BM25 needs; we run no phrase queries, so no positions.
    builder.add_text_field(TEXT, stored=True, tokenizer_name=tokenizer, index_option="freq")
    builder.add_text_field(FINGERPRINT, stored=True, tokenizer_name="raw", index_option="basic")
    return builder.build()


class KeywordIndex:
    """BM25 keyword search over the chunks of one project, stored in the folder `path`.

    Any number of instances (in any processes) may search the same folder; writes take
    tantivy's writer lock for the length of one ``update`` and wait up to `lock_timeout`
    seconds for another writer to finish, then raise Conflict.
    """

    def __init__(
        self, path: Path, language: str, *, lock_timeout: float = LOCK_TIMEOUT_SECONDS
    ) -> None:
        snowball_name(language)  # raises InvalidInput for an unknown language
        self.path = Path(path)
        self.language = language.strip().lower()
        self.lock_timeout = lock_timeout
        self._tokenizer = f"assay_{self.language}"
        self._analyzer = build_analyzer(self.language)
        self._stop = stop_terms(self._analyzer, self.language)
        self._schema = _schema(self._tokenizer)
        self._write_lock = threading.Lock()
        self._index = self._open()
        self._seen_commit: tuple[int, int, int] | None = None
        self._meta_json = str(self.path / "meta.json")

    def __repr__(self) -> str:
        return f"KeywordIndex({str(self.path)!r}, language={self.language!r})"

    # -- opening ---------------------------------------------------------------------------

    def _open(self) -> tantivy.Index:
        """Open the index in `path`, creating it, or emptying it when it was built for another
        language or format (the sync code then sees an empty ``indexed()`` and refills it)."""
        meta_path = self.path / META_FILE
        wanted = {"format": FORMAT, "language": self.language}
        if meta_path.exists():
            if _read_meta(meta_path) != wanted:
                shutil.rmtree(self.path)
        elif self.path.exists() and any(self.path.iterdir()):
            raise InvalidInput(
                f"{self.path} is not empty and holds no Assay keyword index ({META_FILE} "
                "is missing); point the index at an empty or new folder."
            )
        self.path.mkdir(parents=True, exist_ok=True)
        if not meta_path.exists():
            meta_path.write_text(json.dumps(wanted), encoding="utf-8")
        if tantivy.Index.exists(str(self.path)):
            index = tantivy.Index.open(str(self.path))
        else:
            index = tantivy.Index(self._schema, path=str(self.path))
        index.register_tokenizer(self._tokenizer, self._analyzer)
        return index

    # -- writing ---------------------------------------------------------------------------

    def update(self, add: Sequence[IndexedDocument], delete: Collection[str] = ()) -> None:
        """Remove all chunks of the doc_ids in `delete` and of every doc in `add`, then add the
        chunks of `add`; durable when it returns (one commit). Idempotent.

        If `add` names a doc_id twice, the last one wins.
        """
        latest, gone = planned_update(add, delete, "keyword")
        if not gone:
            return
        with self._write_lock:
            writer = self._acquire_writer()
            try:
                for doc_id in gone:
                    writer.delete_documents_by_term(DOC_ID, doc_id)
                for doc in latest.values():
                    for chunk in doc.chunks:
                        writer.add_document(
                            tantivy.Document(
                                kind=KIND_CHUNK,
                                doc_id=chunk.doc_id,
                                chunk_id=chunk.chunk_id,
                                start=chunk.start,
                                end=chunk.end,
                                text=chunk.text,
                            )
                        )
                # Markers go last so they sit together in the doc store: indexed() then
                # decompresses a few blocks of markers, not one block of chunk text per marker.
                for doc in latest.values():
                    writer.add_document(
                        tantivy.Document(
                            kind=KIND_MARKER, doc_id=doc.doc_id, fingerprint=doc.fingerprint
                        )
                    )
                writer.commit()
            except BaseException:
                writer.rollback()
                raise
            finally:
                # Lets background merges finish (a dropped writer abandons them, and segments
                # would pile up) and releases the lock for other processes.
                writer.wait_merging_threads()
        self._index.reload()

    def _acquire_writer(self) -> tantivy.IndexWriter:
        """Tantivy allows one writer per index folder across all processes; wait for it."""
        return wait_for_lock(
            lambda: self._index.writer(heap_size=WRITER_HEAP_BYTES),
            lambda error: isinstance(error, ValueError) and "LockBusy" in str(error),
            timeout=self.lock_timeout,
            index="keyword",
            path=self.path,
            lock="writer lock",
        )

    # -- reading ---------------------------------------------------------------------------

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Best k chunks by BM25, rank 1 first; a query without words returns []."""
        if k < 1:
            raise InvalidInput(f"k must be at least 1 to search the keyword index, not {k}.")
        terms = query_terms(self._analyzer, query)
        if not terms:
            return []
        # Question words ("how", "is", "wie", "ist") would otherwise outvote the content words
        # in long chunks; they count only when the query has nothing else.
        terms = highlight_terms(terms, self._stop)
        searcher = self._searcher()
        limit = min(k, searcher.num_docs)
        if limit == 0:
            return []
        term_queries = [
            (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, TEXT, term, "freq"))
            for term in terms
        ]
        any_term = tantivy.Query.boolean_query(term_queries)
        found = searcher.search(any_term, limit, count=False)
        # Tantivy's own snippet generator picks each hit's passage and marks its matched words,
        # in Rust and with the index's analyzer, so the snippets cost about what tantivy's do.
        marker = tantivy.SnippetGenerator.create(searcher, any_term, self._schema, TEXT)
        hits = []
        for rank, (score, address) in enumerate(found.hits, start=1):
            fields = searcher.doc(address)
            text = fields.get_first(TEXT) or ""
            snippet, highlights = self._snippet(marker, fields, text)
            hits.append(
                Hit(
                    fields.get_first(DOC_ID) or "",
                    fields.get_first(CHUNK_ID) or "",
                    fields.get_first(START) or 0,
                    fields.get_first(END) or 0,
                    score,
                    rank,
                    text,
                    snippet,
                    highlights,
                )
            )
        return hits

    def _snippet(
        self, marker: tantivy.SnippetGenerator, fields: tantivy.Document, text: str
    ) -> tuple[str, tuple[Span, ...]]:
        """A chunk of at most SNIPPET_CHARS characters is its own snippet; a longer one gets
        tantivy's best passage (the run of whole tokens, at most SNIPPET_CHARS minus the two
        ellipses long in UTF-8 bytes, whose matches weigh most, rarer terms weighing more),
        with `…` where text was left out. Highlights are character offsets into the snippet."""
        whole = len(text) <= SNIPPET_CHARS
        marker.set_max_num_chars(WHOLE_TEXT if whole else PASSAGE_BYTES)
        found = marker.snippet_from_doc(fields)
        if whole:
            return text, _char_spans(text, found.highlighted())
        passage = found.fragment()
        if not passage:  # no word of the query in it: not a hit, but never fail on it
            return Snippets(self._analyzer).around(text, [])
        where = found.fragment_range()
        prefix = ELLIPSIS if where.start > 0 else ""
        size = len(text) if text.isascii() else len(text.encode())
        suffix = ELLIPSIS if where.end < size else ""
        return prefix + passage + suffix, _char_spans(passage, found.highlighted(), len(prefix))

    def _searcher(self) -> tantivy.Searcher:
        """A searcher on the newest commit, from any process. Every commit replaces tantivy's
        meta.json, so reloading (~70 µs, as long as a small query) waits for that file to
        change instead of running before every search."""
        try:
            meta = os.stat(self._meta_json)
            commit: tuple[int, int, int] | None = (meta.st_ino, meta.st_mtime_ns, meta.st_size)
        except OSError:
            commit = None
        if commit is None or commit != self._seen_commit:
            self._index.reload()
            self._seen_commit = commit
        return self._index.searcher()

    def indexed(self) -> dict[str, str]:
        """doc_id -> fingerprint of every document the index holds (chunks or not)."""
        self._index.reload()
        searcher = self._index.searcher()
        if searcher.num_docs == 0:
            return {}
        markers = tantivy.Query.term_query(self._schema, KIND, KIND_MARKER, "basic")
        found = searcher.search(markers, searcher.num_docs, count=False)
        result: dict[str, str] = {}
        for _score, address in found.hits:
            fields = searcher.doc(address)
            result[_first(fields, DOC_ID, "")] = _first(fields, FINGERPRINT, "")
        return result


def _char_spans(text: str, ranges: list[tantivy.Range], shift: int = 0) -> tuple[Span, ...]:
    """Tantivy's UTF-8 byte ranges in `text` as character offsets, plus `shift`."""
    if text.isascii():
        return tuple([(r.start + shift, r.end + shift) for r in ranges])
    data = text.encode()
    return tuple(
        [
            (len(data[: r.start].decode()) + shift, len(data[: r.end].decode()) + shift)
            for r in ranges
        ]
    )


def _first(fields: tantivy.Document, name: str, default: Any) -> Any:
    value = fields.get_first(name)
    return default if value is None else value


def _read_meta(meta_path: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None
