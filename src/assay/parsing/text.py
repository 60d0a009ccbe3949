"""Plain text and markdown: decode and keep the source as it is.

Markdown is not rendered: annotators quote the source, and offsets must point into it.
"""

from __future__ import annotations

from assay.errors import InvalidInput
from assay.parsing.common import ParsedText, decode_text, normalize_text

SNIFF_BYTES = 8192
# Share of control bytes in the first 8 KB above which a file is taken for binary.
MAX_CONTROL_SHARE = 0.1
# Bytes below 0x20 that ordinary text uses: \b \t \n \f \r and ESC (terminal colours).
_TEXT_CONTROLS = frozenset(b"\x08\t\n\x0c\r\x1b")


def looks_binary(data: bytes) -> bool:
    """Tell whether the start of ``data`` holds NUL bytes or many other control bytes."""
    head = data[:SNIFF_BYTES]
    if b"\x00" in head:
        return True
    controls = sum(1 for byte in head if (byte < 0x20 and byte not in _TEXT_CONTROLS))
    return controls > MAX_CONTROL_SHARE * len(head)


def decode_plain(name: str, data: bytes, fallback_encoding: str | None) -> tuple[str, list[str]]:
    """The text of a file that should be text (refused when it looks binary), and warnings."""
    # A UTF-16 file is full of NUL bytes, so the BOM check in decode_text must come first.
    if not data.startswith((b"\xff\xfe", b"\xfe\xff")) and looks_binary(data):
        raise InvalidInput(f"{name}: looks like a binary file, not text")
    return decode_text(name, data, fallback_encoding=fallback_encoding)


def parse_plain(name: str, data: bytes, fallback_encoding: str | None) -> ParsedText:
    """Parse a ``text/plain`` file."""
    text, warnings = decode_plain(name, data, fallback_encoding)
    return ParsedText(text=normalize_text(text), parser="text", warnings=tuple(warnings))


def parse_markdown(name: str, data: bytes, fallback_encoding: str | None) -> ParsedText:
    """Parse a ``text/markdown`` file; the markdown source is the text."""
    text, warnings = decode_plain(name, data, fallback_encoding)
    return ParsedText(text=normalize_text(text), parser="markdown", warnings=tuple(warnings))
