"""Bounds for what requests send: offsets, page numbers, list positions, and text that a
database can store.

Both databases take 64-bit offsets and no more; an ``offset`` of 10^29 must be a clear 422
naming the parameter, never a 500 from the database driver. No list comes near these bounds.
PostgreSQL refuses text holding a NUL character, even in a query's parameters: ``Storable``
text is refused (422 naming the field) before it reaches the database.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from pydantic import StringConstraints

MAX_OFFSET = 1_000_000_000
MAX_PAGE = 1_000_000

Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="rows to skip")]
PageNumber = Annotated[int, Query(ge=1, le=MAX_PAGE, description="page, from 1")]
Position = Annotated[int | None, Query(ge=0, le=MAX_OFFSET)]

Storable = Annotated[str, StringConstraints(pattern=r"^[^\x00]*$")]
"""Text without NUL characters (PostgreSQL stores none, and refuses them as parameters)."""
