"""Query types and enrichment vocabularies a project offers its annotators.

Defaults follow the four question types of "Know Your RAG" (used by RAGold) and RAGAPHENE's
enrichment lists; a project can replace them in its settings (``query_types``,
``enrichments``). Labels and help texts are ours, in English and German.

Most enrichments take any number of their values (a question can be a how-to *and* a
comparison). A **single-choice** enrichment takes at most one: ``answerability`` by default,
or the names a project lists in ``enrichments_single``. Names match without regard to case.
:func:`check_single_choice` refuses an item that breaks this, on every write of an item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import InvalidInput
from assay.records import Item, Project


@dataclass(frozen=True, slots=True)
class QueryType:
    id: str
    label: dict[str, str]
    help: dict[str, str]

    def text(self, language: str) -> tuple[str, str]:
        """Label and help in ``language``, falling back to English."""
        return (
            self.label.get(language) or self.label.get("en", self.id),
            self.help.get(language) or self.help.get("en", ""),
        )


UNANSWERABLE = "unanswerable"

DEFAULT_QUERY_TYPES: tuple[QueryType, ...] = (
    QueryType(
        "fact_single",
        {"en": "Single fact", "de": "Einzelfakt"},
        {
            "en": "The documents state the answer as one piece of information.",
            "de": "Die Dokumente nennen die Antwort als eine einzelne Information.",
        },
    ),
    QueryType(
        "summary",
        {"en": "Summary", "de": "Zusammenfassung"},
        {
            "en": "The answer is in the documents but spread over several places that must be "
            "brought together.",
            "de": "Die Antwort steht in den Dokumenten, verteilt auf mehrere Stellen, die "
            "zusammengeführt werden müssen.",
        },
    ),
    QueryType(
        "reasoning",
        {"en": "Reasoning", "de": "Schlussfolgerung"},
        {
            "en": "No passage says it outright, but the answer follows from what the documents "
            "say (a calculation, applying a rule to a case).",
            "de": "Keine Stelle sagt es direkt, aber die Antwort folgt aus dem, was die "
            "Dokumente sagen (eine Rechnung, eine Regel auf einen Fall angewendet).",
        },
    ),
    QueryType(
        UNANSWERABLE,
        {"en": "Unanswerable", "de": "Unbeantwortbar"},
        {
            "en": "The documents neither state the answer nor let you derive it. The reference "
            "answer explains why.",
            "de": "Die Dokumente nennen die Antwort nicht und sie lässt sich auch nicht "
            "ableiten. Die Referenzantwort erklärt, warum.",
        },
    ),
)

DEFAULT_ENRICHMENTS: dict[str, list[str]] = {
    "answerability": ["ANSWERABLE", "PARTIAL", "UNANSWERABLE"],
    "Question Type": [
        "Factoid",
        "How-To",
        "Explanation",
        "Summarization",
        "Troubleshooting",
        "Comparative",
        "Composite",
        "Opinion",
        "Keyword",
        "Non-Question",
        "Conversational",
    ],
    "Multi-Turn": ["Clarification", "Correction", "Follow-up"],
}


def query_types(project: Project) -> tuple[QueryType, ...]:
    raw = project.settings.get("query_types")
    if not raw:
        return DEFAULT_QUERY_TYPES
    return tuple(_query_type(entry) for entry in raw)


def _query_type(entry: Any) -> QueryType:
    if isinstance(entry, str):
        return QueryType(entry, {"en": entry}, {})
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        raise InvalidInput(f"query type {entry!r} needs an 'id'")
    label = entry.get("label") or {"en": entry["id"]}
    help_text = entry.get("help") or {}
    if isinstance(label, str):
        label = {"en": label}
    if isinstance(help_text, str):
        help_text = {"en": help_text}
    return QueryType(entry["id"], dict(label), dict(help_text))


def check_query_types(entries: list[Any]) -> list[dict[str, Any]]:
    """Validate a project's query-type list before it is saved (ids unique, not empty)."""
    parsed = [_query_type(entry) for entry in entries]
    ids = [q.id.strip() for q in parsed]
    if not ids or any(not i for i in ids):
        raise InvalidInput("query types need at least one entry, each with a non-empty id")
    if len(set(ids)) != len(ids):
        raise InvalidInput("query type ids must be unique")
    return [{"id": q.id, "label": q.label, "help": q.help} for q in parsed]


def enrichment_vocabulary(project: Project) -> dict[str, list[str]]:
    raw = project.settings.get("enrichments")
    return dict(raw) if isinstance(raw, dict) and raw else dict(DEFAULT_ENRICHMENTS)


DEFAULT_SINGLE_CHOICE: tuple[str, ...] = ("answerability",)


def single_choice_enrichments(project: Project) -> list[str]:
    """Names of the project's enrichments that take at most one value."""
    raw = project.settings.get("enrichments_single")
    return list(raw) if isinstance(raw, list) else list(DEFAULT_SINGLE_CHOICE)


def check_single_choice_names(value: object) -> list[str]:
    """Validate the ``enrichments_single`` setting: a list of non-empty names."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidInput("enrichments_single: give a list of enrichment names (may be empty)")
    return list(dict.fromkeys(v.strip() for v in value))


def check_single_choice(project: Project, item: Item) -> None:
    """Refuse an item where a single-choice enrichment holds two or more values, naming the
    turn, the enrichment and the values."""
    single = {name.casefold() for name in single_choice_enrichments(project)}
    if not single:
        return
    for number, turn in enumerate(item.turns, 1):
        for name, values in turn.enrichments.items():
            chosen = list(dict.fromkeys(values))
            if name.strip().casefold() in single and len(chosen) > 1:
                shown = ", ".join(repr(v) for v in chosen)
                raise InvalidInput(
                    f"turn {number}: enrichment {name!r} takes one value, got {len(chosen)} "
                    f"({shown}); keep one of them"
                )
