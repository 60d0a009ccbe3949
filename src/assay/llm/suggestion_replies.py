"""Reading a model's suggestions strictly: relevance judgments and standalone rewrites.

The prompts (:func:`assay.llm.prompts.relevance_prompt`, :func:`~assay.llm.prompts.rewrite_prompt`)
ask for one JSON object and nothing else. The reply is taken as it is: surrounding white space
and one Markdown code fence (```` ```json … ``` ````, which many models add anyway) are the
only things ignored. Anything else (prose around the object, a missing or doubled passage, an
unknown label, an empty reason) raises :class:`ReplyError` naming what is wrong, with the
start of the reply, and nothing is stored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from assay.errors import AssayError
from assay.records import LABELS

MAX_REASON_CHARS = 1000
MAX_REWRITE_CHARS = 2000
_FENCE = re.compile(r"\A```(?:json|JSON)?[ \t]*\n(?P<body>.*)\n```\Z", re.DOTALL)


class ReplyError(AssayError):
    """The model answered, but not in the form asked for."""


@dataclass(frozen=True, slots=True)
class Judgment:
    """One passage's suggested label, by its 0-based position in the prompt."""

    passage: int
    label: str
    reason: str


def _quoted(reply: str) -> str:
    text = " ".join(reply.split())
    return repr(text[:120] + ("…" if len(text) > 120 else ""))


def _json_object(reply: str, what: str) -> Any:
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    if not text:
        raise ReplyError(f"the model's {what} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplyError(
            f"the model's {what} is not one JSON object ({exc.msg} at character {exc.pos}): "
            f"{_quoted(reply)}"
        ) from None


def parse_judgments(reply: str, count: int) -> list[Judgment]:
    """One judgment per passage 1..``count``, in passage order, from ``{"judgments": [...]}``
    (a bare list of the entries is taken too). Each entry needs ``passage`` (its number),
    ``label`` (relevant, distracting or irrelevant) and a non-empty ``reason``."""
    value = _json_object(reply, "relevance reply")
    entries = value.get("judgments") if isinstance(value, dict) else value
    if not isinstance(entries, list):
        raise ReplyError('the model\'s relevance reply has no "judgments" list: ' + _quoted(reply))
    found: dict[int, Judgment] = {}
    for position, entry in enumerate(entries, start=1):
        where = f"the model's relevance reply, entry {position}"
        if not isinstance(entry, dict):
            raise ReplyError(f"{where} is not an object: {_quoted(json.dumps(entry))}")
        number = entry.get("passage")
        if isinstance(number, bool) or not isinstance(number, int):
            raise ReplyError(f'{where}: "passage" must be a passage number, got {number!r:.40}')
        if not 1 <= number <= count:
            raise ReplyError(f"{where}: there is no passage {number} (the prompt had {count})")
        if number - 1 in found:
            raise ReplyError(f"{where}: passage {number} is judged twice")
        label = entry.get("label")
        if not isinstance(label, str) or label.strip().lower() not in LABELS:
            raise ReplyError(
                f'{where}: "label" must be one of {", ".join(LABELS)}, got {label!r:.40}'
            )
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ReplyError(f'{where}: "reason" must be a short non-empty text')
        if len(reason) > MAX_REASON_CHARS:
            raise ReplyError(
                f"{where}: the reason is {len(reason)} characters long (at most {MAX_REASON_CHARS})"
            )
        found[number - 1] = Judgment(number - 1, label.strip().lower(), " ".join(reason.split()))
    missing = [str(n + 1) for n in range(count) if n not in found]
    if missing:
        raise ReplyError(
            f"the model's relevance reply does not judge passage(s) {', '.join(missing)} of {count}"
        )
    return [found[n] for n in range(count)]


def parse_rewrite(reply: str) -> str:
    """The standalone question of ``{"rewrite": "..."}``: non-empty, one paragraph."""
    value = _json_object(reply, "rewrite reply")
    rewrite = value.get("rewrite") if isinstance(value, dict) else None
    if not isinstance(rewrite, str) or not rewrite.strip():
        raise ReplyError(
            'the model\'s rewrite reply has no non-empty "rewrite" text: ' + _quoted(reply)
        )
    text = " ".join(rewrite.split())
    if len(text) > MAX_REWRITE_CHARS:
        raise ReplyError(
            f"the model's rewrite is {len(text)} characters long (at most {MAX_REWRITE_CHARS})"
        )
    return text
