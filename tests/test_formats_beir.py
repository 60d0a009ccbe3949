"""BEIR and TREC: MTRAG's real queries and qrels go in and come back the same for ir_measures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import InvalidInput
from assay.formats import get_format
from assay.formats.beir import read
from assay.records import Project
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from tests.test_transfer import counts, rich_project


def qrels_frame(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, sep="\t", dtype=str)
    frame.columns = ["query_id", "doc_id", "relevance"]
    frame["relevance"] = frame["relevance"].astype(int)
    return frame


def as_set(frame: pd.DataFrame) -> set[tuple[str, str, int]]:
    return set(zip(frame["query_id"], frame["doc_id"], frame["relevance"], strict=True))


def mtrag_folder(shared: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "mtrag"
    (folder / "qrels").mkdir(parents=True)
    shutil.copy(shared / "mtrag" / "cloud" / "cloud_lastturn.jsonl", folder / "queries.jsonl")
    shutil.copy(shared / "mtrag" / "cloud" / "dev.tsv", folder / "qrels" / "dev.tsv")
    return folder


def test_mtrag_queries_and_qrels_round_trip(
    ws: Workspace, shared_fixtures: Path, tmp_path: Path
) -> None:
    source = mtrag_folder(shared_fixtures, tmp_path)
    report = import_bundle(ws, "cloud", read(source))
    assert report.summary()["item"]["imported"] == 188
    out = tmp_path / "out"
    get_format("beir").write(export_bundle(ws, get_project(ws, "cloud")), out)
    original = (source / "queries.jsonl").read_text().splitlines()
    written = (out / "queries.jsonl").read_text().splitlines()
    read_back = {(q["_id"], q["text"]) for q in map(json.loads, written)}
    assert read_back == {(q["_id"], q["text"]) for q in map(json.loads, original)}
    before = qrels_frame(source / "qrels" / "dev.tsv")
    after = qrels_frame(out / "qrels" / "dev.tsv")
    assert (out / "qrels" / "dev.tsv").read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"
    assert as_set(before) == as_set(after)
    run = pd.DataFrame(
        {"query_id": before["query_id"], "doc_id": before["doc_id"], "score": range(len(before))}
    )
    measures = [ir_measures.nDCG @ 10, ir_measures.R @ 100, ir_measures.P @ 5]
    assert ir_measures.calc_aggregate(measures, before, run) == ir_measures.calc_aggregate(
        measures, after, run
    )
    # and through TREC: the qrels file reads the same with ir_measures' own reader
    get_format("trec").write(export_bundle(ws, get_project(ws, "cloud")), tmp_path / "trec")
    trec = set(ir_measures.read_trec_qrels(str(tmp_path / "trec" / "qrels.txt")))
    assert {(q.query_id, q.doc_id, q.relevance) for q in trec} == as_set(before)
    back = get_format("trec").read(tmp_path / "trec")
    assert len(list(back.items)) == 188


def test_beir_with_corpus_maps_qrels_to_evidence(
    ws: Workspace, project: Project, tmp_path: Path
) -> None:
    rich_project(ws, project)
    out = tmp_path / "beir"
    get_format("beir").write(export_bundle(ws, project, chunking="paragraphs"), out)
    qrels = qrels_frame(out / "qrels" / "test.tsv")
    assert set(qrels["doc_id"]) == {"p-2", "l-1"}
    assert sorted(qrels["relevance"]) == [1, 1, 1]  # relevant wins over distracting in l-1
    report = import_bundle(ws, "again", read(out))
    assert report.count("skipped") == 0
    get_format("beir").write(export_bundle(ws, get_project(ws, "again")), tmp_path / "b2")
    again = qrels_frame(tmp_path / "b2" / "qrels" / "test.tsv")
    assert sorted(map(tuple, again[["doc_id", "relevance"]].values.tolist())) == sorted(
        map(tuple, qrels[["doc_id", "relevance"]].values.tolist())
    )
    corpus = (tmp_path / "b2" / "corpus.jsonl").read_text()
    assert '"_id":"p-2"' in corpus


def test_trec_run_files(ws: Workspace, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 12.5 bm25\nq1 Q0 d2 2 11.0 bm25\nq2 Q0 d1 1 3 bm25\n")
    bundle = get_format("trec").read(run)
    import_bundle(ws, "runs", bundle)
    get_format("trec").write(export_bundle(ws, get_project(ws, "runs")), tmp_path / "out")
    lines = set((tmp_path / "out" / "run.txt").read_text().splitlines())
    assert lines == {"q1 Q0 d1 1 12.5 bm25", "q1 Q0 d2 2 11.0 bm25", "q2 Q0 d1 1 3.0 bm25"}


def test_bad_beir_and_trec_files(ws: Workspace, project: Project, tmp_path: Path) -> None:
    rich_project(ws, project)
    before = counts(ws, "test")
    cases = {
        "malformed": ('{"_id": "q1", "text": "a"}\n{oops\n', "", "queries.jsonl line 2: malformed"),
        "score": ('{"_id": "q1", "text": "a"}\n', "q1\tc1\thigh\n", "line 1: field 'score'"),
        "duplicate": (
            '{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n',
            "",
            "line 2: field '_id' repeats the one at queries.jsonl line 1",
        ),
        "unknown query": ('{"_id": "q1", "text": "a"}\n', "q9\tc1\t1\n", "'q9' is not in queries"),
        "columns": ('{"_id": "q1", "text": "a"}\n', "q1\tc1\n", "expected query-id"),
        "id type": ('{"_id": null, "text": "a"}\n', "", "field '_id'"),
    }
    for label, (queries, qrels, message) in cases.items():
        folder = tmp_path / label
        (folder / "qrels").mkdir(parents=True)
        (folder / "queries.jsonl").write_text(queries)
        (folder / "qrels" / "test.tsv").write_text(qrels)
        with pytest.raises(InvalidInput, match=message):
            import_bundle(ws, "test", read(folder))
        assert counts(ws, "test") == before, label
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 0 d1 yes\n")
    with pytest.raises(InvalidInput, match=r"bad\.txt line 1: field 'relevance'"):
        get_format("trec").read(bad)
    bad.write_text("q1 d1\n")
    with pytest.raises(InvalidInput, match="4 columns"):
        get_format("trec").read(bad)


def test_cli_import_says_how_to_make_drafts_gold(tmp_path: Path, shared_fixtures: Path) -> None:
    runner = CliRunner()
    home = str(tmp_path / "ws")
    app = make_app()
    runner.invoke(app, ["--home", home, "init"])
    beir = str(mtrag_folder(shared_fixtures, tmp_path))
    plain = runner.invoke(app, ["--home", home, "import", "beir", beir, "-p", "b"])
    assert plain.exit_code == 0, plain.output
    assert "--status accepted" in plain.output
    gold = runner.invoke(
        app, ["--home", home, "import", "beir", beir, "-p", "g", "--status", "accepted"]
    )
    assert gold.exit_code == 0, gold.output
    exported = runner.invoke(
        app, ["--home", home, "export", "trec", str(tmp_path / "q.tsv"), "-p", "g", "--json"]
    )
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.output)["items"] > 0
