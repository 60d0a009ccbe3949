"""The offline judging page: one self-contained HTML file a judge opens from disk, works in
without a server, keeps in the browser's storage, and downloads as JSONL in
autojudge-annotate's record shapes (which ``assay import autojudge`` merges into the project).

The page is three files of ours (``offline/page.html``, ``page.css``, ``page.js``) with the
judged data embedded as JSON in a ``<script type="application/json">`` element. Text from runs
is untrusted: :func:`script_json` escapes every character that could end the element or open
markup, the script shows all text with ``textContent``, and the page's Content-Security-Policy
allows only its own inline script and style (by hash) and no network at all.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.formats.autojudge import document_json, report_json
from assay.formats.trec_rag import RunReport
from assay.gold.project_config import judging_ratings
from assay.judging.judgment_files import run_document
from assay.judging.reports import (
    Report,
    get_documents,
    get_topic,
    list_reports,
    list_topics,
    topic_doc_ids,
)
from assay.judging.units import topic_units
from assay.records import Project
from assay.store.db import reading
from assay.store.workspace import Workspace

PAGE_MODES = {"reports": "report", "documents": "document", "citations": "citation"}
"""The page's modes (autojudge-annotate's names) and the judging mode each one judges."""
PAGE_LANGUAGES = ("en", "de")

_SCRIPT_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MARKER = re.compile(r"/\*@(csp|style|script|data)\*/")


@dataclass(frozen=True, slots=True)
class OfflinePage:
    html: str
    mode: str
    """The page's mode: reports, documents or citations."""
    dataset: str
    topics: int
    units: int


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&``
    (so no ``</script>`` and no ``<!--``), no U+2028/U+2029, and lone surrogates (which UTF-8
    cannot write) as ``\\uXXXX`` escapes. These characters only occur inside JSON strings,
    where the escapes mean the same characters to ``JSON.parse``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.translate(_SCRIPT_ESCAPES)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _report_row(report: Report) -> dict[str, Any]:
    """The report as autojudge-annotate's records show it, its documents named by id (the
    page holds each document once, for every report that cites it)."""
    shown = report_json(RunReport(report.topic_id, report.run_id, report.team_id, report.sentences))
    del shown["documents"]
    return {**shown, "doc_ids": list(report.doc_ids)}


def page_payload(
    ws: Workspace,
    project: Project,
    *,
    mode: str,
    topic_ids: Sequence[str] = (),
    dataset: str,
    language: str | None = None,
    conn: sa.Connection | None = None,
) -> dict[str, Any]:
    """What the page judges: the topics (all when ``topic_ids`` is empty), their reports
    (reports and citations modes) or documents (documents mode), and the rating scale. The
    page speaks ``language``, by default the project's when the page knows it, else English."""
    if mode not in PAGE_MODES:
        raise InvalidInput(f"unknown page mode {mode!r}; choose one of: {', '.join(PAGE_MODES)}")
    if language is None:
        language = project.language if project.language in PAGE_LANGUAGES else "en"
    if language not in PAGE_LANGUAGES:
        raise InvalidInput(
            f"the offline page speaks {' and '.join(PAGE_LANGUAGES)}, not {language!r}"
        )
    if not dataset.strip():
        raise InvalidInput("the dataset label is empty; give one with --dataset")
    with reading(ws.engine, conn) as reader:
        if topic_ids:
            topics = [get_topic(ws, project, t, conn=reader) for t in dict.fromkeys(topic_ids)]
        else:
            topics = list_topics(ws, project, conn=reader)
        if not topics:
            raise InvalidInput(
                f"project {project.name!r} has no judging topics; import some with "
                "`assay judge import-runs`"
            )
        topic_rows: list[dict[str, Any]] = []
        reports: list[dict[str, Any]] = []
        doc_ids: list[str] = []
        units = 0
        for topic in topics:
            row: dict[str, Any] = {
                "request_id": topic.topic_id,
                "title": topic.title,
                "problem_statement": topic.problem_statement,
                "background": topic.background,
            }
            units += len(topic_units(ws, project, topic.topic_id, PAGE_MODES[mode], conn=reader))
            if mode == "documents":
                row["doc_ids"] = topic_doc_ids(ws, project, topic.topic_id, conn=reader)
                doc_ids += row["doc_ids"]
            else:
                for report in list_reports(ws, project, topic_id=topic.topic_id, conn=reader):
                    reports.append(_report_row(report))
                    doc_ids += report.doc_ids
            topic_rows.append(row)
        documents = get_documents(ws, project, doc_ids, conn=reader)
    if units == 0:
        names = ", ".join(repr(t.topic_id) for t in topics)
        raise InvalidInput(f"nothing to judge in {mode} mode: topics {names} have no reports")
    return {
        "project": project.name,
        "dataset": dataset,
        "mode": PAGE_MODES[mode],
        "language": language,
        "ratings": list(judging_ratings(project)),
        "topics": topic_rows,
        "reports": reports,
        "documents": {d: document_json(run_document(doc)) for d, doc in documents.items()},
        "units": units,
    }


def _asset(name: str) -> str:
    return (resources.files("assay.judging") / "offline" / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def render_page(payload: dict[str, Any]) -> str:
    """The page's HTML with ``payload`` embedded. Its policy lets only its own inline script
    and style run (by hash), loads nothing and connects nowhere."""
    style, script = _asset("page.css"), _asset("page.js")
    # our own files, inlined: a closing tag or a comment opener would change their element
    assert "</style" not in style.lower() and "</script" not in script.lower()
    assert "<!--" not in script
    csp = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
    parts = {"csp": csp, "style": style, "script": script, "data": script_json(payload)}
    # one pass: what is put in is never searched for markers again
    return _MARKER.sub(lambda m: parts[m.group(1)], _asset("page.html"))


def offline_page(
    ws: Workspace,
    project: Project,
    *,
    mode: str,
    topic_ids: Sequence[str] = (),
    dataset: str,
    language: str | None = None,
) -> OfflinePage:
    payload = page_payload(
        ws, project, mode=mode, topic_ids=topic_ids, dataset=dataset, language=language
    )
    return OfflinePage(
        render_page(payload), mode, dataset, len(payload["topics"]), payload["units"]
    )


def write_offline_page(path: Path, page: OfflinePage) -> None:
    if path.is_dir():
        raise InvalidInput(f"{path} is a folder; give the HTML file to write")
    if not path.parent.is_dir():
        raise InvalidInput(f"{path.parent} does not exist; create the folder first")
    path.write_text(page.html, encoding="utf-8")
