"""Query logs as JSON Lines: one production question per line, its fields found by a mapping.

Every line is read on its own (the file is never held in memory). A field is found by the
mapping's dotted path (``question=request.text``) or, when the mapping names none, by the
first of the usual names that the line has (:data:`FIELDS`). A line that is not a JSON
object, or lacks a question, is a :class:`LineProblem` naming the line and the field; the
importer decides whether that stops the import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from assay.errors import InvalidInput

FIELDS: dict[str, tuple[str, ...]] = {
    "question": ("question", "query", "user_query", "input", "prompt", "q"),
    "session": ("conversation_id", "session_id", "session", "thread_id", "conversation"),
    "turn": ("turn", "turn_index", "position"),
    "passages": ("passages", "retrieved", "contexts", "documents", "retrieved_ids", "sources"),
    "answer": ("answer", "response", "output", "reply"),
    "feedback": ("feedback", "rating", "thumbs", "vote"),
    "time": ("time", "timestamp", "created_at", "asked_at"),
}
"""The fields of a candidate and the names looked for when the mapping gives none."""

NEGATIVE = frozenset("down thumbs_down thumbsdown negative bad no wrong unhelpful -1 👎".split())
POSITIVE = frozenset("up thumbs_up thumbsup positive good yes helpful correct 1 👍".split())


@dataclass(frozen=True, slots=True)
class RawPassage:
    """A retrieved passage as the log gives it: text, a reference (document id or name,
    chunk id, URL), score and rank; either text or reference may be empty."""

    text: str
    ref: str = ""
    score: float | None = None
    rank: int | None = None


@dataclass(slots=True)
class LogRecord:
    """One production question read from a log, not yet scrubbed or stored."""

    line: int
    question: str
    session: str = ""
    turn: int | None = None
    answer: str = ""
    passages: list[RawPassage] = field(default_factory=list)
    feedback: int | None = None
    asked_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LineProblem:
    """Why one line could not become a candidate."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", field {self.field!r}" if self.field else "")
        return f"{where}: {self.message}"


def parse_mapping(specs: Iterable[str]) -> dict[str, str]:
    """``["question=q", "passages=ctx.docs"]`` as ``{field: dotted path}``; an unknown field
    is refused, naming the ones there are."""
    mapping: dict[str, str] = {}
    for spec in specs:
        for part in spec.split(","):
            if not part.strip():
                continue
            name, sep, path = part.partition("=")
            name = name.strip()
            if not sep or not path.strip():
                raise InvalidInput(f"field mapping {part!r}: write FIELD=PATH, e.g. question=q")
            if name not in FIELDS:
                raise InvalidInput(
                    f"field mapping {part!r}: no field {name!r}; the fields are "
                    + ", ".join(FIELDS)
                )
            mapping[name] = path.strip()
    return mapping


def dig(record: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path: a flat key with dots first (``attributes.input.value`` as
    exported tables write it), else nested objects; None when absent."""
    if path in record:
        return record[path]
    value: Any = record
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def pick(record: Mapping[str, Any], name: str, mapping: Mapping[str, str]) -> Any:
    if name in mapping:
        return dig(record, mapping[name])
    for key in FIELDS[name]:
        if record.get(key) is not None:
            return record[key]
    return None


def as_text(value: Any) -> str:
    """A question or answer as text: strings as they are, chat messages as the last user
    message (or the last message's content), anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and value and all(isinstance(m, Mapping) for m in value):
        users = [m for m in value if m.get("role") in ("user", "human")]
        last = (users or value)[-1]
        return as_text(last.get("content") or last.get("text"))
    if isinstance(value, Mapping):
        for key in (
            "question", "query", "input", "messages", "text", "content", "output", "answer",
        ):  # fmt: skip
            if key in value:
                return as_text(value[key])
    return json.dumps(value, ensure_ascii=False)


def as_feedback(value: Any) -> int | None:
    """-1, 0 or 1 from a number, a boolean or a word such as ``thumbs_down``; None when none."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return 1 if value else -1
    if isinstance(value, int | float):
        return (value > 0) - (value < 0)
    if isinstance(value, Mapping):
        return as_feedback(value.get("value", value.get("score", value.get("label"))))
    word = str(value).strip().lower().replace(" ", "_").replace("-", "_")
    if word in NEGATIVE:
        return -1
    if word in POSITIVE:
        return 1
    return 0


def as_time(value: Any) -> datetime | None:
    """A timestamp from ISO 8601 text or Unix seconds (or milliseconds); None when unreadable."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float):
            seconds = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(seconds, UTC)
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


TEXT_KEYS = ("text", "content", "page_content", "pageContent", "document.content", "chunk")
REF_KEYS = (
    "doc_id", "document_id", "document.id", "chunk_id", "id", "doc", "document", "file",
    "source", "metadata.source",
    "metadata.doc_id", "document.metadata.source", "title", "name", "url",
)  # fmt: skip


def as_passages(value: Any) -> list[RawPassage]:
    """Retrieved passages from a list of objects (text, reference, score) or of strings (text
    when they hold a space, else a reference such as a chunk id)."""
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    found: list[RawPassage] = []
    for rank, entry in enumerate(value, 1):
        if isinstance(entry, str):
            text = entry.strip()
            is_text = " " in text or len(text) > 80
            found.append(RawPassage(text if is_text else "", "" if is_text else text, None, rank))
        elif isinstance(entry, Mapping):
            text = next((as_text(dig(entry, k)) for k in TEXT_KEYS if dig(entry, k)), "")
            ref = next((str(dig(entry, k)) for k in REF_KEYS if dig(entry, k)), "")
            score = dig(entry, "score")
            if score is None:
                score = dig(entry, "document.score")
            found.append(
                RawPassage(
                    text, ref, float(score) if isinstance(score, int | float) else None, rank
                )
            )
    return found


def json_objects(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any] | LineProblem]]:
    """Each non-blank line as a JSON object with its 1-based number, or the problem."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, LineProblem(number, "", f"not JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(record, dict):
            yield number, LineProblem(number, "", "not a JSON object")
            continue
        yield number, record


def read_jsonl(
    lines: Iterable[str], mapping: Mapping[str, str] | None = None
) -> Iterator[LogRecord | LineProblem]:
    """Each line of a JSON Lines log as a record, or the problem that stops it being one.
    Blank lines are skipped."""
    mapping = mapping or {}
    for number, record in json_objects(lines):
        if isinstance(record, LineProblem):
            yield record
            continue
        raw = pick(record, "question", mapping)
        if raw is not None and not isinstance(raw, str | list | dict):
            kind = type(raw).__name__.replace("int", "number").replace("float", "number")
            yield LineProblem(number, "question", f"expected text, found a {kind}")
            continue
        question = as_text(raw)
        if not question:
            wanted = mapping.get("question") or "/".join(FIELDS["question"][:3])
            yield LineProblem(number, "question", f"missing or empty (looked for {wanted})")
            continue
        turn = pick(record, "turn", mapping)
        yield LogRecord(
            line=number,
            question=question,
            session=str(pick(record, "session", mapping) or "")[:200],
            turn=int(turn) if isinstance(turn, int | float) else None,
            answer=as_text(pick(record, "answer", mapping)),
            passages=as_passages(pick(record, "passages", mapping)),
            feedback=as_feedback(pick(record, "feedback", mapping)),
            asked_at=as_time(pick(record, "time", mapping)),
        )
