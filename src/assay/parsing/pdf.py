"""PDF: PDFium first (fast, resolves ligatures), pypdf when PDFium cannot open the file.

Text is NFKC-normalised so ligature characters ("ﬁ") and other presentation forms become
the letters people type and search for. Pages are joined with a blank line and the start
of each page is recorded, so evidence can be shown with its page number.
"""

from __future__ import annotations

import io
import re
import threading
import unicodedata

from assay.errors import InvalidInput
from assay.parsing.common import ParsedText, join_pages, normalize_text

# PDFium is not thread-safe, even across documents, and the web app parses in a thread pool.
# The lock is the one piece of module state here, and it holds nothing but the right to call.
_PDFIUM_LOCK = threading.Lock()
_PDFIUM_REASON = re.compile(r"\((PDFium: [^)]*)\)")
_MAX_REASON = 100
_MAX_LISTED_PAGES = 10


class _Encrypted(Exception):
    """The PDF needs a password that we do not have."""


def parse_pdf(name: str, data: bytes, fallback_encoding: str | None) -> ParsedText:
    """Parse an ``application/pdf`` file into page texts joined by blank lines."""
    del fallback_encoding  # a PDF carries its own encodings
    warnings: list[str] = []
    try:
        pages = pages_with_pdfium(data)
        parser = "pdfium"
    except _Encrypted:
        raise InvalidInput(_encrypted_message(name)) from None
    except Exception as pdfium_error:  # any failure of the C library on untrusted bytes
        pdfium_reason = _short_reason(pdfium_error)
        try:
            pages = pages_with_pypdf(data)
        except _Encrypted:
            raise InvalidInput(_encrypted_message(name)) from None
        except Exception as pypdf_error:  # pypdf raises many types on damaged files
            raise InvalidInput(
                f"{name}: cannot read PDF ({pdfium_reason}; pypdf: {_short_reason(pypdf_error)})"
            ) from None
        parser = "pypdf"
        warnings.append(
            f"PDFium could not read this PDF ({pdfium_reason}); text extracted with pypdf"
        )
    pages = [
        normalize_text(_hyphens(unicodedata.normalize("NFKC", page))).strip() for page in pages
    ]
    text, page_starts = join_pages(pages)
    empty = [number for number, page in enumerate(pages, start=1) if not page]
    if pages and len(empty) == len(pages):
        warnings.append("no text on any page (scanned? OCR is not supported)")
    elif empty:
        warnings.append(f"no text on pages {_page_list(empty)} (scanned? OCR is not supported)")
    return ParsedText(
        text=text,
        parser=parser,
        pages=len(pages),
        warnings=tuple(warnings),
        page_starts=page_starts,
    )


def pages_with_pdfium(data: bytes) -> list[str]:
    """Return the text of each page as PDFium reads it."""
    import pypdfium2 as pdfium

    texts: list[str] = []
    with _PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            if "password" in str(exc).lower():
                raise _Encrypted from exc
            raise
        try:
            for index in range(len(document)):
                page = document[index]
                try:
                    text_page = page.get_textpage()
                    try:
                        texts.append(text_page.get_text_bounded())
                    finally:
                        text_page.close()
                finally:
                    page.close()
        finally:
            document.close()
    return texts


def pages_with_pypdf(data: bytes) -> list[str]:
    """Return the text of each page as pypdf reads it (pure Python, more forgiving)."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        try:
            decrypted = reader.decrypt("")  # owner-only protection opens with no password
        except Exception as exc:  # e.g. AES without the optional cryptography package
            raise _Encrypted from exc
        if not decrypted:
            raise _Encrypted
    return [page.extract_text() for page in reader.pages]


def _encrypted_message(name: str) -> str:
    return (
        f"{name}: the PDF is encrypted with a password; remove the password "
        "(for example by printing it to a new PDF) and add it again"
    )


def _short_reason(error: BaseException) -> str:
    """Say in a few words why a PDF engine gave up."""
    message = str(error)
    found = _PDFIUM_REASON.search(message)
    if found:
        return found.group(1)
    reason = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return reason if len(reason) <= _MAX_REASON else reason[: _MAX_REASON - 1] + "…"


def _hyphens(text: str) -> str:
    """PDFium marks a hyphen at a line break with U+0002 (U+FFFE from other calls); it is a real
    hyphen in the printed text ("Zwei-Personen-Prinzip"), so keep it as one."""
    return text.replace("\x02", "-").replace("\ufffe", "-")


def _page_list(numbers: list[int]) -> str:
    """List page numbers, shortened when there are many."""
    shown = ", ".join(str(number) for number in numbers[:_MAX_LISTED_PAGES])
    if len(numbers) > _MAX_LISTED_PAGES:
        shown += f" and {len(numbers) - _MAX_LISTED_PAGES} more"
    return shown
