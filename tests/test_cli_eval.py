"""``assay eval`` and ``assay experiments`` driven in-process, as a user or CI would."""

from __future__ import annotations

import json
import random
import socket
from pathlib import Path
from typing import Any

import ir_measures
import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.experiments.tasks import build_tasks
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus
from tests.fakes.rag_service import FakeRag

MEASURES = ["nDCG@10", "nDCG", "R@5", "R@100", "P@5", "RR", "AP", "Success@1"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def cli(home: Path):  # type: ignore[no-untyped-def]
    runner = CliRunner()

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(make_app(), ["--home", str(home), *args])

    return invoke


@pytest.fixture
def handbook(home: Path) -> list[Any]:
    """A workspace with the small experiments corpus; returns its tasks."""
    with Workspace.open(Settings(home=home)) as ws:
        project = create_project(ws, "handbook", "en")
        build_corpus(ws, project)
        return build_tasks(ws, project)


def _mtrag_run(qrels_path: Path, path: Path) -> None:
    """A seeded random ranking per query, mixing its relevant ids with other qrels ids."""
    rows = [line.split("\t") for line in qrels_path.read_text().splitlines()[1:]]
    by_query: dict[str, list[str]] = {}
    for qid, docid, _ in rows:
        by_query.setdefault(qid, []).append(docid)
    pool = sorted({docid for _, docid, _ in rows})
    rng = random.Random(42)
    lines = []
    for number, (qid, relevant) in enumerate(sorted(by_query.items())):
        if number % 10 == 9:
            continue  # some queries are missing from the run: they count as 0
        ranked = rng.sample(relevant, k=rng.randint(0, len(relevant))) + rng.sample(pool, 20)
        rng.shuffle(ranked)
        for rank, docid in enumerate(dict.fromkeys(ranked), start=1):
            lines.append(f"{qid} Q0 {docid} {rank} {100 - rank + rng.random():.6f} test")
    path.write_text("\n".join(lines) + "\n")


def test_qrels_against_run_equals_ir_measures(cli, shared_fixtures: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    beir = shared_fixtures / "mtrag" / "cloud" / "dev.tsv"
    run_path = tmp_path / "run.txt"
    _mtrag_run(beir, run_path)
    trec = tmp_path / "qrels.txt"
    rows = [line.split("\t") for line in beir.read_text().splitlines()[1:]]
    trec.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    expected = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(m) for m in MEASURES],
        list(ir_measures.read_trec_qrels(str(trec))),
        list(ir_measures.read_trec_run(str(run_path))),
    )
    for qrels in (beir, trec):  # the BEIR TSV and the TREC qrels give the same numbers
        args = ["eval", "--qrels", str(qrels), "--run", str(run_path), "--json"]
        result = cli(*args, *(a for m in MEASURES for a in ("--metric", m)))
        assert result.exit_code == 0, result.output
        got = json.loads(result.output)
        assert got["tasks"] == 188
        for measure in MEASURES:
            reference = expected[ir_measures.parse_measure(measure)]
            assert got["metrics"][measure] == pytest.approx(reference, abs=1e-9), measure


def test_fail_under_is_a_ci_gate(cli, shared_fixtures: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    beir = shared_fixtures / "mtrag" / "cloud" / "dev.tsv"
    run_path = tmp_path / "run.txt"
    _mtrag_run(beir, run_path)
    base = ["eval", "--qrels", str(beir), "--run", str(run_path)]
    passed = cli(*base, "--fail-under", "ndcg@10=0.01")
    assert passed.exit_code == 0, passed.output
    assert "nDCG@10" in passed.output and "RR" in passed.output  # the default measures
    failed = cli(*base, "--fail-under", "nDCG@10=0.99", "--fail-under", "RR=0.0")
    assert failed.exit_code == 3
    assert "nDCG@10 = 0." in failed.output and "under the threshold 0.99" in failed.output
    assert "RR =" not in failed.output.split("Gate failed")[-1]
    bad = cli(*base, "--fail-under", "nDCG@10")
    assert bad.exit_code == 1 and "METRIC=VALUE" in bad.output
    wrong = cli(*base, "--metric", "rouge_l")
    assert wrong.exit_code == 1 and "IR measures" in wrong.output


def test_eval_run_file_against_a_project(cli, handbook: list[Any], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run_path = tmp_path / "run.txt"
    lines = []
    for task in handbook:
        gold = [c for group in task.chunk_groups() for c in group]
        if not gold:
            continue  # the unanswerable task is left out of the run
        ids = [*gold, "unknown-chunk"] if task.turn == 1 else ["unknown-chunk", *gold]
        key = task.aliases[0] if task.aliases else task.task_id
        for rank, chunk_id in enumerate(ids, start=1):
            lines.append(f"{key} Q0 {chunk_id} {rank} {10 - rank} sys")
    run_path.write_text("\n".join(lines) + "\n")
    result = cli("eval", "--run", str(run_path), "--json", "-m", "retrieval_recall", "-m", "RR")
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert got["tasks"] == 5 and got["errors"] == 1  # the unanswerable task has no run entry
    assert got["metrics"]["retrieval_recall"] == 1.0
    assert got["metrics"]["RR"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    table = cli("eval", "--run", str(run_path), "--fail-under", "RR=0.95")
    assert table.exit_code == 3 and "RR = 0.8750 is under the threshold 0.95" in table.output


def test_eval_answers_and_endpoint(cli, handbook: list[Any], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"task_id": t.task_id, "answer": t.answer, "contexts": []}) + "\n"
            for t in handbook
        )
    )
    result = cli("eval", "--answers", str(answers), "--json", "-m", "exact_match")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["metrics"]["exact_match"] == 1.0

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"answer": "30 days per calendar year.", "contexts": [{"text": body["query"]}]}

    with FakeRag(reply) as service:
        result = cli("eval", "--endpoint", service.url, "--k", "3", "-m", "token_f1", "--json")
        assert result.exit_code == 0, result.output
        assert {body["k"] for body in service.requests} == {3}
    got = json.loads(result.output)
    assert 0 < got["metrics"]["token_f1"] < 1 and got["errors"] == 0
    assert cli("eval").exit_code == 1


