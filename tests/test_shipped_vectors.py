"""The MiniLM vectors shipped for the demo: a fresh demo's texts all have one, they are the
model's own vectors, and an embedder uses them without loading the model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from assay.corpus.chunkings import get_chunking
from assay.demo import gold_items, open_demo
from assay.search.dense import DenseIndex
from assay.search.embeddings import MINILM_SHA256, MiniLMEmbedder
from assay.search.indexes import sync_index
from assay.search.shipped_vectors import SHIPPED_PATH, load_shipped, text_key, write_shipped
from assay.store.workspace import Workspace
from tests.conftest import missing


@pytest.fixture(scope="module")
def shipped() -> MiniLMEmbedder:
    if importlib.util.find_spec("onnxruntime") is None:
        missing("onnxruntime is not installed (pip install -e '.[embeddings]')")
    return MiniLMEmbedder(threads=1)


def test_a_fresh_demo_is_indexed_and_asked_without_loading_the_model(
    ws: Workspace, tmp_path: Path, shipped: MiniLMEmbedder
) -> None:
    """Every text a fresh demo embeds has a shipped vector (else run
    scripts/minilm_demo_vectors.py): its dense index, and its gold questions as queries."""
    embedder = MiniLMEmbedder(threads=1)
    project, _ = open_demo(ws, with_items=True)
    index = DenseIndex(tmp_path / "dense", embedder, language=project.language)
    report = sync_index(ws, project, get_chunking(ws, project, None), index)
    assert report.added > 0
    questions = embedder.embed([gold["query"] for gold in gold_items()])
    assert questions.shape == (len(gold_items()), embedder.dim)
    assert not embedder.model_loaded, "a demo text has no shipped vector: regenerate the file"
    top = index.search(gold_items()[0]["query"], 3)
    assert top and not embedder.model_loaded


def test_the_shipped_vectors_are_the_models_own(shipped: MiniLMEmbedder) -> None:
    model = MiniLMEmbedder(threads=1, shipped=False)
    questions = [gold["query"] for gold in gold_items()[:4]]
    from_file = shipped.embed(questions)
    assert not shipped.model_loaded
    computed = np.stack([model.embed([q])[0] for q in questions])  # each alone, as asked
    assert np.allclose(from_file, computed, atol=1e-5)


def test_known_and_unknown_texts_come_back_in_their_order(shipped: MiniLMEmbedder) -> None:
    model = MiniLMEmbedder(threads=1, shipped=False)
    known = gold_items()[1]["query"]
    texts = ["A question no demo asks about tram fares.", known, "Noch eine neue Frage."]
    mixed = shipped.embed(texts)
    assert shipped.model_loaded  # the unknown texts needed it
    assert np.array_equal(mixed[1], load_shipped(MINILM_SHA256)[text_key(known)])
    assert np.allclose(mixed[[0, 2]], model.embed([texts[0], texts[2]]), atol=1e-6)
    assert np.allclose(np.linalg.norm(mixed, axis=1), 1.0, atol=1e-5)


def test_vectors_of_another_model_file_are_not_used(tmp_path: Path) -> None:
    path = tmp_path / "other.npz"
    vectors = np.eye(2, 384, dtype=np.float32)
    write_shipped(path, "0" * 64, ["one", "two"], vectors)
    assert load_shipped("0" * 64, path)[text_key("two")].tolist() == vectors[1].tolist()
    assert load_shipped(MINILM_SHA256, path) == {}
    assert load_shipped(MINILM_SHA256, tmp_path / "missing.npz") == {}
    assert SHIPPED_PATH.is_file()  # the package carries the demo's
