"""CSV, one row per item, for spreadsheets.

Columns: ``id, kind, status, query_type, query, answer, alternatives, relevant, distracting,
notes, author, extra, turns``. ``alternatives`` is a JSON list of strings; ``relevant`` and
``distracting`` are JSON lists of passages ``{"doc", "start", "end", "text", "group",
"grade"}`` where ``doc`` is the document's name (plain text also reads: one passage per blank-
line-separated block, located on import). ``turns`` holds all turns of a conversation as JSON
and is empty for single questions. Only ``query`` is required when reading; the cells of
other columns (a spreadsheet's own) are kept in ``item.extra["columns"]`` with a warning.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, Issue, ItemSource
from assay.formats.common import (
    FirstSeen,
    as_object,
    one_of,
    str_list,
)
from assay.formats.groups import source_id
from assay.formats.jsonrec import evidence_from_json, evidence_to_json, turn_from_json, turn_to_json
from assay.formats.jsontext import json_parser, text_lines
from assay.records import KINDS, STATUSES, Evidence, Item, Turn

COLUMNS = (
    "id",
    "kind",
    "status",
    "query_type",
    "query",
    "answer",
    "alternatives",
    "relevant",
    "distracting",
    "notes",
    "author",
    "extra",
    "turns",
)
PASSAGE_KEYS = ("doc", "start", "end", "text", "group", "grade")
OTHER_COLUMNS = "columns"
"""Where a row's cells under columns Assay does not know are kept (``item.extra``)."""
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
LONE_CR = re.compile(r"(?<=\r)(?!\n)")


def guard(cell: str) -> str:
    """Stop spreadsheets from running a cell as a formula: a leading apostrophe before ``=``,
    ``+``, ``-``, ``@``, tab or carriage return (and before an apostrophe, so reading back is
    exact)."""
    return "'" + cell if cell.startswith((*FORMULA_STARTS, "'")) else cell


def unguard(cell: str) -> str:
    if cell.startswith("'") and cell[1:2] and cell[1:2] in (*FORMULA_STARTS, "'"):
        return cell[1:]
    return cell


def read(path: Path) -> Bundle:
    bundle = stream(path)
    bundle.items = list(bundle.items)
    return bundle


def stream(path: Path) -> Bundle:
    """:func:`read` with the rows read as the items are taken: the file is never held whole
    (an import of 100,000 items)."""
    issues: list[Issue] = []
    provenance = {"format": "csv", "path": str(path)}
    source = ItemSource("csv", path, path.stat().st_size) if path.is_file() else None
    return Bundle(
        items=stream_items(path, issues), provenance=provenance, issues=issues, item_source=source
    )


