"""The text the store writes its JSON columns with (the engine's ``json_serializer``)."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from pathlib import PurePath
from typing import Any

import orjson

from assay.records import record_fields


def json_text(value: Any) -> str:
    """``json.dumps(to_json(value))`` as compact text, in one pass of orjson, which writes
    records (dataclasses) and datetimes itself. The store writes its JSON columns with this,
    so an item goes into its ``create`` event as it is: the standard library's encoder took a
    seventh of an import's preparing. What orjson refuses (keys that are not strings,
    integers beyond 64 bits) goes through the standard library's encoder instead; both read
    back as the same values."""
    if value is None or (not value and type(value) in (dict, list)):
        return "null" if value is None else "{}" if type(value) is dict else "[]"
    try:
        return orjson.dumps(value, default=_json_default).decode()
    except orjson.JSONEncodeError:
        return _encoder().encode(value)


@functools.cache
def _encoder() -> json.JSONEncoder:
    return json.JSONEncoder(default=_json_default, separators=(",", ":"))


def _json_default(value: Any) -> Any:
    kind: Any = type(value)
    names = record_fields(kind)
    if names is not None:
        return {name: getattr(value, name) for name in names}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")
