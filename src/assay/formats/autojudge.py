"""autojudge-annotate's judgment JSON Lines: one judged unit per line, in its three shapes.

- report: ``{dataset, request_id, run_id, team_id, topic_id, username, rating, comment,
  spans, report}``;
- document: ``{dataset, request_id, docid, topic_id, username, rating, comment, spans,
  document}``;
- citation: ``{dataset, request_id, topic_id, username, rating, comment, spans,
  report_spans, citation: {report, sentence_idx, sentence, docid, document}}``.

``report`` is the judged report as the page shows it (``{team_id, run_id, topic_id,
sentences: [{text[, citations]}], documents: {doc id: {id, text, title, url}}}``),
``request_id`` repeats ``topic_id``. Spans are ``{start, end, text[, sentence_idx]}``:
offsets into the report text (sentences joined by a space), into ``title + "\\n\\n" +
text`` of a document, and for ``report_spans`` into the sentence.

Pure: records are written from and read into plain values; the database side is
:mod:`assay.judging.judgment_files`. The reader checks each line's shape and names the
file, the line and the field of every problem; what the fields must match (known topics,
runs, documents, span texts) is for the importer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from assay.errors import InvalidInput
from assay.formats import Issue
from assay.formats.jsontext import loads, type_name
from assay.formats.trec_rag import RunDocument, RunReport, input_files, read_lines

REPORT_KEYS = (
    "dataset", "request_id", "run_id", "team_id", "topic_id", "username", "rating", "comment",
    "spans", "report",
)  # fmt: skip
DOCUMENT_KEYS = (
    "dataset", "request_id", "docid", "topic_id", "username", "rating", "comment", "spans",
    "document",
)  # fmt: skip
CITATION_KEYS = (
    "dataset", "request_id", "topic_id", "username", "rating", "comment", "spans",
    "report_spans", "citation",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Marks:
    """What a judge gave a unit: a rating, a comment and spans (``{start, end, text[,
    sentence_idx]}``; ``report_spans`` for citations only)."""

    username: str
    rating: str
    comment: str = ""
    spans: tuple[dict[str, Any], ...] = ()
    report_spans: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class JudgmentRecord:
    """One line read: the unit it judges and the marks. ``spans`` are as the line had them
    (a list); the importer checks each against the judged text."""

    mode: str
    """report, document or citation."""
    topic_id: str
    run_id: str | None
    doc_id: str | None
    sentence_idx: int | None
    marks: Marks
    dataset: str
    where: str
    """``file line N``."""
    judged_text: str | None = None
    """The text the document spans were marked in, from the document the line carries
    (``title + "\n\n" + text``); runs may embed other versions of a document."""


# ---------------------------------------------------------------- writing


def document_json(doc: RunDocument) -> dict[str, Any]:
    return {"id": doc.doc_id, "text": doc.text, "title": doc.title, "url": doc.url}


def report_json(report: RunReport) -> dict[str, Any]:
    """The report as autojudge-annotate serialises it (a sentence's ``citations`` only when it
    cites)."""
    sentences = []
    for sentence in report.sentences:
        shown: dict[str, Any] = {"text": sentence.text}
        if sentence.citations:
            shown["citations"] = list(sentence.citations)
        sentences.append(shown)
    return {
        "team_id": report.team_id,
        "run_id": report.run_id,
        "topic_id": report.topic_id,
        "sentences": sentences,
        "documents": {d: document_json(doc) for d, doc in report.documents.items()},
    }


def _head(dataset: str, topic_id: str, marks: Marks) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "request_id": topic_id,
        "topic_id": topic_id,
        "username": marks.username,
        "rating": marks.rating,
        "comment": marks.comment,
        "spans": list(marks.spans),
    }


def report_record(dataset: str, marks: Marks, report: RunReport) -> dict[str, Any]:
    head = _head(dataset, report.topic_id, marks)
    extra = {"run_id": report.run_id, "team_id": report.team_id, "report": report_json(report)}
    return {key: head[key] if key in head else extra[key] for key in REPORT_KEYS}


def document_record(
    dataset: str, marks: Marks, topic_id: str, document: RunDocument
) -> dict[str, Any]:
    head = _head(dataset, topic_id, marks)
    extra = {"docid": document.doc_id, "document": document_json(document)}
    return {key: head[key] if key in head else extra[key] for key in DOCUMENT_KEYS}


def citation_record(
    dataset: str,
    marks: Marks,
    report: RunReport,
    sentence_idx: int,
    document: RunDocument | None,
    doc_id: str | None = None,
) -> dict[str, Any]:
    """A citation's record; ``doc_id`` names a cited document the project does not hold
    (``document`` is then None), None for a sentence without citations."""
    sentence = report.sentences[sentence_idx]
    record = _head(dataset, report.topic_id, marks)
    record["report_spans"] = list(marks.report_spans)
    record["citation"] = {
        "report": report_json(report),
        "sentence_idx": sentence_idx,
        "sentence": {"text": sentence.text, "citations": list(sentence.citations)},
        "docid": document.doc_id if document is not None else doc_id,
        "document": document_json(document) if document is not None else None,
    }
    return {key: record[key] for key in CITATION_KEYS}


def write_records(records: Iterable[dict[str, Any]], out: TextIO) -> int:
    """One compact JSON object per line; returns how many were written."""
    count = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count


# ---------------------------------------------------------------- reading


class _Bad(Exception):
    """One line's problem: its message names the field."""


