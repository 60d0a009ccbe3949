"""Every reader, fed each kind of malformed input found by the outside attack (issue 9): the
answer is a Bundle whose every value the store can keep, or InvalidInput naming the file and
the place; never another error. The CLI says so in one line, without a traceback."""

from __future__ import annotations

import hashlib
import io
import json
import re
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import InvalidInput
from assay.formats import Bundle, get_format

KINDS = {
    "huge integer": "9" * 5000,
    "integer past 64 bits": "-99999999999999999999",
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "float overflow": "1e999",
    "lone surrogate": '"a\\ud800b"',
    "lone low surrogate": '"\\udfff"',
    "NUL": '"a\\u0000b"',
    "deep nesting": "[" * 5000 + "]" * 5000,
    "nesting past the bound": "[" * 70 + "]" * 70,
}
"""Kinds every JSON reader refuses wherever they appear (MTRAG reads NaN as null)."""
WRONG_TYPES = ("{}", "[1]", '[{"a": 1}]', "5", "-7", "2.5", '"x"', '""', "true", "null")
"""Values of the wrong type (or not): a Bundle or InvalidInput, whichever fits."""

DOC = "0b5a7c3e-0000-11ef-8000-000000000001"
ANN = "1c6b8d4f-0000-11ef-8000-000000000003"
BODY = b"Hotels cost 120 euros."
SHA = hashlib.sha256(BODY).hexdigest()
MARK = '"@@"'
NAMES_A_FILE = re.compile(r"\w\.(jsonl|json|tsv|txt|csv|parquet|zip)\b")

SEEDS: dict[str, tuple[Any, str]] = {
    "ragold": (
        {
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
            "documents": {DOC: {"name": "a.txt", "size": 22, "notes": ""}},
        },
        "annotations.json",
    ),
    "native": (
        {
            "id": "8f0e6c1e-0000-4000-8000-000000000001",
            "kind": "qa",
            "extra": {"x": [1]},
            "turns": [
                {
                    "query": "q",
                    "enrichments": {"k": ["v"]},
                    "retrieved": [{"doc_id": "a", "score": 1.5}],
                    "alternatives": ["b"],
                    "evidence": [{"doc": "a.txt", "start": 0, "end": 6, "text": "Hotels"}],
                }
            ],
        },
        "items.jsonl",
    ),
    "native-manifest": (
        {"format": "assay", "version": 1, "project": {"name": "p", "settings": {}}, "extra": {}},
        "manifest.json",
    ),
    "beir": ({"_id": "q1", "text": "hotel?", "meta": {"k": 1}}, "queries.jsonl"),
    "beir-corpus": ({"_id": "c1", "title": "t", "text": "Hotels cost."}, "corpus.jsonl"),
    "ragaphene": (
        {
            "schema_version": 2,
            "author": "a",
            "retriever": {"settings": {"query_syntax": {"a": 1}}},
            "messages": [
                {"speaker": "user", "text": "q", "timestamp": 1, "enrichments": {"t": ["x"]}},
                {
                    "speaker": "agent",
                    "text": "a",
                    "alternatives": [{"text": "c"}],
                    "contexts": [
                        {
                            "document_id": "d1",
                            "text": "Hotels",
                            "score": 1.5,
                            "feedback": {"relevant": {"u": {"value": "yes", "timestamp": 3}}},
                        }
                    ],
                },
            ],
            "status": "reviewed",
            "status_history": [{"author": "u", "status": "accepted", "timestamp": 4}],
        },
        "c.json",
    ),
    "mtrag": (
        {
            "conversation_id": "c",
            "task_id": "c::2",
            "turn": "2",
            "Collection": "x",
            "contexts": [{"document_id": "d1", "text": "Hotels", "score": 2.5}],
            "input": [
                {"speaker": "user", "text": "q", "metadata": {"author_id": "u"}},
                {"speaker": "agent", "text": "a"},
                {"speaker": "user", "text": "q2"},
            ],
            "targets": [{"speaker": "agent", "text": "t"}],
            "answerability": ["ANSWERABLE"],
        },
        "t.jsonl",
    ),
    "inspectorraget": (
        {
            "schema_version": 2,
            "models": [{"model_id": "m", "name": "m", "owner": "o"}],
            "metrics": [
                {
                    "name": "x",
                    "author": "human",
                    "type": "categorical",
                    "values": [{"value": "a", "numeric_value": 1}],
                }
            ],
            "documents": [{"document_id": "d", "text": "Hotels"}],
            "tasks": [
                {
                    "task_id": "t",
                    "task_type": "qa",
                    "input": [{"role": "user", "content": "q"}],
                    "contexts": [{"document_id": "d"}],
                    "targets": [{"type": "text", "value": "a"}],
                }
            ],
            "results": [
                {"task_id": "t", "model_id": "m", "scores": {"x": {"system": {"value": "a"}}}}
            ],
        },
        "i.json",
    ),
    "csv": ([{"doc": "a.txt", "start": 0, "end": 6, "text": "Hotels", "group": 1}], "items.csv"),
}


