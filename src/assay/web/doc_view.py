"""A Markdown or HTML document shown rendered, safely, with every shown character still
pointing at its place in the extracted text.

Every run of shown text is a ``<span data-start="N">`` whose content is exactly
``text[N:N + len]`` of the extracted text (escaped), so a selection in the rendered view maps
back to offsets without guessing. Markup of the document's own never reaches the page: the
Markdown view is built from the extracted text by a small block and inline reader, and the
HTML view re-reads the original file keeping only an allow-list of structural tags, without
any attribute. Text that cannot be found in the extracted text is shown without offsets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from markupsafe import Markup, escape

MARKDOWN = "text/markdown"
HTML = "text/html"
RENDERED = (MARKDOWN, HTML)

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+")
_BULLET = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+")
_QUOTE = re.compile(r"^ {0,3}>[ \t]?")
_RULE = re.compile(r"^ {0,3}(?:[-*_][ \t]*){3,}$")
# Inline syntax that is hidden: emphasis marks, code ticks, and a link's "](target)" part.
_INLINE = re.compile(r"\*\*|__|`|(?<!\*)\*(?!\*)|\]\([^)\s]*\)|(?<![\w\\])\[(?=[^\]\n]*\]\()")


def run(text: str, start: int, end: int) -> str:
    """One mapped run of shown text."""
    if end <= start:
        return ""
    return f'<span data-start="{start}">{escape(text[start:end])}</span>'


def inline(text: str, start: int, end: int) -> str:
    """Shown runs of ``text[start:end]`` with the inline syntax left out, **bold** as
    ``<strong>`` and `code` as ``<code>``."""
    out: list[str] = []
    open_tags: list[str] = []
    cursor = start
    for match in _INLINE.finditer(text, start, end):
        mark = match.group()
        tag = {"**": "strong", "__": "strong", "`": "code", "*": "em"}.get(mark)
        closing = bool(tag and open_tags and open_tags[-1] == tag)
        following = text[match.end()] if match.end() < end else " "
        if mark == "*" and not closing and following.isspace():
            continue  # a lone star ("5 * 3") is text, not emphasis
        out.append(run(text, cursor, match.start()))
        if closing:
            out.append(f"</{open_tags.pop()}>")
        elif tag and tag not in open_tags:
            open_tags.append(tag)
            out.append(f"<{tag}>")
        cursor = match.end()
    out.append(run(text, cursor, end))
    out.extend(f"</{tag}>" for tag in reversed(open_tags))
    return "".join(out)


def _lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every line, without its line end."""
    position = 0
    for line in text.split("\n"):
        yield position, position + len(line)
        position += len(line) + 1


def markdown_view(text: str) -> Markup:
    """The Markdown source (the extracted text) as headings, paragraphs, lists, quotes and
    code blocks; every shown character is a mapped run."""
    html: list[str] = []
    block: list[tuple[int, int]] = []
    block_tag = ""
    fence: tuple[str, int] | None = None

    def close() -> None:
        nonlocal block_tag
        if block_tag in ("ul", "ol"):
            html.append(f"</{block_tag}>")
        elif block:
            joined = "<br>".join(inline(text, s, e) for s, e in block)
            html.append(f"<{block_tag}>{joined}</{block_tag}>")
        block.clear()
        block_tag = ""

    for start, end in _lines(text):
        line = text[start:end]
        if fence is not None:
            if _FENCE.match(line) and line.strip().startswith(fence[0]):
                html.append(f"<pre>{run(text, fence[1], max(fence[1], start - 1))}</pre>")
                fence = None
            continue
        if _FENCE.match(line):
            close()
            fence = (line.strip()[:3], min(end + 1, len(text)))
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        quote = _QUOTE.match(line)
        if not line.strip():
            close()
        elif _RULE.match(line):
            close()
            html.append("<hr>")
        elif heading:
            close()
            level = min(len(heading.group(1)) + 1, 6)  # the page's <h1> is the document name
            html.append(f"<h{level}>{inline(text, start + heading.end(), end)}</h{level}>")
        elif bullet:
            tag = "ol" if line.lstrip()[0].isdigit() else "ul"
            if block_tag != tag:
                close()
                html.append(f"<{tag}>")
                block_tag = tag
            html.append(f"<li>{inline(text, start + bullet.end(), end)}</li>")
        elif quote:
            if block_tag != "blockquote":
                close()
                block_tag = "blockquote"
            block.append((start + quote.end(), end))
        else:
            if block_tag in ("ul", "ol", "blockquote"):
                close()
            block_tag = "p"
            block.append((start, end))
    if fence is not None:  # an unclosed fence runs to the end
        html.append(f"<pre>{run(text, fence[1], len(text))}</pre>")
    close()
    return Markup("\n".join(html))


# Tags kept (without attributes) in the HTML view; others are unwrapped, these dropped whole.
_KEPT = frozenset(
    {
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd",
        "table", "thead", "tbody", "tfoot", "tr", "td", "th", "caption", "blockquote", "pre",
        "code", "em", "strong", "b", "i", "u", "s", "sub", "sup", "br", "hr", "figure",
        "figcaption", "section", "article", "header", "footer", "main", "aside", "div",
    }
)  # fmt: skip
_VOID = frozenset({"br", "hr"})
_DROPPED = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "iframe", "object", "embed",
     "svg", "math", "img", "video", "audio", "canvas", "form", "button", "select", "input"}
)  # fmt: skip
_SPACE = re.compile(r"\s+")


class _Aligner:
    """Finds the shown strings of a page, in order, in the extracted text."""

    WINDOW = 2000

    def __init__(self, text: str) -> None:
        self.text = text
        self.cursor = 0

    def place(self, shown: str) -> str:
        words = _SPACE.sub(" ", shown).strip()
        if not words:
            return " " if shown else ""
        pattern = r"\s+".join(re.escape(word) for word in words.split(" "))
        found = re.compile(pattern).search(self.text, self.cursor, self.cursor + self.WINDOW)
        if found is None:
            found = re.compile(pattern).search(self.text, self.cursor)
        if found is None:
            return str(escape(words))
        self.cursor = found.end()
        return run(self.text, found.start(), found.end())


def html_view(text: str, markup: str) -> Markup:
    """The original HTML reduced to an allow-list of tags without attributes; its text runs
    are aligned with the extracted text, in order."""
    from bs4 import BeautifulSoup, Tag
    from bs4.element import Comment, NavigableString

    soup = BeautifulSoup(markup, "html.parser")
    aligner = _Aligner(text)
    out: list[str] = []

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, Comment):
                continue
            if isinstance(child, NavigableString):
                out.append(aligner.place(str(child)))
            elif isinstance(child, Tag):
                name = child.name.lower()
                if name in _DROPPED:
                    continue
                if name in _KEPT:
                    out.append(f"<{name}>")
                    if name not in _VOID:
                        walk(child)
                        out.append(f"</{name}>")
                else:
                    walk(child)

    body = soup.body or soup
    walk(body)
    return Markup("".join(out))