def stream_items(path: Path, issues: list[Issue]) -> Iterator[Item]:
    """The items of the file as they are read (see :class:`assay.formats.ItemSource`)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed when the rows end)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    with handle:
        lines = text_lines(handle, str(path), path.read_bytes)
        seen = FirstSeen("field 'id'", issues)
        parse = json_parser()
        for number, row in enumerate(_rows(_csv_lines(lines), path), 2):
            if number == 2:
                header = [h for h in row if h is not None]
                if "query" not in header:
                    found = ", ".join(header)
                    raise InvalidInput(f"{path}: column 'query' is missing (found: {found})")
                others = [h for h in header if h not in COLUMNS]
                if others:
                    issues.append(Issue(path.name, _kept_note(others), "warning"))
            where = f"{path.name} line {number}"
            if None in row:
                raise InvalidInput(f"{where}: more cells than columns")
            item = _item(row, where, number, parse)
            kept = {k: v for k, v in row.items() if k not in COLUMNS and k is not None and v}
            if kept:
                item.extra[OTHER_COLUMNS] = {**item.extra.get(OTHER_COLUMNS, {}), **kept}
            if seen.first(item.id, where):
                yield item


def _kept_note(columns: list[str]) -> str:
    return (
        f"column(s) {', '.join(repr(c) for c in columns)} are not Assay's: each row's values "
        f"are kept in its item's extra.{OTHER_COLUMNS} (written back in the 'extra' column)"
    )


def _csv_lines(lines: Iterable[str]) -> Iterator[str]:
    """Lines as a text file opened with ``newline=""`` gives them to the csv module: a lone
    carriage return ends a line too."""
    for line in lines:
        usual = line.endswith("\r\n") and line.find("\r") == len(line) - 2  # only "\r\n"
        if "\r" in line and not usual:
            yield from (part for part in LONE_CR.split(line) if part)
        else:
            yield line


def _rows(lines: Iterable[str], path: Path) -> Iterator[dict[str, str | None]]:
    reader = csv.DictReader(lines)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InvalidInput(f"{path}: malformed CSV ({exc})") from exc
        yield row


def _cell(row: dict[str, str | None], key: str) -> str:
    return unguard(row.get(key) or "")


Parse = Callable[[str, str], Any]
"""``parse(text, where)``: one JSON cell (:func:`assay.formats.jsontext.json_parser`)."""


def _json(row: dict[str, str | None], key: str, where: str, default: Any, parse: Parse) -> Any:
    raw = _cell(row, key).strip()
    return parse(raw, f"{where}, column {key!r}") if raw else default


def _passages(
    row: dict[str, str | None], key: str, label: str, where: str, parse: Parse
) -> list[Evidence]:
    raw = _cell(row, key).strip()
    if not raw:
        return []
    if not raw.startswith("["):
        return [
            Evidence(text=block.strip(), label=label, origin="imported")
            for block in raw.split("\n\n")
            if block.strip()
        ]
    value = parse(raw, f"{where}, column {key!r}")
    if not isinstance(value, list):
        raise InvalidInput(f"{where}, column {key!r}: expected a JSON list of passages")
    found = []
    for index, passage in enumerate(value, 1):
        here = f"{where}, column {key!r}, passage {index}"
        obj = as_object(passage, here)
        found.append(evidence_from_json({**obj, "label": label}, here))
    return found


def _item(row: dict[str, str | None], where: str, number: int, parse: Parse) -> Item:
    kind = one_of(_cell(row, "kind") or "qa", KINDS, "kind", where)
    extra = _json(row, "extra", where, {}, parse)
    if not isinstance(extra, dict):
        raise InvalidInput(f"{where}, column 'extra': expected a JSON object")
    turns_json = _json(row, "turns", where, [], parse)
    if not isinstance(turns_json, list):
        raise InvalidInput(f"{where}, column 'turns': expected a JSON list")
    if turns_json:
        turns = [turn_from_json(t, f"{where}, turn {i}") for i, t in enumerate(turns_json, 1)]
    else:
        turns = [
            Turn(
                query=_cell(row, "query"),
                query_type=_cell(row, "query_type") or "fact_single",
                answer=_cell(row, "answer"),
                alternatives=str_list(
                    _json(row, "alternatives", where, [], parse), f"{where}, column 'alternatives'"
                ),
                evidence=_passages(row, "relevant", "relevant", where, parse)
                + _passages(row, "distracting", "distracting", where, parse),
            )
        ]
    if kind == "qa" and len(turns) != 1:
        raise InvalidInput(f"{where}: a 'qa' item has exactly one turn")
    return Item(
        origin="imported",
        id=_cell(row, "id").strip() or f"row-{number}",
        kind=kind,
        status=one_of(_cell(row, "status") or "draft", STATUSES, "status", where),
        notes=_cell(row, "notes"),
        author=_cell(row, "author"),
        extra=extra,
        turns=turns,
    )


def write(bundle: Bundle, path: Path, **_: Any) -> list[str]:
    names = {d.ref: d.name for d in bundle.documents}

    def doc(ref: str | None) -> str | None:
        return names.get(ref, ref) if ref is not None else None

    def passages(turn: Turn, label: str) -> str:
        found = [
            {k: v for k, v in evidence_to_json(e, doc).items() if k in PASSAGE_KEYS}
            for e in turn.evidence
            if e.label == label
        ]
        return json.dumps(found, ensure_ascii=False) if found else ""

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(COLUMNS)
        for item in bundle.items:
            first = item.turns[0]
            extra = {k: v for k, v in item.extra.items() if k != "source_id"}
            conversation = len(item.turns) > 1 or item.kind == "conversation"
            row = [
                source_id(item),
                item.kind,
                item.status,
                first.query_type,
                first.query,
                first.answer,
                json.dumps(first.alternatives, ensure_ascii=False) if first.alternatives else "",
                passages(first, "relevant"),
                passages(first, "distracting"),
                item.notes,
                item.author,
                json.dumps(extra, ensure_ascii=False) if extra else "",
                json.dumps([turn_to_json(t, doc) for t in item.turns], ensure_ascii=False)
                if conversation
                else "",
            ]
            out.writerow([guard("" if cell is None else str(cell)) for cell in row])
    return []
