"""TREC RAG topics and runs (the inputs of autojudge-annotate), read and checked line by line.

Topics are JSON Lines of requests: ``request_id`` and ``title`` required; ``problem_statement``
and ``background`` shown to judges; any other field kept as it is. Runs are JSON Lines of
reports: ``metadata`` (``team_id``, ``run_id``, and ``topic_id`` or ``narrative_id``, which
must agree when both are given), the sentences in ``responses`` or ``answer``, optional
``references`` and embedded ``documents``. A sentence cites in one of three styles, all
normalised here to doc ids in priority order:

- a list of doc ids (``["Chlorophyll", ...]``);
- an object of doc id → confidence (``{"279": 0.7}``), highest confidence first;
- a list of indices into the report's ``references``.

A report that embeds documents must embed every document it references or cites. Files may be
gzip-compressed (``.gz``); a folder is read file by file, every regular file whatever its
extension, in name order (as autojudge-annotate reads one).

Readers never stop at the first problem: they return the records they could read and an
:class:`~assay.formats.Issue` per line they could not, naming the file, the line and the
field; the caller decides whether one problem refuses the whole import.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Issue
from assay.formats.jsontext import decode_text, loads, type_name

MAX_ID = 200
"""Longest topic, run and team id the store keeps."""
MAX_DOC_ID = 500


@dataclass(frozen=True, slots=True)
class Topic:
    topic_id: str
    title: str
    problem_statement: str = ""
    background: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    where: str = ""


@dataclass(frozen=True, slots=True)
class RunDocument:
    doc_id: str
    text: str
    title: str | None = None
    url: str | None = None

    @property
    def shown_text(self) -> str:
        """The text judges select spans in: the title, a blank line, the text."""
        return f"{self.title}\n\n{self.text}" if self.title else self.text


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunReport:
    topic_id: str
    run_id: str
    team_id: str
    sentences: tuple[Sentence, ...]
    documents: dict[str, RunDocument] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    where: str = ""

    @property
    def text(self) -> str:
        """The report as one text: its sentences joined by a space (span offsets point here)."""
        return report_text([s.text for s in self.sentences])

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """Every document the report cites or embeds, first seen first."""
        cited = (doc for sentence in self.sentences for doc in sentence.citations)
        return tuple(dict.fromkeys([*cited, *self.documents]))


def report_text(sentences: Iterable[str]) -> str:
    return " ".join(sentences)


def sentence_starts(sentences: Iterable[str]) -> list[int]:
    """Where each sentence starts in :func:`report_text`."""
    starts, at = [], 0
    for text in sentences:
        starts.append(at)
        at += len(text) + 1
    return starts


class _Bad(Exception):
    """One line's problem: its message names the field."""


# ---------------------------------------------------------------- files