def read_judgments(path: Path) -> tuple[list[JudgmentRecord], list[Issue]]:
    """The records of a JSON Lines file (or of every file of a folder; gzip accepted), and an
    :class:`Issue` per line refused."""
    records: list[JudgmentRecord] = []
    issues: list[Issue] = []
    for file in input_files(path):
        for number, line in read_lines(file):
            where = f"{file.name} line {number}"
            try:
                value = loads(line, where)
            except InvalidInput as exc:
                issues.append(Issue(where, str(exc).removeprefix(f"{where}: ")))
                continue
            try:
                records.append(_record(value, where))
            except _Bad as exc:
                issues.append(Issue(where, str(exc)))
    return records, issues


def _record(value: Any, where: str) -> JudgmentRecord:
    if not isinstance(value, dict):
        raise _Bad(f"expected a JSON object, found {type_name(value)}")
    topic_id = _text(value, "topic_id", required=False) or _text(value, "request_id")
    marks = Marks(
        username=_text(value, "username", required=False),
        rating=_text(value, "rating"),
        comment=_text(value, "comment", required=False),
        spans=_spans(value, "spans"),
        report_spans=_spans(value, "report_spans"),
    )
    dataset = _text(value, "dataset", required=False)
    citation = value.get("citation")
    if citation is not None:
        if not isinstance(citation, dict):
            raise _Bad(f"field 'citation': an object, found {type_name(citation)}")
        report = citation.get("report")
        if not isinstance(report, dict):
            raise _Bad(f"field 'citation.report': required, an object; found {_found(report)}")
        run_id = _text(report, "run_id", "citation.report.run_id")
        index = citation.get("sentence_idx")
        if isinstance(index, bool) or not isinstance(index, int):
            raise _Bad(
                f"field 'citation.sentence_idx': required, an integer; found {_found(index)}"
            )
        doc_id = _text(citation, "docid", "citation.docid", required=False) or None
        shown = _shown(citation.get("document"), "citation.document")
        return JudgmentRecord(
            "citation", topic_id, run_id, doc_id, index, marks, dataset, where, shown
        )
    if marks.report_spans:
        raise _Bad("field 'report_spans': belongs to citation records only")
    if "docid" in value or "document" in value:
        doc_id = _text(value, "docid")
        shown = _shown(value.get("document"), "document")
        return JudgmentRecord(
            "document", topic_id, None, doc_id, None, marks, dataset, where, shown
        )
    if "run_id" in value or "report" in value:
        run_id = _text(value, "run_id")
        return JudgmentRecord("report", topic_id, run_id, None, None, marks, dataset, where)
    raise _Bad("not a judgment: a record has 'run_id' (report), 'docid' (document) or 'citation'")


def _shown(document: Any, name: str) -> str | None:
    """The text a judge saw of a document the line carries (None: it carries none)."""
    if not isinstance(document, dict) or not isinstance(document.get("text"), str):
        return None
    title = _text(document, "title", f"{name}.title", required=False)
    return f"{title}\n\n{document['text']}" if title else str(document["text"])


def _text(obj: dict[str, Any], key: str, name: str = "", *, required: bool = True) -> str:
    """A string field; ids may be integers in TREC files."""
    value = obj.get(key)
    name = name or key
    if value is None or value == "":
        if required:
            raise _Bad(f"field {name!r}: required")
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise _Bad(f"field {name!r}: a string, found {type_name(value)}")
    return value


def _spans(obj: dict[str, Any], key: str) -> tuple[dict[str, Any], ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _Bad(f"field {key!r}: a list of spans, found {type_name(value)}")
    for index, span in enumerate(value):
        if not isinstance(span, dict):
            raise _Bad(f"field '{key}[{index}]': a span must be an object with start, end, text")
    return tuple(value)


def _found(value: Any) -> str:
    return "nothing" if value is None else type_name(value)