def templates(seed: Any) -> list[str]:
    """The seed as JSON once per value in it, that value replaced by the marker."""
    found: list[str] = []

    def walk(value: Any, put: Callable[[Any], None], root: list[Any]) -> None:
        put("@@")
        found.append(json.dumps(root[0]))
        put(value)
        if isinstance(value, dict | list):
            children = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in list(children):
                walk(child, lambda new, c=value, k=key: c.__setitem__(k, new), root)

    root = [json.loads(json.dumps(seed))]
    walk(root[0], lambda new: root.__setitem__(0, new), root)
    return found


TEMPLATES = {name: templates(seed) for name, (seed, _) in SEEDS.items()}
TEMPLATES["csv"].remove(MARK)  # a cell that is not a JSON list is read as plain text


def write(name: str, text: str, folder: Path) -> tuple[str, Path]:
    """The file (or folder) for one seed with ``text`` in its place: ``(format, path)``."""
    entry = SEEDS[name][1]
    if name == "ragold":
        return "ragold", zipped(folder / "r.zip", {entry: text, f"files/{DOC}/a.txt": BODY})
    if name.startswith("native"):
        entries: dict[str, str | bytes] = {
            "manifest.json": json.dumps(SEEDS["native-manifest"][0]),
            "documents.jsonl": json.dumps({"name": "a.txt", "sha256": SHA}),
            "chunkings.jsonl": '{"name": "c", "method": "imported"}',
            "items.jsonl": json.dumps(SEEDS["native"][0]),
            f"files/{SHA}": BODY,
            entry: text,
        }
        return "native", zipped(folder / "n.zip", entries)
    if name.startswith("beir"):
        files = {
            "queries.jsonl": '{"_id": "q1", "text": "hotel?"}',
            "corpus.jsonl": "",
            entry: text,
        }
        (folder / "qrels").mkdir(exist_ok=True)
        (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tc1\t2\n")
        for file, content in files.items():
            (folder / file).write_text(content, encoding="utf-8")
        return "beir", folder
    if name == "csv":
        cell = '"' + text.replace('"', '""') + '"'
        (folder / entry).write_text(f"id,query,relevant\na,q,{cell}\n", encoding="utf-8")
        return "csv", folder / entry
    (folder / entry).write_text(text, encoding="utf-8")
    return name, folder / entry


def zipped(path: Path, entries: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return path


def assert_storable(bundle: Bundle) -> None:
    """Every value a reader hands over can be stored: finite numbers, integers within 64
    bits, text that is valid Unicode without NUL (checked independently of the readers)."""
    records = [asdict(d) | {"load": None} for d in bundle.documents]
    records += [asdict(i) for i in bundle.items]
    records += [{"extra": bundle.extra, "project": asdict(bundle.project)}]
    for chunking in bundle.chunkings:
        records += [asdict(c) for c in chunking.chunks]
    for record in records:
        record.pop("data", None)
        text = json.dumps(record, allow_nan=False, ensure_ascii=False, default=str)
        text.encode("utf-8")  # a lone surrogate raises here
        assert "\\u0000" not in text
        assert not re.search(r"(?<![\w.])-?\d{20,}", text)


def read(fmt: str, path: Path) -> Bundle | None:
    """The Bundle, or None when the reader refused with InvalidInput naming the file."""
    try:
        bundle = get_format(fmt).read(path)
    except InvalidInput as exc:
        assert path.name in str(exc) or NAMES_A_FILE.search(str(exc)), str(exc)
        return None
    assert_storable(bundle)
    return bundle


CORPUS = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("name", sorted(SEEDS))
@CORPUS
@given(data=st.data())
def test_refused_kinds_are_clear_errors(name: str, data: st.DataObject) -> None:
    template = data.draw(st.sampled_from(TEMPLATES[name]), label="where")
    kind = data.draw(st.sampled_from(sorted(KINDS)), label="kind")
    with tempfile.TemporaryDirectory() as folder:
        fmt, path = write(name, template.replace(MARK, KINDS[kind]), Path(folder))
        bundle = read(fmt, path)
    if not (fmt == "mtrag" and kind == "NaN"):
        assert bundle is None, f"{kind} was accepted"


@pytest.mark.parametrize("name", sorted(SEEDS))
@CORPUS
@given(data=st.data())
def test_wrong_types_are_a_bundle_or_a_clear_error(name: str, data: st.DataObject) -> None:
    template = data.draw(st.sampled_from(TEMPLATES[name]), label="where")
    value = data.draw(st.sampled_from(WRONG_TYPES), label="value")
    with tempfile.TemporaryDirectory() as folder:
        read(*write(name, template.replace(MARK, value), Path(folder)))


def test_mtrag_reads_nan_as_missing_but_refuses_infinity(tmp_path: Path) -> None:
    seed = json.dumps(SEEDS["mtrag"][0])
    (tmp_path / "t.jsonl").write_text(seed[:-1] + ', "score": NaN}\n')
    bundle = get_format("mtrag").read(tmp_path / "t.jsonl")
    (item,) = bundle.items
    assert item.extra["mtrag"]["tasks"][0]["unknown"] == {"score": None}
    (tmp_path / "t.jsonl").write_text(seed + "\n" + seed[:-1] + ', "score": Infinity}\n')
    with pytest.raises(InvalidInput, match=r"t\.jsonl line 2, field 'score': Infinity"):
        get_format("mtrag").read(tmp_path / "t.jsonl")


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("huge integer", "field 'turns[0].evidence[0].start': an integer of 5000 digits"),
        ("NaN", "field 'turns[0].evidence[0].start': NaN is not a number"),
        ("lone surrogate", "field 'turns[0].evidence[0].start': text holds a lone surrogate"),
        ("NUL", "field 'turns[0].evidence[0].start': text holds a NUL character"),
        ("deep nesting", "nested deeper than 64 levels"),
    ],
)
def test_messages_name_file_line_and_field(kind: str, message: str, tmp_path: Path) -> None:
    item = json.dumps(SEEDS["native"][0]).replace('"start": 0', f'"start": {KINDS[kind]}')
    items = json.dumps(SEEDS["native"][0]) + "\n\n" + item + "\n"
    _, path = write("native", items, tmp_path)
    with pytest.raises(InvalidInput) as info:
        get_format("native").read(path)
    assert f"{path}: items.jsonl line 3" in str(info.value)
    assert message in str(info.value)


