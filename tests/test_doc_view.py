"""The formatted document view: every shown run of text is exactly the extracted text at its
offset, and nothing of a document's own markup (scripts, attributes) reaches the page."""

from __future__ import annotations

import re
from html import unescape

from assay.parsing import parse
from assay.web.doc_view import html_view, markdown_view

RUN = re.compile(r'<span data-start="(\d+)">(.*?)</span>', re.S)

MARKDOWN = """# Night ferries

*Status: April 2025.* The **night ferry** leaves at 22:40; 5 * 3 = 15.
See [the timetable](https://example.org/t) and `pier 3`.

- Bikes ride free
- Dogs <img src=x onerror=alert(1)> pay half

> A quote
> over two lines

```
code <b>kept</b> as text
```

1. first
2. second
"""

HTML = b"""<!doctype html><html><head><title>Ferries</title>
<style>p { color: red }</style><script>window.__xss = 1</script></head>
<body><h1 class="x" onclick="alert(1)">Night ferries</h1>
<p>The <b>night   ferry</b> leaves
at 22:40.<img src=x onerror=alert(2)></p>
<table><tr><td>Mon</td><td>22:40</td></tr></table>
<ul><li>Bikes &amp; dogs ride free</li></ul><iframe src="https://evil"></iframe>
</body></html>"""


def runs(html: str) -> list[tuple[int, str]]:
    return [(int(start), unescape(shown)) for start, shown in RUN.findall(html)]


def test_markdown_runs_are_the_text_at_their_offsets() -> None:
    shown = str(markdown_view(MARKDOWN))
    found = runs(shown)
    assert len(found) > 10
    for start, text in found:
        assert MARKDOWN[start : start + len(text)] == text
    assert "<h2>" in shown and "<strong>" in shown and "<em>" in shown and "<code>" in shown
    assert "<ul>" in shown and "<ol>" in shown and "<blockquote>" in shown and "<pre>" in shown
    assert "<img" not in shown and "<b>" not in shown
    assert "&lt;img src=x onerror=alert(1)&gt;" in shown
    assert "https://example.org" not in shown  # a link's target is left out, its text kept
    assert "5 * 3 = 15" in unescape(shown)  # a lone star stays text


def test_html_keeps_structure_without_attributes_and_maps_text() -> None:
    parsed = parse("ferries.html", HTML)
    shown = str(html_view(parsed.text, HTML.decode()))
    for start, text in runs(shown):
        assert parsed.text[start : start + len(text)] == text
    mapped = " ".join(text for _, text in runs(shown))
    for words in ("Night ferries", "22:40", "Bikes & dogs ride free", "Mon"):
        assert words in mapped
    assert re.search(r"night\s+ferry", mapped)
    assert "<script" not in shown and "__xss" not in shown and "color: red" not in shown
    assert "onclick" not in shown and "<img" not in shown and "<iframe" not in shown
    assert "<h1>" in shown and "<td>" in shown and "<li>" in shown
    tags = re.findall(r"<([a-z0-9]+)([^>]*)>", shown)
    assert all(not attrs or tag == "span" for tag, attrs in tags)
