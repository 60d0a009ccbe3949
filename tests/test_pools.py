"""Pools: deduplication by the overlap policy, depth, which sources found each passage,
coverage against the gold, the unanswerable check, settings and the CLI; on SQLite and
PostgreSQL."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.chunkings import document_chunks, get_chunking
from assay.corpus.evidence_mapping import same_passage
from assay.errors import InvalidInput
from assay.experiments.pool_sources import SourceAnswer, adhoc_task
from assay.experiments.pools import (
    merge,
    pool_strong_hits,
    project_pool,
    question_pool,
    trec_lines,
    unanswerable_check,
)
from assay.experiments.runfiles import keep_local_file
from assay.gold.items import create_item, get_item
from assay.gold.project_config import settings_view, update_settings
from assay.records import Evidence, Item, Project, Turn
from assay.search.pool_settings import RunFile, parse_pool_settings, pool_settings, with_sources
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from tests.experiments_corpus import Corpus, build_corpus

KEYWORD_ONLY = parse_pool_settings({"sources": [{"name": "keyword", "kind": "keyword"}]})


def found(doc: str | None, start: int | None, end: int | None, text: str = "") -> dict[str, object]:
    return {"doc_id": doc, "start": start, "end": end, "text": text, "chunk_id": None}


PASSWORDS = "How many characters must passwords have at least?"
"""Marked unanswerable in these tests, though the security document answers it."""


def doubtful_item(ws: Workspace, project: Project) -> Item:
    """An item marked unanswerable whose answer the documents hold (a strong hit)."""
    turn = Turn(query=PASSWORDS, answer="The documents do not say.", query_type="unanswerable")
    return create_item(ws, project, Item(turns=[turn]))


def test_same_passage_is_half_of_either() -> None:
    assert same_passage((0, 100), (10, 90))  # inside
    assert same_passage((0, 100), (50, 300))  # half of the first
    assert same_passage((0, 40), (20, 200))  # half of the first, a tenth of the second
    assert not same_passage((0, 100), (60, 300))  # 40 shared: under half of either
    assert not same_passage((0, 100), (100, 200))  # touching is no overlap


def test_merge_dedups_keeps_ranks_caps_depth_and_judges() -> None:
    answers = [
        SourceAnswer(
            "a",
            (
                found("d1", 0, 100, "first"),
                found("d1", 200, 300, "second"),
                found("d2", 0, 50, "third"),
                found("d1", 400, 500, "beyond depth"),
            ),
        ),
        SourceAnswer(
            "b",
            (
                found("d1", 250, 400, "b's view of second"),  # 50 of a's 100: the same
                found("d1", 10, 90, "b's view of first"),
                found(None, None, None, "nowhere"),
            ),
        ),
        SourceAnswer("c", error="c: timed out"),
    ]
    task = dataclasses.replace(
        adhoc_task("q", "item::1"),
        evidence=(
            Evidence(doc_id="d1", start=20, end=60, text="x" * 40, label="relevant", anchor="ok"),
            Evidence(
                doc_id="d1", start=20, end=60, text="x" * 40, label="distracting", anchor="ok"
            ),
            Evidence(doc_id="d2", start=0, end=50, text="y" * 50, label="irrelevant", anchor="ok"),
            Evidence(doc_id="d9", start=0, end=5, text="zzzzz", label="relevant", anchor="ok"),
        ),
    )
    pool = merge(task, answers, depth=3)
    assert [(e.doc_id, e.start, e.end) for e in pool.entries] == [
        ("d1", 0, 100),  # rank 1 for a, 2 for b: two sources
        ("d1", 200, 300),  # rank 1 for b, 2 for a; found later
        ("d2", 0, 50),
    ]
    first, second, third = pool.entries
    assert first.found_by == {"a": 1, "b": 2} and first.text == "first"
    assert second.found_by == {"a": 2, "b": 1}
    assert third.found_by == {"a": 3}
    assert first.judged == "relevant"  # the strongest label wins
    assert second.judged is None and third.judged == "irrelevant"
    assert pool.judged == 2 and pool.coverage == pytest.approx(2 / 3)
    assert pool.errors == {"c": "c: timed out"}
    assert pool.unplaced == {"b": 1}
    assert pool.sources == ("a", "b", "c")
    # a run every scorer reads in the pool's order: scores strictly decrease with rank
    assert trec_lines([pool]) == [
        "item::1 Q0 d1:0-100 1 3.0 pool",
        "item::1 Q0 d1:200-300 2 2.0 pool",
        "item::1 Q0 d2:0-50 3 1.0 pool",
    ]


def test_an_empty_pool_has_no_coverage() -> None:
    pool = merge(adhoc_task("q"), [SourceAnswer("a")], depth=5)
    assert pool.entries == [] and pool.coverage is None


@pytest.fixture
def corpus(any_ws: Workspace) -> Corpus:
    return build_corpus(any_ws, create_project(any_ws, "pools"))


def _run_file(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "system.trec"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_item_pool_with_a_run_file_and_keyword(
    any_ws: Workspace, corpus: Corpus, tmp_path: Path
) -> None:
    ws, project = any_ws, corpus.project
    chunking = get_chunking(ws, project)
    chunks = document_chunks(ws, chunking, corpus.travel.id)
    hotel = next(c for c in chunks if "Hotel" in corpus.travel.text[c.start : c.end])
    meals = next(c for c in chunks if "Meals" in corpus.travel.text[c.start : c.end])
    item = corpus.items[0]
    path = _run_file(
        tmp_path,
        [
            f"{item.id}::1 Q0 {meals.chunk_id} 1 9.0 sys",
            f"{item.id}::1 Q0 {hotel.chunk_id} 2 8.0 sys",
            f"{item.id}::1 Q0 no-such-chunk 3 7.0 sys",
        ],
    )
    ref = keep_local_file(ws, path, "run")
    settings = with_sources(
        pool_settings(project.settings),
        built_in=["keyword"],
        runs=[("sys", RunFile(sha256=ref.sha256, name=ref.name))],
        depth=3,
    )
    pool = question_pool(ws, project, settings, item_id=item.id)
    by_chunk = {e.chunk_id: e for e in pool.entries}
    assert by_chunk[hotel.chunk_id].found_by == {"keyword": 1, "sys": 2}
    assert by_chunk[hotel.chunk_id].judged == "relevant"
    assert by_chunk[meals.chunk_id].found_by["sys"] == 1
    assert pool.unplaced == {"sys": 1}  # the unknown id cannot be judged: left out
    assert all(len(e.found_by) >= 1 for e in pool.entries)
    assert len([e for e in pool.entries if "keyword" in e.found_by]) <= 3
    assert pool.judged == 1 and pool.coverage == pytest.approx(1 / len(pool.entries))
    # a free question: same passages, nothing judged, run files have no entry for it
    free = question_pool(ws, project, settings, query=item.turns[0].query)
    assert free.judged == 0 and all("sys" not in e.found_by for e in free.entries)


def test_project_pool_summary_and_unanswerable_marks(any_ws: Workspace, corpus: Corpus) -> None:
    ws, project = any_ws, corpus.project
    settings = with_sources(KEYWORD_ONLY, built_in=["keyword"], depth=2)
    whole = project_pool(ws, project, settings, statuses="all")
    summary = whole.summary()
    # 2 questions + a conversation of 3 turns + a draft question
    assert summary["questions"] == 6 == len(whole.pools)
    assert summary["pooled"] == sum(len(p.entries) for p in whole.pools)
    assert summary["sources"]["keyword"]["found"] == summary["pooled"]
    assert summary["sources"]["keyword"]["only"] == summary["pooled"]
    assert 0 < summary["judged"] <= summary["pooled"]
    assert summary["coverage"] == pytest.approx(summary["judged"] / summary["pooled"])
    assert all(len(p.entries) <= 2 for p in whole.pools)
    marked = [p.task_id for p in whole.pools if p.marked_unanswerable]
    assert marked == [f"{corpus.items[2].id}::3"]
    accepted = project_pool(ws, project, settings, statuses="accepted")
    assert len(accepted.pools) == 5


def test_unanswerable_check_warns_with_the_strong_hit(any_ws: Workspace, corpus: Corpus) -> None:
    ws, project = any_ws, corpus.project
    doubtful = doubtful_item(ws, project)
    findings = unanswerable_check(ws, project, doubtful, KEYWORD_ONLY)
    assert [f.code for f in findings] == ["unanswerable_strong_hit"]
    assert findings[0].level == "warning" and findings[0].params["count"] >= 1
    pool = question_pool(ws, project, KEYWORD_ONLY, item_id=doubtful.id)
    assert pool.marked_unanswerable
    best = pool_strong_hits(pool, KEYWORD_ONLY)[0]
    assert "at least 14 characters" in best.text
    assert set(best.words) >= {"passwords", "characters"} and best.coverage >= 0.8
    # the moon question is unanswerable and nothing holds its words
    conversation = get_item(ws, project, corpus.items[2].id)
    assert unanswerable_check(ws, project, conversation, KEYWORD_ONLY) == []
    # a stricter rule: no strong hit any more
    strict = parse_pool_settings({**KEYWORD_ONLY.model_dump(), "strong_min_words": 6})
    assert unanswerable_check(ws, project, doubtful, strict) == []
    # an answerable item is never checked
    assert unanswerable_check(ws, project, corpus.items[0], KEYWORD_ONLY) == []


def test_pool_settings_are_checked_and_nothing_is_stored_on_error(
    any_ws: Workspace, corpus: Corpus
) -> None:
    ws, project = any_ws, corpus.project
    assert [s.name for s in pool_settings(project.settings).sources] == ["keyword", "dense"]
    bad = [
        ({"depth": 0}, "depth"),
        ({"sources": []}, "sources"),
        ({"sources": [{"name": "x", "kind": "external"}]}, "needs endpoint"),
        ({"sources": [{"name": "x", "kind": "run"}]}, "needs run_file"),
        ({"sources": [{"name": "k", "kind": "keyword"}, {"name": "k", "kind": "dense"}]}, "twice"),
        ({"sources": [{"name": "x", "kind": "bm99"}]}, "kind"),
        ({"strong_coverage": 1.5}, "strong_coverage"),
        ({"surprise": 1}, "surprise"),
    ]
    for value, says in bad:
        with pytest.raises(InvalidInput, match=says):
            update_settings(ws, project, {"pool": value, "annotators_see_all": True})
    stored = get_project(ws, project.name)
    assert "pool" not in stored.settings and not stored.settings.get("annotators_see_all")
    with pytest.raises(InvalidInput, match="unknown pool source 'bm25'"):
        with_sources(KEYWORD_ONLY, built_in=["bm25"])
    saved = update_settings(ws, project, {"pool": {"depth": 7, "strong_coverage": 0.6}})
    assert settings_view(saved)["pool"]["depth"] == 7
    assert pool_settings(get_project(ws, project.name).settings).strong_coverage == 0.6


def test_a_pool_needs_a_question(any_ws: Workspace, corpus: Corpus) -> None:
    with pytest.raises(InvalidInput, match="needs a question"):
        question_pool(any_ws, corpus.project, KEYWORD_ONLY, query="  ")
    with pytest.raises(InvalidInput, match="turn 5 is not one"):
        question_pool(any_ws, corpus.project, KEYWORD_ONLY, item_id=corpus.items[2].id, turn=5)


def test_cli_pools_a_project_and_a_question(ws: Workspace, tmp_path: Path) -> None:
    project: Project = create_project(ws, "handbook")
    corpus = build_corpus(ws, project)
    runner = CliRunner()
    home = ["--home", str(ws.settings.home)]
    out = tmp_path / "pool.json"
    args = ["pool", "--project", "handbook", "--source", "keyword", "-k", "3"]
    result = runner.invoke(make_app(), [*home, *args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "6 question(s), depth 3" in result.output and "coverage" in result.output
    written = json.loads(out.read_text())
    assert written["summary"]["questions"] == 6 and len(written["pools"]) == 6
    trec = tmp_path / "pool.trec"
    result = runner.invoke(make_app(), [*home, *args, "--out", str(trec), "--format", "trec"])
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in trec.read_text().splitlines()]
    first = lines[0]
    assert first[1] == "Q0" and first[5] == "pool"
    assert first[0] == written["pools"][0]["query_id"]  # the query ids exports write
    assert "::" not in first[0] or "<::>" in first[0]
    for query in {line[0] for line in lines}:  # each query's scores strictly decrease
        scores = [float(line[4]) for line in lines if line[0] == query]
        assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    item = corpus.items[0]
    result = runner.invoke(make_app(), [*home, *args, "--item", item.id, "--json"])
    assert result.exit_code == 0, result.output
    one = json.loads(result.output)
    assert one["task_id"] == f"{item.id}::1" and one["judged"] >= 1
    assert one["entries"][0]["found_by"] == {"keyword": 1}
    result = runner.invoke(make_app(), [*home, *args, "--format", "xml"])
    assert result.exit_code != 0 and "--format must be json or trec" in result.output
    result = runner.invoke(make_app(), [*home, "pool", "--project", "handbook", "-s", "bm99"])
    assert result.exit_code != 0 and "unknown pool source 'bm99'" in result.output
