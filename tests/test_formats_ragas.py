"""The Ragas export read by Ragas itself (the ``oracle`` extra; the Makefile installs ragas
``--no-deps``): ``EvaluationDataset.from_jsonl`` takes the lines as they are, and Ragas' own
id-based context recall and precision give the numbers worked out here by hand, which show
the AND/OR groups flattened (Assay's group recall reads higher). Also: the CLI and the web
export offer it, an import of it is refused by name. SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import importlib.util
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.chunkings import document_chunks, get_chunking
from assay.corpus.ingest import ingest_bytes
from assay.errors import InvalidInput
from assay.formats import get_format
from assay.gold.items import create_item
from assay.metrics.retrieval import retrieval_precision, retrieval_recall
from assay.records import Context, Evidence, Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle
from tests.conftest import missing
from tests.test_web_transfer import serving, wait

TEXTS = {
    "harbour.txt": "The night ferry leaves the harbour at 22:40.",
    "timetable.txt": "Ferries to Oslo leave at 22:40 every night.",
    "fares.txt": "A cabin on the night ferry costs 120 euros.",
    "weather.txt": "Storms in autumn can delay the crossing.",
}


def _project(ws: Workspace) -> tuple[Project, dict[str, str]]:
    """Four one-chunk documents and two accepted items; returns chunk id per file name."""
    project = create_project(ws, "ragas")
    chunking = get_chunking(ws, project, None)
    chunk: dict[str, str] = {}
    docs: dict[str, str] = {}
    for name, text in TEXTS.items():
        doc = ingest_bytes(ws, project, name, text.encode())
        docs[name] = doc.id
        (only,) = document_chunks(ws, chunking, doc.id)
        chunk[name] = only.chunk_id

    def passage(name: str, group: int | None = None, label: str = "relevant") -> Evidence:
        text = TEXTS[name]
        return Evidence(docs[name], 0, len(text), text, label=label, group=group)

    def retrieved(*names: str) -> list[Context]:
        return [
            Context(chunk_id=chunk[n], doc_id=docs[n], text=TEXTS[n], rank=r)
            for r, n in enumerate(names, 1)
        ]

    # harbour and timetable are alternatives (group 1), fares is needed too (own group)
    first = Turn(
        query="When does the night ferry leave, and what does a cabin cost?",
        answer="At 22:40; a cabin costs 120 euros.",
        original_answer="It leaves at 22:40.",
        evidence=[
            passage("harbour.txt", 1), passage("timetable.txt", 1), passage("fares.txt"),
            passage("weather.txt", label="distracting"),
        ],
        retrieved=[*retrieved("harbour.txt", "fares.txt", "weather.txt")],
    )  # fmt: skip
    second = Turn(
        query="And in autumn?",
        answer="Storms can delay it.",
        evidence=[passage("weather.txt")],
        retrieved=[
            *retrieved("fares.txt"),
            Context(text="A ferry blog post outside the corpus.", document_id="blog-7"),
        ],
    )
    create_item(ws, project, Item(kind="conversation", turns=[first, second]), status="accepted")
    return project, chunk


@pytest.fixture
def ragas_metrics(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Any, Any, Any]:
    """Ragas' EvaluationDataset and its id-based context recall and precision, with its usage
    reports off and the user id file it writes anyway under the test's folder."""
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "true")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    if importlib.util.find_spec("ragas") is None:
        missing("ragas is not installed (the Makefile installs it --no-deps, see the oracle extra)")
    with warnings.catch_warnings():  # langchain's import-time deprecations are not ours
        warnings.simplefilter("ignore")
        from ragas._analytics import get_userid

        get_userid()  # opens its file without closing it: once, here (then cached)
        gc.collect()
        from ragas import EvaluationDataset
        from ragas.metrics._context_precision import IDBasedContextPrecision
        from ragas.metrics._context_recall import IDBasedContextRecall
    return EvaluationDataset, IDBasedContextRecall(), IDBasedContextPrecision()


