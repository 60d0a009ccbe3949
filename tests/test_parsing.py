"""Parsers read real files (tests/data/parsing, made by scripts/make_test_files.py)."""

from __future__ import annotations

import codecs
import io
import threading
import unicodedata
import zipfile
from pathlib import Path

import docx
import pypdf
import pytest
from docx.document import Document as DocxDocument
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InvalidInput
from assay.parsing import (
    ParsedText,
    guess_media_type,
    normalize_text,
    parse,
    parsers,
    supported_media_types,
)
from assay.parsing import pdf as pdf_module

DATA = Path(__file__).parent / "data" / "parsing"
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
EXTENSION_FOR = {
    "text/plain": "txt",
    "text/markdown": "md",
    "text/html": "html",
    "application/pdf": "pdf",
    DOCX_TYPE: "docx",
    "text/csv": "csv",
    "application/json": "json",
    "application/jsonl": "jsonl",
}


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def pdf_bytes(writer: pypdf.PdfWriter) -> bytes:
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(document: DocxDocument) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    return out.getvalue()


def assert_normalised(parsed: ParsedText) -> None:
    assert normalize_text(parsed.text) == parsed.text


# --- the test files themselves -------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["sample.pdf", "sample.docx", "sample.html", "sample-cp1252.html", "sample.md"]
)
def test_test_files_exist_and_are_small(name: str) -> None:
    assert 0 < (DATA / name).stat().st_size < 100_000


# --- PDF -----------------------------------------------------------------------------------


def test_pdf_two_pages_text_in_order_with_page_starts() -> None:
    parsed = parse("sample.pdf", read("sample.pdf"))
    assert parsed.parser == "pdfium"
    assert parsed.pages == 2
    assert parsed.warnings == ()
    text = parsed.text
    assert text.startswith("First page heading\n")
    assert "The official financial filing was signed" in text
    assert "Über die Brücke fahren größere Lastwagen mit Äpfeln und Öl." in text
    assert "Literal ligature characters: field and flow." in text
    assert not any(unicodedata.name(char, "").startswith("LATIN SMALL LIGATURE") for char in text)
    assert text.index("First page heading") < text.index("Evidence is anchored")
    assert text.index("Evidence is anchored") < text.index("Second page heading")
    assert text.endswith("The final paragraph ends the sample.")
    assert "\r" not in text
    assert len(parsed.page_starts) == 2
    assert parsed.page_starts[0] == 0
    assert text[parsed.page_starts[1] :].startswith("Second page heading")
    assert text[: parsed.page_starts[1]].endswith("extracted text.\n\n")
    assert_normalised(parsed)


def test_pdf_falls_back_to_pypdf_and_nfkc_resolves_ligatures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pypdfium2

    def refuse(data: bytes) -> list[str]:
        raise pypdfium2.PdfiumError("Failed to load document (PDFium: Data format error).")

    monkeypatch.setattr(pdf_module, "pages_with_pdfium", refuse)
    raw_pages = pdf_module.pages_with_pypdf(read("sample.pdf"))
    assert "\ufb01" in raw_pages[0]  # pypdf returns the ligature characters as they are drawn

    parsed = parse("sample.pdf", read("sample.pdf"))
    assert parsed.parser == "pypdf"
    assert parsed.pages == 2
    assert parsed.warnings == (
        "PDFium could not read this PDF (PDFium: Data format error); text extracted with pypdf",
    )
    assert "The official financial filing" in parsed.text
    assert "field and flow" in parsed.text
    assert "\ufb01" not in parsed.text and "\ufb03" not in parsed.text
    assert parsed.text[parsed.page_starts[1] :].startswith("Second page heading")
    assert_normalised(parsed)


def test_pdf_pages_without_text_are_reported() -> None:
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(read("sample.pdf")))
    writer.add_blank_page()
    writer.add_blank_page()
    parsed = parse("scan.pdf", pdf_bytes(writer))
    assert parsed.pages == 4
    assert parsed.warnings == ("no text on pages 3, 4 (scanned? OCR is not supported)",)
    assert len(parsed.page_starts) == 4
    assert parsed.text[parsed.page_starts[1] :].startswith("Second page heading")
    assert parsed.page_starts[3] == len(parsed.text)
    assert parsed.text.endswith("The final paragraph ends the sample.\n\n\n\n")