def test_offsets_past_32_bits_are_refused(tmp_path: Path) -> None:
    item = json.dumps(SEEDS["native"][0]).replace('"end": 6', '"end": 4294967296')
    _, path = write("native", item, tmp_path)
    with pytest.raises(InvalidInput, match="line 1, turn 1, evidence 1: field 'end' is out of"):
        get_format("native").read(path)


# ---------------------------------------------------------------- text and tables

TEXT_KINDS = {
    "not UTF-8": b"\xff\xfe\x00q",
    "NUL": b"q1\x00",
    "huge number": b"9" * 5000,
    "NaN": b"nan",
    "Infinity": b"inf",
    "past 32 bits": b"4294967296",
    "superscript digit": "\u00b3".encode(),
    "empty": b"",
}


@pytest.mark.parametrize("kind", sorted(TEXT_KINDS))
@pytest.mark.parametrize(
    ("fmt", "file", "seed"),
    [
        ("trec", "qrels.txt", b"q1 0 d1 @@\n"),
        ("trec", "run.txt", b"q1 Q0 d1 1 @@ tag\n"),
        ("trec", "run.txt", b"q1 Q0 d1 @@ 2.5 tag\n"),
        ("beir", "qrels/test.tsv", b"query-id\tcorpus-id\tscore\nq1\tc1\t@@\n"),
        ("csv", "items.csv", b"id,query,relevant\na,q@@,\n"),
    ],
)
def test_text_tables_refuse_cleanly(
    fmt: str, file: str, seed: bytes, kind: str, tmp_path: Path
) -> None:
    target = tmp_path / file
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(seed.replace(b"@@", TEXT_KINDS[kind]))
    path = target
    if fmt == "beir":
        (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "hotel?"}\n')
        path = tmp_path
    bundle = read(fmt, path)
    if kind in ("not UTF-8", "NUL"):
        assert bundle is None


