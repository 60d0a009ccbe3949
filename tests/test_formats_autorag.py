"""AutoRAG: the real sample files import and export back equal; casting rules; bad files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.errors import InvalidInput
from assay.formats import get_format
from assay.formats.autorag import cast_generation_gt, cast_retrieval_gt, read
from assay.records import Project
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from tests.test_transfer import counts, rich_project


def test_import_then_export_keeps_ids_and_content(
    ws: Workspace, shared_fixtures: Path, tmp_path: Path
) -> None:
    source = shared_fixtures / "autorag"
    report = import_bundle(ws, "auto", read(source))
    assert report.summary()["item"]["imported"] == 10
    assert report.summary()["document"]["imported"] == 30
    out = tmp_path / "out"
    bundle = export_bundle(ws, get_project(ws, "auto"))
    assert bundle.target_chunking == "autorag"  # the imported chunking became the default
    assert get_format("autorag").write(bundle, out) == []
    qa_in = pd.read_parquet(source / "qa.parquet").sort_values("qid").reset_index(drop=True)
    qa_out = pd.read_parquet(out / "qa.parquet").sort_values("qid").reset_index(drop=True)
    assert list(qa_out.columns) == ["qid", "query", "retrieval_gt", "generation_gt"]
    for column in ("qid", "query"):
        assert qa_in[column].tolist() == qa_out[column].tolist()
    for column in ("retrieval_gt", "generation_gt"):
        as_lists = [np.asarray(v).tolist() for v in qa_out[column]]
        assert [np.asarray(v).tolist() for v in qa_in[column]] == as_lists
    # the corpus comes back as it was read: the same rows, columns and metadata keys
    corpus_in = pq.read_table(source / "corpus.parquet").to_pylist()
    corpus_out = pq.read_table(out / "corpus.parquet").to_pylist()
    assert sorted(corpus_out, key=lambda r: r["doc_id"]) == sorted(
        corpus_in, key=lambda r: r["doc_id"]
    )
    schema = pq.read_schema(out / "corpus.parquet")
    assert set(schema.names) == set(pq.read_schema(source / "corpus.parquet").names)
    assert schema.field("metadata").type.field("last_modified_datetime").type == pa.timestamp("us")


def test_casting_rules() -> None:
    assert cast_retrieval_gt("a", "w") == [["a"]]
    assert cast_retrieval_gt(["a", "b"], "w") == [["a"], ["b"]]  # 1-D: all needed
    assert cast_retrieval_gt([["a", "b"], ["c"]], "w") == [["a", "b"], ["c"]]
    assert cast_retrieval_gt(
        np.array([np.array(["a", "b"]), np.array(["c"])], dtype=object), "w"
    ) == [
        ["a", "b"],
        ["c"],
    ]
    assert cast_retrieval_gt(np.array(["a", "b"]), "w") == [["a"], ["b"]]
    assert cast_retrieval_gt(None, "w") == []
    assert cast_generation_gt("x", "w") == ["x"]
    assert cast_generation_gt(np.array(["x", "y"]), "w") == ["x", "y"]
    with pytest.raises(InvalidInput, match="retrieval_gt"):
        cast_retrieval_gt([1, 2], "qa.parquet row 1")
    with pytest.raises(InvalidInput, match="generation_gt"):
        cast_generation_gt(5, "w")


def write_dataset(
    folder: Path, qa: dict[str, list[object]], corpus: dict[str, list[object]]
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(qa), folder / "qa.parquet")
    pq.write_table(pa.table(corpus), folder / "corpus.parquet")
    return folder


CORPUS = {
    "doc_id": ["c1", "c2"],
    "contents": ["Hotels cost 140 euros.", "Trains are second class."],
    "metadata": [
        {"last_modified_datetime": "2024-01-13T14:03:16"},
        {"last_modified_datetime": "2024-02-01 10:00:00"},
    ],
}


def test_one_dimensional_and_string_gt_and_timestamp_strings(ws: Workspace, tmp_path: Path) -> None:
    folder = write_dataset(
        tmp_path / "d",
        {
            "qid": ["q1", "q2"],
            "query": ["Hotel?", "Both?"],
            "retrieval_gt": ["c1", "c1,c2"],
            "generation_gt": ["140 euros", "both"],
        },
        CORPUS,
    )
    with pytest.raises(InvalidInput, match=r"row 2 \(qid 'q2'\).*'c1,c2' is not a doc_id"):
        import_bundle(ws, "p", read(folder))
    folder = write_dataset(
        tmp_path / "e",
        {
            "qid": ["q1", "q2"],
            "query": ["Hotel?", "Both?"],
            "retrieval_gt": [["c1"], ["c1", "c2"]],
            "generation_gt": [["140 euros"], ["both"]],
        },
        CORPUS,
    )
    import_bundle(ws, "p", read(folder))
    get_format("autorag").write(export_bundle(ws, get_project(ws, "p")), tmp_path / "out")
    rows = {r["qid"]: r for r in pq.read_table(tmp_path / "out" / "qa.parquet").to_pylist()}
    assert rows["q2"]["retrieval_gt"] == [["c1"], ["c2"]]  # 1-D read as all needed
    stamps = [
        r["metadata"]["last_modified_datetime"]
        for r in pq.read_table(tmp_path / "out" / "corpus.parquet").to_pylist()
    ]
    assert [s.isoformat() for s in stamps] == ["2024-01-13T14:03:16", "2024-02-01T10:00:00"]


def test_export_of_a_generated_chunking_checks_ids(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    rich_project(ws, project)
    get_format("autorag").write(
        export_bundle(ws, project, chunking="small"), tmp_path / "out", include_unanswerable=True
    )
    corpus = pq.read_table(tmp_path / "out" / "corpus.parquet").to_pylist()
    qa = pq.read_table(tmp_path / "out" / "qa.parquet").to_pylist()
    ids = {r["doc_id"] for r in corpus}
    assert all(c in ids for r in qa for group in r["retrieval_gt"] for c in group)
    linked = [r for r in corpus if r["metadata"]["next_id"]]
    assert linked and all(r["start_end_idx"][0] < r["start_end_idx"][1] for r in corpus)
    conversation = [r for r in qa if "<::>" in r["qid"]]
    assert len(conversation) == 2 and conversation[1]["query"] == "Which train class?"


def test_questions_without_retrieval_gt_are_left_out_and_listed(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    """AutoRAG's loader reads retrieval_gt[0]: a question without one is left out and named;
    --include-unanswerable writes it (empty) and Assay reads it back as unanswerable."""
    rich_project(ws, project)
    fmt = get_format("autorag")
    notes = fmt.write(export_bundle(ws, project, chunking="small"), tmp_path / "out")
    qa = pq.read_table(tmp_path / "out" / "qa.parquet").to_pylist()
    assert qa and all(row["retrieval_gt"] for row in qa)
    left_out = [n for n in notes if "left out of qa.parquet" in n]
    assert len(left_out) == 2
    assert any("<::>2: no passage, so no retrieval_gt" in n for n in left_out)
    assert any(": unanswerable, so no retrieval_gt" in n for n in left_out)
    notes = fmt.write(
        export_bundle(ws, project, chunking="small"), tmp_path / "all", include_unanswerable=True
    )
    assert not [n for n in notes if "left out of qa.parquet" in n]
    qa_all = pq.read_table(tmp_path / "all" / "qa.parquet").to_pylist()
    assert len(qa_all) == len(qa) + 2
    report = import_bundle(ws, "again", read(tmp_path / "all"))
    assert report.count("imported", "item") == len(qa_all)


def test_corpus_dates_are_the_documents_own(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    """Documents that did not come from AutoRAG carry when they last changed."""
    from assay.corpus.documents import list_documents

    rich_project(ws, project)
    get_format("autorag").write(export_bundle(ws, project, chunking="small"), tmp_path / "out")
    corpus = pq.read_table(tmp_path / "out" / "corpus.parquet").to_pylist()
    changed = {d.name: d for d in list_documents(ws, project)}
    stamps = {r["metadata"]["path"]: r["metadata"]["last_modified_datetime"] for r in corpus}
    assert stamps["policy.txt"] is not None
    assert stamps["policy.txt"] == changed["policy.txt"].created_at.replace(tzinfo=None)


def test_bad_autorag_files(ws: Workspace, project: Project, tmp_path: Path) -> None:
    rich_project(ws, project)
    before = counts(ws, "test")
    good_qa = {
        "qid": ["q1"],
        "query": ["Hotel?"],
        "retrieval_gt": [[["c1"]]],
        "generation_gt": [["x"]],
    }
    cases = {
        "types": ({**good_qa, "qid": [1]}, CORPUS, "column 'qid' must hold strings"),
        "missing column": (
            {"qid": ["q1"], "query": ["x"]},
            CORPUS,
            "column 'retrieval_gt' is missing",
        ),
        "duplicate qid": (
            {k: v * 2 for k, v in good_qa.items()},
            CORPUS,
            r"qa.parquet row 2: field 'qid' repeats the one at qa.parquet row 1",
        ),
        "duplicate doc_id": (
            good_qa,
            {k: [v[0], v[0]] for k, v in CORPUS.items()},
            "corpus.parquet row 2: field .doc_id. repeats the one at corpus.parquet row 1",
        ),
        "missing id": ({**good_qa, "retrieval_gt": [[["zz"]]]}, CORPUS, "'zz' is not a doc_id"),
        "bad time": (
            good_qa,
            {**CORPUS, "metadata": [{"last_modified_datetime": "yesterday"}] * 2},
            "last_modified_datetime",
        ),
    }
    for label, (qa, corpus, message) in cases.items():
        folder = write_dataset(tmp_path / label, qa, corpus)
        with pytest.raises(InvalidInput, match=message):
            import_bundle(ws, "test", read(folder))
        assert counts(ws, "test") == before, label
    folder = write_dataset(tmp_path / "broken", good_qa, CORPUS)
    (folder / "qa.parquet").write_bytes(b"PAR1 not parquet at all")
    with pytest.raises(InvalidInput, match=r"qa\.parquet: not a readable parquet"):
        read(folder)
    (folder / "corpus.parquet").unlink()
    with pytest.raises(InvalidInput, match=r"corpus\.parquet: missing"):
        read(folder)


def test_cli_export_lists_and_includes_unanswerable(ws: Workspace, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from assay.cli import make_app

    folder = write_dataset(
        tmp_path / "d",
        {
            "qid": ["q1", "q2"],
            "query": ["Hotel?", "Parking?"],
            "retrieval_gt": [[["c1"]], []],
            "generation_gt": [["140 euros"], ["not said"]],
        },
        CORPUS,
    )
    home = ["--home", str(ws.settings.home)]
    runner = CliRunner()
    assert (
        runner.invoke(make_app(), [*home, "import", "autorag", str(folder), "-p", "a"]).exit_code
        == 0
    )
    out = tmp_path / "out"
    args = [*home, "export", "autorag", str(out), "-p", "a", "--status", "all", "--json"]
    result = runner.invoke(make_app(), args)
    assert result.exit_code == 0, result.output
    (note,) = json.loads(result.output)["notes"]
    assert note.startswith("item q2: unanswerable") and "left out of qa.parquet" in note
    assert pq.read_table(out / "qa.parquet").column("qid").to_pylist() == ["q1"]
    result = runner.invoke(make_app(), [*args, "--include-unanswerable"])
    assert json.loads(result.output)["notes"] == []
    assert pq.read_table(out / "qa.parquet").column("qid").to_pylist() == ["q1", "q2"]


def test_columns_assay_cannot_write_are_named(ws: Workspace, tmp_path: Path) -> None:
    """Extra corpus and qa columns of an AutoRAG import are kept in the project and named
    in the export's notes; Assay's own fields appear once a row needs them."""
    corpus = {**CORPUS, "source": ["a.pdf", "b.pdf"], "path": ["a", None]}
    folder = write_dataset(
        tmp_path / "d",
        {
            "qid": ["q1"],
            "query": ["Hotel?"],
            "retrieval_gt": [[["c1"]]],
            "generation_gt": [["140 euros"]],
            "level": ["easy"],
        },
        corpus,
    )
    import_bundle(ws, "p", read(folder))
    out = tmp_path / "out"
    notes = get_format("autorag").write(export_bundle(ws, get_project(ws, "p")), out)
    assert any("corpus field(s) source of the imported AutoRAG rows" in n for n in notes)
    assert any("qa column(s) level of the imported AutoRAG rows" in n for n in notes)
    schema = pq.read_schema(out / "corpus.parquet")
    assert set(schema.names) == {"doc_id", "contents", "metadata", "path"}  # path: a row had it
    assert [f.name for f in schema.field("metadata").type] == [
        "last_modified_datetime",
        "prev_id",
        "next_id",
    ]
    assert [r["path"] for r in pq.read_table(out / "corpus.parquet").to_pylist()] == ["a", None]


def test_a_row_autorag_drops_is_left_out_without_refusing_the_file(
    ws: Workspace, tmp_path: Path
) -> None:
    """AutoRAG's cast_corpus_dataset drops rows without contents and loads the rest: the
    import does the same (the row reported as skipped), strict or not."""
    corpus = {
        "doc_id": ["c1", "c2"],
        "contents": ["Hotels cost 140 euros.", "   "],
        "metadata": CORPUS["metadata"],
    }
    qa = {
        "qid": ["q1"],
        "query": ["Hotel?"],
        "retrieval_gt": [[["c1"]]],
        "generation_gt": [["140"]],
    }
    report = import_bundle(ws, "p", read(write_dataset(tmp_path / "d", qa, corpus)))
    (skipped,) = [o for o in report.outcomes if o.status == "skipped"]
    assert "c2" in skipped.ref and "as AutoRAG drops it" in skipped.message
    assert report.summary()["document"]["imported"] == 1
