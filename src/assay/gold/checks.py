"""Completeness rules for gold items (pure functions over an Item).

Drafts may be incomplete, so these rules never block a save. Errors block submitting an item;
warnings are shown and do not block. Each finding has a ``code`` and ``params`` so the web
page can show it in the annotator's language; ``message`` is the English text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.corpus.anchoring import gold_span
from assay.gold.taxonomy import UNANSWERABLE, query_types
from assay.records import Item, Project

Level = Literal["error", "warning"]

STOP_WORDS = frozenset(
    """a an and are as at be by for from has have in is it its of on or that the their this to
    was were will with der die das und ist im in den dem des ein eine einer zu mit von für auf
    nicht sich es als auch bei oder wie wird werden sind""".split()
)


@dataclass(frozen=True, slots=True)
class Finding:
    level: Level
    code: str
    message: str
    turn: int | None = None
    target: str = ""
    """The editor field the finding is about: query, answer, evidence, query_type."""
    params: dict[str, Any] = field(default_factory=dict)


def content_words(text: str) -> set[str]:
    """The words of a text that carry meaning: lower-cased, stop words and one-letter words out."""
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOP_WORDS and len(w) > 1}


def check_item(item: Item, project: Project) -> list[Finding]:
    findings: list[Finding] = []
    known_types = {q.id for q in query_types(project)}
    for n, turn in enumerate(item.turns, 1):
        where = f"turn {n}: " if len(item.turns) > 1 else ""
        if not turn.query.strip():
            findings.append(
                Finding("error", "query_required", f"{where}the question is empty", n, "query")
            )
        if not turn.answer.strip():
            findings.append(
                Finding("error", "answer_required", f"{where}the answer is empty", n, "answer")
            )
        relevant = [e for e in turn.evidence if e.label == "relevant"]
        if item.kind == "qa" and turn.query_type != UNANSWERABLE and not relevant:
            findings.append(
                Finding(
                    "error",
                    "relevant_required",
                    f"{where}mark at least one relevant passage, or choose the type 'unanswerable'",
                    n,
                    "evidence",
                )
            )
        for index, ev in enumerate(turn.evidence, 1):
            if gold_span(ev.anchor, ev.start, ev.end) is None:
                reason = (
                    "its document changed"
                    if ev.anchor == "stale"
                    else "it was not found in its document"
                )
                findings.append(
                    Finding(
                        "error",
                        f"evidence_{ev.anchor}",
                        f"{where}passage {index} needs checking: {reason}",
                        n,
                        "evidence",
                        {"index": index},
                    )
                )
        if turn.query_type not in known_types:
            findings.append(
                Finding(
                    "warning",
                    "unknown_query_type",
                    f"{where}the type {turn.query_type!r} is not in this project's list",
                    n,
                    "query_type",
                    {"type": turn.query_type},
                )
            )
        if relevant and turn.answer.strip():
            support = set().union(*(content_words(e.text) for e in relevant))
            if not content_words(turn.answer) & support:
                findings.append(
                    Finding(
                        "warning",
                        "answer_unsupported",
                        f"{where}the answer shares no words with its relevant passages",
                        n,
                        "answer",
                    )
                )
    return findings


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == "error"]
