"""Records shared by every generator: messages, generations, citations, the protocol.

Kept apart from ``assay.llm`` so the prompt and backend modules can import them without
importing the package's factory (which imports them lazily).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from assay.errors import AssayError, InvalidInput

Role = Literal["system", "user", "assistant"]
ROLES: tuple[str, ...] = ("system", "user", "assistant")


class GeneratorError(AssayError):
    """A generator backend failed: refused request, bad reply, timeout, broken stream.

    ``partial_text`` holds what a stream delivered before it broke, so nothing the user
    already saw is lost; ``status`` is the HTTP status when there was one; ``tries`` counts
    the requests made.
    """

    def __init__(
        self,
        message: str,
        *,
        url: str = "",
        status: int | None = None,
        tries: int = 1,
        partial_text: str = "",
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.tries = tries
        self.partial_text = partial_text


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidInput(
                f"message role {self.role!r} is not valid; use one of: {', '.join(ROLES)}"
            )
        if not isinstance(self.content, str):
            raise InvalidInput(f"message content must be text, got {type(self.content).__name__}")


@dataclass(frozen=True, slots=True)
class Citation:
    """A passage an answer cites; ``marker`` is the number shown in the text as ``[marker]``.

    ``passage`` is the 0-based index into the passages given. ``start``/``end`` are the
    character offsets of the quoted sentence in that passage's text when the generator knows
    them (the offline generator does), else None.
    """

    marker: int
    label: str
    passage: int
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True, slots=True)
class Generation:
    """One answer and what is needed to tell how it was made (stored with suggestions)."""

    text: str
    model: str
    prompt_hash: str
    params: dict[str, Any]
    usage: dict[str, Any] = field(default_factory=dict)
    finish_reason: str = ""
    citations: tuple[Citation, ...] = ()
    cached: bool = False
    """Answered from the workspace's response cache: no request was made, nothing billed."""


class Generator(Protocol):
    """A chat model: ``generate`` returns the whole answer, ``stream`` yields text deltas.

    A stream that fails raises :class:`GeneratorError` with ``partial_text`` set to the
    text already yielded.
    """

    def generate(self, messages: Sequence[Message]) -> Generation: ...

    def stream(self, messages: Sequence[Message]) -> Iterator[str]: ...


def prompt_hash(messages: Sequence[Message]) -> str:
    """sha256 of the messages as canonical JSON: equal prompts, equal hashes, any backend."""
    payload = [{"role": m.role, "content": m.content} for m in messages]
    canonical = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
