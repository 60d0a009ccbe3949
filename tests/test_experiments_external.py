"""External RAG systems over the HTTP contract, against an in-process fake service."""

from __future__ import annotations

from typing import Any

import pytest

from assay.corpus.chunkings import document_chunks, get_chunking
from assay.experiments import create_experiment, iter_results, run_experiment, task_results
from assay.experiments.external import ContextResolver, ExternalClient, ExternalError
from assay.experiments.tasks import build_tasks
from assay.records import Project
from assay.store.workspace import Workspace
from tests.experiments_corpus import Corpus, build_corpus
from tests.fakes.rag_service import FakeRag


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Corpus:
    return build_corpus(ws, project)


def _spec(url: str, **extra: Any) -> dict[str, Any]:
    return {"name": "mine", "kind": "external", "endpoint": url, "retries": 0, **extra}


def test_contexts_by_chunk_id_doc_id_and_text(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    chunking = get_chunking(ws, project)
    chunks = document_chunks(ws, chunking, corpus.travel.id)
    hotel = next(c for c in chunks if "Hotel" in corpus.travel.text[c.start : c.end])

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "answer": "Up to 120 euros per night.",
            "contexts": [
                {"chunk_id": hotel.chunk_id, "score": 3.0},
                {"text": "Laptops are encrypted with full disk encryption"},
                {"doc_id": "leave.txt"},
                "Nowhere to be found in any document",
            ],
        }

    with FakeRag(answer) as service:
        created = create_experiment(
            ws,
            project,
            "ext",
            mode="rag",
            pipelines=[_spec(service.url)],
            metrics=["retrieval_recall", "token_f1", "trigram_support"],
        )
        done = run_experiment(ws, project, created.id)
        sent = service.requests
    assert done.status == "done" and done.error_count == 0
    assert len(sent) == 5
    second_turn = next(b for b in sent if b["task_id"].endswith("::2"))
    assert second_turn["query"] == "And how are laptops protected?"
    assert second_turn["k"] == 10
    assert second_turn["history"][0] == {"role": "user", "content": "How long must passwords be?"}
    _, results = task_results(ws, project, created.id, f"{corpus.items[0].id}::1")
    result = results["mine"]
    first, located, by_doc, lost = result.retrieved
    assert first["chunk_id"] == hotel.chunk_id and first["start"] == hotel.start
    assert located["doc_id"] == corpus.security.id and located["chunk_id"] is not None
    placed = corpus.security.text[located["start"] : located["end"]]
    assert placed == "Laptops are encrypted with full disk encryption"
    assert by_doc["doc_id"] == corpus.leave.id and by_doc["chunk_id"] is None
    assert lost["doc_id"] is None and lost["chunk_id"] is None
    assert result.metrics["retrieval_recall"] == 1.0
    assert result.metrics["token_f1"] == 1.0
    assert result.details["level"] == "chunk"


def test_an_erroring_task_is_recorded_and_the_run_goes_on(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project

    def answer(body: dict[str, Any]) -> Any:
        if "passwords" in body["query"]:
            return 500
        if "laptops" in body["query"]:
            return "{not json"
        return {"answer": "I do not know.", "contexts": []}

    with FakeRag(answer) as service:
        created = create_experiment(ws, project, "errs", mode="rag", pipelines=[_spec(service.url)])
        done = run_experiment(ws, project, created.id)
    assert done.status == "done" and done.done_count == 3 and done.error_count == 2
    errors = {r.task_id: r.error for r in iter_results(ws, project, "errs") if r.error}
    assert len(errors) == 2
    messages = " | ".join(errors.values())
    assert "HTTP 500" in messages and service.url in messages
    assert "not JSON" in messages
    assert done.aggregates["mine"]["errors"] == 2


def test_errors_are_retried_on_resume(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    broken = {"on": True}

    def answer(body: dict[str, Any]) -> Any:
        if broken["on"] and "passwords" in body["query"]:
            return 503
        return {"answer": "ok", "contexts": []}

    with FakeRag(answer) as service:
        created = create_experiment(
            ws, project, "retry", mode="rag", pipelines=[_spec(service.url)]
        )
        first = run_experiment(ws, project, created.id)
        assert first.error_count == 1
        broken["on"] = False
        count = len(service.requests)
        second = run_experiment(ws, project, created.id)
        assert len(service.requests) == count + 1  # only the failed task asked again
    assert second.error_count == 0 and second.done_count == 5


def test_client_timeout_and_retries(ws: Workspace, corpus: Corpus) -> None:
    task = build_tasks(ws, corpus.project)[0]
    with FakeRag(lambda body: "slow") as service:
        client = ExternalClient(service.url, timeout_s=0.2, retries=1, backoff_s=0.01)
        with pytest.raises(ExternalError, match=r"timed out after 0.2s \(2 attempts\)"):
            client.ask(task, "q", 3)
        client.close()
        assert len(service.requests) == 2
    with FakeRag(lambda body: 404) as service:
        client = ExternalClient(service.url, retries=3)
        with pytest.raises(ExternalError, match="HTTP 404"):
            client.ask(task, "q", 3)  # a client error is not retried
        assert len(service.requests) == 1
        client.close()
    with FakeRag(lambda body: {"answer": 3}) as service:
        client = ExternalClient(service.url)
        with pytest.raises(ExternalError, match="'answer' must be text"):
            client.ask(task, "q", 3)
        client.close()


def test_resolver_places_text_with_whitespace_differences(ws: Workspace, corpus: Corpus) -> None:
    resolver = ContextResolver(ws, corpus.project, get_chunking(ws, corpus.project))
    (entry,) = resolver.resolve([{"text": "Every employee has 30\n days of paid leave"}])
    assert entry["doc_id"] == corpus.leave.id and entry["chunk_id"]
