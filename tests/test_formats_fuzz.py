"""Every reader, fuzzed: damaged and mistyped files give InvalidInput, never another error,
and an import that fails leaves the project as it was."""

from __future__ import annotations

import functools
import io
import json
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInput
from assay.formats import get_format
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.transfer import import_bundle
from tests.test_formats_malformed import SEEDS
from tests.test_transfer import counts

FUZZ = settings(
    max_examples=400,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

DOC = "0b5a7c3e-0000-11ef-8000-000000000001"
ANN = "1c6b8d4f-0000-11ef-8000-000000000003"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """A seed file damaged by truncation, overwritten or inserted bytes."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["cut", "overwrite", "insert"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "cut":
            del data[at:]
        elif kind == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=6))
            data[at : at + len(chunk)] = chunk
        else:
            data[at:at] = draw(st.binary(min_size=1, max_size=6))
    return bytes(data)


@st.composite
def json_mutated(draw: st.DrawFn, seed: Any) -> Any:
    """A JSON document with one value somewhere replaced by a random value."""

    def walk(value: Any) -> Any:
        if draw(st.integers(0, 4)) == 0:
            return draw(json_values)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(seed)


def check(read: Callable[[Path], Any], path: Path) -> None:
    try:
        bundle = read(path)
    except InvalidInput:
        return
    list(bundle.documents)
    list(bundle.items)


def zipped(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return path


RAGOLD = {
    "version": 2,
    "author": "a",
    "project": "p",
    "language": "en",
    "annotations": {
        ANN: {
            "query": "q",
            "queryType": "fact_single",
            "relevantChunks": [{"content": "Hotels", "documentId": DOC}],
            "distractingChunks": [],
            "response": "r",
        }
    },
    "documents": {DOC: {"name": "a.txt", "size": 12, "notes": ""}},
}


@FUZZ
@given(data=st.data())
def test_ragold_reader(data: st.DataObject) -> None:
    content = data.draw(json_mutated(RAGOLD))
    raw = json.dumps(content).encode()
    if data.draw(st.booleans()):
        raw = data.draw(mutated(raw))
    with tempfile.TemporaryDirectory() as tmp:
        path = zipped(
            Path(tmp) / "r.zip", {"annotations.json": raw, f"files/{DOC}/a.txt": b"Hotels cost."}
        )
        if data.draw(st.integers(0, 9)) == 0:
            path.write_bytes(data.draw(mutated(path.read_bytes())))
        check(get_format("ragold").read, path)


NATIVE_MANIFEST = {"format": "assay", "version": 1, "project": {"name": "p", "language": "en"}}
NATIVE_ITEM = {
    "id": "8f0e6c1e-0000-4000-8000-000000000001",
    "kind": "qa",
    "status": "draft",
    "turns": [
        {
            "query": "q",
            "evidence": [{"doc": "a.txt", "start": 0, "end": 6, "text": "Hotels", "group": 1}],
        }
    ],
}


@FUZZ
@given(data=st.data())
def test_native_reader(data: st.DataObject) -> None:
    import hashlib

    body = b"Hotels cost."
    sha = hashlib.sha256(body).hexdigest()
    document = {"name": "a.txt", "sha256": sha, "metadata": {}}
    entries = {
        "manifest.json": json.dumps(data.draw(json_mutated(NATIVE_MANIFEST))).encode(),
        "documents.jsonl": json.dumps(data.draw(json_mutated(document))).encode(),
        "chunkings.jsonl": b'{"name": "c", "method": "imported"}\n',
        "chunks.jsonl": b'{"chunking": "c", "chunk_id": "x", "doc": "a.txt", "start": 0, "end": 3}'
        b"\n",
        "items.jsonl": json.dumps(data.draw(json_mutated(NATIVE_ITEM))).encode(),
        f"files/{sha}": body,
    }
    victim = data.draw(st.sampled_from(sorted(entries)))
    entries[victim] = data.draw(mutated(entries[victim]))
    with tempfile.TemporaryDirectory() as tmp:
        check(get_format("native").read, zipped(Path(tmp) / "n.zip", entries))


COLUMN_ARRAYS = (
    lambda: pa.array(["a", "b"]),
    lambda: pa.array([1, 2]),
    lambda: pa.array([None, None], type=pa.string()),
    lambda: pa.array([["a"], ["b", "c"]]),
    lambda: pa.array([[["a"]], [["b"], ["c"]]]),
    lambda: pa.array([[1], [2]]),
    lambda: pa.array([{"last_modified_datetime": "2024-01-01"}, {"last_modified_datetime": "x"}]),
    lambda: pa.array([{"last_modified_datetime": 5}, None]),
    lambda: pa.array([[("k", "v")], []], type=pa.map_(pa.string(), pa.string())),
    lambda: pa.array([1.5, float("nan")]),
    lambda: pa.array(["", "   "]),
    lambda: pa.array([float("inf"), -1.0]),
    lambda: pa.array(["a\x00", "b"]),
    lambda: pa.array([2**64 - 1, 0], type=pa.uint64()),
    lambda: pa.array([b"\xff", b""], type=pa.binary()),
)


@functools.lru_cache(maxsize=4096)
def parquet_bytes(columns: tuple[tuple[str, int], ...]) -> bytes:
    """Parquet files for a choice of columns and cell types (cached: writing is the slow part)."""
    sink = io.BytesIO()
    pq.write_table(pa.table({name: COLUMN_ARRAYS[kind]() for name, kind in columns}), sink)
    return sink.getvalue()


@st.composite
def table(draw: st.DrawFn, names: tuple[str, ...]) -> bytes:
    chosen = draw(st.lists(st.sampled_from(names), unique=True, min_size=1, max_size=len(names)))
    kinds = [draw(st.integers(0, len(COLUMN_ARRAYS) - 1)) for _ in chosen]
    return parquet_bytes(tuple(zip(chosen, kinds, strict=True)))


@FUZZ
@given(data=st.data())
def test_autorag_reader(data: st.DataObject, tmp_path: Path) -> None:
    folder = tmp_path
    (folder / "qa.parquet").write_bytes(
        data.draw(table(("qid", "query", "retrieval_gt", "generation_gt", "extra")))
    )
    (folder / "corpus.parquet").write_bytes(
        data.draw(table(("doc_id", "contents", "metadata", "path")))
    )
    if data.draw(st.integers(0, 4)) == 0:
        victim = folder / data.draw(st.sampled_from(["qa.parquet", "corpus.parquet"]))
        victim.write_bytes(data.draw(mutated(victim.read_bytes())))
    check(get_format("autorag").read, folder)


@FUZZ
@given(data=st.data())
def test_hf_reader(data: st.DataObject, tmp_path: Path) -> None:
    folder = tmp_path
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data" / "items.parquet").write_bytes(
        data.draw(table(("id", "turns", "extra", "kind", "status")))
    )
    (folder / "data" / "documents.parquet").write_bytes(
        data.draw(table(("doc_id", "name", "text", "metadata")))
    )
    check(get_format("hf").read, folder)


BEIR_QUERIES = b'{"_id": "q1", "text": "hotel?"}\n{"_id": "q2", "text": "train?"}\n'
BEIR_CORPUS = b'{"_id": "c1", "title": "t", "text": "Hotels cost."}\n'
BEIR_QRELS = b"query-id\tcorpus-id\tscore\nq1\tc1\t2\nq2\tc9\t1\n"


@FUZZ
@given(data=st.data())
def test_beir_reader(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "qrels").mkdir()
        files = {
            "queries.jsonl": BEIR_QUERIES,
            "corpus.jsonl": BEIR_CORPUS,
            "qrels/test.tsv": BEIR_QRELS,
        }
        victim = data.draw(st.sampled_from(sorted(files)))
        files[victim] = data.draw(mutated(files[victim]))
        for name, content in files.items():
            (folder / name).write_bytes(content)
        check(get_format("beir").read, folder)


@FUZZ
@given(content=mutated(b"q1 0 d1 1\nq1 0 d2 0\nq2 Q0 d1 1 2.5 run\n"))
def test_trec_reader(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qrels.txt"
        path.write_bytes(content)
        check(get_format("trec").read, path)


CSV_SEED = (
    b"id,kind,status,query,answer,alternatives,relevant,extra,turns\n"
    b'a,qa,draft,q,r,"[""x""]","[{""doc"": ""a.txt"", ""text"": ""Hotels""}]","{}",\n'
)


@FUZZ
@given(content=mutated(CSV_SEED))
def test_csv_reader(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "items.csv"
        path.write_bytes(content)
        check(get_format("csv").read, path)


@FUZZ
@given(data=st.data())
def test_json_readers_with_damaged_bytes(data: st.DataObject) -> None:
    """Truncations and byte flips of valid RAGAPHENE, MTRAG and InspectorRAGet files."""
    name = data.draw(st.sampled_from(["ragaphene", "mtrag", "inspectorraget"]))
    seed, file = SEEDS[name]
    raw = json.dumps(data.draw(json_mutated(seed))).encode()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / file
        path.write_bytes(data.draw(mutated(raw)))
        check(get_format(name).read, path)


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_failed_imports_leave_the_project_unchanged(ws: Workspace, data: st.DataObject) -> None:
    if not hasattr(ws, "_fuzz_project"):
        create_project(ws, "fuzz")
        ws._fuzz_project = True  # type: ignore[attr-defined]
    before = counts(ws, "fuzz")
    content = data.draw(json_mutated(RAGOLD))
    with tempfile.TemporaryDirectory() as tmp:
        path = zipped(
            Path(tmp) / "r.zip",
            {"annotations.json": json.dumps(content).encode(), f"files/{DOC}/a.txt": b"Hotels."},
        )
        try:
            import_bundle(ws, "fuzz", get_format("ragold").read(path), replace=True)
        except InvalidInput:
            assert counts(ws, "fuzz") == before
        except Exception as exc:  # only Assay's own errors are acceptable
            from assay.errors import AssayError

            assert isinstance(exc, AssayError), repr(exc)
            assert counts(ws, "fuzz") == before


@pytest.mark.parametrize("name", ["native", "ragold", "autorag", "beir", "trec", "csv", "hf"])
def test_missing_paths_are_clear(name: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file"):
        get_format(name).read(tmp_path / "nothing")
