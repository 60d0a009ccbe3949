"""One entry point for callers: answer a question from passages with any generator.

LLM generators get the rendered prompt; a generator that can take the question and passages
directly (the offline extractive one) gets them as they are, so it needs no prompt parsing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from assay.errors import InvalidInput
from assay.llm.prompts import DEFAULT_TEMPLATE, render_rag_prompt
from assay.llm.records import Citation, Generation, Generator, Message

_MARKER = re.compile(r"\[(\d{1,4})\]")


@runtime_checkable
class AnswersFromPassages(Protocol):
    """A generator that takes structured input instead of a prompt."""

    def answer(
        self,
        question: str,
        passages: Sequence[tuple[str, str]],
        *,
        history: Sequence[Message] = (),
        template: str = DEFAULT_TEMPLATE,
        language: str = "en",
    ) -> Generation: ...

    def stream_answer(
        self,
        question: str,
        passages: Sequence[tuple[str, str]],
        *,
        history: Sequence[Message] = (),
        template: str = DEFAULT_TEMPLATE,
        language: str = "en",
    ) -> Iterator[str]: ...


def generate_answer(
    generator: Generator,
    question: str,
    passages: Sequence[tuple[str, str]],
    history: Sequence[Message] = (),
    template: str = DEFAULT_TEMPLATE,
    language: str = "en",
) -> Generation:
    """Answer ``question`` from ``passages`` (``(label, text)`` pairs, cited as [1], [2] …).

    For LLM answers the citations are read back from the ``[n]`` markers in the text
    (markers outside 1..len(passages) are ignored); they carry no offsets.
    """
    _check_passages(passages)
    if isinstance(generator, AnswersFromPassages):
        return generator.answer(
            question, passages, history=history, template=template, language=language
        )
    messages = render_rag_prompt(template, question, passages, history, language)
    generation = generator.generate(messages)
    return dataclasses.replace(generation, citations=cited_passages(generation.text, passages))


def stream_answer(
    generator: Generator,
    question: str,
    passages: Sequence[tuple[str, str]],
    history: Sequence[Message] = (),
    template: str = DEFAULT_TEMPLATE,
    language: str = "en",
) -> Iterator[str]:
    """Like :func:`generate_answer`, as text deltas. A broken stream raises GeneratorError
    whose ``partial_text`` is everything yielded before."""
    _check_passages(passages)
    if isinstance(generator, AnswersFromPassages):
        return generator.stream_answer(
            question, passages, history=history, template=template, language=language
        )
    messages = render_rag_prompt(template, question, passages, history, language)
    return generator.stream(messages)


def cited_passages(text: str, passages: Sequence[tuple[str, str]]) -> tuple[Citation, ...]:
    """One citation per distinct valid ``[n]`` marker in ``text``, in order of first use."""
    seen: dict[int, Citation] = {}
    for match in _MARKER.finditer(text):
        marker = int(match.group(1))
        if 1 <= marker <= len(passages) and marker not in seen:
            seen[marker] = Citation(marker, passages[marker - 1][0], marker - 1)
    return tuple(seen.values())


def _check_passages(passages: Sequence[tuple[str, str]]) -> None:
    for number, passage in enumerate(passages, start=1):
        if (
            not isinstance(passage, tuple | list)
            or len(passage) != 2
            or not all(isinstance(part, str) for part in passage)
        ):
            raise InvalidInput(
                f"passage {number} must be a (label, text) pair of strings, got {passage!r:.80}"
            )
