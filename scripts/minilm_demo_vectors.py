"""Write src/assay/search/minilm-demo-vectors.npz: MiniLM's vectors of the texts a fresh demo
embeds (the chunks of its documents in the default chunking, as the dense index embeds them:
all in one call; each demo gold question alone, as a search embeds a query).

Run it after changing the demo documents, the gold questions, the default chunking or the
model; tests/test_shipped_vectors.py fails until then.

Usage:
    python scripts/minilm_demo_vectors.py
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from assay.corpus.chunkings import get_chunking
from assay.demo import gold_items, open_demo
from assay.search.dense import DenseIndex
from assay.search.embeddings import MINILM_SHA256, MiniLMEmbedder
from assay.search.indexes import sync_index
from assay.search.shipped_vectors import SHIPPED_PATH, write_shipped
from assay.store.settings import Settings
from assay.store.workspace import Workspace


class Recording:
    """MiniLM without the shipped vectors, remembering every text and vector it made."""

    def __init__(self) -> None:
        self.model = MiniLMEmbedder(shipped=False)
        self.name, self.dim = self.model.name, self.model.dim
        self.texts: list[str] = []
        self.vectors: list[np.ndarray] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.embed(texts)
        self.texts.extend(texts)
        self.vectors.append(vectors)
        return vectors


def main() -> None:
    recording = Recording()
    with (
        tempfile.TemporaryDirectory() as home,
        Workspace.open(Settings(home=Path(home) / "ws"), create=True) as ws,
    ):
        project, _ = open_demo(ws, with_items=True)
        chunking = get_chunking(ws, project, None)
        index = DenseIndex(Path(home) / "dense", recording, language=project.language)
        sync_index(ws, project, chunking, index)
    for gold in gold_items():
        recording.embed([gold["query"]])
    texts, vectors = recording.texts, np.concatenate(recording.vectors)
    first = {text: row for row, text in reversed(list(enumerate(texts)))}
    rows = sorted(first.values())
    write_shipped(SHIPPED_PATH, MINILM_SHA256, [texts[r] for r in rows], vectors[rows])
    print(f"wrote {len(rows)} vectors to {SHIPPED_PATH}")


if __name__ == "__main__":
    main()
