"""CSV, JSON and JSON Lines documents: text as it is written.

A table or a record file is a document like any other: annotators quote its lines, and
offsets point into the file's own text, so nothing is reformatted. A file that does not
read as its kind (a broken JSON value, a line of a JSON Lines file) is still taken as text,
with a warning naming where it breaks.
"""

from __future__ import annotations

import json

from assay.parsing.common import ParsedText, normalize_text
from assay.parsing.text import decode_plain


def parse_csv(name: str, data: bytes, fallback_encoding: str | None) -> ParsedText:
    """Parse a ``text/csv`` file: its text as written (a table is not re-laid out)."""
    text, warnings = decode_plain(name, data, fallback_encoding)
    return ParsedText(text=normalize_text(text), parser="csv", warnings=tuple(warnings))


def parse_json(name: str, data: bytes, fallback_encoding: str | None) -> ParsedText:
    """Parse an ``application/json`` file; a value that does not read is kept with a warning."""
    text, warnings = decode_plain(name, data, fallback_encoding)
    try:
        json.loads(text)
    except ValueError as exc:
        warnings.append(f"not valid JSON ({_where(exc)}): kept as text")
    return ParsedText(text=normalize_text(text), parser="json", warnings=tuple(warnings))


def parse_json_lines(name: str, data: bytes, fallback_encoding: str | None) -> ParsedText:
    """Parse a JSON Lines file (one JSON value a line); the first line that does not read is
    named in a warning."""
    text, warnings = decode_plain(name, data, fallback_encoding)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            json.loads(line)
        except ValueError as exc:
            warnings.append(f"line {number} is not valid JSON ({_where(exc)}): kept as text")
            break
    return ParsedText(text=normalize_text(text), parser="jsonl", warnings=tuple(warnings))


def _where(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return str(exc)