def test_ragas_reads_the_export_and_scores_it_as_worked_out(
    any_ws: Workspace, tmp_path: Path, ragas_metrics: tuple[Any, Any, Any]
) -> None:
    dataset_type, recall, precision = ragas_metrics
    project, chunk = _project(any_ws)
    out = tmp_path / "samples.jsonl"
    notes = get_format("ragas").write(export_bundle(any_ws, project), out)
    assert notes == []

    dataset = dataset_type.from_jsonl(str(out))
    first, second = dataset.samples
    assert first.user_input == "When does the night ferry leave, and what does a cabin cost?"
    assert first.reference == "At 22:40; a cabin costs 120 euros."
    assert first.response == "It leaves at 22:40."
    assert first.reference_contexts == [TEXTS[n] for n in ("harbour.txt", "timetable.txt",
                                                             "fares.txt")]  # fmt: skip
    assert first.retrieved_contexts == [TEXTS[n] for n in ("harbour.txt", "fares.txt",
                                                             "weather.txt")]  # fmt: skip
    ids = [chunk[n] for n in ("harbour.txt", "timetable.txt", "fares.txt")]
    assert first.reference_context_ids == ids
    assert second.retrieved_context_ids == [chunk["fares.txt"], "blog-7"]
    assert second.retrieved_contexts[-1] == "A ferry blog post outside the corpus."

    def score(metric: Any, sample: Any) -> float:
        # in a thread of its own: a browser test earlier in the same worker leaves
        # Playwright's event loop running in this one, where asyncio.run refuses to start
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return float(pool.submit(asyncio.run, metric.single_turn_ascore(sample)).result())

    # Ragas: every reference id is needed (2 of 3 retrieved); precision 2 of 3 retrieved
    assert score(recall, first) == pytest.approx(2 / 3)
    assert score(precision, first) == pytest.approx(2 / 3)
    assert score(recall, second) == 0.0 and score(precision, second) == 0.0
    # Assay (and AutoRAG): one member of each group suffices, so recall is 1.0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    groups = lines[0]["assay"]["reference_context_groups"]
    assert groups == [[chunk["harbour.txt"], chunk["timetable.txt"]], [chunk["fares.txt"]]]
    retrieved = lines[0]["retrieved_context_ids"]
    assert retrieval_recall(groups, retrieved) == 1.0
    assert retrieval_precision(groups, retrieved) == pytest.approx(2 / 3)
    assert lines[0]["assay"]["distracting_context_ids"] == [chunk["weather.txt"]]
    assert lines[1]["assay"]["history"] == [
        {"role": "user", "content": first.user_input},
        {"role": "assistant", "content": first.reference},
    ]
    assert lines[1]["assay"]["unanchored_contexts"] == ["A ferry blog post outside the corpus."]
    assert [line["assay"]["turn"] for line in lines] == [1, 2]


def test_the_cli_and_the_web_offer_it_and_imports_refuse_it(
    any_ws: Workspace, tmp_path: Path
) -> None:
    _project(any_ws)
    with serving(any_ws) as client:
        listed = {f["name"]: f for f in client.get("/api/formats").json()}
        assert listed["ragas"]["imports"] is False and listed["native"]["imports"] is True
        page = client.get("/projects/ragas/transfer").text
        export_form, import_form = page.split('id="import-form"', 1)
        assert '<option value="ragas"' in export_form
        assert '<option value="ragas"' not in import_form
        started = client.post("/api/projects/ragas/transfer/exports", json={"format": "ragas"})
        assert started.status_code == 202, started.text
        done = wait(client, started.json())
        assert done["state"] == "done" and done["filename"] == "ragas-ragas.jsonl"
        lines = client.get(done["download"]).text.splitlines()
        assert [json.loads(line)["assay"]["turn"] for line in lines] == [1, 2]
        imported = client.post(
            "/api/projects/ragas/transfer/imports",
            data={"format": "ragas"},
            files={"file": ("samples.jsonl", "\n".join(lines).encode())},
        )
        assert imported.status_code == 422 and "for export only" in imported.text
    with pytest.raises(InvalidInput, match="'ragas' is for export only; import one of: native"):
        get_format("ragas").read(tmp_path)
    shown = CliRunner().invoke(make_app(), ["formats", "--json"])
    assert "ragas" in [f["name"] for f in json.loads(shown.stdout)]
