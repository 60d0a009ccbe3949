"""Generate the small real documents that tests/test_parsing.py reads.

Run from the repository root:  .venv/bin/python scripts/make_test_files.py

Writes into tests/data/parsing/:
  sample.pdf         2 pages, printed from HTML by headless Chromium (/usr/bin/chromium)
  sample.docx        headings, paragraphs and a table (python-docx), byte-for-byte reproducible
  sample.html        UTF-8 page with script, style, noscript, template and a charset meta
  sample-cp1252.html the same kind of page declared and encoded as windows-1252
  sample.md          a markdown file

The PDF carries Chromium's creation date, so it differs between runs; the text inside does not.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
import zipfile
from datetime import UTC, datetime
from pathlib import Path

OUT_DIR = Path(__file__).resolve().parent.parent / "tests" / "data" / "parsing"
MAX_BYTES = 100_000

PRINT_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Assay parsing sample</title>
<style>
  body { font-family: "DejaVu Serif", serif; font-size: 13pt; margin: 2cm; }
  .next-page { break-before: page; }
</style>
</head>
<body>
<h1>First page heading</h1>
<p>The official financial filing was signed in the office of the fire fighters.</p>
<p>Evidence is anchored to character offsets in the extracted text.</p>
<section class="next-page">
<h1>Second page heading</h1>
<p>Über die Brücke fahren größere Lastwagen mit Äpfeln und Öl.</p>
<p>Literal ligature characters: \ufb01eld and \ufb02ow.</p>
<p>The final paragraph ends the sample.</p>
</section>
</body>
</html>
"""

HTML_UTF8 = """<!DOCTYPE html>
<html lang="de">
<head>
<meta charset="utf-8">
<title>Café-Bericht</title>
<style>body { color: #333; } .secret { display: none; }</style>
<script>var trackingCode = "SCRIPT_TEXT_MUST_NOT_APPEAR";</script>
</head>
<body>
<noscript>NOSCRIPT_TEXT_MUST_NOT_APPEAR</noscript>
<template><p>TEMPLATE_TEXT_MUST_NOT_APPEAR</p></template>
<h1>Willkommen im Café</h1>
<p>Der erste Absatz   spricht
   über <b>Kaffee</b> und <a href="/kuchen">Kuchen</a>.</p>
<p>Der zweite Absatz nennt Grüße aus Köln.<br>Eine neue Zeile nach br.</p>
<ul><li>Erster Punkt</li><li>Zweiter Punkt</li></ul>
<table>
<tr><th>Sorte</th><th>Preis</th></tr>
<tr><td>Espresso</td><td>2,10 €</td></tr>
</table>
<pre>  eingerückt
    bleibt erhalten</pre>
<!-- COMMENT_TEXT_MUST_NOT_APPEAR -->
<script type="module">console.log("SCRIPT_TEXT_MUST_NOT_APPEAR");</script>
<p>Letzter Absatz.</p>
</body>
</html>
"""

HTML_CP1252 = """<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">
<title>Preisliste</title>
</head>
<body>
<p>Schöne Grüße – das kostet 5 €.</p>
</body>
</html>
"""

MARKDOWN = """# Assay sample notes

Evidence is stored as **character offsets** into the extracted text.

## Why offsets

- Labels survive re-chunking.
- A label can be a sub-span of a chunk.

| Format | Reads |
| ------ | ----- |
| BEIR   | yes   |

Ein Satz mit Umlauten: Größe, Übung, Ärger.
"""


def write_pdf(path: Path) -> None:
    """Print PRINT_HTML to a PDF with the system Chromium."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as tmp:
        html_path = Path(tmp) / "print.html"
        html_path.write_text(PRINT_HTML, encoding="utf-8")
        pdf_path = Path(tmp) / "out.pdf"
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                f"--user-data-dir={Path(tmp) / 'profile'}",
                "--no-pdf-header-footer",
                f"--print-to-pdf={pdf_path}",
                html_path.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        path.write_bytes(pdf_path.read_bytes())


def write_docx(path: Path) -> None:
    """Build a DOCX with python-docx, then re-zip it with fixed timestamps for stable bytes."""
    import docx

    document = docx.Document()
    fixed = datetime(2026, 1, 1, tzinfo=UTC)
    document.core_properties.created = fixed
    document.core_properties.modified = fixed
    document.core_properties.author = "Assay tests"
    document.add_heading("Quarterly report", level=1)
    document.add_paragraph("This report was written for the parsing tests of Assay.")
    document.add_heading("Results", level=2)
    intro = document.add_paragraph("The table below lists ")
    intro.add_run("three").bold = True
    intro.add_run(" measurements.")
    table = document.add_table(rows=3, cols=3)
    cells = [
        ("Metric", "Value", "Unit"),
        ("Recall", "0.82", "ratio"),
        ("Latency", "41", "ms"),
    ]
    for row, values in zip(table.rows, cells, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_paragraph("")
    document.add_heading("Conclusion", level=2)
    document.add_paragraph("Größere Änderungen folgen im nächsten Quartal.")

    raw = io.BytesIO()
    document.save(raw)
    stable = io.BytesIO()
    with (
        zipfile.ZipFile(raw) as source,
        zipfile.ZipFile(stable, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            member = zipfile.ZipInfo(info.filename, date_time=(2026, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(member, source.read(info.filename))
    path.write_bytes(stable.getvalue())


def main() -> int:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "sample.html").write_bytes(HTML_UTF8.encode("utf-8"))
    (OUT_DIR / "sample-cp1252.html").write_bytes(HTML_CP1252.encode("cp1252"))
    (OUT_DIR / "sample.md").write_bytes(MARKDOWN.encode("utf-8"))
    write_docx(OUT_DIR / "sample.docx")
    write_pdf(OUT_DIR / "sample.pdf")
    too_big = False
    for path in sorted(OUT_DIR.iterdir()):
        size = path.stat().st_size
        print(f"{path.relative_to(OUT_DIR.parent.parent.parent)}  {size:,} bytes")
        too_big = too_big or size >= MAX_BYTES
    if too_big:
        print("a test file is 100 KB or larger; keep them small", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
