"""What the format modules share: typed fields, repeated ids, safe zips, parquet.

Every reader turns a problem into :class:`InvalidInput` naming the file, the record and the
field (JSON and text are checked in :mod:`assay.formats.jsontext`). Zips are read entry by
entry with limits on names, entry count, total size and compression ratio, counting the bytes
actually inflated (a lying header cannot slip by).
"""

from __future__ import annotations

import gc
import uuid
import zipfile
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from assay.errors import InvalidInput
from assay.formats import DocumentRecord, Issue
from assay.formats.jsontext import check_value, type_name

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
"""Fixed entry timestamp, so writing the same Bundle twice gives the same bytes."""


# ---------------------------------------------------------------- typed fields


def as_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: expected an object, found {type_name(value)}")
    return value


def field_str(obj: dict[str, Any], key: str, where: str, default: str = "") -> str:
    value = obj.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise InvalidInput(f"{where}: field {key!r} must be a string, found {type_name(value)}")
    return value


MAX_FIELD_INT = 2**31 - 1
"""Offsets, grades and groups are stored as 32-bit integers."""


def parse_iso(value: datetime | str | None) -> datetime | None:
    """An ISO 8601 time (``Z`` or an offset; naive means UTC) as an aware datetime; None for
    an empty or unreadable one (a file's dates are kept when they can be, never a reason to
    refuse it)."""
    if isinstance(value, datetime) or not value:
        return value or None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def iso_text(value: datetime | None) -> str:
    """A time as an ISO 8601 string in UTC; "" when unknown."""
    return value.astimezone(UTC).isoformat() if value else ""


def field_int(obj: dict[str, Any], key: str, where: str, default: int | None = None) -> int | None:
    value = obj.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{where}: field {key!r} must be an integer, found {type_name(value)}")
    if not -MAX_FIELD_INT <= value <= MAX_FIELD_INT:
        raise InvalidInput(f"{where}: field {key!r} is out of range (at most {MAX_FIELD_INT})")
    return value


