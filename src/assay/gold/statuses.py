"""Which review statuses a command takes items of: one reading of every ``--status``
option (export, eval, experiments, pools, versions) and of the API's ``statuses``.

Values are status names, comma-separated or repeated, any case; ``all`` means every
status; nothing given means the reviewed gold (``accepted``). The result is always the
tuple of statuses meant (every status spelled out for ``all``), so reading it again gives
the same: no ``None`` that one function takes for "all" and the next for "the default".
"""

from __future__ import annotations

from collections.abc import Iterable

from assay.errors import InvalidInput
from assay.records import STATUSES

DEFAULT_STATUSES: tuple[str, ...] = ("accepted",)
"""What a command takes unless told otherwise: the reviewed gold."""
ALL = "all"


def parse_statuses(
    values: str | Iterable[str] | None, default: tuple[str, ...] = DEFAULT_STATUSES
) -> tuple[str, ...]:
    """The statuses ``values`` name (see the module), in :data:`STATUSES` order; unknown
    names are refused with the valid ones."""
    raw = [values] if isinstance(values, str) else list(values or ())
    names = [n.strip().lower() for value in raw for n in str(value).split(",") if n.strip()]
    if not names:
        return default
    unknown = sorted(set(names) - {*STATUSES, ALL})
    if unknown:
        raise InvalidInput(
            f"unknown item status {', '.join(map(repr, unknown))}; choose from: "
            f"{', '.join(STATUSES)}, or {ALL}"
        )
    if ALL in names:
        return tuple(STATUSES)
    return tuple(s for s in STATUSES if s in names)


def is_every_status(statuses: Iterable[str]) -> bool:
    """Whether ``statuses`` hold every status (what ``all`` gives)."""
    return set(statuses) >= set(STATUSES)


def describe(statuses: Iterable[str]) -> str:
    """``all``, or the statuses comma-separated, for messages and stored selections."""
    chosen = tuple(statuses)
    return ALL if is_every_status(chosen) else ", ".join(chosen)
