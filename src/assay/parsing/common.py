"""What every parser shares: the result record, the one text normalisation, and decoding.

Kept apart from ``__init__`` so the per-media-type modules can import it without a cycle.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from assay.errors import InvalidInput

FALLBACK_HINT = "save it as UTF-8 or set ASSAY_TEXT_FALLBACK_ENCODING"

# C0 controls except \t (09), \n (0A) and \f (0C); \r is turned into \n before this runs.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0d-\x1f]")
# A lone surrogate cannot be encoded as UTF-8 (the database would refuse it); one for one.
_LONE_SURROGATES = re.compile(r"[\ud800-\udfff]")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


@dataclass(frozen=True, slots=True)
class ParsedText:
    """Text extracted from one file, with what a person should know about how it went."""

    text: str
    """Already passed through ``normalize_text``: every stored offset refers to this string."""
    parser: str
    pages: int | None = None
    warnings: tuple[str, ...] = ()
    page_starts: tuple[int, ...] = ()
    """Offset in ``text`` where each page begins (PDF only)."""


def normalize_text(text: str) -> str:
    """Return the one canonical form that all evidence and chunk offsets refer to.

    Line ends become ``\\n``, C0 control characters other than tab, newline and form feed
    are removed, lone surrogates become U+FFFD, and the result is Unicode NFC. Applying it
    twice changes nothing.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_CHARS.sub("", text)
    text = _LONE_SURROGATES.sub("\ufffd", text)
    return unicodedata.normalize("NFC", text)


def join_pages(pages: Sequence[str]) -> tuple[str, tuple[int, ...]]:
    """Normalise each page, join them with a blank line and record where each one starts.

    Normalising page by page gives the same string as normalising the joined text, because
    the blank line between pages stops any composition across the boundary.
    """
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    for page in pages:
        page_text = normalize_text(page).strip()
        if parts:
            parts.append("\n\n")
            offset += 2
        starts.append(offset)
        parts.append(page_text)
        offset += len(page_text)
    return "".join(parts), tuple(starts)


def decode_text(
    name: str,
    data: bytes,
    *,
    fallback_encoding: str | None,
    declared_encoding: str | None = None,
) -> tuple[str, list[str]]:
    """Decode the bytes of a text-like file; return the text and any warnings.

    Order: a UTF-16 byte order mark wins, then a UTF-8 one, then the encoding the document
    declares itself (HTML), then strict UTF-8, then the caller's fallback encoding.
    """
    if data.startswith(_UTF16_BOMS):
        try:
            return data.decode("utf-16"), []
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"{name}: not valid UTF-16 although it starts with a UTF-16 byte order mark "
                f"(offset {exc.start})"
            ) from None
    body_offset = 0
    if data.startswith(codecs.BOM_UTF8):
        body_offset = len(codecs.BOM_UTF8)
    elif declared_encoding is not None:
        try:
            text = data.decode(declared_encoding, errors="replace")
        except (LookupError, UnicodeError, ValueError):
            pass  # an odd codec (idna, undefined): go on as if nothing were declared
        else:
            return text, _replacement_warnings(text, f"decoded as {declared_encoding}")
    try:
        return data[body_offset:].decode("utf-8"), []
    except UnicodeDecodeError as exc:
        bad_offset = body_offset + exc.start
        bad_byte = data[bad_offset]
    if fallback_encoding is None:
        raise InvalidInput(
            f"{name}: not valid UTF-8 (invalid byte 0x{bad_byte:02X} at offset {bad_offset}); "
            f"{FALLBACK_HINT}"
        )
    try:
        text = data.decode(fallback_encoding, errors="replace")
    except LookupError:
        raise InvalidInput(
            f"{name}: not valid UTF-8, and the fallback encoding {fallback_encoding!r} "
            "is not a known encoding"
        ) from None
    warning = f"decoded as {fallback_encoding}, not UTF-8"
    return text, [warning, *_replacement_warnings(text, warning)]


def _replacement_warnings(text: str, how: str) -> list[str]:
    """Say how many bytes a lenient decode replaced, so a person can judge the damage."""
    replaced = text.count("\ufffd")
    if replaced == 0:
        return []
    return [f"{how}: {replaced} bytes could not be decoded and became U+FFFD"]