def test_experiments_commands(cli, handbook: list[Any]) -> None:  # type: ignore[no-untyped-def]
    hybrid = json.dumps({"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}})
    created = cli("experiments", "create", "first", "--pipeline", "keyword", "--pipeline", hybrid)
    assert created.exit_code == 0, created.output
    assert "5 tasks × 2 pipeline(s)" in created.output
    listed = cli("experiments", "--json")
    assert [e["status"] for e in json.loads(listed.output)] == ["pending"]
    ran = cli("experiments", "run", "first", "--json")
    assert ran.exit_code == 0, ran.output
    data = json.loads(ran.output)
    assert data["status"] == "done" and data["done_count"] == 10
    assert set(data["aggregates"]) == {"keyword", "hybrid"}
    shown = cli("experiments", "show", "first")
    assert "keyword" in shown.output and "retrieval_recall" in shown.output
    detail = cli("experiments", "show", "first", "--task", handbook[0].task_id, "--json")
    assert json.loads(detail.output)["task"]["task_id"] == handbook[0].task_id
    assert cli("experiments", "cancel", "first").exit_code == 0
    missing = cli("experiments", "show", "nope")
    assert missing.exit_code == 1 and "no experiment 'nope'" in missing.output
    bad = cli("experiments", "create", "second", "--pipeline", "bm25")
    assert bad.exit_code == 1 and "unknown pipeline preset 'bm25'" in bad.output


def test_a_background_run_is_queued_and_guarded(cli, handbook: list[Any]) -> None:  # type: ignore[no-untyped-def]
    assert cli("experiments", "create", "queued", "--pipeline", "keyword").exit_code == 0
    queued = cli("experiments", "run", "queued", "--background")
    assert queued.exit_code == 0, queued.output
    assert "is queued" in queued.output
    again = cli("experiments", "run", "queued", "--background")
    assert again.exit_code == 1 and "already queued or running" in again.output
    here = cli("experiments", "run", "queued")  # would run the tasks a worker will run
    assert here.exit_code == 1 and "queued or running in the background" in here.output
    assert cli("experiments", "cancel", "queued").exit_code == 0  # drops the queued job
    ran = cli("experiments", "run", "queued", "--json")
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.output)["status"] == "done"


def test_experiments_create_reads_the_local_run_file(  # type: ignore[no-untyped-def]
    cli, handbook: list[Any], home: Path, tmp_path: Path
) -> None:
    """The CLI user owns their files: the CLI reads them and the experiment keeps a copy
    (by sha256), never the path."""
    run_path = tmp_path / "runs" / "system.run"
    run_path.parent.mkdir()
    run_path.write_text(f"{handbook[0].task_id} Q0 unknown-chunk 1 1 t\n")
    spec = json.dumps({"name": "system", "kind": "file", "run_file": str(run_path)})
    created = cli("experiments", "create", "from-file", "--pipeline", spec, "--json")
    assert created.exit_code == 0, created.output
    stored = json.loads(created.output)["pipelines"][0]["run_file"]
    assert stored["name"] == "system.run" and len(stored["sha256"]) == 64
    assert str(tmp_path) not in created.output
    run_path.unlink()
    ran = cli("experiments", "run", "from-file", "--json")
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.output)["done_count"] == 1
    bad = tmp_path / "bad.run"
    bad.write_text("root:x:0:0:secret\n")
    spec = json.dumps({"name": "bad", "kind": "file", "run_file": str(bad)})
    refused = cli("experiments", "create", "bad", "--pipeline", spec)
    assert refused.exit_code == 1 and "bad.run, line 1: a run line has 6 fields" in refused.output
    assert "secret" not in refused.output
    missing = cli("eval", "--run", str(tmp_path / "nope.txt"))
    assert missing.exit_code == 1 and "file not found" in missing.output