def test_pdf_without_any_text() -> None:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    parsed = parse("blank.pdf", pdf_bytes(writer))
    assert parsed.text == ""
    assert parsed.pages == 1
    assert parsed.page_starts == (0,)
    assert parsed.warnings == ("no text on any page (scanned? OCR is not supported)",)


def test_pdf_with_user_password_is_refused_clearly() -> None:
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(read("sample.pdf")))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    with pytest.raises(InvalidInput) as caught:
        parse("locked.pdf", pdf_bytes(writer))
    message = str(caught.value)
    assert message.startswith("locked.pdf: the PDF is encrypted with a password")
    assert "remove the password" in message


def test_pdf_with_owner_password_only_is_read() -> None:
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(read("sample.pdf")))
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    parsed = parse("restricted.pdf", pdf_bytes(writer))
    assert "Second page heading" in parsed.text
    assert parsed.pages == 2


@pytest.mark.parametrize(
    "data",
    [b"%PDF-1.7\nthis is not really a PDF", b"not a pdf at all", read("sample.pdf")[:3000]],
    ids=["header-only", "garbage", "truncated"],
)
def test_corrupt_pdf_is_refused(data: bytes) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse("broken.pdf", data)
    message = str(caught.value)
    assert message.startswith("broken.pdf: cannot read PDF (PDFium: Data format error; pypdf: ")
    assert message.endswith(")")
    assert len(message) < 300


def test_pdf_parsing_from_several_threads_gives_the_same_text() -> None:
    data = read("sample.pdf")
    expected = parse("sample.pdf", data).text
    results: list[str] = []

    def work() -> None:
        for _ in range(5):
            results.append(parse("sample.pdf", data).text)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 20


# --- DOCX ----------------------------------------------------------------------------------


def test_docx_paragraphs_headings_and_table_in_body_order() -> None:
    parsed = parse("sample.docx", read("sample.docx"))
    assert parsed.parser == "docx"
    assert parsed.pages is None
    assert parsed.warnings == ()
    assert parsed.text == (
        "Quarterly report\n\n"
        "This report was written for the parsing tests of Assay.\n\n"
        "Results\n\n"
        "The table below lists three measurements.\n\n"
        "Metric\tValue\tUnit\n"
        "Recall\t0.82\tratio\n"
        "Latency\t41\tms\n\n"
        "Conclusion\n\n"
        "Größere Änderungen folgen im nächsten Quartal."
    )
    assert_normalised(parsed)


def test_docx_merged_and_nested_cells_appear_once() -> None:
    document = docx.Document()
    table = document.add_table(rows=3, cols=3)
    for row_index, row in enumerate(table.rows):
        for column, cell in enumerate(row.cells):
            cell.text = f"r{row_index}c{column}"
    table.cell(0, 0).merge(table.cell(0, 1)).text = "wide"
    table.cell(1, 2).merge(table.cell(2, 2)).text = "tall"
    table.cell(2, 0).add_paragraph("second line")
    table.cell(2, 1).add_table(rows=1, cols=2).cell(0, 1).text = "nested"
    parsed = parse("merged.docx", docx_bytes(document))
    assert parsed.text.split("\n") == [
        "wide\tr0c2",
        "r1c0\tr1c1\ttall",
        "r2c0 second line\tr2c1 nested",
    ]


def test_docx_not_a_zip() -> None:
    with pytest.raises(
        InvalidInput, match=r"^report\.docx: cannot read DOCX \(not a ZIP archive\)$"
    ):
        parse("report.docx", b"just some bytes")


def test_docx_zip_without_document_part() -> None:
    data = zip_bytes({"hello.txt": b"hello"})
    with pytest.raises(
        InvalidInput, match=r"^report\.docx: cannot read DOCX \(no word/document\.xml inside\)$"
    ):
        parse("report.docx", data)


def test_docx_with_damaged_xml() -> None:
    members = {}
    with zipfile.ZipFile(io.BytesIO(read("sample.docx"))) as archive:
        for member in archive.namelist():
            members[member] = archive.read(member)
    members["word/document.xml"] = b"<w:document><unclosed"
    with pytest.raises(InvalidInput, match=r"^report\.docx: cannot read DOCX \(damaged XML: "):
        parse("report.docx", zip_bytes(members))


