"""TREC: ``qrels.txt`` (``qid 0 docid relevance``), ``run.txt`` (``qid Q0 docid rank score
tag``) and ``topics.tsv`` (``qid<TAB>query``) in a folder; a single qrels or run file also
reads (told apart by its number of columns).

TREC files carry no document text, so judgments are kept on the item as ``extra.qrels``
(written back, and mapped evidence is added on export); run lines become the turn's retrieved
list ``{"doc_id", "rank", "score", "run"}``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, Issue
from assay.formats.beir import WHOLE, judgments, left_out_note, queries
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


def ranked_scores(scores: Sequence[float | None]) -> tuple[list[float], bool]:
    """Scores for a ranking, best first, that strictly decrease, so that any trec_eval-style
    scorer (which sorts by score and breaks ties by doc id) keeps the order: the scores as
    given when they already do, else ``n, n-1, …, 1``. The flag says whether they were
    replaced."""
    given = [s for s in scores if isinstance(s, int | float) and math.isfinite(s)]
    if len(given) == len(scores) and all(a > b for a, b in pairwise(given)):
        return [float(s) for s in given], False
    return [float(len(scores) - n) for n in range(len(scores))], True


def run_lines(query_id: str, ranked: Sequence[tuple[str, float | None]], tag: str) -> list[str]:
    """TREC run lines ``qid Q0 docid rank score tag`` of one ranking (best first), with
    :func:`ranked_scores`."""
    scores, _ = ranked_scores([score for _, score in ranked])
    return [
        f"{query_id} Q0 {doc_id} {rank} {score} {tag}"
        for rank, ((doc_id, _), score) in enumerate(zip(ranked, scores, strict=True), 1)
    ]


def _rankings(turn: Turn) -> dict[str, list[tuple[str, float | None]]]:
    """The turn's retrieved lists per run tag, each in rank order."""
    by_tag: dict[str, list[tuple[int, int, str, float | None]]] = {}
    for position, entry in enumerate(turn.retrieved, 1):
        doc_id = entry.get("chunk_id") or entry.get("doc_id")
        if not isinstance(doc_id, str):
            continue
        rank = entry.get("rank")
        score = entry.get("score")
        by_tag.setdefault(str(entry.get("run") or "assay"), []).append(
            (
                rank if isinstance(rank, int) else position,
                position,
                doc_id,
                score if isinstance(score, int | float) else None,
            )
        )
    return {
        tag: [(doc_id, score) for _, _, doc_id, score in sorted(found)]
        for tag, found in by_tag.items()
    }


def write(bundle: Bundle, path: Path, **_: Any) -> list[str]:
    path.mkdir(parents=True, exist_ok=True)
    left_out: list[str] = []
    rescored: list[str] = []
    with (
        open(path / "qrels.txt", "w", encoding="utf-8") as qrels,
        open(path / "run.txt", "w", encoding="utf-8") as run,
        open(path / "topics.tsv", "w", encoding="utf-8") as topics,
    ):
        for item in bundle.items:
            for qid, text in queries(item):
                topics.write(f"{qid}\t{' '.join(text.split())}\n")
            for qid, corpus_id, score, _split in judgments(item, left_out):
                qrels.write(f"{qid} 0 {corpus_id} {score}\n")
            for (qid, _text), turn in zip(queries(item), item.turns, strict=True):
                for tag, ranked in _rankings(turn).items():
                    if ranked_scores([score for _, score in ranked])[1]:
                        rescored.append(qid)
                    run.writelines(line + "\n" for line in run_lines(qid, ranked, tag))
    notes = left_out_note(left_out, "qrels.txt", "topics.tsv")
    if rescored:
        notes.append(
            f"run.txt: the scores of {len(set(rescored))} question(s) did not strictly decrease "
            "with rank (ties or missing scores); written as n, n-1, …, 1 so that scorers keep "
            f"the ranking ({', '.join(list(dict.fromkeys(rescored))[:5])})"
        )
    return notes
