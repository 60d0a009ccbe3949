"""No parser hangs or crashes on garbage: every input parses or is refused with InvalidInput."""

from __future__ import annotations

import io
import zipfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInput
from assay.parsing import ParsedText, guess_media_type, normalize_text, parse
from tests.test_parsing import DOCX_TYPE, EXTENSION_FOR, read, zip_bytes

FUZZ = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _parse_or_refuse(name: str, data: bytes, media_type: str) -> None:
    try:
        result = parse(name, data, media_type)
    except InvalidInput as error:
        assert str(error).startswith(f"{name}: ")
    else:
        assert isinstance(result, ParsedText)
        assert normalize_text(result.text) == result.text
        assert all(0 <= start <= len(result.text) for start in result.page_starts)


@FUZZ
@given(data=st.binary(max_size=4096), media_type=st.sampled_from(sorted(EXTENSION_FOR)))
def test_random_bytes_never_crash_a_parser(data: bytes, media_type: str) -> None:
    _parse_or_refuse(f"fuzz.{EXTENSION_FOR[media_type]}", data, media_type)


@FUZZ
@given(
    name=st.sampled_from(["sample.pdf", "sample.docx", "sample.html"]),
    flips=st.lists(
        st.tuples(st.integers(min_value=0, max_value=100_000), st.integers(1, 255)),
        min_size=1,
        max_size=8,
    ),
    cut=st.none() | st.integers(min_value=1, max_value=100_000),
)
def test_damaged_real_files_never_crash_a_parser(
    name: str, flips: list[tuple[int, int]], cut: int | None
) -> None:
    data = bytearray(read(name))
    for position, mask in flips:
        data[position % len(data)] ^= mask
    if cut is not None:
        data = data[: max(1, cut % (len(data) + 1))]
    _parse_or_refuse(name, bytes(data), guess_media_type(name, b""))


HTML_PIECES = [
    "<?xml version='1.0'?>", "<!DOCTYPE html>", "<html>", "<head>", "<title>", "</title>",
    "<meta charset='latin1'>", "<body>", "<p>", "</p>", "<pre>", "</pre>", "<table>", "<tr>",
    "<td>", "</td>", "<br>", "<script>", "</script>", "<div hidden>", "</div>", "<!--", "-->",
    "http://x.y", "file.txt", "&amp;", "&#0;", "\u00a0", "Grüße", " ", "\n", "\r", "\x00", "<",
]  # fmt: skip


@FUZZ
@given(pieces=st.lists(st.sampled_from(HTML_PIECES), max_size=30))
def test_html_made_of_tag_soup_never_crashes_or_warns(pieces: list[str]) -> None:
    _parse_or_refuse("soup.html", "".join(pieces).encode(), "text/html")


@FUZZ
@given(body=st.binary(max_size=4096))
def test_pdf_header_then_garbage_never_crashes(body: bytes) -> None:
    _parse_or_refuse("fuzz.pdf", b"%PDF-1.7\n" + body, "application/pdf")


@FUZZ
@given(
    xml=st.binary(max_size=2048)
    | st.text(alphabet='<>/="w:ptblrc abx', max_size=400).map(str.encode)
)
def test_docx_with_garbage_document_xml_never_crashes(xml: bytes) -> None:
    with zipfile.ZipFile(io.BytesIO(read("sample.docx"))) as archive:
        members = {member: archive.read(member) for member in archive.namelist()}
    members["word/document.xml"] = xml
    _parse_or_refuse("fuzz.docx", zip_bytes(members), DOCX_TYPE)
