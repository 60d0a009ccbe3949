"""Embedders: the hashing stand-in always, the packaged MiniLM where the extra is installed."""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from assay.errors import BackendUnavailable, InvalidInput
from assay.search.embeddings import (
    EMBEDDERS,
    MINILM_SHA256,
    TOKENIZER_PATH,
    HashingEmbedder,
    MiniLMEmbedder,
    file_sha256,
    make_embedder,
)
from tests.conftest import missing

TEXTS = [
    "The tram company was founded in 1962.",
    "Hotel costs are reimbursed up to 140 euros per night.",
    "",
    "Recordings made on board are overwritten automatically after 72 hours.",
    "Die Aufzeichnungen werden nach 72 Stunden überschrieben.",
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    if importlib.util.find_spec("onnxruntime") is None:
        missing("onnxruntime is not installed (pip install -e '.[embeddings]')")
    return MiniLMEmbedder(threads=1)


def unit_rows(vectors: np.ndarray, rows: list[int]) -> None:
    norms = np.linalg.norm(vectors[rows], axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


# -- hashing ---------------------------------------------------------------------------------


def test_hashing_shape_dtype_and_norm() -> None:
    vectors = HashingEmbedder(dim=64).embed(TEXTS)
    assert vectors.shape == (5, 64)
    assert vectors.dtype == np.float32
    unit_rows(vectors, [0, 1, 3, 4])
    assert not vectors[2].any()  # no words, no direction


def test_hashing_is_deterministic_across_processes() -> None:
    here = HashingEmbedder().embed(TEXTS[:2])
    code = (
        "import numpy, sys; from assay.search.embeddings import HashingEmbedder; "
        f"numpy.save(sys.stdout.buffer, HashingEmbedder().embed({TEXTS[:2]!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "7"},
    ).stdout
    assert np.array_equal(np.load(io.BytesIO(out)), here)


def test_hashing_shared_words_are_closer() -> None:
    a, b, c = HashingEmbedder().embed(
        ["hotel costs per night", "costs of a hotel night", "bus depot opening"]
    )
    assert float(a @ b) > float(a @ c)


def test_hashing_empty_batch_and_bad_dim() -> None:
    assert HashingEmbedder(dim=8).embed([]).shape == (0, 8)
    with pytest.raises(InvalidInput, match="dim"):
        HashingEmbedder(dim=1)


def test_registry_and_make_embedder() -> None:
    assert set(EMBEDDERS) == {"minilm", "hashing"}
    embedder = make_embedder("hashing", dim=32)
    assert embedder.dim == 32 and embedder.name == "hashing-32"
    with pytest.raises(InvalidInput, match="hashing, minilm"):
        make_embedder("word2vec")


def test_importing_assay_does_not_load_onnxruntime() -> None:
    code = (
        "import sys, assay, assay.search.embeddings, assay.search.dense, assay.search.hybrid, "
        "assay.search.retriever; print('onnxruntime' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- MiniLM ----------------------------------------------------------------------------------


def test_vendored_tokenizer_matches_its_manifest() -> None:
    manifest = (TOKENIZER_PATH.parent / "MANIFEST").read_text(encoding="utf-8")
    assert file_sha256(TOKENIZER_PATH) in manifest
    assert "Apache-2.0" in manifest


def test_minilm_shape_norm_and_determinism(minilm: MiniLMEmbedder) -> None:
    first = minilm.embed(TEXTS)
    assert first.shape == (5, 384) and first.dtype == np.float32
    unit_rows(first, list(range(5)))  # even "" has a vector: [CLS] [SEP]
    assert np.array_equal(minilm.embed(TEXTS), first)


def test_minilm_input_order_does_not_matter(minilm: MiniLMEmbedder) -> None:
    forward = minilm.embed(TEXTS)
    backward = minilm.embed(TEXTS[::-1])[::-1]
    assert np.array_equal(forward, backward)
    # A different batch changes int8 quantisation ranges only a little.
    alone = minilm.embed(TEXTS[:1])[0]
    assert float(alone @ forward[0]) > 0.99


def test_minilm_batches_of_many_lengths(minilm: MiniLMEmbedder) -> None:
    texts = [" ".join(["word"] * n) + f" item {n}" for n in range(1, 80)]
    small = MiniLMEmbedder(threads=1, batch_size=7).embed(texts)
    large = minilm.embed(texts)
    assert np.allclose((small * large).sum(axis=1), 1.0, atol=0.01)


def test_minilm_truncates_long_texts(minilm: MiniLMEmbedder) -> None:
    long_text = "tram " * 2000
    vectors = minilm.embed([long_text, long_text + " depot"])
    unit_rows(vectors, [0, 1])
    assert float(vectors[0] @ vectors[1]) > 0.999  # the tail beyond 256 tokens is cut


def test_minilm_paraphrase_beats_unrelated(minilm: MiniLMEmbedder) -> None:
    query, paraphrase, unrelated = minilm.embed(
        [
            "How long are video recordings on buses kept?",
            "Camera footage from the vehicles is deleted after 72 hours.",
            "The works council approved the new holiday schedule.",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.2
    # The sentence-transformers README prints 0.6660, 0.1046 and 0.1411 for these pairs
    # with the fp32 torch model; int8 ONNX stays within a few thousandths.
    lovely, sunny, stadium = minilm.embed(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    assert float(lovely @ sunny) == pytest.approx(0.6660, abs=0.02)
    assert float(lovely @ stadium) == pytest.approx(0.1046, abs=0.02)
    assert float(sunny @ stadium) == pytest.approx(0.1411, abs=0.02)


def test_minilm_refuses_a_model_with_another_sha256(minilm: MiniLMEmbedder, tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(BackendUnavailable) as caught:
        MiniLMEmbedder(model_path=fake)
    message = str(caught.value)
    assert MINILM_SHA256 in message and file_sha256(fake) in message and str(fake) in message
    with pytest.raises(BackendUnavailable, match="does not exist"):
        MiniLMEmbedder(model_path=tmp_path / "absent.onnx")


def test_minilm_rejects_bad_options(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(InvalidInput):
        MiniLMEmbedder(batch_size=0)
    with pytest.raises(InvalidInput):
        MiniLMEmbedder(threads=0)


def test_missing_extra_names_the_install_command(tmp_path: Path) -> None:
    # A child interpreter where the runtime cannot be imported (a None entry in sys.modules
    # makes `import onnxruntime` fail), as on an install without the extra.
    code = (
        "import sys; sys.modules['onnxruntime'] = None\n"
        "from assay.search.embeddings import make_embedder\n"
        "from assay.errors import BackendUnavailable\n"
        "try:\n    make_embedder('minilm')\n"
        "except BackendUnavailable as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install -e '.[embeddings]' in the Assay folder" in out.stdout