def field_dict(obj: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: field {key!r} must be an object, found {type_name(value)}")
    return value


def field_list(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput(f"{where}: field {key!r} must be a list, found {type_name(value)}")
    return value


def str_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{where}: expected a list of strings")
    return list(value)


class FirstSeen:
    """Ids of one kind of record in one file, and the rule for a repeated id.

    An id appears once per file. A repeat becomes an error :class:`Issue` naming both
    places: a strict import refuses the file, a lenient one keeps the first record and
    reports the repeat as skipped. Every reader uses this, so every format behaves alike.
    """

    def __init__(self, field: str, issues: list[Issue]) -> None:
        self.field = field
        self.issues = issues
        self.places: dict[Any, str] = {}

    def first(self, key: Any, where: str) -> bool:
        """True when ``key`` is new; else records the repeat and returns False."""
        earlier = self.places.get(key)
        if earlier is None:
            self.places[key] = where
            return True
        self.issues.append(Issue(where, f"{self.field} repeats the one at {earlier}"))
        return False


def is_uuid(value: str) -> bool:
    if len(value) != 36:  # most ids a file brings are not: no exception to raise
        return False
    try:
        return str(uuid.UUID(value)) == value.lower() and len(value) == 36
    except ValueError:
        return False


def safe_name(name: str, fallback: str) -> str:
    """A file name without folders or control characters (for names inside archives)."""
    cleaned = "".join(ch for ch in name.replace("\\", "/").rsplit("/", 1)[-1] if ord(ch) >= 32)
    cleaned = cleaned.strip()
    return cleaned if cleaned not in ("", ".", "..") else fallback


def text_document(
    ref: str, label: str, fallback: str, text: str, metadata: dict[str, Any]
) -> DocumentRecord:
    """A document that is only a passage's text (BEIR, AutoRAG, InspectorRAGet): its bytes
    are the text, its name ``label`` made safe (``fallback`` when nothing is left) + .txt."""
    return DocumentRecord(
        ref=ref,
        name=safe_name(label, fallback) + ".txt",
        media_type="text/plain",
        text=text,
        data=text.encode("utf-8"),
        metadata=metadata,
    )


# ---------------------------------------------------------------- zips


@dataclass(frozen=True)
class ArchiveLimits:
    max_entries: int = 200_000
    max_total_bytes: int = 4 * 1024**3
    max_entry_bytes: int = 1024**3
    max_ratio: float = 200.0
    """Inflated / compressed size allowed for entries over ``ratio_floor`` bytes."""
    ratio_floor: int = 1024 * 1024


class SafeZip:
    """A zip opened for reading with every entry checked before anything is inflated."""

    def __init__(self, path: Path, limits: ArchiveLimits | None = None) -> None:
        self.path = path
        self.limits = limits or ArchiveLimits()
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
            raise InvalidInput(f"{path}: not a readable zip file ({exc})") from exc
        self.entries: dict[str, zipfile.ZipInfo] = {}
        total = 0
        infos = self.zip.infolist()
        if len(infos) > self.limits.max_entries:
            raise InvalidInput(f"{path}: {len(infos)} entries is over the limit")
        for info in infos:
            name = info.filename
            check_entry_name(name, path)
            if info.is_dir():
                continue
            if name in self.entries:
                raise InvalidInput(f"{path}: entry {name!r} appears twice")
            if info.file_size > self.limits.max_entry_bytes:
                raise InvalidInput(f"{path}: entry {name!r} expands to {info.file_size} bytes")
            self._check_ratio(name, info.file_size, info.compress_size)
            total += info.file_size
            if total > self.limits.max_total_bytes:
                raise InvalidInput(f"{path}: the archive expands past {total} bytes")
            self.entries[name] = info

    def _check_ratio(self, name: str, size: int, compressed: int) -> None:
        if size > self.limits.ratio_floor and size > self.limits.max_ratio * max(compressed, 1):
            raise InvalidInput(
                f"{self.path}: entry {name!r} expands {size / max(compressed, 1):.0f} times "
                f"(limit {self.limits.max_ratio:.0f}): refusing a possible zip bomb"
            )

    def has(self, name: str) -> bool:
        return name in self.entries

    def entry(self, name: str) -> zipfile.ZipInfo:
        info = self.entries.get(name)
        if info is None:
            raise InvalidInput(f"{self.path}: the archive has no file {name!r}")
        return info

    def lines(self, name: str) -> Generator[bytes, None, None]:
        """The entry's lines as they inflate (each ending at ``b"\\n"``), checked as
        :meth:`read` checks the whole entry."""
        return self._inflate(name, lines=True)

    def read(self, name: str) -> bytes:
        return b"".join(self._inflate(name, lines=False))

    def _inflate(self, name: str, *, lines: bool) -> Generator[bytes, None, None]:
        """The entry in lines or blocks of 1 MiB, refused when it inflates past its declared
        size or is damaged."""
        info = self.entry(name)
        size = 0
        try:
            with self.zip.open(info) as handle:
                for part in handle if lines else iter(lambda: handle.read(1 << 20), b""):
                    size += len(part)
                    if size > info.file_size or size > self.limits.max_entry_bytes:
                        raise InvalidInput(
                            f"{self.path}: entry {name!r} inflates past its declared size"
                        )
                    yield part
        except InvalidInput:
            raise
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
            raise InvalidInput(f"{self.path}: entry {name!r} is damaged ({exc})") from exc
        except Exception as exc:  # zlib.error and friends from a corrupt stream
            raise InvalidInput(f"{self.path}: entry {name!r} is damaged ({exc!r})") from exc

    def close(self) -> None:
        self.zip.close()

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_entry_name(name: str, path: Path) -> None:
    pure = PurePosixPath(name)
    if (
        not name
        or name.startswith(("/", "\\"))
        or "\\" in name
        or ".." in pure.parts
        or (len(name) > 1 and name[1] == ":")
        or any(ord(ch) < 32 for ch in name)
    ):
        raise InvalidInput(f"{path}: unsafe entry name {name!r} (absolute path or '..')")


@contextmanager
def fewer_collections(threshold: int = 50_000) -> Iterator[None]:
    """Run the cyclic garbage collector less often while a writer streams: an export makes
    millions of short-lived records that reference counting frees anyway, and collections
    triggered every 700 allocations cost a third of the time at a million chunks."""
    before = gc.get_threshold()
    gc.set_threshold(max(threshold, before[0]), *before[1:])
    try:
        yield
    finally:
        if gc.get_threshold()[0] == max(threshold, before[0]):
            gc.set_threshold(*before)


def zip_writer(path: Path) -> zipfile.ZipFile:
    path.parent.mkdir(parents=True, exist_ok=True)
    return zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6)


def zip_entry(name: str, level: int | None = None) -> zipfile.ZipInfo:
    """An entry with a fixed date (same project, same bytes); ``level`` is the deflate level
    (zlib's default 6 when None)."""
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    if level is not None:
        info._compresslevel = level  # type: ignore[attr-defined]  # public only from 3.13
    info.external_attr = 0o644 << 16
    return info


# ---------------------------------------------------------------- parquet


def read_parquet(path: Path) -> Any:
    """A pyarrow Table, or InvalidInput for a file that is not parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
        for column in table.schema:  # names and types decode lazily: surface their errors here
            str(column.name)
            str(column.type)
        return table
    except (pa.ArrowException, OSError, ValueError, TypeError, KeyError, IndexError) as exc:
        raise InvalidInput(f"{path}: not a readable parquet file ({exc})") from exc


def parquet_rows(
    table: Any, path: Path, required: tuple[str, ...], strings: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """The table's rows as dicts, after checking its columns (``required`` present, ``strings``
    of a string type when present) and every value (see
    :func:`~assay.formats.jsontext.check_value`)."""
    import pyarrow as pa

    names = table.schema.names
    if len(set(names)) != len(names):
        raise InvalidInput(f"{path}: a column name appears twice")
    for column in required:
        if column not in names:
            raise InvalidInput(f"{path}: column {column!r} is missing")
    for column in strings:
        kind = table.schema.field(column).type if column in names else pa.string()
        if not (
            pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind)
        ):
            raise InvalidInput(f"{path}: column {column!r} must hold strings, found {kind}")
    try:
        rows: list[dict[str, Any]] = table.to_pylist()
    except Exception as exc:  # pyarrow conversion of an exotic or damaged column
        raise InvalidInput(f"{path}: cannot read the rows ({type(exc).__name__})") from exc
    for number, row in enumerate(rows, 1):
        check_value(row, f"{path.name} row {number}")
    return rows


def require_folder(path: Path, what: str) -> None:
    if not path.is_dir():
        raise InvalidInput(f"{path}: {what} is a folder; give the folder's path")


# ---------------------------------------------------------------- vocabularies


def one_of(value: str, allowed: tuple[str, ...], key: str, where: str) -> str:
    if value not in allowed:
        raise InvalidInput(
            f"{where}: field {key!r} is {value!r}; expected one of: {', '.join(allowed)}"
        )
    return value


def sub_dict(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` when it is an object, else an empty one (for keys Assay wrote itself)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def sub_str(obj: dict[str, Any], key: str, default: str = "") -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else default
