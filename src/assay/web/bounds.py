"""Bounds for the numbers that arrive in URLs: offsets, page numbers, list positions.

Both databases take 64-bit offsets and no more; an ``offset`` of 10^29 must be a clear 422
naming the parameter, never a 500 from the database driver. No list comes near these bounds.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

MAX_OFFSET = 1_000_000_000
MAX_PAGE = 1_000_000

Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="rows to skip")]
PageNumber = Annotated[int, Query(ge=1, le=MAX_PAGE, description="page, from 1")]
Position = Annotated[int | None, Query(ge=0, le=MAX_OFFSET)]
