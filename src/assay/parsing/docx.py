"""DOCX: body paragraphs and tables in the order they appear.

Each paragraph (headings included) is its own block, blocks are separated by a blank line,
and a table is one block with a line per row and tab-separated cells. Headers, footers,
footnotes, comments and text boxes are not read.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInput
from assay.parsing.common import ParsedText, normalize_text

if TYPE_CHECKING:
    from docx.table import Table, _Cell

DOCUMENT_PART = "word/document.xml"
# Guards against zip bombs: a real document's XML is rarely above a few MB unpacked.
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
MAX_COMPRESSION_RATIO = 200
# Compound File (OLE2) signature: old binary .doc files and password-protected Office files.
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def parse_docx(name: str, data: bytes, fallback_encoding: str | None) -> ParsedText:
    """Parse an Office Open XML word-processing document."""
    del fallback_encoding  # DOCX is XML with its own declared encoding
    _check_archive(name, data)
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        blocks = list(_blocks(document.element.body, document))
    except Exception as exc:  # python-docx and lxml raise many types on damaged files
        raise InvalidInput(f"{name}: cannot read DOCX ({_short_reason(exc)})") from None
    text = "\n\n".join(block for block in blocks if block.strip())
    return ParsedText(text=normalize_text(text), parser="docx")


def _zip_members(data: bytes) -> list[zipfile.ZipInfo] | None:
    """The members of a ZIP archive, or None when ``data`` is not one that can be read."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.infolist()
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        ValueError,
        OSError,
        EOFError,
        NotImplementedError,
    ):
        return None


def is_docx_archive(data: bytes) -> bool:
    """Whether ``data`` is a ZIP archive holding a Word document (sniffing an upload)."""
    members = _zip_members(data)
    return members is not None and any(member.filename == DOCUMENT_PART for member in members)


def _check_archive(name: str, data: bytes) -> None:
    """Refuse what is not a Word archive, or would unpack to far more than it weighs."""
    members = _zip_members(data)
    if members is None:
        if data.startswith(OLE2_MAGIC):
            raise InvalidInput(
                f"{name}: cannot read DOCX (it is an old binary .doc file or a password-protected "
                "document; save it as an unprotected .docx)"
            )
        raise InvalidInput(f"{name}: cannot read DOCX (not a ZIP archive)")
    if not any(member.filename == DOCUMENT_PART for member in members):
        raise InvalidInput(f"{name}: cannot read DOCX (no {DOCUMENT_PART} inside)")
    unpacked = sum(member.file_size for member in members)
    packed = sum(member.compress_size for member in members)
    if unpacked > MAX_UNPACKED_BYTES or unpacked > MAX_COMPRESSION_RATIO * max(packed, 1):
        raise InvalidInput(
            f"{name}: cannot read DOCX (it would unpack to {unpacked:,} bytes from "
            f"{packed:,}; refused as a possible zip bomb)"
        )


def _blocks(container: Any, parent: Any) -> Iterator[str]:
    """Yield the text of each paragraph and table directly inside ``container``.

    Content controls (``w:sdt``) are looked into, since templates often wrap body text in them.
    """
    from docx.oxml.ns import qn
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    paragraph_tag, table_tag = qn("w:p"), qn("w:tbl")
    control_tag, control_content_tag = qn("w:sdt"), qn("w:sdtContent")
    for element in container.iterchildren():
        if element.tag == paragraph_tag:
            yield Paragraph(element, parent).text
        elif element.tag == table_tag:
            yield _table_text(Table(element, parent))
        elif element.tag == control_tag:
            for content in element.iterchildren(control_content_tag):
                yield from _blocks(content, parent)


def _table_text(table: Table) -> str:
    """One line per row, cells joined by tabs; a merged cell's text is given only once.

    python-docx repeats a horizontally merged cell for each grid column it spans, and gives
    a vertically merged cell again in the rows below: the first is skipped, the second left
    empty so later cells keep their column.
    """
    seen: set[Any] = set()  # lxml elements hash by identity; holding them keeps it stable
    lines: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        previous: Any = None
        for cell in row.cells:
            element = cell._tc
            if element is previous:
                continue
            previous = element
            if element in seen:
                cells.append("")
                continue
            seen.add(element)
            cells.append(_cell_text(cell))
        lines.append("\t".join(cells).rstrip("\t"))
    return "\n".join(lines)


def _cell_text(cell: _Cell) -> str:
    """A cell's paragraphs and nested tables on one line, so rows stay one line each."""
    parts = [part for part in _blocks(cell._tc, cell) if part.strip()]
    return " ".join(" ".join(part.split()) for part in parts)


def _short_reason(error: BaseException) -> str:
    """Say in a few words what was wrong inside the archive."""
    message = str(error).strip()
    kind = type(error).__name__
    if isinstance(error, (zipfile.BadZipFile, zlib.error)):
        kind = "damaged ZIP archive"
    elif kind == "XMLSyntaxError":
        kind = "damaged XML"
    reason = f"{kind}: {message}" if message else kind
    return reason if len(reason) <= 100 else reason[:99] + "…"
