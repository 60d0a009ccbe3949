"""The unanswerable check: a turn marked unanswerable while the documents hold a passage that
looks like its answer.

A turn is marked unanswerable by its query type (``unanswerable``) or, in conversations, by
its answerability enrichment (``UNANSWERABLE``). The check looks at the passages a search
found for the question (the project's pool, see :mod:`assay.experiments.pools`) and calls a
passage a *strong hit* when it holds at least ``strong_coverage`` of the question's content
words (stop words and question words such as "how many" or "wie viele" left out) and at
least ``strong_min_words`` of them (:mod:`assay.search.pool_settings`, defaults 0.8 and 2).
Word coverage is used rather than a retriever's score because BM25 scores, cosines and fused
RRF scores live on unrelated scales and an external system's scores on none at all; the
share of the question found in a passage means the same whichever pipeline found it. A
strong hit is a warning, never an error: the passage may name the topic without answering
the question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.gold.checks import Finding, content_words
from assay.gold.conversations import NO_RELEVANT, answerability
from assay.gold.taxonomy import UNANSWERABLE
from assay.records import Item, Turn

QUESTION_WORDS = frozenset(
    """how many much what when where which who whom whose why do does did can could should
    would must may might shall wie viele viel was wann wo woher wohin welche welcher welches
    wer wen wem warum wieso weshalb kann können muss müssen darf dürfen soll sollen""".split()
)
"""Words that ask rather than say what is asked about: left out of a question's words."""


def asked_words(query: str) -> set[str]:
    """The words of a question a passage would have to hold: its content words without the
    question words."""
    return content_words(query) - QUESTION_WORDS


@dataclass(frozen=True, slots=True)
class StrongHit:
    doc_id: str
    start: int
    end: int
    text: str
    coverage: float
    """Share of the question's content words the passage holds."""
    words: tuple[str, ...]
    """The question's content words found in the passage."""
    found_by: tuple[str, ...] = ()


def marked_unanswerable(turn: Turn) -> bool:
    """The turn's query type is ``unanswerable``, or its answerability enrichment says so."""
    return turn.query_type == UNANSWERABLE or bool(set(answerability(turn)) & NO_RELEVANT)


def strong_hits(
    query: str,
    passages: Sequence[Mapping[str, Any]],
    *,
    min_coverage: float,
    min_words: int,
) -> list[StrongHit]:
    """The passages (``doc_id``, ``start``, ``end``, ``text``, optional ``found_by``) that are
    strong hits for ``query``, best coverage first."""
    asked = asked_words(query)
    if len(asked) < min_words:
        return []
    found: list[StrongHit] = []
    for passage in passages:
        shared = asked & content_words(str(passage.get("text") or ""))
        coverage = len(shared) / len(asked)
        if len(shared) >= min_words and coverage >= min_coverage:
            found.append(
                StrongHit(
                    str(passage.get("doc_id") or ""),
                    int(passage.get("start") or 0),
                    int(passage.get("end") or 0),
                    str(passage.get("text") or ""),
                    round(coverage, 3),
                    tuple(sorted(shared)),
                    tuple(passage.get("found_by") or ()),
                )
            )
    return sorted(found, key=lambda hit: -hit.coverage)


def unanswerable_findings(item: Item, hits: Mapping[int, Sequence[StrongHit]]) -> list[Finding]:
    """Warnings for the item's unanswerable turns that have strong hits (``hits``: by
    1-based turn number)."""
    findings: list[Finding] = []
    for number, turn in enumerate(item.turns, 1):
        strong = hits.get(number) or ()
        if not marked_unanswerable(turn) or not strong:
            continue
        where = f"turn {number}: " if len(item.turns) > 1 else ""
        best = strong[0]
        findings.append(
            Finding(
                "warning",
                "unanswerable_strong_hit",
                f"{where}marked unanswerable, but {len(strong)} passage(s) hold most of the "
                f"question's words (best: {best.coverage:.0%} in {best.text[:80]!r})",
                number,
                "query_type",
                {"count": len(strong), "coverage": best.coverage},
            )
        )
    return findings
