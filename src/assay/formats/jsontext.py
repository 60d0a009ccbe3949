"""Text and JSON from files we did not write, checked once for what would break later.

Every reader's JSON goes through :func:`loads` (or :func:`jsonl_lines`), every text file
through :func:`read_text`, and every parquet or CSV value through :func:`check_value`, so the
same breakage gets the same clear error naming the file, the line and the field:

- integers past 64 bits (Python refuses to convert numbers over 4,300 digits, and the store
  keeps 64 bits at most);
- NaN and Infinity (not JSON; where a format uses ``NaN`` for a missing value, the reader
  asks for it to be read as null) and numbers too large for a float;
- lone surrogates and NUL characters (neither UTF-8 nor PostgreSQL can store them);
- nesting deeper than :data:`MAX_DEPTH` (the parser and later copies recurse).

The common case costs nothing extra: the parser's hooks only note a refused number, and the
walk that locates a problem runs only when a hook noted one, the text holds a ``\\u`` escape
that could be a surrogate or NUL, or there are enough brackets to nest that deep.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput

MAX_DEPTH = 64
"""Deepest nesting of lists and objects a reader accepts (real files stay under 10)."""
MAX_INT = 2**63 - 1
_SUSPECT_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F]|0000)")


class Refused:
    """Stands in for a JSON value the parser's hooks refused; :func:`loads` reports it."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class KeyedObject(dict[str, Any]):
    """A JSON object whose keys repeated: the first value of each key is kept and
    ``repeats`` holds ``(key, first position, later position)``, positions counted from 1."""

    repeats: list[tuple[str, int, int]]


# ---------------------------------------------------------------- text


def printable(text: str) -> str:
    """``text`` safe to print anywhere: lone surrogates (from odd file names) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def decode_text(data: bytes, where: str) -> str:
    """UTF-8 text (a byte order mark is dropped); other bytes and NUL are refused."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidInput(f"{where}: not UTF-8 text (line {line}, byte {exc.start})") from exc
    at = text.find("\x00")
    if at >= 0:
        raise InvalidInput(f"{where}: line {text.count(chr(10), 0, at) + 1} holds a NUL character")
    return text


def text_lines(lines: Iterable[bytes], where: str, whole: Callable[[], bytes]) -> Iterator[str]:
    """The lines of a UTF-8 text read line by line (each ending at ``b"\\n"``), checked as
    :func:`decode_text` checks a whole text: at a problem the whole text (``whole()``) is
    checked, so the error names the same line and byte."""
    for number, raw in enumerate(lines):
        try:
            line = (raw.removeprefix(codecs.BOM_UTF8) if number == 0 else raw).decode("utf-8")
        except UnicodeDecodeError:
            line = "\x00"
        if "\x00" in line:
            decode_text(whole(), where)
            raise InvalidInput(f"{where}: not UTF-8 text")  # decode_text has said where
        yield line


def read_text(path: Path, where: str | None = None) -> str:
    where = where or str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{where}: cannot be read ({exc.strerror or exc})") from exc
    return decode_text(data, where)


# ---------------------------------------------------------------- JSON


