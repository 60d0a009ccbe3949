"""The checked parameters of each chunking method, and the one error message for bad ones.

Each method has a frozen pydantic model; :func:`validate_params` builds it from plain values
and turns pydantic's errors into an InvalidInput that names the method and every bad field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.errors import InvalidInput

ParamsT = TypeVar("ParamsT", bound=BaseModel)

DEFAULT_SEPARATORS: tuple[str, ...] = ("\n\n", ". ", "\n", " ")


def _check_overlap(overlap: int, limit: str, bound: int) -> None:
    """Refuse an ``overlap`` that is not below ``bound``, the parameter named ``limit``."""
    if overlap >= bound:
        raise ValueError(f"overlap must be < {limit} (got overlap={overlap}, {limit}={bound})")


class RecursiveParams(BaseModel):
    """Parameters of the ``recursive`` chunker."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_length: int = Field(1000, ge=1, description="Largest chunk, in characters.")
    overlap: int = Field(
        0,
        ge=0,
        description="Characters a chunk may repeat from the end of the previous one "
        "(< max_length); aligned to a separator when one is close enough.",
    )
    separators: tuple[str, ...] = Field(
        DEFAULT_SEPARATORS,
        description="Separators tried in order; each stays at the end of the piece it closes. "
        "Pieces still too long after the last one are cut at max_length.",
    )

    @field_validator("separators")
    @classmethod
    def _no_empty_separator(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not separator for separator in value):
            raise ValueError(
                "separators must not contain an empty string "
                "(pieces with no separator left are cut at max_length anyway)"
            )
        return value

    @model_validator(mode="after")
    def _overlap_below_length(self) -> RecursiveParams:
        _check_overlap(self.overlap, "max_length", self.max_length)
        return self


class TokenParams(BaseModel):
    """Parameters of the ``tokens`` chunker."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int = Field(256, ge=1, description="Tokens per window.")
    overlap: int = Field(32, ge=0, description="Tokens shared by neighbouring windows (< size).")
    tokenizer: Literal["words"] = Field(
        "words", description="'words': runs of word characters and single other symbols."
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> TokenParams:
        _check_overlap(self.overlap, "size", self.size)
        return self


class SentenceParams(BaseModel):
    """Parameters of the ``sentences`` chunker."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sentences: int = Field(1, ge=1, description="Sentences per chunk.")
    overlap: int = Field(
        0, ge=0, description="Sentences shared by neighbouring chunks (< sentences)."
    )
    language: str = Field(
        "en",
        pattern=r"^[a-z]{2,3}$",
        description="Language code; 'de' adds German abbreviations, others use the default model.",
    )

    @model_validator(mode="after")
    def _overlap_below_count(self) -> SentenceParams:
        _check_overlap(self.overlap, "sentences", self.sentences)
        return self


def validate_params(method: str, model: type[ParamsT], values: Mapping[str, object]) -> ParamsT:
    """Build ``model`` from ``values``; turn pydantic's errors into one readable message."""
    try:
        return model.model_validate(dict(values))
    except ValidationError as error:
        names = ", ".join(model.model_fields)
        problems = [_explain(detail, names) for detail in error.errors()]
        raise InvalidInput(f"chunker {method!r}: {'; '.join(problems)}") from None


def _explain(detail: Mapping[str, Any], names: str) -> str:
    field = ".".join(str(part) for part in detail["loc"])
    kind = detail["type"]
    context = detail.get("ctx", {})
    bounds = {
        "greater_than_equal": (">=", "ge"),
        "greater_than": (">", "gt"),
        "less_than_equal": ("<=", "le"),
        "less_than": ("<", "lt"),
    }
    if kind in bounds:
        operator, key = bounds[kind]
        return f"{field} must be {operator} {context[key]} (got {detail['input']!r})"
    if kind == "extra_forbidden":
        return f"unknown parameter {field!r}; known: {names}"
    if kind == "value_error":
        message = str(context.get("error", detail["msg"]))
        return f"{field}: {message}" if field else message
    return f"{field}: {detail['msg']} (got {detail['input']!r})"