def test_a_pipeline_that_fails_on_every_task_fails_the_run(  # type: ignore[no-untyped-def]
    cli, handbook: list[Any]
) -> None:
    """A run whose pipeline errs on every task measured nothing: the command says so and
    exits non-zero (the results stay stored), so a script or CI does not read it as a result."""
    with socket.socket() as closed:  # a port nobody listens on: every request is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    gone = json.dumps({"name": "gone", "kind": "external", "endpoint": f"http://127.0.0.1:{port}/"})
    created = cli("experiments", "create", "half", "--pipeline", "keyword", "--pipeline", gone)
    assert created.exit_code == 0, created.output
    ran = cli("experiments", "run", "half")
    assert ran.exit_code == 1, ran.output
    assert "pipeline(s) gone of 'half' failed on every task (5 of 5)" in ran.output
    shown = cli("experiments", "show", "half", "--json")
    kept = json.loads(shown.output)
    assert kept["status"] == "done" and kept["error_count"] == 5 and kept["done_count"] == 5
    assert cli("experiments", "create", "fine", "--pipeline", "keyword").exit_code == 0
    assert cli("experiments", "run", "fine").exit_code == 0  # no pipeline failed throughout


def _trec_ids(path: Path) -> list[str]:
    return list(dict.fromkeys(line.split()[0] for line in path.read_text().splitlines()))


def test_our_files_share_one_query_id_scheme(  # type: ignore[no-untyped-def]
    cli, handbook: list[Any], tmp_path: Path
) -> None:
    """Pools, TREC and BEIR exports and the tasks name every question the same way: a
    single-turn item by its id, a conversation turn as ID<::>TURN; older ids still read."""
    assert cli("export", "trec", str(tmp_path / "trec")).exit_code == 0
    assert cli("export", "beir", str(tmp_path / "beir")).exit_code == 0
    pool = tmp_path / "pool.trec"
    made = cli("pool", "--source", "keyword", "--status", "accepted", "--out", str(pool),
               "--format", "trec")  # fmt: skip
    assert made.exit_code == 0, made.output
    expected = [t.query_id for t in handbook]
    singles = [t for t in handbook if not t.query_id.startswith("conv-7")]
    assert [t.query_id for t in singles] == [t.item_id for t in singles]
    assert [t.query_id for t in handbook if t not in singles] == [
        "conv-7<::>1", "conv-7<::>2", "conv-7<::>3"
    ]  # fmt: skip
    topics = [
        line.split("\t")[0] for line in (tmp_path / "trec" / "topics.tsv").read_text().splitlines()
    ]
    assert topics == expected
    assert _trec_ids(pool) == expected[:-1]  # keyword search finds nothing for the moon
    beir_queries = [
        json.loads(line)["_id"]
        for line in (tmp_path / "beir" / "queries.jsonl").read_text().splitlines()
    ]
    assert beir_queries == expected
    # the unanswerable turn has no qrels line, in either export
    answerable = [t.query_id for t in handbook if not t.unanswerable]
    assert _trec_ids(tmp_path / "trec" / "qrels.txt") == answerable
    scored = cli(
        "eval", "--qrels", str(tmp_path / "trec" / "qrels.txt"), "--run", str(pool), "--json"
    )
    assert scored.exit_code == 0, scored.output
    direct = json.loads(scored.output)
    assert direct["tasks"] == len(answerable)
    assert direct["query_ids"] == {"matched": 4, "gold_only": 0, "run_only": 0, "renamed": 0}
    assert direct["warnings"] == []
    inside = json.loads(cli("eval", "--run", str(pool), "--json", "-m", "nDCG@10").output)
    assert inside["metrics"]["nDCG@10"] == pytest.approx(direct["metrics"]["nDCG@10"], abs=1e-12)
    # a pool written by an older Assay (ITEM::TURN for every question) reads the same
    old = tmp_path / "old.trec"
    by_id = {t.query_id: t for t in handbook}
    old.write_text(
        "".join(
            f"{by_id[line.split()[0]].task_id} {' '.join(line.split()[1:])}\n"
            for line in pool.read_text().splitlines()
        )
    )
    renamed = json.loads(
        cli(
            "eval", "--qrels", str(tmp_path / "trec" / "qrels.txt"), "--run", str(old), "--json"
        ).output
    )
    # the single-turn items are renamed; the conversation's old ids are its item id, which
    # only the project knows: counted and warned about, not guessed
    assert renamed["query_ids"] == {"matched": 2, "gold_only": 2, "run_only": 2, "renamed": 2}
    again = json.loads(cli("eval", "--run", str(old), "--json", "-m", "nDCG@10").output)
    assert again["metrics"]["nDCG@10"] == inside["metrics"]["nDCG@10"]  # a project knows all


