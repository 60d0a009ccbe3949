"""Turn the bytes of an uploaded file into text, one module per media type.

``parse`` picks the parser from a registry keyed by media type. A media type with no parser
is not an error: the file is kept, it just has no text. Every returned text has been through
``normalize_text``, the one normalisation that evidence and chunk offsets refer to.
"""

from __future__ import annotations

from collections.abc import Callable

from assay.errors import InvalidInput
from assay.parsing.common import ParsedText, normalize_text
from assay.parsing.data_text import parse_csv, parse_json, parse_json_lines
from assay.parsing.docx import is_docx_archive, parse_docx
from assay.parsing.html import parse_html
from assay.parsing.pdf import parse_pdf
from assay.parsing.text import parse_markdown, parse_plain

__all__ = [
    "ParsedText",
    "guess_media_type",
    "normalize_text",
    "parse",
    "parsers",
    "supported_media_types",
]

TEXT = "text/plain"
MARKDOWN = "text/markdown"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
CSV = "text/csv"
JSON = "application/json"
JSON_LINES = "application/jsonl"
UNKNOWN = "application/octet-stream"

Parser = Callable[[str, bytes, str | None], ParsedText]
"""A parser takes (file name, bytes, fallback encoding) and returns normalised text."""

_EXTENSIONS = {
    ".txt": TEXT,
    ".text": TEXT,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".pdf": PDF,
    ".docx": DOCX,
    ".csv": CSV,
    ".json": JSON,
    ".jsonl": JSON_LINES,
    ".ndjson": JSON_LINES,
}
# Other names for the same formats, as browsers and mail clients send them.
_ALIASES = {
    "text/x-markdown": MARKDOWN,
    "application/xhtml+xml": HTML,
    "application/x-pdf": PDF,
    "application/csv": CSV,
    "text/json": JSON,
    "application/x-ndjson": JSON_LINES,
    "application/jsonlines": JSON_LINES,
    "application/x-jsonlines": JSON_LINES,
}
_SNIFF_BYTES = 1024


def parsers() -> dict[str, Parser]:
    """Return the registry: media type -> parser. A new format is one module and one entry."""
    return {
        TEXT: parse_plain,
        MARKDOWN: parse_markdown,
        HTML: parse_html,
        PDF: parse_pdf,
        DOCX: parse_docx,
        CSV: parse_csv,
        JSON: parse_json,
        JSON_LINES: parse_json_lines,
    }


def supported_media_types() -> tuple[str, ...]:
    """The media types that yield text, e.g. for an upload form's hint."""
    return tuple(parsers())


def guess_media_type(name: str, data: bytes) -> str:
    """Tell the media type from the file name's extension, else from the first bytes."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if "." in base.lstrip("."):
        extension = "." + base.rsplit(".", 1)[-1].lower()
        if extension in _EXTENSIONS:
            return _EXTENSIONS[extension]
    return _sniff(data)


def parse(
    name: str,
    data: bytes,
    media_type: str | None = None,
    *,
    fallback_encoding: str | None = None,
) -> ParsedText:
    """Extract the text of one file.

    ``media_type`` defaults to ``guess_media_type(name, data)``; parameters such as
    ``; charset=...`` are ignored. ``fallback_encoding`` (e.g. "cp1252") is used for text
    and HTML files that are not valid UTF-8, with a warning. Raises ``InvalidInput`` with a
    message that starts with ``name`` when the file cannot be read.
    """
    if not data:
        raise InvalidInput(f"{name}: file is empty")
    if media_type is None:
        media_type = guess_media_type(name, data)
    media_type = media_type.split(";", 1)[0].strip().lower()
    media_type = _ALIASES.get(media_type, media_type)
    parser = parsers().get(media_type)
    if parser is None:
        return ParsedText(
            text="",
            parser="none",
            warnings=(f"no text extracted: {media_type} files are stored but not parsed",),
        )
    parsed = parser(name, data, fallback_encoding)
    if parsed.text.strip() or parsed.warnings:
        return parsed
    return ParsedText(
        text=parsed.text,
        parser=parsed.parser,
        pages=parsed.pages,
        warnings=("no text found in the file",),
        page_starts=parsed.page_starts,
    )


def _sniff(data: bytes) -> str:
    """Recognise PDF, DOCX and HTML by their first bytes; anything else is unknown."""
    head = data[:_SNIFF_BYTES]
    if b"%PDF-" in head:  # readers accept junk before the header, within the first 1 KB
        return PDF
    if head.startswith(b"PK\x03\x04") and is_docx_archive(data):
        return DOCX
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n\f").lower()
    if start.startswith((b"<!doctype html", b"<html")) or b"<html" in head.lower():
        return HTML
    return UNKNOWN
