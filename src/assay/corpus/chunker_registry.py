"""The chunking methods by name: ``recursive``, ``sentences`` and ``tokens``.

A chunking stored in a project names its method and parameters; :func:`chunk_text` applies
them, :func:`describe_chunkers` tells users (CLI, web) what each method takes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from assay.corpus.chunker_params import (
    RecursiveParams,
    SentenceParams,
    TokenParams,
    validate_params,
)
from assay.corpus.sentences import split_sentences
from assay.corpus.splitters import split_recursive, split_tokens
from assay.errors import InvalidInput
from assay.records import Span


@dataclass(frozen=True, slots=True)
class Chunker:
    """A named chunking method: its checked parameters and the function that applies them."""

    name: str
    description: str
    params: type[BaseModel]
    split: Callable[[str, Any], list[Span]]


CHUNKERS: dict[str, Chunker] = {
    "recursive": Chunker(
        "recursive",
        "Split by separators in order, packing pieces into chunks of at most max_length "
        "characters (RAGTools/LangChain recursive splitting).",
        RecursiveParams,
        split_recursive,
    ),
    "sentences": Chunker(
        "sentences",
        "Groups of consecutive sentences found by nupunkt (Punkt).",
        SentenceParams,
        split_sentences,
    ),
    "tokens": Chunker(
        "tokens",
        "Fixed windows of word tokens with a token overlap.",
        TokenParams,
        split_tokens,
    ),
}


def chunk_text(text: str, method: str, params: Mapping[str, object]) -> list[Span]:
    """Chunk ``text`` with the chunker named ``method``; raise InvalidInput on bad input."""
    chunker = CHUNKERS.get(method)
    if chunker is None:
        raise InvalidInput(
            f"unknown chunker {method!r}; choose one of: {', '.join(sorted(CHUNKERS))}"
        )
    return chunker.split(text, validate_params(method, chunker.params, params))


def describe_chunkers() -> dict[str, dict[str, Any]]:
    """Each chunker's description and parameters (type, default, bounds, description)."""
    described: dict[str, dict[str, Any]] = {}
    for name in sorted(CHUNKERS):
        chunker = CHUNKERS[name]
        schema = chunker.params.model_json_schema()
        params: dict[str, dict[str, Any]] = {}
        for field, info in schema["properties"].items():
            kept = ("type", "items", "enum", "const", "minimum", "pattern", "default")
            entry = {key: info[key] for key in kept if key in info}
            entry["description"] = info.get("description", "")
            params[field] = entry
        described[name] = {"description": chunker.description, "params": params}
    return described
