"""What AutoRAG's two parquet files hold, shared by the reader and the writer: the column
names and the timestamp type of ``metadata.last_modified_datetime``."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from assay.errors import InvalidInput

QA_COLUMNS = ("qid", "query", "retrieval_gt", "generation_gt")
CORPUS_COLUMNS = ("doc_id", "contents")


def to_timestamp(value: Any, where: str) -> datetime | None:
    """A timestamp or an ISO string as a naive UTC datetime (AutoRAG's timestamp[us])."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(
                f"{where}: field 'last_modified_datetime' is not an ISO date and time"
            ) from exc
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise InvalidInput(
            f"{where}: field 'last_modified_datetime' must be a timestamp or a string"
        )
    stamp: datetime = value
    if stamp.tzinfo is not None:
        try:
            stamp = stamp.astimezone(UTC).replace(tzinfo=None)
        except (OverflowError, ValueError) as exc:
            raise InvalidInput(f"{where}: field 'last_modified_datetime' is out of range") from exc
    return stamp