def test_docx_that_is_really_an_old_doc_file() -> None:
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
    with pytest.raises(InvalidInput) as caught:
        parse("old.docx", data)
    assert str(caught.value) == (
        "old.docx: cannot read DOCX (it is an old binary .doc file or a password-protected "
        "document; save it as an unprotected .docx)"
    )


def test_docx_with_damaged_compressed_member() -> None:
    data = bytearray(read("sample.docx"))
    start = data.index(b"word/document.xml") + len("word/document.xml")
    for offset in range(start + 10, start + 60):  # inside the deflated document part
        data[offset] ^= 0x5A
    with pytest.raises(
        InvalidInput, match=r"^r\.docx: cannot read DOCX \(damaged (ZIP archive|XML)"
    ):
        parse("r.docx", bytes(data))


def test_docx_zip_bomb_is_refused() -> None:
    data = zip_bytes({"word/document.xml": b"\0" * 20_000_000})
    with pytest.raises(InvalidInput, match=r"^bomb\.docx: cannot read DOCX \(.*zip bomb\)$"):
        parse("bomb.docx", data)


# --- HTML ----------------------------------------------------------------------------------


def test_html_visible_text_with_lines_and_paragraphs() -> None:
    parsed = parse("sample.html", read("sample.html"))
    assert parsed.parser == "html"
    assert parsed.warnings == ()
    assert parsed.text == (
        "Café-Bericht\n\n"
        "Willkommen im Café\n\n"
        "Der erste Absatz spricht über Kaffee und Kuchen.\n\n"
        "Der zweite Absatz nennt Grüße aus Köln.\nEine neue Zeile nach br.\n\n"
        "Erster Punkt\nZweiter Punkt\n\n"
        "Sorte\tPreis\nEspresso\t2,10 €\n\n"
        "  eingerückt\n    bleibt erhalten\n\n"
        "Letzter Absatz."
    )
    assert "MUST_NOT_APPEAR" not in parsed.text
    assert "trackingCode" not in parsed.text and "color:" not in parsed.text


def test_html_declared_windows_1252_charset_is_respected() -> None:
    data = read("sample-cp1252.html")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    parsed = parse("sample-cp1252.html", data)
    assert parsed.text == "Preisliste\n\nSchöne Grüße – das kostet 5 €."
    assert parsed.warnings == ()


def test_html_latin1_label_means_windows_1252() -> None:
    data = '<meta charset="ISO-8859-1"><p>5 € – ok</p>'.encode("cp1252")
    assert parse("page.html", data).text == "5 € – ok"


def test_html_unknown_declared_charset_warns_and_reads_utf8() -> None:
    data = '<meta charset="klingon-8"><p>Grüße</p>'.encode()
    parsed = parse("page.html", data)
    assert parsed.text == "Grüße"
    assert parsed.warnings == ("the page declares an unknown charset 'klingon-8'; read as UTF-8",)


def test_html_without_charset_must_be_utf8() -> None:
    data = "<p>Grüße</p>".encode("cp1252")
    with pytest.raises(InvalidInput, match=r"^page\.html: not valid UTF-8 \(invalid byte 0xFC"):
        parse("page.html", data)
    parsed = parse("page.html", data, fallback_encoding="cp1252")
    assert parsed.text == "Grüße"
    assert parsed.warnings == ("decoded as cp1252, not UTF-8",)


def test_html_media_type_parameters_and_aliases() -> None:
    data = b"<html><title>T</title><body><p>x</p></body></html>"
    assert parse("page", data, "text/html; charset=utf-8").text == "T\n\nx"
    assert parse("page", data, "application/xhtml+xml").parser == "html"


def test_html_hidden_comments_and_whitespace() -> None:
    data = (
        b"<body><div hidden>secret</div><!-- note -->"
        b"<p>a  <span>b</span>\n<i>c</i></p><div>d</div><div>e</div></body>"
    )
    assert parse("p.html", data).text == "a b c\n\nd\ne"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"http://example.com/a?b=1", "http://example.com/a?b=1"),
        (b"index.html", "index.html"),
        (b"fish &amp; chips", "fish & chips"),
    ],
)
def test_html_without_tags_is_body_text(data: bytes, expected: str) -> None:
    assert parse("p.html", data).text == expected


