"""A chat turn answered by an external system whose passages are not in the corpus keeps them
as unanchored contexts (text and the id they came with, no document or offsets), in rank
among the placed ones, and exports carry them (they were dropped silently)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.experiments import create_experiment, run_experiment, task_results
from assay.formats import get_format
from assay.gold.items import get_item
from assay.records import Project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle
from assay.transfer.experiment_file import experiment_to_inspectorraget
from tests.experiments_corpus import Corpus, build_corpus
from tests.fakes.rag_service import FakeRag
from tests.test_pool_external import _client, _events, _settings

OUTSIDE = "Ferries leave from pier 4, says a blog post outside the corpus."


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Corpus:
    return build_corpus(ws, project)


def test_passages_outside_the_corpus_are_kept_unanchored(
    ws: Workspace, corpus: Corpus, tmp_path: Path
) -> None:
    def answer(body: dict[str, Any]) -> Any:
        return {
            "answer": "Pier 4.",
            "contexts": [
                {"doc_id": "blog-7", "text": OUTSIDE, "score": 0.9},
                {"text": "Meals on business trips"},
                "Another passage no document holds.",
            ],
        }

    client = _client(ws)
    with FakeRag(answer) as service:
        sources = _settings(service.url).model_dump()["sources"]
        saved = client.put(
            "/api/projects/test/pool-settings", json={"sources": sources, "chat": "mine"}
        )
        assert saved.status_code == 200, saved.text
        found = _events(
            client.post("/api/projects/test/conversations", json={"query": "Where do ferries go?"})
        )
    assert found[-1]["type"] == "done", found[-1]
    item = get_item(ws, corpus.project, found[-1]["item"]["id"])
    turn = item.turns[0]
    assert [c["rank"] for c in turn.retrieved] == [1, 2, 3]
    first, placed, last = turn.retrieved
    assert first["text"] == OUTSIDE and first["doc_id"] is None and first["start"] is None
    assert first["document_id"] == "blog-7" and first["found_by"] == {"mine": 1}
    assert first["outside_corpus"] is True and "outside_corpus" not in placed
    assert first["score"] == 0.9
    assert placed["doc_id"] == corpus.travel.id and placed["found_by"] == {"mine": 2}
    assert last["text"] == "Another passage no document holds." and "document_id" not in last
    assert turn.generation["retrieval"]["outside_corpus"] == {"mine": 2}

    # the conversation page draws them without a document (labelled as outside the corpus)
    page = client.get(f"/projects/test/conversations/{item.id}")
    assert page.status_code == 200

    # exports carry them: the native archive as stored, Ragas by text and id
    native = tmp_path / "all.zip"
    get_format("native").write(export_bundle(ws, corpus.project, statuses=None), native)
    (read,) = [i for i in get_format("native").read(native).items if i.id == item.id]
    assert read.turns[0].retrieved[0]["text"] == OUTSIDE
    assert read.turns[0].retrieved[0]["document_id"] == "blog-7"
    samples = tmp_path / "samples.jsonl"
    get_format("ragas").write(export_bundle(ws, corpus.project, statuses=None), samples)
    lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    (sample,) = [s for s in lines if s["assay"]["item_id"] == item.id]
    assert sample["retrieved_contexts"][0] == OUTSIDE
    assert sample["retrieved_context_ids"][0] == "blog-7"
    assert sample["assay"]["unanchored_contexts"] == [OUTSIDE, last["text"]]


def test_experiment_results_keep_and_show_them(ws: Workspace, corpus: Corpus) -> None:
    def answer(body: dict[str, Any]) -> Any:
        return {"answer": "Pier 4.", "contexts": [{"doc_id": "blog-7", "text": OUTSIDE},
                                                  {"text": "Meals on business trips"}]}  # fmt: skip

    with FakeRag(answer) as service:
        created = create_experiment(
            ws, corpus.project, "ext", mode="rag", pipelines=[
                {"name": "mine", "kind": "external", "endpoint": service.url, "retries": 0}
            ], metrics=["retrieval_recall"],
        )  # fmt: skip
        assert run_experiment(ws, corpus.project, created.id).status == "done"
    task_id = f"{corpus.items[0].id}::1"
    _, results = task_results(ws, corpus.project, created.id, task_id)
    outside, placed = results["mine"].retrieved
    assert outside["text"] == OUTSIDE and outside["start"] is None  # stored: its only copy
    assert "text" not in placed  # the document holds it
    # the experiment's InspectorRAGet file names it and holds its text
    written = experiment_to_inspectorraget(ws, corpus.project, "ext")
    (result,) = [r for r in written["results"] if r["task_id"] == task_id]
    assert result["contexts"][0] == {"document_id": "blog-7"}
    texts = {d["document_id"]: d["text"] for d in written["documents"]}
    assert texts["blog-7"] == OUTSIDE
    client = _client(ws)
    shown = client.get(f"/api/projects/test/experiments/ext/tasks/{task_id}").json()
    first, second = shown["pipelines"][0]["retrieved"]
    assert (first["outside"], first["text"], first["document"]) == (True, OUTSIDE, "blog-7")
    assert second["outside"] is False and second["text"].startswith("Meals")
    for language, label in (("en", "outside the corpus"), ("de", "außerhalb des Korpus")):
        client.cookies.set("assay_lang", language)
        page = client.get(f"/projects/test/experiments/ext/tasks/{task_id}").text
        assert label in page and "pier 4" in page
