"""One rule for a repeated record id, in every format: a strict import refuses the file with a
message naming both places; --lenient keeps the first record and reports the repeat skipped."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.errors import InvalidInput
from assay.formats import formats, get_format
from assay.gold.item_lists import iter_items
from assay.store.projects import get_project, list_projects
from assay.store.workspace import Workspace
from assay.transfer import import_bundle
from tests.test_formats_malformed import BODY, DOC, SEEDS, SHA, zipped

ANN = "1c6b8d4f-0000-11ef-8000-000000000003"
ITEM = "8f0e6c1e-0000-4000-8000-000000000001"


def parquet(columns: dict[str, list[object]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


def lines(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def native(folder: Path) -> Path:
    first = {**SEEDS["native"][0], "notes": "first"}
    entries: dict[str, str | bytes] = {
        "manifest.json": json.dumps(SEEDS["native-manifest"][0]),
        "documents.jsonl": lines({"name": "a.txt", "sha256": SHA}),
        "chunkings.jsonl": "",
        "items.jsonl": lines(first, {**first, "notes": "second"}),
        f"files/{SHA}": BODY,
    }
    return zipped(folder / "n.zip", entries)


def ragold(folder: Path) -> Path:
    annotation = json.dumps(SEEDS["ragold"][0]["annotations"][ANN])
    first = annotation.replace('"q"', '"first"')
    text = json.dumps(SEEDS["ragold"][0]).replace(
        f'"{ANN}": {annotation}', f'"{ANN}": {first}, "{ANN}": {annotation}'
    )
    return zipped(folder / "r.zip", {"annotations.json": text, f"files/{DOC}/a.txt": BODY})


def autorag(folder: Path) -> Path:
    qa = {
        "qid": ["q1", "q1"],
        "query": ["first", "second"],
        "retrieval_gt": [[["c1"]], [["c1"]]],
        "generation_gt": [["a"], ["b"]],
    }
    (folder / "qa.parquet").write_bytes(parquet(qa))
    (folder / "corpus.parquet").write_bytes(parquet({"doc_id": ["c1"], "contents": ["Hotels"]}))
    return folder


def beir(folder: Path) -> Path:
    (folder / "queries.jsonl").write_text(
        lines({"_id": "q1", "text": "first"}, {"_id": "q1", "text": "second"})
    )
    return folder


def trec(folder: Path) -> Path:
    (folder / "topics.tsv").write_text("q1\tfirst\nq1\tsecond\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    return folder


def csv(folder: Path) -> Path:
    (folder / "items.csv").write_text("id,query\na,first\na,second\n")
    return folder / "items.csv"


def hf(folder: Path) -> Path:
    (folder / "data").mkdir()
    turns = [json.dumps([{"query": q}]) for q in ("first", "second")]
    (folder / "data" / "items.parquet").write_bytes(parquet({"id": ["a", "a"], "turns": turns}))
    return folder


def ragaphene(folder: Path) -> Path:
    conversation = {"messages": [{"speaker": "user", "text": "first"}]}
    (folder / "c.json").write_text(json.dumps([conversation, conversation]))
    return folder / "c.json"


def mtrag(folder: Path) -> Path:
    task = SEEDS["mtrag"][0]
    second = {**task, "input": [{"speaker": "user", "text": "second"}]}
    (folder / "t.jsonl").write_text(lines(task, second))
    return folder / "t.jsonl"


def inspectorraget(folder: Path) -> Path:
    data = json.loads(json.dumps(SEEDS["inspectorraget"][0]))
    second = {**data["tasks"][0], "input": [{"role": "user", "content": "second"}]}
    data["tasks"].append(second)
    (folder / "i.json").write_text(json.dumps(data))
    return folder / "i.json"


CASES: dict[str, tuple[Callable[[Path], Path], str, str]] = {
    "native": (native, "items.jsonl line 2: field 'id' repeats the one at items.jsonl line 1", "q"),
    "ragold": (
        ragold,
        "annotations entry 2 .* the id repeats the one at annotations entry 1",
        "first",
    ),
    "autorag": (
        autorag,
        "qa.parquet row 2: field 'qid' repeats the one at qa.parquet row 1",
        "first",
    ),
    "beir": (beir, "line 2: field '_id' repeats the one at queries.jsonl line 1", "first"),
    "trec": (trec, "topics.tsv line 2: field 'qid' repeats the one at topics.tsv line 1", "first"),
    "csv": (csv, "line 3: field 'id' repeats the one at items.csv line 2", "first"),
    "hf": (hf, "items.parquet row 2: field 'id' repeats the one at items.parquet row 1", "first"),
    "ragaphene": (
        ragaphene,
        "conversation 2: this conversation repeats the one at conversation 1",
        "first",
    ),
    "mtrag": (mtrag, "line 2: field 'task_id' repeats the one at line 1", "q2"),
    "inspectorraget": (
        inspectorraget,
        "tasks\\[2\\]: field 'task_id' repeats the one at tasks\\[1\\]",
        "q",
    ),
}


def test_every_format_has_a_case() -> None:
    assert set(CASES) == {n for n, s in formats().items() if not s.exports_only}


@pytest.mark.parametrize("how", ["read", "stream"])
@pytest.mark.parametrize("fmt", sorted(CASES))
def test_a_repeated_id_is_refused_or_skipped(
    fmt: str, how: str, any_ws: Workspace, tmp_path: Path
) -> None:
    """Also when the items are streamed: the repeat is found after the first was written."""
    make, message, first_query = CASES[fmt]
    folder = tmp_path / "in"
    folder.mkdir()
    path = make(folder)
    read = getattr(get_format(fmt), how)
    with pytest.raises(InvalidInput, match=message) as refused:
        import_bundle(any_ws, "dup", read(path))
    assert "nothing was imported" in str(refused.value)
    assert "dup" not in [p.name for p in list_projects(any_ws)]
    report = import_bundle(any_ws, "dup", read(path), lenient=True)
    skipped = [o for o in report.outcomes if o.status == "skipped"]
    assert len(skipped) == 1 and "repeats the one at" in skipped[0].message
    items = list(iter_items(any_ws, get_project(any_ws, "dup")))
    queries = [t.query for i in items for t in i.turns]
    assert len(items) == 1 and first_query in queries, queries