def test_html_title_comes_from_head_not_from_svg() -> None:
    data = b"<body><svg><title>icon</title></svg><p>text</p></body>"
    assert parse("p.html", data).text == "text"


def test_xhtml_with_xml_declaration() -> None:
    data = (
        b"<?xml version='1.0' encoding='iso-8859-1'?>"
        b"<html xmlns='http://www.w3.org/1999/xhtml'><head><title>X</title></head>"
        b"<body><p>Gr\xfc\xdfe</p></body></html>"
    )
    assert parse("p.xhtml", data).text == "X\n\nGrüße"


def test_xml_declared_as_html_is_read_without_warnings() -> None:
    data = b"<?xml version='1.0'?><?xml-stylesheet href='s.xsl'?><note><to>Tove</to></note>"
    assert parse("note.html", data).text == "Tove"


def test_html_deep_nesting_does_not_overflow() -> None:
    data = b"<div>" * 50_000 + b"deep" + b"</div>" * 50_000
    assert parse("deep.html", data).text == "deep"


# --- text and markdown ---------------------------------------------------------------------


def test_markdown_source_is_kept() -> None:
    data = read("sample.md")
    parsed = parse("sample.md", data)
    assert parsed.parser == "markdown"
    assert parsed.text == data.decode("utf-8")
    assert "| BEIR   | yes   |" in parsed.text
    assert "**character offsets**" in parsed.text


def test_text_line_endings_and_controls_are_normalised() -> None:
    parsed = parse("notes.txt", b"one\r\ntwo\rthree\x07\tfour\x0c\n")
    assert parsed.parser == "text"
    assert parsed.text == "one\ntwo\nthree\tfour\x0c\n"


def test_text_utf8_bom_is_stripped() -> None:
    assert parse("a.txt", codecs.BOM_UTF8 + "Grüße".encode()).text == "Grüße"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_text_utf16_with_bom_is_accepted(encoding: str) -> None:
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(encoding, b"")
    data = bom + "Größe\r\nÜbung".encode(encoding)
    parsed = parse("a.txt", data)
    assert parsed.text == "Größe\nÜbung"
    assert parsed.warnings == ()


def test_text_invalid_utf8_message_names_byte_and_offset() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse("notes.txt", b"abcd\xc3(more")
    assert str(caught.value) == (
        "notes.txt: not valid UTF-8 (invalid byte 0xC3 at offset 4); "
        "save it as UTF-8 or set ASSAY_TEXT_FALLBACK_ENCODING"
    )


def test_text_invalid_utf8_offset_counts_the_bom() -> None:
    with pytest.raises(InvalidInput, match=r"invalid byte 0xFF at offset 5\)"):
        parse("notes.md", codecs.BOM_UTF8 + b"ab\xff")


def test_text_fallback_encoding() -> None:
    parsed = parse("notes.txt", "Grüße – 5 €".encode("cp1252"), fallback_encoding="cp1252")
    assert parsed.text == "Grüße – 5 €"
    assert parsed.warnings == ("decoded as cp1252, not UTF-8",)


def test_text_fallback_encoding_reports_undecodable_bytes() -> None:
    parsed = parse("notes.txt", b"a\x81b\xfc", fallback_encoding="cp1252")
    assert parsed.text == "a\ufffdbü"
    assert parsed.warnings == (
        "decoded as cp1252, not UTF-8",
        "decoded as cp1252, not UTF-8: 1 bytes could not be decoded and became U+FFFD",
    )


def test_text_unknown_fallback_encoding() -> None:
    with pytest.raises(InvalidInput, match=r"^a\.txt: .*'no-such-codec' is not a known encoding"):
        parse("a.txt", b"\xff", fallback_encoding="no-such-codec")


def test_valid_utf8_ignores_fallback_encoding() -> None:
    parsed = parse("a.txt", "Grüße".encode(), fallback_encoding="cp1252")
    assert parsed.text == "Grüße"
    assert parsed.warnings == ()


@pytest.mark.parametrize("name", ["data.txt", "data.md"])
@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", bytes(range(1, 32)) * 10 + b"some text"],
    ids=["nul-bytes", "control-bytes"],
)
def test_binary_with_text_name_is_refused(name: str, data: bytes) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(name, data)
    assert str(caught.value) == f"{name}: looks like a binary file, not text"


