"""TREC: ``qrels.txt`` (``qid 0 docid relevance``), ``run.txt`` (``qid Q0 docid rank score
tag``) and ``topics.tsv`` (``qid<TAB>query``) in a folder; a single qrels or run file also
reads (told apart by its number of columns).

TREC files carry no document text, so judgments are kept on the item as ``extra.qrels``
(written back, and mapped evidence is added on export); run lines become the turn's retrieved
list ``{"doc_id", "rank", "score", "run"}``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, Issue
from assay.formats.beir import WHOLE, judgments, queries
from assay.formats.common import MAX_FIELD_INT, FirstSeen
from assay.formats.jsontext import read_text
from assay.records import Context, Item, Turn


def read(path: Path) -> Bundle:
    items: dict[str, Item] = {}
    issues: list[Issue] = []
    if path.is_dir():
        topics = path / "topics.tsv"
        if topics.is_file():
            _topics(topics, items, issues)
        found = [p for p in (path / "qrels.txt", path / "run.txt") if p.is_file()]
        if not found:
            raise InvalidInput(f"{path}: no qrels.txt or run.txt in the folder")
    else:
        found = [path]
    for file in found:
        _lines(file, items, issues)
    return Bundle(
        items=list(items.values()),
        provenance={"format": "trec", "path": str(path)},
        issues=issues,
    )


def _item(items: dict[str, Item], query_id: str) -> Item:
    if query_id not in items:
        items[query_id] = Item(id=query_id, origin="imported", turns=[Turn()])
    return items[query_id]


def _topics(path: Path, items: dict[str, Item], issues: list[Issue]) -> None:
    seen = FirstSeen("field 'qid'", issues)
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        query_id, sep, text = line.partition("\t")
        if not sep or not query_id.strip():
            raise InvalidInput(f"{path.name} line {number}: expected qid<TAB>query")
        if not seen.first(query_id.strip(), f"{path.name} line {number}"):
            continue
        _item(items, query_id.strip()).turns[0].query = text


def _lines(path: Path, items: dict[str, Item], issues: list[Issue]) -> None:
    judged = FirstSeen("the judgment (qid, docid)", issues)
    ranked = FirstSeen("the run line (qid, docid, tag)", issues)
    for number, line in enumerate(read_text(path).splitlines(), 1):
        cells = line.split()
        if not cells:
            continue
        where = f"{path.name} line {number}"
        if len(cells) == 4:
            query_id, _, doc_id, raw = cells
            relevance = _number(raw, "relevance", where, whole=True)
            if not judged.first((query_id, doc_id), where):
                continue
            _item(items, query_id).extra.setdefault("qrels", []).append(
                {"corpus_id": doc_id, "score": int(relevance)}
            )
        elif len(cells) == 6:
            query_id, _, doc_id, rank, score, tag = cells
            entry: Context = {
                "doc_id": doc_id,
                "rank": int(_number(rank, "rank", where, whole=True)),
                "score": _number(score, "score", where),
                "run": tag,
            }
            if not ranked.first((query_id, doc_id, tag), where):
                continue
            _item(items, query_id).turns[0].retrieved.append(entry)
        else:
            raise InvalidInput(
                f"{where}: expected 4 columns (qrels) or 6 columns (run), found {len(cells)}"
            )


def _number(raw: str, name: str, where: str, whole: bool = False) -> float:
    if whole:
        if not WHOLE.fullmatch(raw) or abs(int(raw)) > MAX_FIELD_INT:
            raise InvalidInput(
                f"{where}: field {name!r} must be a whole number (at most 10 digits)"
            )
        return float(int(raw))
    try:
        value = float(raw)
    except ValueError as exc:
        raise InvalidInput(f"{where}: field {name!r} must be a number") from exc
    if not math.isfinite(value):
        raise InvalidInput(f"{where}: field {name!r} must be a finite number")
    return value


def write(bundle: Bundle, path: Path, **_: Any) -> list[str]:
    path.mkdir(parents=True, exist_ok=True)
    with (
        open(path / "qrels.txt", "w", encoding="utf-8") as qrels,
        open(path / "run.txt", "w", encoding="utf-8") as run,
        open(path / "topics.tsv", "w", encoding="utf-8") as topics,
    ):
        for item in bundle.items:
            for query_id, text in queries(item):
                topics.write(f"{query_id}\t{' '.join(text.split())}\n")
            for query_id, corpus_id, score, _split in judgments(item):
                qrels.write(f"{query_id} 0 {corpus_id} {score}\n")
            for (query_id, _text), turn in zip(queries(item), item.turns, strict=True):
                for rank, entry in enumerate(turn.retrieved, 1):
                    doc_id = entry.get("chunk_id") or entry.get("doc_id")
                    if not isinstance(doc_id, str):
                        continue
                    tag = entry.get("run") or "assay"
                    run.write(
                        f"{query_id} Q0 {doc_id} {entry.get('rank', rank)} "
                        f"{entry.get('score', 0.0)} {tag}\n"
                    )
    return []
