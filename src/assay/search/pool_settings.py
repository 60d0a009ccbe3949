"""How a project pools: which pipelines contribute, how deep, and what counts as a strong hit.

A pool (TREC's term) is the union of what several retrievers find for one question, with
passages found by more than one counted once. It is stored with the project settings under
``pool``; every field has a default, so a project without the key pools with its keyword and
dense indexes ten deep. Sources of kind ``external`` are RAG services behind the HTTP
contract of docs/evaluation.md; sources of kind ``run`` are TREC run files uploaded to the
workspace (referred to by sha256 and name, never by a path on the server).

``chat`` chooses what the conversation workbench retrieves from: the project's retriever
(empty, the default), the whole pool (``pool``), or one source by name (an external system,
say), as RAGAPHENE's create mode lets a conversation use any retriever.

``strong_coverage`` defines the *strong hit* of the unanswerable check: a pooled passage
holding at least that share of the question's words (stop words, question words and
one-letter words left out), and at least ``strong_min_words`` of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from assay.errors import InvalidInput

SourceKind = Literal["keyword", "dense", "hybrid", "external", "run"]
SOURCE_KINDS: tuple[str, ...] = ("keyword", "dense", "hybrid", "external", "run")
BUILT_IN: tuple[str, ...] = ("keyword", "dense", "hybrid")
CHAT_POOL = "pool"
"""The ``chat`` value that makes the conversation workbench retrieve from the whole pool."""


class RunFile(BaseModel):
    """A stored TREC run file (as ``assay.experiments.runfiles.FileRef`` keeps one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    name: str = Field(min_length=1, max_length=200)


class PoolSource(BaseModel):
    """One pipeline contributing to the pool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=100, pattern=r"^[\w.:+-]+$")
    kind: SourceKind = "keyword"
    endpoint: str = ""
    timeout_s: float = Field(default=30.0, gt=0, le=600)
    retries: int = Field(default=1, ge=0, le=5)
    run_file: RunFile | None = None

    @model_validator(mode="after")
    def _complete(self) -> PoolSource:
        if self.kind == "external" and not self.endpoint.startswith(("http://", "https://")):
            raise ValueError(
                f"source {self.name!r}: kind 'external' needs endpoint, an http(s) URL"
            )
        if self.kind == "run" and self.run_file is None:
            raise ValueError(f"source {self.name!r}: kind 'run' needs run_file")
        return self


def _default_sources() -> list[PoolSource]:
    return [PoolSource(name="keyword", kind="keyword"), PoolSource(name="dense", kind="dense")]


class PoolSettings(BaseModel):
    """The project's pool: sources, depth per source, and the strong-hit rule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sources: list[PoolSource] = Field(default_factory=_default_sources, min_length=1)
    depth: int = Field(default=10, ge=1, le=100, description="Passages taken from each source.")
    strong_coverage: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="Share of the question's content words a strong hit holds.",
    )
    chat: str = Field(
        default="",
        max_length=100,
        description="Where the conversation workbench retrieves from: '' for the project's "
        "retriever, 'pool' for the whole pool, or the name of one source.",
    )
    strong_min_words: int = Field(
        default=2, ge=1, le=20, description="Content words a strong hit holds at least."
    )

    @model_validator(mode="after")
    def _distinct(self) -> PoolSettings:
        names = [s.name for s in self.sources]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"source names must differ; named twice: {', '.join(twice)}")
        if self.chat not in ("", CHAT_POOL, *names):
            raise ValueError(
                f"chat {self.chat!r} is no source; choose '' (the project's retriever), "
                f"'{CHAT_POOL}' or one of: {', '.join(names)}"
            )
        return self


def source_from_name(name: str) -> PoolSource:
    """A built-in source by its kind's name (``keyword``, ``dense``, ``hybrid``)."""
    if name not in BUILT_IN:
        raise InvalidInput(
            f"unknown pool source {name!r}; built-in sources: {', '.join(BUILT_IN)} "
            "(external systems and run files need more: see docs/evaluation.md)"
        )
    return PoolSource(name=name, kind=name)  # type: ignore[arg-type]


def parse_pool_settings(values: Mapping[str, Any] | None = None) -> PoolSettings:
    """Settings from user input; InvalidInput with every problem named on error."""
    try:
        return PoolSettings.model_validate(dict(values or {}))
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'pool'}: "
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in error.errors()
        )
        raise InvalidInput(f"pool settings: {problems}") from None


def pool_settings(project_settings: Mapping[str, Any]) -> PoolSettings:
    return parse_pool_settings(project_settings.get("pool") or {})


def with_sources(
    settings: PoolSettings,
    *,
    built_in: list[str] | None = None,
    external: list[tuple[str, str]] | None = None,
    runs: list[tuple[str, RunFile]] | None = None,
    depth: int | None = None,
) -> PoolSettings:
    """The settings with their sources replaced by the ones given (when any is given) and the
    depth changed (when given); checked again as a whole."""
    data = settings.model_dump()
    if built_in or external or runs:
        data["sources"] = [
            *(source_from_name(name).model_dump() for name in built_in or ()),
            *({"name": name, "kind": "external", "endpoint": url} for name, url in external or ()),
            *(
                {"name": name, "kind": "run", "run_file": ref.model_dump()}
                for name, ref in runs or ()
            ),
        ]
        if data["chat"] not in ("", CHAT_POOL, *(s["name"] for s in data["sources"])):
            data["chat"] = ""  # the chat's source is not among the sources given
    if depth is not None:
        data["depth"] = depth
    return parse_pool_settings(data)