def input_files(path: Path) -> list[Path]:
    """A single file, or every regular, non-hidden file of a folder in name order."""
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if not path.is_file():
        raise InvalidInput(f"{path}: no such file or folder")
    return [path]


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-blank lines of a file (gunzipped when it ends in ``.gz``) and their numbers."""
    try:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidInput(f"{path}: cannot be read ({exc})") from exc
    for number, line in enumerate(decode_text(data, str(path)).splitlines(), 1):
        if line.strip():
            yield number, line


def _objects(path: Path) -> Iterator[tuple[str, dict[str, Any] | Issue]]:
    for number, line in read_lines(path):
        where = f"{path.name} line {number}"
        try:
            value = loads(line, where)
        except InvalidInput as exc:
            yield where, Issue(where, str(exc).removeprefix(f"{where}: "))
            continue
        if not isinstance(value, dict):
            yield where, Issue(where, f"expected a JSON object, found {type_name(value)}")
            continue
        yield where, value


# ---------------------------------------------------------------- topics


def read_topics(path: Path) -> tuple[list[Topic], list[Issue]]:
    """The topics of a JSON Lines file (or of every file of a folder), and the lines refused."""
    topics: list[Topic] = []
    issues: list[Issue] = []
    first: dict[str, str] = {}
    for file in input_files(path):
        for where, value in _objects(file):
            if isinstance(value, Issue):
                issues.append(value)
                continue
            try:
                topic = _topic(value, where)
            except _Bad as exc:
                issues.append(Issue(where, str(exc)))
                continue
            if topic.topic_id in first:
                issues.append(
                    Issue(where, f"topic {topic.topic_id!r} repeats {first[topic.topic_id]}")
                )
                continue
            first[topic.topic_id] = where
            topics.append(topic)
    return topics, issues


def _topic(obj: dict[str, Any], where: str) -> Topic:
    topic_id = _id(obj.get("request_id"), "request_id", MAX_ID, required=True)
    title = obj.get("title")
    if not isinstance(title, str) or not title.strip():
        raise _Bad(f"field 'title': required, a non-empty string; found {_found(title)}")
    shown = {key: _optional_str(obj.get(key), key) for key in ("problem_statement", "background")}
    extra = {k: v for k, v in obj.items() if k not in {"request_id", "title", *shown}}
    return Topic(topic_id, title, extra=extra, where=where, **shown)


# ---------------------------------------------------------------- runs


def read_runs(paths: Iterable[Path]) -> tuple[list[RunReport], list[Issue]]:
    """The reports of run files (files or folders), and the lines refused. A second report
    for the same topic and run is refused, naming the first."""
    reports: list[RunReport] = []
    issues: list[Issue] = []
    first: dict[tuple[str, str], str] = {}
    for path in paths:
        for file in input_files(path):
            for where, value in _objects(file):
                if isinstance(value, Issue):
                    issues.append(value)
                    continue
                try:
                    report = _report(value, where)
                except _Bad as exc:
                    issues.append(Issue(where, str(exc)))
                    continue
                key = (report.topic_id, report.run_id)
                if key in first:
                    issues.append(
                        Issue(
                            where,
                            f"a second report for topic {key[0]!r} and run {key[1]!r} "
                            f"(the first is at {first[key]})",
                        )
                    )
                    continue
                first[key] = where
                reports.append(report)
    return reports, issues


def _report(obj: dict[str, Any], where: str) -> RunReport:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise _Bad(f"field 'metadata': required, an object; found {_found(meta)}")
    team_id = _id(meta.get("team_id"), "metadata.team_id", MAX_ID, required=True)
    run_id = _id(meta.get("run_id"), "metadata.run_id", MAX_ID, required=True)
    topic_id = _id(meta.get("topic_id"), "metadata.topic_id", MAX_ID)
    narrative_id = _id(meta.get("narrative_id"), "metadata.narrative_id", MAX_ID)
    if topic_id and narrative_id and topic_id != narrative_id:
        raise _Bad(
            f"field 'metadata.topic_id': {topic_id!r} disagrees with "
            f"metadata.narrative_id {narrative_id!r}"
        )
    topic_id = topic_id or narrative_id
    if not topic_id:
        raise _Bad("field 'metadata.topic_id': required (or metadata.narrative_id)")
    key = "responses" if obj.get("responses") is not None else "answer"
    raw = obj.get(key)
    if not isinstance(raw, list):
        raise _Bad(f"field 'responses': required (or 'answer'), a list; found {_found(raw)}")
    references = obj.get("references") or []
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        raise _Bad("field 'references': a list of doc id strings")
    documents = _documents(obj.get("documents"))
    sentences = tuple(
        _sentence(value, f"{key}[{index}]", references) for index, value in enumerate(raw)
    )
    report = RunReport(topic_id, run_id, team_id, sentences, documents, meta, where)
    if documents:
        named = [*references, *(d for s in sentences for d in s.citations)]
        absent = [doc for doc in dict.fromkeys(named) if doc not in documents]
        if absent:
            raise _Bad(
                f"field 'documents': the report embeds documents but not {_names(absent)}, "
                "which it references or cites"
            )
    return report


def _sentence(value: Any, path: str, references: list[str]) -> Sentence:
    if not isinstance(value, dict):
        raise _Bad(f"field {path!r}: a sentence must be an object, found {type_name(value)}")
    text = value.get("text")
    if not isinstance(text, str):
        raise _Bad(f"field '{path}.text': required, a string; found {_found(text)}")
    return Sentence(text, _citations(value.get("citations"), f"{path}.citations", references))


def _citations(value: Any, path: str, references: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, dict):  # doc id -> confidence
        for doc, confidence in value.items():
            if isinstance(confidence, bool) or not isinstance(confidence, int | float):
                raise _Bad(f"field '{path}.{doc}': a confidence must be a number")
        ranked = sorted(value.items(), key=lambda pair: -pair[1])
        return tuple(_id(doc, path, MAX_DOC_ID, required=True) for doc, _ in ranked)
    if not isinstance(value, list):
        raise _Bad(f"field {path!r}: a list of doc ids, of reference indices, or an object")
    if all(isinstance(v, str) for v in value):
        return tuple(dict.fromkeys(_id(v, path, MAX_DOC_ID, required=True) for v in value))
    if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        for index in value:
            if not 0 <= index < len(references):
                raise _Bad(
                    f"field {path!r}: citation index {index} is out of range "
                    f"(the report has {len(references)} references)"
                )
        return tuple(dict.fromkeys(references[i] for i in value))
    raise _Bad(f"field {path!r}: mixes doc ids and reference indices")


def _documents(value: Any) -> dict[str, RunDocument]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Bad(f"field 'documents': an object of doc id → document; found {_found(value)}")
    found: dict[str, RunDocument] = {}
    for doc_id, doc in value.items():
        path = f"documents.{doc_id}"
        _id(doc_id, path, MAX_DOC_ID, required=True)
        if not isinstance(doc, dict):
            raise _Bad(f"field {path!r}: a document must be an object")
        text = doc.get("text")
        if not isinstance(text, str):
            raise _Bad(f"field '{path}.text': required, a string; found {_found(text)}")
        found[doc_id] = RunDocument(
            doc_id,
            text,
            _optional_str(doc.get("title"), f"{path}.title") or None,
            _optional_str(doc.get("url"), f"{path}.url") or None,
        )
    return found


# ---------------------------------------------------------------- fields


def _id(value: Any, name: str, limit: int, *, required: bool = False) -> str:
    """An id as text: TREC files write topic ids as strings or as integers."""
    if value is None or value == "":
        if required:
            raise _Bad(f"field {name!r}: required")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _Bad(f"field {name!r}: a string or an integer, found {type_name(value)}")
    text = str(value)
    if not text.strip():
        raise _Bad(f"field {name!r}: must not be blank")
    if len(text) > limit:
        raise _Bad(f"field {name!r}: longer than {limit} characters")
    return text


def _optional_str(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Bad(f"field {name!r}: a string, found {type_name(value)}")
    return value


def _found(value: Any) -> str:
    return "nothing" if value is None else type_name(value)


def _names(values: list[str], shown: int = 5) -> str:
    listed = ", ".join(repr(v) for v in values[:shown])
    return listed + (f" and {len(values) - shown} more" if len(values) > shown else "")
