"""How a project retrieves contexts for a query: which index, how deep, and from which text.

``RetrieverSettings`` is stored with projects and with every generated answer (so a run can
be repeated); ``parse_retriever_settings`` turns user input into one, or raises InvalidInput
with one readable message. ``query_text`` picks the query from a conversation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.errors import InvalidInput
from assay.search.embeddings import EMBEDDERS

RetrieverKind = Literal["keyword", "dense", "hybrid"]
QueryFrom = Literal["last_turn", "all_turns", "rewrite"]
FUSED_INDEXES = ("keyword", "dense")


class RetrieverSettings(BaseModel):
    """One retriever configuration; frozen, unknown fields rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: RetrieverKind = Field(default="keyword", description="Which index answers queries.")
    k: int = Field(default=10, ge=1, le=1000, description="Contexts retrieved per query.")
    query_from: QueryFrom = Field(
        default="last_turn",
        description="The query text: the last user turn, all turns joined, or a rewrite.",
    )
    embedder: str = Field(default="minilm", description="Embedder of the dense index (by name).")
    weights: dict[str, float] = Field(
        default_factory=lambda: {"keyword": 1.0, "dense": 1.0},
        description="Hybrid only: RRF weight of each fused index (keyword, dense).",
    )
    k_rrf: int = Field(default=60, ge=0, description="Hybrid only: the RRF rank constant.")

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, name: str) -> str:
        key = name.strip().lower()
        if key not in EMBEDDERS:
            raise ValueError(
                f"unknown embedder {name!r}; choose one of: {', '.join(sorted(EMBEDDERS))}"
            )
        return key

    @field_validator("weights")
    @classmethod
    def _valid_weights(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(weights) - set(FUSED_INDEXES))
        if unknown:
            raise ValueError(
                f"unknown index {', '.join(map(repr, unknown))}; weights may name: "
                f"{', '.join(FUSED_INDEXES)}"
            )
        negative = sorted(name for name, weight in weights.items() if not weight >= 0)
        if negative:
            raise ValueError(f"the weight of {', '.join(map(repr, negative))} must be >= 0")
        return weights

    @model_validator(mode="after")
    def _hybrid_has_weight(self) -> RetrieverSettings:
        if self.kind == "hybrid" and not any(
            self.weights.get(name, 1.0) > 0 for name in FUSED_INDEXES
        ):
            raise ValueError("hybrid retrieval needs a weight above 0 for keyword or dense")
        return self

    def fusion_weights(self) -> dict[str, float]:
        """The weight of each fused index, 1.0 where none is set."""
        return {name: self.weights.get(name, 1.0) for name in FUSED_INDEXES}


def parse_retriever_settings(values: Mapping[str, Any] | None = None) -> RetrieverSettings:
    """Settings from user input (missing fields take their defaults); InvalidInput on error."""
    try:
        return RetrieverSettings.model_validate(dict(values or {}))
    except ValidationError as error:
        problems = [_explain(detail) for detail in error.errors()]
        raise InvalidInput(f"retriever settings: {'; '.join(problems)}") from None


def _explain(detail: Mapping[str, Any]) -> str:
    field = ".".join(str(part) for part in detail["loc"])
    kind = detail["type"]
    context = detail.get("ctx", {})
    if kind == "extra_forbidden":
        known = ", ".join(RetrieverSettings.model_fields)
        return f"unknown setting {field!r}; known: {known}"
    if kind == "literal_error":
        return f"{field} must be one of {context.get('expected')} (got {detail['input']!r})"
    if kind in ("greater_than_equal", "less_than_equal"):
        operator, key = (">=", "ge") if kind == "greater_than_equal" else ("<=", "le")
        return f"{field} must be {operator} {context[key]} (got {detail['input']!r})"
    if kind == "value_error":
        message = str(context.get("error", detail["msg"]))
        return f"{field}: {message}" if field else message
    return f"{field}: {detail['msg']} (got {detail['input']!r})"


def query_text(turns: Sequence[str], rewrite: str | None, query_from: QueryFrom) -> str:
    """The text to search for: the last user turn, all turns joined by newlines (oldest
    first), or the rewritten query, which must then be given."""
    if query_from == "rewrite":
        if rewrite is None or not rewrite.strip():
            raise InvalidInput(
                "query_from is 'rewrite' but no rewritten query was given; write one or "
                "choose 'last_turn' or 'all_turns'."
            )
        return rewrite.strip()
    if not turns:
        raise InvalidInput(f"query_from is {query_from!r} but the conversation has no turns.")
    if query_from == "last_turn":
        return turns[-1].strip()
    if query_from == "all_turns":
        return "\n".join(turn.strip() for turn in turns if turn.strip())
    raise InvalidInput(
        f"unknown query_from {query_from!r}; choose one of: last_turn, all_turns, rewrite"
    )
