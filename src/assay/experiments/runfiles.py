"""Reading what other systems wrote: TREC run files, qrels, JSONL answers.

- run: ``qid Q0 docid rank score tag`` per line (white space separated); the ranking is
  by score, highest first, as trec_eval reads it (the rank column is ignored).
- qrels: TREC ``qid 0 docid relevance`` lines, or a BEIR TSV with the header
  ``query-id  corpus-id  score``.
- answers: JSON lines ``{"task_id" | "query_id", "answer", "contexts"?}`` where contexts
  are objects with ``doc_id``/``chunk_id``/``text``/``score`` or plain strings.

Every error names the file and the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise InvalidInput(f"file not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_run(path: str | Path) -> Run:
    """``{qid: {docid: score}}``; a docid listed twice for a query is an error."""
    path = Path(path)
    run: Run = {}
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 6:
            raise InvalidInput(
                f"{path}, line {number}: a run line has 6 fields (qid Q0 docid rank score "
                f"tag), found {len(parts)}: {line[:80]!r}"
            )
        qid, _, docid, _, score, _ = parts
        try:
            value = float(score)
        except ValueError:
            raise InvalidInput(f"{path}, line {number}: score {score!r} is not a number") from None
        ranking = run.setdefault(qid, {})
        if docid in ranking:
            raise InvalidInput(f"{path}, line {number}: {docid!r} is listed twice for {qid!r}")
        ranking[docid] = value
    return run


def read_qrels(path: str | Path) -> Qrels:
    """``{qid: {docid: relevance}}`` from TREC qrels or a BEIR TSV with a header line."""
    path = Path(path)
    qrels: Qrels = {}
    lines = _lines(path)
    beir = bool(lines) and lines[0].strip().lower().split() == ["query-id", "corpus-id", "score"]
    for number, line in enumerate(lines, start=1):
        if (beir and number == 1) or not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t") if beir else line.split()
        parts = [p.strip() for p in parts]
        if beir and len(parts) == 3:
            qid, docid, grade = parts
        elif not beir and len(parts) == 4:
            qid, _, docid, grade = parts
        else:
            expected = "query-id, corpus-id, score" if beir else "qid 0 docid relevance"
            raise InvalidInput(
                f"{path}, line {number}: expected {expected}, found {len(parts)} fields: "
                f"{line[:80]!r}"
            )
        try:
            value = int(float(grade))
        except ValueError:
            raise InvalidInput(
                f"{path}, line {number}: relevance {grade!r} is not a number"
            ) from None
        qrels.setdefault(qid, {})[docid] = value
    return qrels


def ranking(scores: dict[str, float]) -> list[tuple[str, float]]:
    """A run's documents for one query in trec_eval's order: score descending, then docid
    descending."""
    return sorted(scores.items(), key=lambda pair: (pair[1], pair[0]), reverse=True)


def read_answers(path: str | Path) -> dict[str, dict[str, Any]]:
    """``{id: {"answer": str, "contexts": [...]}}`` keyed by task_id (or query_id)."""
    path = Path(path)
    answers: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"{where}: not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"{where}: each line must be a JSON object")
        key = record.get("task_id", record.get("query_id"))
        if not isinstance(key, str | int) or str(key) == "":
            raise InvalidInput(f"{where}: needs a task_id (or query_id)")
        answer = record.get("answer", "")
        if not isinstance(answer, str):
            raise InvalidInput(f"{where}: 'answer' must be text")
        contexts = record.get("contexts", [])
        if not isinstance(contexts, list):
            raise InvalidInput(f"{where}: 'contexts' must be a list")
        for index, context in enumerate(contexts, start=1):
            if not isinstance(context, str | dict):
                raise InvalidInput(f"{where}: contexts[{index}] must be an object or text")
        if str(key) in answers:
            raise InvalidInput(f"{where}: {key!r} appears twice")
        answers[str(key)] = {
            "answer": answer,
            "contexts": [{"text": c} if isinstance(c, str) else c for c in contexts],
        }
    return answers
