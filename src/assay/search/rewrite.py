"""Query rewriting through a generator, before retrieval.

``rephrase``  the generator rewrites the query as one standalone search query (earlier turns
              of a conversation are given, so "and for laptops?" becomes a whole question);
``hyde``      Hypothetical Document Embeddings (Gao et al., 2022): the generator writes a short
              passage that would answer the query, and that passage is searched for.

The rewritten query and the generator's usage are returned so a run can record them. A
reply that is empty fails the task with a message; the offline generator cannot rewrite.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.errors import InvalidInput
from assay.llm.prompts import language_name
from assay.llm.records import Generator, GeneratorError, Message

Rewrite = Literal["none", "rephrase", "hyde"]
REWRITES: tuple[str, ...] = ("none", "rephrase", "hyde")

REPHRASE = """\
Rewrite the last question of the conversation below as one standalone search query for a \
document search engine: keep every name, number and key word, resolve words like "it" or \
"that" from the earlier turns, and add nothing else. Write it in {language}.
Reply with the query only, on one line.

{history}Question: {query}
Search query:"""

HYDE = """\
Write one short passage (two to four sentences) from a document that answers the question \
below. Write it in {language}, in the plain style of a policy or handbook; invent plausible \
details if you must. Reply with the passage only.

{history}Question: {query}
Passage:"""

TEMPLATES = {"rephrase": REPHRASE, "hyde": HYDE}


class RewriteError(InvalidInput):
    """The generator could not rewrite a query (it failed, or replied with nothing)."""


@dataclass(frozen=True, slots=True)
class Rewritten:
    kind: str
    original: str
    query: str
    model: str = ""
    usage: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "original": self.original,
            "query": self.query,
            "model": self.model,
            "usage": dict(self.usage),
        }


def check_rewrite(kind: str) -> str:
    if kind not in REWRITES:
        raise InvalidInput(f"unknown rewrite {kind!r}; choose one of: {', '.join(REWRITES)}")
    return kind


def rewrite_query(
    generator: Generator,
    kind: str,
    query: str,
    history: Sequence[dict[str, str]] = (),
    language: str = "en",
) -> Rewritten:
    """The query to search for instead of ``query``; ``history`` is the chat so far."""
    check_rewrite(kind)
    if kind == "none":
        return Rewritten(kind, query, query)
    earlier = "".join(
        f"{'User' if m.get('role') == 'user' else 'Assistant'}: {m.get('content', '').strip()}\n"
        for m in history
    )
    prompt = TEMPLATES[kind].format(
        language=language_name(language),
        history=f"Conversation so far:\n{earlier}\n" if earlier else "",
        query=query.strip(),
    )
    try:
        generation = generator.generate([Message("user", prompt)])
    except (GeneratorError, InvalidInput) as exc:
        raise RewriteError(f"query rewrite ({kind}) failed: {exc}") from None
    text = generation.text.strip()
    if kind == "rephrase":
        text = next((line.strip() for line in text.splitlines() if line.strip()), "")
        text = text.strip("\"'` ")
    if not text:
        raise RewriteError(f"query rewrite ({kind}): the generator replied with no text")
    return Rewritten(kind, query, text, generation.model, dict(generation.usage))
