"""Free JSON values we store (item extras, generation settings, retrieved contexts): finite
numbers only.

JSON has no NaN or Infinity. SQLite's JSON column takes them anyway (Python writes ``NaN``)
and every later read then breaks: strict JSON encoders refuse the value, browsers cannot parse
it. PostgreSQL refuses them outright. So writes are checked (``non_finite``), and values an
earlier version stored are read back with such numbers as ``null`` (``finite``) so that the
item still opens and can be fixed.
"""

from __future__ import annotations

import math
from typing import Any


def non_finite(value: Any, path: str) -> str:
    """Where ``value`` holds NaN or an infinity (``path.key.0``), or ``""`` when nowhere."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return where
        if isinstance(node, dict):
            stack.extend((child, f"{where}.{key}") for key, child in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((child, f"{where}.{i}") for i, child in enumerate(node))
    return ""


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by ``None`` (other values unchanged)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(child) for key, child in value.items()}
    if isinstance(value, list):
        return [finite(child) for child in value]
    if isinstance(value, tuple):
        return tuple(finite(child) for child in value)
    return value
