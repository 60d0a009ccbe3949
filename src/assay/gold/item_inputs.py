"""What an editor, an import or a generator may send to store an item, and how it is checked.

Items are :class:`assay.records.Item` everywhere; this module holds the rules for the ones
that come in from outside: only the :data:`EDITABLE` fields may be sent (the store sets id,
status, author, version and times), unknown keys are refused, and a body without turns gets
one empty turn. Drafts may be incomplete; ``assay.gold.checks`` judges completeness when an
item is submitted.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, TypeAdapter, ValidationError

from assay.errors import InvalidInput
from assay.records import Evidence, Item, to_json

Status = Literal["draft", "submitted", "accepted", "rejected"]
EDITABLE: tuple[str, ...] = ("kind", "notes", "origin", "extra", "turns")
"""The fields of an item an editor sends; the others belong to the store."""


def _editable_only(raw: Any) -> Any:
    if isinstance(raw, dict):
        for key in raw:
            if key not in EDITABLE and key in Item.__dataclass_fields__:
                raise ValueError(
                    f"field {key!r} is kept by the store and cannot be sent "
                    f"(an item body holds {', '.join(EDITABLE)})"
                )
        if "turns" not in raw:
            raw = {**raw, "turns": [{}]}
    return raw


ItemBody = Annotated[Item, BeforeValidator(_editable_only)]
"""An item as a request body: the editable fields only (a new item has one empty turn)."""


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def first_error(exc: ValidationError) -> str:
    """The first validation error as ``field 'a.b': message``."""
    error = exc.errors()[0]
    place = ".".join(str(p) for p in error.get("loc", ()))
    return f"field {place!r}: {error.get('msg', 'invalid')}"


def parse_item(raw: Any, where: str) -> Item:
    """An item body (JSON values) checked as :data:`ItemBody`; errors name ``where``."""
    item: Item = _validated(ItemBody, raw, where)
    return item


def checked_evidence(values: dict[str, Any], where: str) -> Evidence:
    """Evidence built by a reader or generator, its labels and bounds checked."""
    evidence: Evidence = _validated(Evidence, values, where)
    return evidence


def _validated(kind: Any, raw: Any, where: str) -> Any:
    """``raw`` checked as ``kind``; the first problem raised as InvalidInput naming ``where``."""
    try:
        return _adapter(kind).validate_python(raw)
    except ValidationError as exc:
        raise InvalidInput(f"{where}: {first_error(exc)}") from exc


def editable_copy(item: Item) -> Item:
    """A stored item to change and save back, sharing nothing with the original (which a
    caller keeps as the "before" of its history)."""
    return copy.deepcopy(item)


def editable_json(item: Item) -> dict[str, Any]:
    """The fields an editor sends back when saving, as JSON values."""
    return {key: to_json(getattr(item, key)) for key in EDITABLE}


def editable_fields(item: Item) -> dict[str, Any]:
    """:func:`editable_json` for a JSON column: the fields as they are (records inside), which
    the store writes as the same JSON without converting them first."""
    return {key: getattr(item, key) for key in EDITABLE}
