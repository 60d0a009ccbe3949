"""MiniLM vectors the package ships for texts it ships: the chunks of the demo documents (the
default chunking) and the demo gold questions.

With them a fresh demo needs no model run: its dense index, the item page's pool panel and a
hybrid experiment find their vectors here. Embedding the demo corpus took about 6 s of CPU on
a 2-core machine, which the first annotator of a fresh demo waited for (and every test that
builds a demo workspace spent again).

A text is looked up by the sha256 of its UTF-8 bytes; the file names the model file it was
computed with, and an embedder of another model file ignores it. ``scripts/minilm_demo_vectors.py``
writes it; tests check that it covers a fresh demo and holds the model's own vectors.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

SHIPPED_PATH = Path(__file__).with_name("minilm-demo-vectors.npz")


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def load_shipped(model_sha256: str, path: Path = SHIPPED_PATH) -> dict[bytes, np.ndarray]:
    """The shipped vectors by :func:`text_key`, or none when the file is missing or was
    computed with another model file."""
    if not path.is_file():
        return {}
    with np.load(path) as data:
        if str(data["model_sha256"]) != model_sha256:
            return {}
        keys, vectors = data["keys"], data["vectors"]
    return {bytes(key): vector for key, vector in zip(keys, vectors, strict=True)}


def write_shipped(path: Path, model_sha256: str, texts: Sequence[str], vectors: np.ndarray) -> None:
    """Write ``vectors`` (one row per text, float32) keyed by their texts' :func:`text_key`."""
    keys = np.frombuffer(b"".join(text_key(t) for t in texts), dtype=np.uint8)
    np.savez_compressed(
        path,
        model_sha256=np.array(model_sha256),
        keys=keys.reshape(len(texts), 32),
        vectors=vectors.astype(np.float32),
    )
