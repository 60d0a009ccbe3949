"""Traces as candidates: OpenInference spans as Phoenix exports them, and Langfuse traces.

**OpenInference** (one span per line, the attributes nested or flattened to dotted keys as
Phoenix's span table writes them): the spans of one trace are gathered; the root span (no
parent) gives the question (``input.value``) and the answer (``output.value``), the
``RETRIEVER`` spans give the passages (``retrieval.documents``: ``document.id``,
``document.content``, ``document.score``), ``session.id`` the conversation, and feedback
comes from an ``annotations`` list or a ``feedback`` attribute. Spans of a trace usually sit
together; at most :data:`OPEN_TRACES` traces wait for more spans, the oldest is taken as
complete when another arrives, so memory stays bounded whatever the file's length.

**Langfuse** (one trace per line, as its export writes them): ``input`` and ``output`` are the
question and answer (text, an object or chat messages), ``sessionId`` the conversation,
``scores`` the feedback, and the output of observations named like ``retrieve``/``search``
(or of type ``RETRIEVER``) the passages.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from assay.candidates.logs import (
    LineProblem,
    LogRecord,
    as_feedback,
    as_passages,
    as_text,
    as_time,
    dig,
    json_objects,
)

OPEN_TRACES = 5_000
"""Traces of an OpenInference file kept open at once, waiting for more of their spans."""

FEEDBACK_NAMES = ("feedback", "user_feedback", "user-feedback", "thumbs", "rating", "helpful")


def _value(raw: Any) -> Any:
    """An OpenInference ``input.value``: JSON text is read as JSON, other text kept."""
    if isinstance(raw, str) and raw.strip()[:1] in ("{", "["):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw


def _feedback(annotations: Any) -> int | None:
    if isinstance(annotations, Mapping):
        annotations = [annotations]
    if not isinstance(annotations, list):
        return as_feedback(annotations)
    for note in annotations:
        if not isinstance(note, Mapping):
            continue
        name = str(note.get("name") or "feedback").lower()
        if any(word in name for word in FEEDBACK_NAMES):
            result: Mapping[str, Any] = note
            if isinstance(note.get("result"), Mapping):
                result = note["result"]
            label = result.get("label") or result.get("stringValue")
            score = result.get("score", result.get("value"))
            return as_feedback(label if label not in (None, "") else score)
    return None


def read_openinference(lines: Iterable[str]) -> Iterator[LogRecord | LineProblem]:
    """Each trace of a span file as one record (see the module docstring)."""
    open_traces: OrderedDict[str, list[tuple[int, dict[str, Any]]]] = OrderedDict()
    for number, span in json_objects(lines):
        if isinstance(span, LineProblem):
            yield span
            continue
        trace = dig(span, "context.trace_id") or dig(span, "trace_id")
        if not trace:
            yield LineProblem(number, "context.trace_id", "missing: a span must name its trace")
            continue
        open_traces.setdefault(str(trace), []).append((number, span))
        open_traces.move_to_end(str(trace))
        if len(open_traces) > OPEN_TRACES:
            _, oldest = open_traces.popitem(last=False)
            yield _trace_record(oldest)
    for spans in open_traces.values():
        yield _trace_record(spans)


def _kind(span: Mapping[str, Any]) -> str:
    kind = (
        dig(span, "span_kind")
        or dig(span, "attributes.openinference.span.kind")
        or dig(span, "kind")
        or ""
    )
    return str(kind).upper()


def _trace_record(spans: list[tuple[int, dict[str, Any]]]) -> LogRecord | LineProblem:
    roots = [(n, s) for n, s in spans if not (dig(s, "parent_id") or dig(s, "parent_span_id"))]
    line, root = (roots or spans)[0]
    question = as_text(_value(dig(root, "attributes.input.value")))
    if not question:
        return LineProblem(line, "attributes.input.value", "the trace's root span has no question")
    passages = []
    for _, span in spans:
        if _kind(span) == "RETRIEVER":
            passages += as_passages(dig(span, "attributes.retrieval.documents"))
    feedback = _feedback(dig(root, "annotations"))
    if feedback is None:
        feedback = as_feedback(dig(root, "attributes.feedback"))
    return LogRecord(
        line=line,
        question=question,
        session=str(dig(root, "attributes.session.id") or "")[:200],
        answer=as_text(_value(dig(root, "attributes.output.value"))),
        passages=passages,
        feedback=feedback,
        asked_at=as_time(dig(root, "start_time")),
        extra={"trace_id": str(dig(root, "context.trace_id") or dig(root, "trace_id"))},
    )


def _retrieval(observation: Mapping[str, Any]) -> bool:
    name = str(observation.get("name") or "").lower()
    kind = str(observation.get("type") or "").upper()
    return kind == "RETRIEVER" or any(w in name for w in ("retriev", "search", "context"))


def read_langfuse(lines: Iterable[str]) -> Iterator[LogRecord | LineProblem]:
    """Each Langfuse trace of an export as one record (see the module docstring)."""
    for number, trace in json_objects(lines):
        if isinstance(trace, LineProblem):
            yield trace
            continue
        question = as_text(trace.get("input"))
        if not question:
            yield LineProblem(number, "input", "missing or empty: the trace has no question")
            continue
        passages = []
        for observation in trace.get("observations") or []:
            if isinstance(observation, Mapping) and _retrieval(observation):
                output = observation.get("output")
                if isinstance(output, Mapping):
                    output = output.get("documents") or output.get("results") or output
                passages += as_passages(output)
        yield LogRecord(
            line=number,
            question=question,
            session=str(trace.get("sessionId") or "")[:200],
            answer=as_text(trace.get("output")),
            passages=passages,
            feedback=_feedback(trace.get("scores")),
            asked_at=as_time(trace.get("timestamp")),
            extra={"trace_id": str(trace.get("id") or "")},
        )
