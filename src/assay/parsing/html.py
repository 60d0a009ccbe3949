"""HTML: the text a reader sees, laid out in lines and paragraphs.

Scripts, styles and other invisible parts are dropped; block elements start new lines and
paragraph-like blocks are separated by a blank line, so chunkers that split on blank lines
see the same paragraphs the page shows. Table cells are joined by tabs, one row a line.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from assay.parsing.common import ParsedText, decode_text, normalize_text

# Elements whose content is never shown (title is read separately, as the first line).
_DROPPED = frozenset({"script", "style", "noscript", "template", "head", "title", "iframe"})
# Blocks that read as paragraphs: a blank line before and after.
_PARAGRAPHS = frozenset(
    {
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "ul", "ol", "dl",
        "table", "figure", "hr", "address", "section", "article", "aside", "header",
        "footer", "nav", "main", "form", "fieldset", "details", "menu",
    }
)  # fmt: skip
# Blocks that only start a new line.
_LINES = frozenset(
    {
        "html", "body", "div", "li", "dt", "dd", "tr", "caption", "figcaption", "summary",
        "legend", "option", "center", "br", "thead", "tbody", "tfoot",
    }
)  # fmt: skip
_CELLS = frozenset({"td", "th"})
_PREFORMATTED = frozenset({"pre", "textarea", "listing", "plaintext", "xmp"})
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")
# WHATWG: these labels all mean windows-1252, which differs from latin-1 in 0x80-0x9F.
_WINDOWS_1252_LABELS = frozenset(
    {"ascii", "us-ascii", "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "cp1252",
     "windows-1252", "x-cp1252", "cp819", "ibm819", "iso-ir-100", "csisolatin1"}
)  # fmt: skip
_CHARSET_DECLARATION = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)"""
    rb"""|<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""",
    re.IGNORECASE,
)
_PRESCAN_BYTES = 1024
_LEADING_XML_DECLARATIONS = re.compile(r"\A(?:\s*<\?xml[^>]*>)+")


def parse_html(name: str, data: bytes, fallback_encoding: str | None) -> ParsedText:
    """Parse a ``text/html`` file, honouring the charset the document declares."""
    from bs4 import BeautifulSoup, Tag

    declared, warnings = declared_encoding(data)
    markup, decode_warnings = decode_text(
        name, data, fallback_encoding=fallback_encoding, declared_encoding=declared
    )
    warnings.extend(decode_warnings)
    # Beautiful Soup warns (an error under pytest) about short tag-free strings that look like
    # a URL or file name, and about markup that starts like XML. Neither matters here: tag-free
    # markup is body text, and the XML declaration was already used for decoding.
    markup = _LEADING_XML_DECLARATIONS.sub("", markup)
    if "<" not in markup:
        markup = "<body>" + markup
    soup = BeautifulSoup(markup, "lxml")
    body = _visible_text(soup)
    head = soup.find("head")
    title_tag = head.find("title") if isinstance(head, Tag) else None
    title = _HTML_SPACE.sub(" ", title_tag.get_text()).strip() if title_tag is not None else ""
    text = "\n\n".join(part for part in (title, body) if part)
    return ParsedText(text=normalize_text(text), parser="html", warnings=tuple(warnings))


def declared_encoding(data: bytes) -> tuple[str | None, list[str]]:
    """Find the charset a document declares in its first 1 KB, as a Python codec name.

    Returns None for UTF-8 or no declaration (the strict UTF-8 path then applies), and a
    warning when the declared charset is unknown.
    """
    match = _CHARSET_DECLARATION.search(data[:_PRESCAN_BYTES])
    if match is None:
        return None, []
    label = (match.group(1) or match.group(2)).decode("ascii").lower()
    if label in _WINDOWS_1252_LABELS:
        return "cp1252", []
    try:
        codec = codecs.lookup(label).name
    except LookupError:
        return None, [f"the page declares an unknown charset {label!r}; read as UTF-8"]
    # A page read as bytes cannot really be UTF-16/32 without a byte order mark (WHATWG).
    if codec == "utf-8" or codec.startswith(("utf-16", "utf-32")):
        return None, []
    return codec, []


@dataclass
class _TextBuilder:
    """Collects text runs and the line breaks, spaces and tabs wanted between them."""

    parts: list[str] = field(default_factory=list)
    pending_breaks: int = 0
    pending_space: bool = False
    pending_tab: bool = False

    def request_break(self, newlines: int) -> None:
        self.pending_breaks = max(self.pending_breaks, newlines)
        self.pending_space = False

    def request_tab(self) -> None:
        self.pending_tab = True
        self.pending_space = False

    def add(self, run: str, *, preformatted: bool) -> None:
        trailing_space = False
        if not preformatted:
            run = _HTML_SPACE.sub(" ", run)
            if run.startswith(" "):
                self.pending_space = True
                run = run[1:]
            if run.endswith(" "):
                trailing_space = True
                run = run[:-1]
        if not run:
            return
        if self.parts:
            if self.pending_breaks:
                self.parts.append("\n" * self.pending_breaks)
            elif self.pending_tab:
                self.parts.append("\t")
            elif self.pending_space:
                self.parts.append(" ")
        self.parts.append(run)
        self.pending_breaks = 0
        self.pending_tab = False
        self.pending_space = trailing_space

    def text(self) -> str:
        return "".join(self.parts)


def _visible_text(soup: object) -> str:
    """Walk the tree without recursion (deeply nested garbage must not overflow the stack)."""
    from bs4 import Tag
    from bs4.element import NavigableString, PreformattedString

    builder = _TextBuilder()
    preformatted_depth = 0
    row_has_cell: list[bool] = [False]
    stack: list[tuple[object, bool]] = [(soup, False)]
    while stack:
        node, leaving = stack.pop()
        if isinstance(node, Tag):
            tag = node.name.lower()
            if leaving:
                if tag in _PREFORMATTED:
                    preformatted_depth -= 1
                if tag == "tr":
                    row_has_cell.pop()
                _request_block_break(builder, tag)
                continue
            if tag in _DROPPED or node.has_attr("hidden"):
                continue
            _request_block_break(builder, tag)
            if tag in _PREFORMATTED:
                preformatted_depth += 1
            if tag == "tr":
                row_has_cell.append(False)
            elif tag in _CELLS:
                if row_has_cell[-1]:
                    builder.request_tab()
                row_has_cell[-1] = True
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.contents))
        elif isinstance(node, NavigableString) and not isinstance(node, PreformattedString):
            builder.add(str(node), preformatted=preformatted_depth > 0)
    return builder.text()


def _request_block_break(builder: _TextBuilder, tag: str) -> None:
    if tag in _PARAGRAPHS:
        builder.request_break(2)
    elif tag in _LINES:
        builder.request_break(1)