def parquet(columns: dict[str, Any]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


PARQUET_KINDS: dict[str, Callable[[], Any]] = {
    "infinite float": lambda: pa.array([float("inf")]),
    "NaN float": lambda: pa.array([float("nan")]),
    "NUL in text": lambda: pa.array(["a\x00b"]),
    "unsigned past 64 bits": lambda: pa.array([2**64 - 1], type=pa.uint64()),
    "nested list": lambda: pa.array([[[["a"]]]]),
    "struct": lambda: pa.array([{"a": 1}]),
    "binary": lambda: pa.array([b"\xff"], type=pa.binary()),
    "timestamp": lambda: pa.array([0], type=pa.timestamp("s")),
    "null": lambda: pa.array([None], type=pa.null()),
}


@pytest.mark.parametrize("kind", sorted(PARQUET_KINDS))
@pytest.mark.parametrize(
    ("fmt", "file", "column"),
    [
        ("autorag", "qa.parquet", "qid"),
        ("autorag", "qa.parquet", "retrieval_gt"),
        ("autorag", "qa.parquet", "extra"),
        ("autorag", "corpus.parquet", "contents"),
        ("autorag", "corpus.parquet", "metadata"),
        ("autorag", "corpus.parquet", "path"),
        ("hf", "data/items.parquet", "turns"),
        ("hf", "data/items.parquet", "id"),
        ("hf", "data/documents.parquet", "metadata"),
        ("hf", "data/documents.parquet", "text"),
    ],
)
def test_parquet_columns_refuse_cleanly(
    fmt: str, file: str, column: str, kind: str, tmp_path: Path
) -> None:
    tables = {
        "qa.parquet": {
            "qid": ["q1"],
            "query": ["q"],
            "retrieval_gt": [[["c1"]]],
            "generation_gt": [["a"]],
        },
        "corpus.parquet": {"doc_id": ["c1"], "contents": ["Hotels"], "metadata": [{"k": "v"}]},
        "data/items.parquet": {"id": ["a"], "turns": [json.dumps([{"query": "q"}])]},
        "data/documents.parquet": {"doc_id": ["d"], "name": ["a"], "text": ["Hotels"]},
    }
    for name, columns in tables.items():
        if name.startswith("data/") != (fmt == "hf"):
            continue
        if name == file:
            columns = {**columns, column: PARQUET_KINDS[kind]()}
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(parquet(columns))
    read(fmt, tmp_path)


def test_parquet_messages_name_row_and_column(tmp_path: Path) -> None:
    (tmp_path / "qa.parquet").write_bytes(
        parquet(
            {
                "qid": ["q1", "q2"],
                "query": ["q", "r"],
                "retrieval_gt": [[["c1"]], [["c1"]]],
                "generation_gt": [["a"], ["b"]],
                "score": [0.5, float("inf")],
            }
        )
    )
    (tmp_path / "corpus.parquet").write_bytes(parquet({"doc_id": ["c1"], "contents": ["H"]}))
    with pytest.raises(InvalidInput, match=r"qa\.parquet row 2, field 'score': inf is not"):
        get_format("autorag").read(tmp_path)


# ---------------------------------------------------------------- the command line

CLI_CASES = [
    ("native", "huge integer"),
    ("native-manifest", "NaN"),
    ("ragold", "lone surrogate"),
    ("ragaphene", "deep nesting"),
    ("mtrag", "Infinity"),
    ("inspectorraget", "NUL"),
    ("beir", "float overflow"),
    ("beir-corpus", "lone low surrogate"),
    ("csv", "integer past 64 bits"),
]


@pytest.mark.parametrize(("name", "kind"), CLI_CASES)
def test_cli_import_of_a_bad_file_is_one_line(name: str, kind: str, tmp_path: Path) -> None:
    template = next(t for t in TEMPLATES[name] if t.count(MARK) and t != MARK)
    fmt, path = write(name, template.replace(MARK, KINDS[kind]), tmp_path)
    home = ["--home", str(tmp_path / "ws")]
    CliRunner().invoke(make_app(), [*home, "init"])
    result = CliRunner().invoke(make_app(), [*home, "import", fmt, str(path), "-p", "x"])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), repr(result.exception)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert path.name in lines[0] and "Traceback" not in result.output


def test_cli_prints_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    import os

    bad = Path(os.fsdecode(str(tmp_path).encode() + b"/bad\xff.json"))
    bad.write_text("{oops")
    home = ["--home", str(tmp_path / "ws")]
    CliRunner().invoke(make_app(), [*home, "init"])
    result = CliRunner().invoke(make_app(), [*home, "import", "ragaphene", str(bad), "-p", "x"])
    assert result.exit_code == 1 and "bad\\udcff.json" in result.stderr, result.stderr
