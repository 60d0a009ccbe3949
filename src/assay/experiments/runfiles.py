"""Reading what other systems wrote: TREC run files, qrels, JSONL answers.

- run: ``qid Q0 docid rank score tag`` per line (white space separated); the ranking is
  by score, highest first, as trec_eval reads it (the rank column is ignored).
- qrels: TREC ``qid 0 docid relevance`` lines, or a BEIR TSV with the header
  ``query-id  corpus-id  score``.
- answers: JSON lines ``{"task_id" | "query_id", "answer", "contexts"?}`` where contexts
  are objects with ``doc_id``/``chunk_id``/``text``/``score`` or plain strings.

Every error names the file and the line and says what is wrong, but never repeats the
file's content: a file the server refuses must not leak through the message.

Experiments never read a path named in a request. A run or answers file becomes part of an
experiment as an upload: :func:`keep_file` checks the bytes and stores them, content
addressed, in the workspace folder ``run-files/``; the pipeline keeps only a
:class:`FileRef` (sha256 and the original file name).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import InvalidInput, NotFound
from assay.store.blobs import BlobStore
from assay.store.workspace import Workspace

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
Answers = dict[str, dict[str, Any]]
FileKind = Literal["run", "answers"]
NAME_LIMIT = 200


class FileRef(BaseModel):
    """A stored run or answers file, as a pipeline refers to it: never a path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    name: str = Field(min_length=1, max_length=NAME_LIMIT)


def display_name(name: str) -> str:
    """The last part of a file name, without control characters, at most 200 characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    clean = "".join(c for c in base if c.isprintable()).strip()
    return clean[:NAME_LIMIT] or "unnamed"


def _decode(data: bytes, name: str) -> list[str]:
    try:
        return data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _read_local(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InvalidInput(f"file not found: {path}") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder, not a file") from None


def _read(path: str | Path) -> tuple[list[str], str]:
    return _decode(_read_local(Path(path)), str(path)), str(path)


def parse_run(lines: list[str], name: str) -> Run:
    """``{qid: {docid: score}}``; a docid listed twice for a query is an error."""
    run: Run = {}
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        where = f"{name}, line {number}"
        if len(parts) != 6:
            raise InvalidInput(
                f"{where}: a run line has 6 fields (qid Q0 docid rank score tag), "
                f"this one has {len(parts)}"
            )
        qid, _, docid, _, score, _ = parts
        try:
            value = float(score)
        except ValueError:
            raise InvalidInput(f"{where}: the score (field 5) is not a number") from None
        if (qid, docid) in seen:
            raise InvalidInput(
                f"{where}: the docid was already listed for this qid on line {seen[(qid, docid)]}"
            )
        seen[(qid, docid)] = number
        run.setdefault(qid, {})[docid] = value
    return run


def parse_qrels(lines: list[str], name: str) -> Qrels:
    """``{qid: {docid: relevance}}`` from TREC qrels or a BEIR TSV with a header line."""
    qrels: Qrels = {}
    beir = bool(lines) and lines[0].strip().lower().split() == ["query-id", "corpus-id", "score"]
    for number, line in enumerate(lines, start=1):
        if (beir and number == 1) or not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t") if beir else line.split()
        parts = [p.strip() for p in parts]
        where = f"{name}, line {number}"
        if beir and len(parts) == 3:
            qid, docid, grade = parts
        elif not beir and len(parts) == 4:
            qid, _, docid, grade = parts
        else:
            expected = "query-id, corpus-id, score" if beir else "qid 0 docid relevance"
            raise InvalidInput(f"{where}: expected {expected}, found {len(parts)} fields")
        try:
            value = int(float(grade))
        except (ValueError, OverflowError):
            raise InvalidInput(f"{where}: the relevance is not a number") from None
        qrels.setdefault(qid, {})[docid] = value
    return qrels


def ranking(scores: dict[str, float]) -> list[tuple[str, float]]:
    """A run's documents for one query in trec_eval's order: score descending, then docid
    descending."""
    return sorted(scores.items(), key=lambda pair: (pair[1], pair[0]), reverse=True)


def parse_answers(lines: list[str], name: str) -> Answers:
    """``{id: {"answer": str, "contexts": [...]}}`` keyed by task_id (or query_id)."""
    answers: Answers = {}
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}, line {number}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            column = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
            raise InvalidInput(f"{where}: not valid JSON{column}") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"{where}: each line must be a JSON object")
        key = record.get("task_id", record.get("query_id"))
        if isinstance(key, bool) or not isinstance(key, str | int) or str(key) == "":
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
            raise InvalidInput(
                f"{where}: the task_id was already answered on line {first_line[str(key)]}"
            )
        first_line[str(key)] = number
        answers[str(key)] = {
            "answer": answer,
            "contexts": [{"text": c} if isinstance(c, str) else c for c in contexts],
        }
    return answers


def read_run(path: str | Path) -> Run:
    """A TREC run file on this machine (see :func:`parse_run`)."""
    return parse_run(*_read(path))


def read_qrels(path: str | Path) -> Qrels:
    """Qrels on this machine (see :func:`parse_qrels`)."""
    return parse_qrels(*_read(path))


def read_answers(path: str | Path) -> Answers:
    """JSONL answers on this machine (see :func:`parse_answers`)."""
    return parse_answers(*_read(path))


PARSERS: dict[str, Callable[[list[str], str], Any]] = {"run": parse_run, "answers": parse_answers}


def _parser(kind: str) -> Callable[[list[str], str], Any]:
    if kind not in PARSERS:
        raise InvalidInput(f"unknown file kind {kind!r}; kinds: {', '.join(PARSERS)}")
    return PARSERS[kind]


def file_store(ws: Workspace) -> BlobStore:
    """Where uploaded run and answers files live: ``run-files/`` beside the document blobs,
    apart from them so that cleaning up unused document blobs never touches them."""
    return BlobStore(ws.blobs.root.parent / "run-files", ws.files)


def keep_file(ws: Workspace, data: bytes, name: str, kind: str) -> tuple[FileRef, int]:
    """Check an uploaded file as ``kind`` (run or answers) and store it; returns its
    reference and how many queries it holds. A bad file is refused with the line and the
    problem, and nothing is stored."""
    shown = display_name(name)
    parsed = _parser(kind)(_decode(data, shown), shown)
    return FileRef(sha256=file_store(ws).put(data), name=shown), len(parsed)


def keep_local_file(ws: Workspace, path: str | Path, kind: str) -> FileRef:
    """For the local user (CLI, Python): read a file of this machine and store it like an
    upload. Never called with a path that came in over the web."""
    path = Path(path)
    return keep_file(ws, _read_local(path), path.name, kind)[0]


def load_file(ws: Workspace, ref: FileRef, kind: str) -> Any:
    """The parsed content of a stored file (a run or answers, as ``kind`` says)."""
    try:
        data = file_store(ws).get(ref.sha256)
    except NotFound:
        raise InvalidInput(
            f"the uploaded file {ref.name!r} is no longer stored in this workspace; upload it "
            "again and create the experiment anew"
        ) from None
    return _parser(kind)(_decode(data, ref.name), ref.name)