def test_eval_refuses_a_run_that_shares_no_query_id(  # type: ignore[no-untyped-def]
    cli, handbook: list[Any], tmp_path: Path
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    run = tmp_path / "run.txt"
    run.write_text("x1 Q0 d1 1 2.0 t\nx2 Q0 d2 1 1.0 t\n")
    refused = cli("eval", "--qrels", str(qrels), "--run", str(run))
    assert refused.exit_code == 1
    message = " ".join(refused.output.split())
    assert f"the run {run} and the qrels {qrels} share no query id" in message
    assert "the run has e.g. x1, x2" in message and "has e.g. q1, q2, q3" in message
    run.write_text("q1 Q0 d1 1 2.0 t\nx2 Q0 d2 1 1.0 t\n")
    partial = cli("eval", "--qrels", str(qrels), "--run", str(run), "--json")
    assert partial.exit_code == 0, partial.output
    got = json.loads(partial.output)
    assert got["query_ids"] == {"matched": 1, "gold_only": 2, "run_only": 1, "renamed": 0}
    (warning,) = got["warnings"]
    assert "2 of 3 questions of the qrels" in warning and "1 of 2 query ids of the run" in warning
    assert got["metrics"]["nDCG@10"] == pytest.approx(1 / 3)  # the two missing count as 0
    shown = cli("eval", "--qrels", str(qrels), "--run", str(run))
    assert shown.exit_code == 0 and "warning:" in shown.output
    # against a project: a run naming none of its questions is refused too
    refused = cli("eval", "--run", str(tmp_path / "run.txt"), "-m", "RR")
    assert refused.exit_code == 1
    message = " ".join(refused.output.split())
    assert "share no query id" in message and "project 'handbook'" in message
    assert "conv-7<::>1" in message
    # and so is an experiment over such a file, before any task runs
    spec = json.dumps({"name": "other", "kind": "file", "run_file": str(tmp_path / "run.txt")})
    refused = cli("experiments", "create", "other-ids", "--pipeline", spec)
    assert refused.exit_code == 1 and "share no query id" in refused.output


def test_every_status_option_reads_the_same(cli, handbook: list[Any]) -> None:  # type: ignore[no-untyped-def]
    """``all`` is every status for experiments, eval, export and pools alike (the handbook
    has 5 accepted tasks and one draft item)."""
    from assay.errors import InvalidInput
    from assay.gold.statuses import parse_statuses
    from assay.records import STATUSES

    assert parse_statuses(None) == parse_statuses([]) == ("accepted",)
    assert parse_statuses("all") == parse_statuses(["ALL"]) == STATUSES
    assert parse_statuses(parse_statuses("all")) == STATUSES  # reading twice changes nothing
    assert parse_statuses(["accepted,draft"]) == parse_statuses(["draft", "accepted"])
    with pytest.raises(InvalidInput, match="unknown item status 'finished'"):
        parse_statuses("finished")
    counts = {}
    for name, status in (("every", "all"), ("drafts", "draft"), ("both", "draft,Accepted")):
        made = cli("experiments", "create", name, "--status", status, "--json")
        assert made.exit_code == 0, made.output
        counts[name] = json.loads(made.output)["task_count"]
    assert counts == {"every": 6, "drafts": 1, "both": 6}
    bad = cli("experiments", "create", "bad", "--status", "finished")
    assert bad.exit_code == 1 and "unknown item status 'finished'" in bad.output
    answers = [{"task_id": t.task_id, "answer": t.answer} for t in handbook]
    exported = cli("export", "native", "/dev/null", "--status", "all", "--json")
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.output)["items"] == 4 and answers
    listed = {
        status: json.loads(cli("items", "list", "--status", status, "--json").output)["total"]
        for status in ("all", "draft", "Draft,accepted", "accepted")
    }
    assert listed == {"all": 4, "draft": 1, "Draft,accepted": 4, "accepted": 3}
    unknown = cli("items", "list", "--status", "finished")
    assert unknown.exit_code == 1 and "unknown item status 'finished'" in unknown.output
    pooled = cli("pool", "--source", "keyword", "--status", "all", "--json")
    assert pooled.exit_code == 0, pooled.output
    assert json.loads(pooled.output)["summary"]["questions"] == 6
