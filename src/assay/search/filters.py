"""Metadata filters: search only documents whose metadata JSON has given values.

A filter is ``{key: value}`` (the document's ``metadata[key]`` equals the value) or
``{key: [values]}`` (it equals one of them); several keys must all match. Values compare as
text, so ``2024`` matches ``"2024"``, and ``true`` matches ``True``; a metadata value that is
a list matches when any of its elements does (tags). A document without the key never
matches. Filters written as text (forms, the CLI): ``key = value`` or ``key in a | b``, one
per line or separated by ``;``.

Searching with a filter asks the index for more hits than wanted and keeps those of matching
documents, going deeper until ``k`` are found or the index has no more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.records import Hit, Project
from assay.store.schema import documents
from assay.store.workspace import Workspace

Filters = dict[str, tuple[str, ...]]
MAX_KEYS = 20


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_filters(value: Mapping[str, Any] | str | None) -> Filters:
    """Checked filters from JSON (``{key: value | [values]}``) or text; InvalidInput names
    the key that is wrong."""
    if value is None or value == "" or value == {}:
        return {}
    if isinstance(value, str):
        value = _from_text(value)
    if not isinstance(value, Mapping):
        raise InvalidInput('filters must be an object such as {"department": ["hr", "it"]}')
    if len(value) > MAX_KEYS:
        raise InvalidInput(f"filters: at most {MAX_KEYS} keys, got {len(value)}")
    checked: Filters = {}
    for key, wanted in value.items():
        if not isinstance(key, str) or not key.strip():
            raise InvalidInput("filters: every key must be non-empty text")
        values = wanted if isinstance(wanted, list | tuple) else [wanted]
        if not values or not all(
            isinstance(v, str | int | float | bool) and _text(v).strip() for v in values
        ):
            raise InvalidInput(
                f"filters: {key!r} needs a value or a non-empty list of values "
                "(text, numbers or true/false)"
            )
        checked[key.strip()] = tuple(dict.fromkeys(_text(v).strip() for v in values))
    return checked


def _from_text(text: str) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for number, part in enumerate(text.replace(";", "\n").splitlines(), start=1):
        line = part.strip()
        if not line:
            continue
        if "=" in line:
            key, _, rest = line.partition("=")
            parsed[key.strip()] = rest.strip()
            continue
        words = line.split(None, 2)
        if len(words) == 3 and words[1].lower() == "in":
            parsed[words[0]] = [v.strip() for v in words[2].split("|") if v.strip()]
            continue
        raise InvalidInput(
            f"filters, line {number}: {line!r} is neither 'key = value' nor 'key in a | b'"
        )
    return parsed


def filters_text(filters: Mapping[str, tuple[str, ...]]) -> str:
    """The text form of checked filters (for showing them)."""
    return "; ".join(
        f"{key} = {values[0]}" if len(values) == 1 else f"{key} in {' | '.join(values)}"
        for key, values in filters.items()
    )


def matches(metadata: Mapping[str, Any], filters: Filters) -> bool:
    for key, wanted in filters.items():
        if key not in metadata:
            return False
        held = metadata[key]
        held_values = held if isinstance(held, list) else [held]
        if not any(_text(v) in wanted for v in held_values if v is not None):
            return False
    return True


def matching_documents(ws: Workspace, project: Project, filters: Filters) -> set[str]:
    """Ids of the project's documents whose metadata passes every filter."""
    with ws.engine.connect() as conn:
        rows = conn.execute(
            sa.select(documents.c.id, documents.c.metadata).where(
                documents.c.project_id == project.id
            )
        ).all()
    return {r.id for r in rows if matches(r.metadata or {}, filters)}


def filtered_search(
    search: Callable[[int], list[Hit]], allowed: set[str], k: int, start_depth: int = 100
) -> list[Hit]:
    """The best ``k`` hits of allowed documents: ``search(depth)`` is asked ever deeper
    until it has ``k`` of them or returns fewer hits than asked for (nothing more)."""
    if not allowed:
        return []
    depth = max(start_depth, k * 4)
    while True:
        hits = search(depth)
        kept = [h for h in hits if h.doc_id in allowed]
        if len(kept) >= k or len(hits) < depth:
            break
        depth *= 4
    return kept[:k]
