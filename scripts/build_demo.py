"""Build and check the Assay demo corpus (the fictional company Kelmtal Mobil GmbH).

The PDF and DOCX files in src/assay/demo/documents/ are generated from the sources in
scripts/demo_sources/ so that their text stays reviewable in the repository:

- every ``*.html`` source becomes a PDF (headless Chromium, print to PDF);
- every ``*.md`` source becomes a DOCX (python-docx; headings, paragraphs, bullets, tables).

``--check`` extracts the text of every document the way a plain extractor would and verifies
that every evidence span in src/assay/demo/gold.jsonl occurs verbatim in its document, and that
the gold file is well formed. It exits non-zero on any failure.

Usage:
    python scripts/build_demo.py            # build PDFs and DOCX files, then check
    python scripts/build_demo.py --check    # check only
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "scripts" / "demo_sources"
DEMO = ROOT / "src" / "assay" / "demo"
DOCUMENTS = DEMO / "documents"
GOLD = DEMO / "gold.jsonl"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-pdf-header-footer",
]
# A fixed timestamp keeps rebuilt DOCX files byte-identical, so git shows no spurious changes.
FIXED_TIME = datetime(2025, 4, 1, 9, 0, 0, tzinfo=UTC)
MAX_BINARY_BYTES = 200 * 1024

QUERY_TYPES = ("fact_single", "summary", "reasoning", "unanswerable")
LANGUAGES = ("en", "de")
LABELS = ("relevant", "distracting")


# ---------------------------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------------------------


def build_pdf(source: Path, target: Path) -> None:
    """Print one HTML source to PDF with headless Chromium."""
    chromium = shutil.which(CHROMIUM) or shutil.which("chromium")
    if chromium is None:
        raise SystemExit(f"cannot build {target.name}: Chromium not found at {CHROMIUM}")
    with tempfile.TemporaryDirectory(prefix="assay-demo-chromium-") as profile:
        command = [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--print-to-pdf={target}",
            source.as_uri(),
        ]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0 or not target.exists():
        raise SystemExit(
            f"Chromium failed to print {source.name} (exit {result.returncode}):\n{result.stderr}"
        )
    target.write_bytes(_with_fixed_pdf_dates(target.read_bytes()))


def _with_fixed_pdf_dates(data: bytes) -> bytes:
    """Replace Chromium's creation and modification dates by FIXED_TIME.

    The replacement has the same length, so the cross-reference offsets stay valid.
    """
    stamp = FIXED_TIME.strftime("D:%Y%m%d%H%M%S+00'00'").encode()

    def replace(match: re.Match[bytes]) -> bytes:
        old = match.group(2)
        return match.group(1) + (stamp if len(old) == len(stamp) else old) + b")"

    return re.sub(rb"(/(?:CreationDate|ModDate) ?\()(D:[^)]*)\)", replace, data)


def _add_table(document: object, rows: list[list[str]]) -> None:
    """Add a Markdown pipe table; the first row is the header."""
    from docx.document import Document as DocxDocument

    assert isinstance(document, DocxDocument)
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            cell = table.cell(r, c)
            cell.text = value
            if r == 0:
                for run in cell.paragraphs[0].runs:
                    run.bold = True


def _table_row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def build_docx(source: Path, target: Path) -> None:
    """Turn a small Markdown subset (#, ##, -, pipe tables, paragraphs) into a DOCX file."""
    import docx

    document = docx.Document()
    lines = source.read_text(encoding="utf-8").splitlines()
    title = ""
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line:
            i += 1
        elif line.startswith("|"):
            rows: list[list[str]] = []
            while i < len(lines) and lines[i].startswith("|"):
                if not re.fullmatch(r"\|[\s|:-]+\|?", lines[i].strip()):
                    rows.append(_table_row(lines[i]))
                i += 1
            _add_table(document, rows)
        elif line.startswith("## "):
            document.add_heading(line[3:], level=2)
            i += 1
        elif line.startswith("# "):
            title = line[2:]
            document.add_heading(title, level=1)
            i += 1
        elif line.startswith("- "):
            document.add_paragraph(line[2:], style="List Bullet")
            i += 1
        else:
            document.add_paragraph(line)
            i += 1
    properties = document.core_properties
    properties.title = title
    properties.author = "Kelmtal Mobil GmbH (fictional, Assay demo)"
    properties.last_modified_by = "Assay demo build"
    properties.created = FIXED_TIME
    properties.modified = FIXED_TIME
    properties.revision = 1
    buffer = io.BytesIO()
    document.save(buffer)
    target.write_bytes(_with_fixed_zip_times(buffer.getvalue()))


def _with_fixed_zip_times(data: bytes) -> bytes:
    """Rewrite a zip archive with fixed member timestamps (python-docx stamps the clock time)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME.timetuple()[:6])
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = info.external_attr
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def build() -> None:
    """Generate every PDF and DOCX document from its source."""
    DOCUMENTS.mkdir(parents=True, exist_ok=True)
    for source in sorted(SOURCES.glob("*.html")):
        target = DOCUMENTS / f"{source.stem}.pdf"
        build_pdf(source, target)
        print(f"built {target.relative_to(ROOT)} ({target.stat().st_size:,} bytes)")
    for source in sorted(SOURCES.glob("*.md")):
        target = DOCUMENTS / f"{source.stem}.docx"
        build_docx(source, target)
        print(f"built {target.relative_to(ROOT)} ({target.stat().st_size:,} bytes)")


# ---------------------------------------------------------------------------------------------
# Text extraction (what a plain extractor sees)
# ---------------------------------------------------------------------------------------------


def extract_pdf(path: Path) -> str:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(path))
    try:
        pages = []
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range())
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return unicodedata.normalize("NFKC", "\n".join(pages))


def extract_docx(path: Path) -> str:
    """Paragraphs and table rows in body order; table cells joined by tabs."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(str(path))
    parts: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            parts.append(block.text)
        elif isinstance(block, Table):
            for row in block.rows:
                parts.append("\t".join(cell.text for cell in row.cells))
    return "\n".join(parts)


def extract_html(path: Path, separator: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_bytes(), "lxml")
    for element in soup(["script", "style", "head"]):
        element.decompose()
    return soup.get_text(separator)


def extract_variants(path: Path) -> dict[str, str]:
    """All extractions a span must survive, keyed by a short name for error messages.

    HTML is checked with and without a newline separator, so that spans never straddle an
    inline tag and work with either extractor style.
    """
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        variants = {"pdfium": extract_pdf(path)}
    elif suffix == ".docx":
        variants = {"python-docx": extract_docx(path)}
    elif suffix in (".html", ".htm"):
        variants = {
            "bs4": extract_html(path, ""),
            "bs4-newline": extract_html(path, "\n"),
        }
    elif suffix in (".md", ".txt"):
        variants = {"utf-8": path.read_text(encoding="utf-8")}
    else:
        raise ValueError(f"{path.name}: unsupported document type {suffix!r}")
    return {
        name: unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
        for name, text in variants.items()
    }


# ---------------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------------


def check_item(
    line_no: int, item: dict[str, object], texts: dict[str, dict[str, str]]
) -> list[str]:
    """Return human-readable problems with one gold line."""
    where = f"gold.jsonl line {line_no}"
    problems: list[str] = []
    for key in ("query_id", "query", "language", "query_type", "answer", "evidence"):
        if key not in item:
            problems.append(f"{where}: missing field {key!r}")
    if problems:
        return problems
    if item["language"] not in LANGUAGES:
        problems.append(f"{where}: language {item['language']!r} not in {LANGUAGES}")
    if item["query_type"] not in QUERY_TYPES:
        problems.append(f"{where}: query_type {item['query_type']!r} not in {QUERY_TYPES}")
    evidence = item["evidence"]
    if not isinstance(evidence, list):
        return [*problems, f"{where}: evidence must be a list"]
    relevant = [e for e in evidence if isinstance(e, dict) and e.get("label") == "relevant"]
    if item["query_type"] == "unanswerable" and relevant:
        problems.append(f"{where}: unanswerable item has relevant evidence")
    if item["query_type"] != "unanswerable" and not relevant:
        problems.append(f"{where}: answerable item has no relevant evidence")
    for n, span in enumerate(evidence, start=1):
        label = f"{where} evidence {n}"
        if not isinstance(span, dict):
            problems.append(f"{label}: not an object")
            continue
        if span.get("label") not in LABELS:
            problems.append(f"{label}: label {span.get('label')!r} not in {LABELS}")
        if not isinstance(span.get("group"), int):
            problems.append(f"{label}: group must be an integer")
        name, text = span.get("document"), span.get("text")
        if not isinstance(name, str) or name not in texts:
            problems.append(f"{label}: unknown document {name!r}")
            continue
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{label}: empty text")
            continue
        if "\n" in text:
            problems.append(f"{label}: text contains a line break")
        for variant, document_text in texts[name].items():
            if text not in document_text:
                problems.append(f"{label}: not found in {name} ({variant}): {text!r}")
    return problems


def check() -> int:
    """Verify documents and gold; print a summary; return the process exit code."""
    problems: list[str] = []
    texts: dict[str, dict[str, str]] = {}
    print("documents:")
    for path in sorted(DOCUMENTS.iterdir()):
        if not path.is_file():
            continue
        texts[path.name] = extract_variants(path)
        chars = len(next(iter(texts[path.name].values())))
        size = path.stat().st_size
        print(f"  {path.name:48} {size:>8,} bytes {chars:>7,} chars")
        if path.suffix in (".pdf", ".docx") and size > MAX_BINARY_BYTES:
            problems.append(f"{path.name}: {size:,} bytes is above {MAX_BINARY_BYTES:,}")
    total = sum(len(next(iter(v.values()))) for v in texts.values())
    print(f"  {len(texts)} documents, {total:,} characters of extracted text")

    seen_ids: set[str] = set()
    counts: Counter[tuple[str, str]] = Counter()
    lines = GOLD.read_text(encoding="utf-8").splitlines()
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(f"gold.jsonl line {line_no}: invalid JSON ({error})")
            continue
        query_id = str(item.get("query_id"))
        if query_id in seen_ids:
            problems.append(f"gold.jsonl line {line_no}: duplicate query_id {query_id!r}")
        seen_ids.add(query_id)
        counts[(str(item.get("query_type")), str(item.get("language")))] += 1
        problems.extend(check_item(line_no, item, texts))

    print(f"gold: {sum(counts.values())} items")
    for query_type in QUERY_TYPES:
        per_language = [counts[(query_type, lang)] for lang in LANGUAGES]
        detail = ", ".join(f"{lang} {n}" for lang, n in zip(LANGUAGES, per_language, strict=True))
        print(f"  {query_type:13} {sum(per_language):>3} ({detail})")
    for problem in problems:
        print(f"FAIL {problem}")
    print("check passed" if not problems else f"check failed: {len(problems)} problem(s)")
    return 0 if not problems else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only check, do not build")
    args = parser.parse_args(argv)
    if not args.check:
        build()
    return check()


if __name__ == "__main__":
    sys.exit(main())