def test_text_with_terminal_colours_is_text() -> None:
    parsed = parse("log.txt", b"\x1b[31merror\x1b[0m ok\n")
    assert "error" in parsed.text


def test_whitespace_only_text_gets_a_warning() -> None:
    parsed = parse("blank.txt", b"  \n\n")
    assert parsed.warnings == ("no text found in the file",)


# --- dispatch ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["empty.txt", "empty.md", "empty.html", "empty.pdf", "empty.docx", "empty.bin"]
)
def test_empty_file_is_refused(name: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse(name, b"")
    assert str(caught.value) == f"{name}: file is empty"


def test_unknown_media_type_is_stored_without_text() -> None:
    parsed = parse("photo.png", b"\x89PNG\r\n\x1a\n")
    assert parsed == ParsedText(
        text="",
        parser="none",
        warnings=("no text extracted: application/octet-stream files are stored but not parsed",),
    )
    assert parse("sheet.xlsx", b"x", "application/vnd.ms-excel").warnings == (
        "no text extracted: application/vnd.ms-excel files are stored but not parsed",
    )


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("a.txt", b"", "text/plain"),
        ("A.TXT", b"", "text/plain"),
        ("notes.md", b"", "text/markdown"),
        ("notes.markdown", b"", "text/markdown"),
        ("page.html", b"", "text/html"),
        ("page.htm", b"", "text/html"),
        ("paper.pdf", b"", "application/pdf"),
        ("report.docx", b"", DOCX_TYPE),
        ("dir/sub.dir/report.PDF", b"", "application/pdf"),
        ("C:\\Users\\x\\report.docx", b"", DOCX_TYPE),
        ("paper", b"%PDF-1.7\n...", "application/pdf"),
        ("paper.bin", b"\r\n%PDF-1.4\n", "application/pdf"),
        ("page", b"<!DOCTYPE html><html><p>x</p></html>", "text/html"),
        ("page.xyz", b"\xef\xbb\xbf\n  <HTML lang='en'>", "text/html"),
        (".hidden", b"<html>", "text/html"),
        ("README", b"plain words", "application/octet-stream"),
        ("photo.jpg", b"\xff\xd8\xff\xe0", "application/octet-stream"),
        ("archive.zip", zip_bytes({"a.txt": b"a"}), "application/octet-stream"),
        ("noext", b"PK\x03\x04 broken zip", "application/octet-stream"),
    ],
)
def test_guess_media_type(name: str, data: bytes, expected: str) -> None:
    assert guess_media_type(name, data) == expected


def test_guess_media_type_sniffs_docx_without_extension() -> None:
    assert guess_media_type("upload", read("sample.docx")) == DOCX_TYPE
    assert parse("upload", read("sample.docx")).parser == "docx"


def test_registry_lists_every_parsed_type() -> None:
    assert set(supported_media_types()) == set(EXTENSION_FOR)
    assert set(parsers()) == set(EXTENSION_FOR)


# --- normalize_text ------------------------------------------------------------------------


def test_normalize_text_examples() -> None:
    decomposed = "Gru\u0308\u00dfe"
    assert normalize_text(decomposed) == "Grüße"
    assert normalize_text("a\r\nb\rc\n") == "a\nb\nc\n"
    assert normalize_text("a\x00b\x1bc\x7f\td\x0ce") == "abc\x7f\td\x0ce"
    assert normalize_text("x\ud800y") == "x\ufffdy"
    assert normalize_text("\ufb01") == "\ufb01"  # NFC only; NFKC is for PDF text


@given(st.text())
def test_normalize_text_properties(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once
    assert "\r" not in once
    assert not any(ord(char) < 0x20 and char not in "\t\n\f" for char in once)
    assert unicodedata.is_normalized("NFC", once)
    once.encode("utf-8")  # storable: no lone surrogates


@given(st.lists(st.text(), max_size=5))
def test_page_starts_point_into_the_joined_text(pages: list[str]) -> None:
    from assay.parsing.common import join_pages

    text, starts = join_pages(pages)
    assert normalize_text(text) == text
    assert len(starts) == len(pages)
    for index, page in enumerate(pages):
        expected = normalize_text(page).strip()
        assert text[starts[index] : starts[index] + len(expected)] == expected
