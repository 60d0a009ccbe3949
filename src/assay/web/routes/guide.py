"""The annotator's guide: one Markdown file per language, rendered by a deliberately tiny
renderer (headings, paragraphs, lists, bold, code) that escapes everything first, so the guide
can never carry markup of its own.

A line ``[[query-types]]`` is replaced by the query types and their definitions from
``assay.gold.taxonomy``, so the guide and the editor's help texts cannot drift apart. A line
``![caption](name.jpg)`` shows the picture ``static/guide/name.jpg`` (copies of the
screenshots that ``scripts/screenshots.py`` writes, served by this server) with its caption.

Opened from a project (``/projects/{name}/guide``) the page keeps that project's menu.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup, escape

from assay.gold.taxonomy import DEFAULT_QUERY_TYPES, QueryType
from assay.web.render import language, open_project, render
from assay.web.state import workspace

router = APIRouter()
QUERY_TYPES_MARKER = "[[query-types]]"
HEADING = re.compile(r"^(#{1,3})\s+(.*)$")
BULLET = re.compile(r"^[-*]\s+(.*)$")
NUMBERED = re.compile(r"^\d+[.)]\s+(.*)$")
PICTURE = re.compile(r"^!\[([^\]]+)\]\(([a-z0-9-]+\.(?:png|jpg))\)$")
PICTURES = "/static/guide/"


def inline(text: str) -> str:
    """Escape, then turn `code` and **bold** into tags (nothing else is recognised)."""
    pieces = text.split("`")
    out: list[str] = []
    for index, piece in enumerate(pieces):
        if index % 2 and index < len(pieces) - 1:
            out.append(f"<code>{escape(piece)}</code>")
        else:
            bolded = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", str(escape(piece)))
            out.append(bolded if index % 2 == 0 else "`" + bolded)
    return "".join(out)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9äöüß]+", "-", text.lower()).strip("-") or "section"


def render_markdown(source: str, query_types_html: str = "") -> Markup:
    """Markdown subset to HTML. Every piece of source text passes through ``escape``."""
    html: list[str] = []
    paragraph: list[str] = []
    list_tag = ""

    def close_paragraph() -> None:
        if paragraph:
            html.append(f"<p>{inline(' '.join(paragraph))}</p>")
            paragraph.clear()

    def close_list() -> None:
        nonlocal list_tag
        if list_tag:
            html.append(f"</{list_tag}>")
            list_tag = ""

    for raw in source.splitlines():
        line = raw.strip()
        heading = HEADING.match(line)
        item = BULLET.match(line) or NUMBERED.match(line)
        picture = PICTURE.match(line)
        if not line:
            close_paragraph()
            close_list()
        elif line == QUERY_TYPES_MARKER:
            close_paragraph()
            close_list()
            html.append(query_types_html)
        elif picture:
            close_paragraph()
            close_list()
            html.append(figure(picture.group(1), picture.group(2)))
        elif heading:
            close_paragraph()
            close_list()
            level = len(heading.group(1)) + 1  # the page's <h1> is the title
            title = heading.group(2)
            html.append(f'<h{level} id="{escape(slug(title))}">{inline(title)}</h{level}>')
        elif item:
            close_paragraph()
            tag = "ul" if BULLET.match(line) else "ol"
            if list_tag != tag:
                close_list()
                html.append(f"<{tag}>")
                list_tag = tag
            html.append(f"<li>{inline(item.group(1))}</li>")
        elif list_tag and raw.startswith(("  ", "\t")):
            html[-1] = html[-1][: -len("</li>")] + " " + inline(line) + "</li>"
        else:
            close_list()
            paragraph.append(line)
    close_paragraph()
    close_list()
    return Markup("\n".join(html))


def figure(caption: str, name: str) -> str:
    """A picture with its caption; ``name`` matched ``PICTURE`` (a plain file name)."""
    text = escape(caption)
    return (
        f'<figure><img src="{PICTURES}{name}" alt="{text}" loading="lazy">'
        f"<figcaption>{text}</figcaption></figure>"
    )


def query_types_html(types: tuple[QueryType, ...], lang: str) -> str:
    rows = []
    for query_type in types:
        label, help_text = query_type.text(lang)
        term = f"<dt>{escape(label)} <code>{escape(query_type.id)}</code></dt>"
        rows.append(f"{term}<dd>{escape(help_text)}</dd>")
    return '<dl class="query-types">' + "".join(rows) + "</dl>"


def guide_source(lang: str) -> str:
    folder = resources.files("assay.web") / "guide"
    entry = folder / f"{lang}.md"
    if not entry.is_file():
        entry = folder / "en.md"
    return entry.read_text(encoding="utf-8")


def guide_html(lang: str) -> Markup:
    return render_markdown(guide_source(lang), query_types_html(DEFAULT_QUERY_TYPES, lang))


@router.get("/api/guide", tags=["guide"])
def api_guide(request: Request) -> Any:
    """The guide in the interface language, as HTML, with the contact note (empty when unset)."""
    lang = language(request)
    return {
        "language": lang,
        "html": str(guide_html(lang)),
        "contact_info": workspace(request).settings.contact_info,
    }


@router.get("/guide", response_class=HTMLResponse, include_in_schema=False)
def guide_page(request: Request) -> HTMLResponse:
    return render(
        request, "guide.html", project=None, section="guide", guide=guide_html(language(request))
    )


@router.get("/projects/{name}/guide", response_class=HTMLResponse, include_in_schema=False)
def project_guide_page(request: Request, name: str) -> HTMLResponse:
    """The same guide inside a project: its menu stays, so the reader can go straight back."""
    _, project = open_project(request, name)
    return render(
        request,
        "guide.html",
        project=project,
        section="guide",
        guide=guide_html(language(request)),
    )