class _Parser:
    """One configured decoder; ``noted`` turns true when a hook refused a value."""

    def __init__(self, nan_as_null: bool, keyed: bool) -> None:
        self.nan_as_null = nan_as_null
        self.noted = False
        hooks: dict[str, Any] = {
            "parse_int": self._int,
            "parse_float": self._float,
            "parse_constant": self._constant,
        }
        if keyed:
            hooks["object_pairs_hook"] = self._object
        self.decoder = json.JSONDecoder(**hooks)

    def _refuse(self, reason: str) -> Refused:
        self.noted = True
        return Refused(reason)

    def _int(self, token: str) -> Any:
        if len(token) <= 18:
            return int(token)
        digits = len(token.lstrip("-"))
        if digits > 19 or not -MAX_INT - 1 <= int(token) <= MAX_INT:
            return self._refuse(f"an integer of {digits} digits is out of range (64 bits)")
        return int(token)

    def _float(self, token: str) -> Any:
        value = float(token)
        return value if math.isfinite(value) else self._refuse("a number is too large")

    def _constant(self, name: str) -> Any:
        if name == "NaN" and self.nan_as_null:
            return None
        return self._refuse(f"{name} is not a number JSON allows")

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(pairs)
        if len(found) == len(pairs):
            return found
        keyed = KeyedObject()
        keyed.repeats = []
        first: dict[str, int] = {}
        for position, (key, value) in enumerate(pairs, 1):
            if key in first:
                keyed.repeats.append((key, first[key], position))
                self.noted = True
            else:
                first[key] = position
                keyed[key] = value
        return keyed

    def parse(self, text: str, where: str, keyed_paths: tuple[str, ...] = ()) -> Any:
        self.noted = False
        try:
            value = self.decoder.decode(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(
                f"{where}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from exc
        except RecursionError as exc:
            raise InvalidInput(f"{where}: JSON nested deeper than {MAX_DEPTH} levels") from exc
        strings = _SUSPECT_ESCAPE.search(text) is not None
        if self.noted or strings or text.count("[") + text.count("{") > MAX_DEPTH:
            _raise_first(value, where, strings=strings, scalars=False, keyed=keyed_paths)
        return value


def loads(
    data: bytes | str, where: str, *, nan_as_null: bool = False, keyed: tuple[str, ...] = ()
) -> Any:
    """Parse one JSON text, checked as the module says.

    ``nan_as_null`` reads ``NaN`` as null (for formats whose writers mean "missing" by it).
    ``keyed`` names top-level keys whose objects map record ids to records: a key repeated
    there is left for the reader to report (see :class:`KeyedObject`); a key repeated in any
    other object is refused.
    """
    text = decode_text(data, where) if isinstance(data, bytes) else data
    return _Parser(nan_as_null, bool(keyed)).parse(text, where, keyed)


def json_parser() -> Callable[[str, str], Any]:
    """:func:`loads` of a text, ``parse(text, where)``, with one decoder made for all the
    calls (a reader of many JSON cells; making the decoder cost more than parsing a cell).
    For one thread: each reader makes its own."""
    return _Parser(nan_as_null=False, keyed=False).parse


def jsonl_lines(
    text: str, where: str, *, nan_as_null: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines text."""
    return _jsonl(text.splitlines(), where, nan_as_null)


def jsonl_stream(
    lines: Iterable[str], where: str, *, nan_as_null: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`jsonl_lines` of a text read line by line (see :func:`text_lines`): the same
    lines, numbered the same."""
    pieces = (piece for line in lines for piece in line.splitlines())
    return _jsonl(pieces, where, nan_as_null)


def _jsonl(
    lines: Iterable[str], where: str, nan_as_null: bool
) -> Iterator[tuple[int, dict[str, Any]]]:
    parser = _Parser(nan_as_null, keyed=False)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        here = f"{where} line {number}"
        value = parser.parse(line, here)
        if not isinstance(value, dict):
            raise InvalidInput(f"{here}: expected a JSON object, found {type_name(value)}")
        yield number, value


def dumps_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# ---------------------------------------------------------------- values


def check_value(value: Any, where: str) -> None:
    """Refuse what the store cannot keep in a value read from parquet or CSV: non-finite
    floats, integers past 64 bits, NUL and lone surrogates in text, deep nesting."""
    _raise_first(value, where, strings=True, scalars=True, keyed=())


def _raise_first(
    value: Any, where: str, *, strings: bool, scalars: bool, keyed: tuple[str, ...]
) -> None:
    found = _first_problem(value, strings, scalars, keyed)
    if found is not None:
        path, reason = found
        field = f", field {printable(_path(path))!r}" if path else ""
        raise InvalidInput(f"{where}{field}: {reason}")


def _first_problem(
    value: Any, strings: bool, scalars: bool, keyed: tuple[str, ...]
) -> tuple[tuple[str | int, ...], str] | None:
    bad = _scalar_check(strings, scalars)
    if not isinstance(value, dict | list | tuple):
        problem = bad(value)
        return ((), problem) if problem else None
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        container, path = stack.pop()
        if isinstance(container, KeyedObject) and not (len(path) == 1 and path[0] in keyed):
            repeated, first, later = container.repeats[0]
            return (*path, repeated), f"the key appears twice (entries {first} and {later})"
        pairs = container.items() if isinstance(container, dict) else enumerate(container)
        for key, child in pairs:
            here = (*path, key)
            if strings and isinstance(key, str) and bad(key):
                return here, f"the key: {bad(key)}"
            if isinstance(child, dict | list | tuple):
                if len(here) >= MAX_DEPTH:
                    return here, f"nested deeper than {MAX_DEPTH} levels"
                stack.append((child, here))
                continue
            problem = bad(child)
            if problem:
                return here, problem
    return None


def _scalar_check(strings: bool, scalars: bool) -> Callable[[Any], str | None]:
    def bad(value: Any) -> str | None:
        if isinstance(value, Refused):
            return value.reason
        if strings and isinstance(value, str):
            if "\x00" in value:
                return "text holds a NUL character"
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    return "text holds a lone surrogate (not valid Unicode)"
        if scalars:
            if isinstance(value, float) and not math.isfinite(value):
                return f"{value} is not a finite number"
            if isinstance(value, int) and not -MAX_INT - 1 <= value <= MAX_INT:
                return "an integer is out of range (64 bits)"
        return None

    return bad


def _path(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out if len(out) <= 80 else out[:77] + "..."


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
