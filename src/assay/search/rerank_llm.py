"""The LLM pointwise reranker: a generator rates each passage for the query on 0-10.

One request per passage (pointwise, as in the "relevance generation" prompts of the LLM
reranking literature): the prompt gives the query and one passage and asks for a single
number from 0 (unrelated) to 10 (answers the query fully). The first number in the reply is
the score; a reply with no number in range fails the query with a message that quotes it.
Usage (prompt and completion tokens) of every request is summed into the reranking's usage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from assay.errors import InvalidInput
from assay.llm.records import Generator, GeneratorError, Message
from assay.search.rerank_records import RerankError, Reranking

PROMPT = """\
Rate how well the passage answers the search query, on a scale from 0 to 10:
0 = unrelated, 5 = on the topic but does not answer, 10 = answers the query fully.
Reply with the number only.

Query: {query}

Passage:
{passage}

Rating (0-10):"""

_NUMBER = re.compile(r"(?<![\w.])(\d{1,2}(?:\.\d+)?)(?![\w])")


def parse_rating(reply: str) -> float | None:
    """The first number from 0 to 10 in a reply, else None."""
    for match in _NUMBER.finditer(reply):
        value = float(match.group(1))
        if 0 <= value <= 10:
            return value
    return None


def add_usage(total: dict[str, Any], usage: dict[str, Any]) -> None:
    """Add token counts (whole numbers only) of one request to a running total."""
    for key, value in usage.items():
        if isinstance(value, int) and not isinstance(value, bool):
            total[key] = int(total.get(key, 0)) + value


class LlmReranker:
    def __init__(self, generator: Generator, *, name: str = "LLM reranker") -> None:
        self.generator = generator
        self.name = name

    def rerank(self, query: str, documents: Sequence[str]) -> Reranking:
        scores: list[float] = []
        usage: dict[str, Any] = {}
        model = ""
        cached = bool(documents)
        for number, text in enumerate(documents):
            prompt = PROMPT.format(query=query.strip(), passage=text.strip())
            try:
                generation = self.generator.generate([Message("user", prompt)])
            except (GeneratorError, InvalidInput) as exc:
                raise RerankError(f"{self.name}: passage {number}: {exc}") from None
            add_usage(usage, generation.usage)
            cached = cached and generation.cached
            model = generation.model or model
            rating = parse_rating(generation.text)
            if rating is None:
                raise RerankError(
                    f"{self.name}: passage {number}: no rating from 0 to 10 in the reply "
                    f"{generation.text[:120]!r}"
                )
            scores.append(rating)
        if cached:  # every rating came from the response cache: nothing was billed
            usage["cached"] = True
        return Reranking(tuple(scores), usage, model)
