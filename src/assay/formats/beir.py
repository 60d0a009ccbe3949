"""BEIR: a folder with ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

Corpus lines ``{"_id", "title", "text"}`` become documents plus one chunk each of an imported
chunking named ``beir`` (chunk id = ``_id``); query lines ``{"_id", "text"}`` become items;
qrels ``query-id<TAB>corpus-id<TAB>score`` become evidence with the score as grade (score > 0:
relevant, else irrelevant). Judgments for corpus ids that are not in ``corpus.jsonl`` (MTRAG
ships qrels without the corpus) are kept on the item as ``extra.qrels`` and written back.
Unknown keys of queries are kept in ``extra.beir``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, ChunkingRecord, ChunkRecord, DocumentRecord, Issue, query_ids
from assay.formats.common import (
    MAX_FIELD_INT,
    FirstSeen,
    field_str,
    require_folder,
    safe_name,
    sub_dict,
    sub_str,
    text_document,
)
from assay.formats.groups import source_id, unanswerable
from assay.formats.jsontext import dumps_line, jsonl_lines, read_text
from assay.records import Evidence, Item, Turn

CHUNKING = "beir"
HEADER = ("query-id", "corpus-id", "score")
WHOLE = re.compile(r"-?[0-9]{1,10}")


def read(path: Path) -> Bundle:
    require_folder(path, "a BEIR dataset")
    queries_path = path / "queries.jsonl"
    if not queries_path.is_file():
        raise InvalidInput(f"{queries_path}: missing (a BEIR dataset needs queries.jsonl)")
    issues: list[Issue] = []
    documents: list[DocumentRecord] = []
    chunks: list[ChunkRecord] = []
    corpus_path = path / "corpus.jsonl"
    if corpus_path.is_file():
        documents, chunks = _corpus(corpus_path, issues)
    known = {c.chunk_id for c in chunks}
    items: dict[str, Item] = {}
    seen = FirstSeen("field '_id'", issues)
    for number, obj in jsonl_lines(read_text(queries_path), str(queries_path)):
        where = f"{queries_path.name} line {number}"
        query_id = _id(obj, where)
        if not seen.first(query_id, where):
            continue
        rest = {k: v for k, v in obj.items() if k not in ("_id", "text")}
        items[query_id] = Item(
            origin="imported",
            id=query_id,
            extra={"beir": rest} if rest else {},
            turns=[Turn(query=field_str(obj, "text", where))],
        )
    qrels = path / "qrels"
    if qrels.is_dir():
        for split_file in sorted(qrels.glob("*.tsv")):
            _qrels(split_file, items, known, issues)
    chunkings = [ChunkingRecord(CHUNKING, "imported", {"source": "beir"}, True, chunks)]
    return Bundle(
        documents=documents,
        chunkings=chunkings if chunks else [],
        items=list(items.values()),
        provenance={"format": "beir", "path": str(path)},
        issues=issues,
    )


def _id(obj: dict[str, Any], where: str) -> str:
    value = obj.get("_id")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{where}: field '_id' must be a non-empty string")
    return value


def _corpus(path: Path, issues: list[Issue]) -> tuple[list[DocumentRecord], list[ChunkRecord]]:
    documents: list[DocumentRecord] = []
    chunks: list[ChunkRecord] = []
    seen = FirstSeen("field '_id'", issues)
    for number, obj in jsonl_lines(read_text(path), str(path)):
        where = f"{path.name} line {number}"
        doc_id = _id(obj, where)
        text = field_str(obj, "text", where)
        if not seen.first(doc_id, where):
            continue
        if not text.strip():
            issues.append(Issue(where, "field 'text' is empty"))
            continue
        rest = {k: v for k, v in obj.items() if k not in ("_id", "text")}
        metadata = {"source_id": doc_id, "beir": rest}
        documents.append(text_document(doc_id, doc_id, "passage", text, metadata))
        chunks.append(ChunkRecord(doc_id, doc_id, 0, len(text), text))
    return documents, chunks


def _qrels(path: Path, items: dict[str, Item], known: set[str], issues: list[Issue]) -> None:
    split = path.stem
    seen = FirstSeen("the judgment (query-id, corpus-id)", issues)
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        where = f"qrels/{path.name} line {number}"
        cells = line.split("\t") if "\t" in line else line.split()
        if number == 1 and tuple(c.strip().lower() for c in cells) == HEADER:
            continue
        if len(cells) != 3:
            raise InvalidInput(
                f"{where}: expected query-id, corpus-id and score, found {len(cells)} cells"
            )
        query_id, corpus_id, raw = (c.strip() for c in cells)
        score = _score(raw, where)
        item = items.get(query_id)
        if item is None:
            issues.append(Issue(where, f"field 'query-id': {query_id!r} is not in queries.jsonl"))
            continue
        if not corpus_id:
            issues.append(Issue(where, "field 'corpus-id' is empty"))
            continue
        if not seen.first((query_id, corpus_id), where):
            continue
        item.extra.setdefault("split", split)
        if corpus_id in known:
            item.turns[0].evidence.append(
                Evidence(
                    chunk_ids=(corpus_id,),
                    origin="imported",
                    label="relevant" if score > 0 else "irrelevant",
                    grade=score,
                )
            )
        else:
            item.extra.setdefault("qrels", []).append(
                {"corpus_id": corpus_id, "score": score, "split": split}
            )


def _score(raw: str, where: str) -> int:
    """A relevance grade: a whole number the store can keep."""
    if not WHOLE.fullmatch(raw):
        raise InvalidInput(f"{where}: field 'score' must be a whole number (at most 10 digits)")
    score = int(raw)
    if abs(score) > MAX_FIELD_INT:
        raise InvalidInput(f"{where}: field 'score' is out of range")
    return score


# ---------------------------------------------------------------- writing


def judgments(item: Item, left_out: list[str] | None = None) -> Iterator[tuple[str, str, int, str]]:
    """``(query id, corpus id, score, split)`` of one item: mapped evidence, then kept qrels.

    A question without a positive judgment (unanswerable, or its relevant passages map to no
    chunk) gets no line at all: outside tools would average it in as a zero where
    ``assay eval`` leaves it out. Its query id is added to ``left_out``."""
    base = source_id(item)
    default_split = sub_str(item.extra, "split", "test")
    best: dict[tuple[str, str], tuple[int, str]] = {}
    for index, turn in enumerate(item.turns):
        if unanswerable(turn):
            continue
        qid = query_ids.query_id(item, index)
        for ev in turn.evidence:
            score = ev.grade if ev.grade is not None else (1 if ev.label == "relevant" else 0)
            if ev.label != "relevant":
                score = min(score, 0)
            for chunk_id in ev.chunk_ids:
                key = (qid, chunk_id)
                if key not in best or best[key][0] < score:
                    best[key] = (score, default_split)
    for entry in item.extra.get("qrels") or []:
        if isinstance(entry, dict) and isinstance(entry.get("corpus_id"), str):
            raw = entry.get("score")
            score = raw if isinstance(raw, int) else 1
            split = sub_str(entry, "split", default_split)
            best.setdefault((base, entry["corpus_id"]), (score, split))
    positive = {qid for (qid, _), (score, _) in best.items() if score > 0}
    if left_out is not None:
        left_out.extend(q for q, _ in queries(item) if q not in positive)
    for (qid, corpus_id), (score, split) in best.items():
        if qid in positive:
            yield qid, corpus_id, score, split


def left_out_note(left_out: list[str], qrels: str, queries_file: str) -> list[str]:
    """The export note for questions written without qrels lines (none when there are none)."""
    if not left_out:
        return []
    shown = ", ".join(left_out[:5]) + (", …" if len(left_out) > 5 else "")
    return [
        f"{len(left_out)} question(s) have no relevant passage (unanswerable, or their "
        f"passages map to no chunk of the chunking): left out of {qrels}, kept in "
        f"{queries_file}, so outside tools score the same questions as assay eval ({shown})"
    ]


def queries(item: Item) -> Iterator[tuple[str, str]]:
    """``(query id, text)`` of each turn (:mod:`assay.formats.query_ids`)."""
    for index, turn in enumerate(item.turns):
        yield query_ids.query_id(item, index), turn.query


def write(bundle: Bundle, path: Path, *, chunking: str | None = None, **_: Any) -> list[str]:
    name = chunking or bundle.target_chunking
    chosen = next((c for c in bundle.chunkings if c.name == name), None)
    path.mkdir(parents=True, exist_ok=True)
    (path / "qrels").mkdir(exist_ok=True)
    titles = {
        d.ref: (d.metadata.get("beir") or {}).get("title", d.name)
        if isinstance(d.metadata.get("beir"), dict)
        else d.name
        for d in bundle.documents
    }
    with open(path / ".corpus.jsonl.tmp", "w", encoding="utf-8") as out:
        for chunk in chosen.chunks if chosen else []:
            title = titles.get(chunk.doc_ref, "")
            out.write(
                dumps_line({"_id": chunk.chunk_id, "title": title, "text": chunk.text}) + "\n"
            )
    splits: dict[str, list[str]] = {}
    left_out: list[str] = []
    with open(path / ".queries.jsonl.tmp", "w", encoding="utf-8") as out:
        for item in bundle.items:
            beir = sub_dict(item.extra, "beir")
            for qid, text in queries(item):
                out.write(dumps_line({**beir, "_id": qid, "text": text}) + "\n")
            for qid, corpus_id, score, split in judgments(item, left_out):
                splits.setdefault(split, []).append(f"{qid}\t{corpus_id}\t{score}\n")
    os.replace(path / ".corpus.jsonl.tmp", path / "corpus.jsonl")
    os.replace(path / ".queries.jsonl.tmp", path / "queries.jsonl")
    for split, lines in splits.items():
        with open(path / "qrels" / f"{safe_name(split, 'test')}.tsv", "w", encoding="utf-8") as f:
            f.write("\t".join(HEADER) + "\n")
            f.writelines(lines)
    notes = left_out_note(left_out, "qrels/", "queries.jsonl")
    return notes if chosen else [f"no chunking {name!r}: corpus.jsonl is empty", *notes]
