"""DenseIndex on real index folders, with the hashing embedder (and MiniLM once)."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from assay.errors import Conflict, InvalidInput
from assay.records import ChunkText, Hit, IndexedDocument
from assay.search import dense
from assay.search.dense import LOCK_FILE, DenseIndex
from assay.search.dense_storage import FORMAT, MANIFEST
from assay.search.embeddings import HashingEmbedder, MiniLMEmbedder
from tests.conftest import missing


def doc(doc_id: str, *texts: str, fingerprint: str | None = None) -> IndexedDocument:
    """A document whose chunks are the given texts laid end to end."""
    chunks = []
    offset = 0
    for n, text in enumerate(texts):
        chunks.append(ChunkText(f"{doc_id}#{n}", doc_id, offset, offset + len(text), text))
        offset += len(text) + 1
    return IndexedDocument(doc_id, fingerprint or f"fp-{doc_id}", tuple(chunks))


CORPUS = [
    doc("cats", "The cat sat on the mat.", "Cats are running across the garden."),
    doc("dogs", "A dog runs after the ball in the park."),
    doc("hotel", "Hotel costs are refunded up to 140 euros per night in Hamburg."),
    doc("empty"),
]


def chunk_ids(hits: list[Hit]) -> list[str]:
    return [hit.chunk_id for hit in hits]


def state(index: DenseIndex, query: str = "cat garden dog hotel") -> tuple[object, ...]:
    return index.indexed(), [(h.chunk_id, h.text, round(h.score, 6)) for h in index.search(query)]


@pytest.fixture
def index(tmp_path: Path) -> DenseIndex:
    built = DenseIndex(tmp_path / "dense", HashingEmbedder())
    built.update(CORPUS)
    return built


def test_search_ranks_by_cosine(index: DenseIndex) -> None:
    hits = index.search("hotel costs per night", k=3)
    assert hits[0].chunk_id == "hotel#0"
    assert [h.rank for h in hits] == [1, 2, 3]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    embedder = HashingEmbedder()
    q, chunk = embedder.embed(["hotel costs per night", hits[0].text])
    assert hits[0].score == pytest.approx(float(q @ chunk), abs=1e-6)
    top = hits[0]
    assert (top.doc_id, top.start, top.end) == ("hotel", 0, len(top.text))
    assert top.snippet == top.text
    assert [top.snippet[a:b] for a, b in top.highlights] == ["Hotel", "costs", "per", "night"]


def test_k_blank_queries_and_small_indexes(index: DenseIndex, tmp_path: Path) -> None:
    assert len(index.search("cat", k=100)) == 4
    assert index.search("   ") == []
    assert index.search("!!!") == []  # the hashing embedder sees no words
    with pytest.raises(InvalidInput, match="k must be at least 1"):
        index.search("cat", k=0)
    assert DenseIndex(tmp_path / "fresh", HashingEmbedder()).search("cat") == []


def test_results_are_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    words = [f"w{n}" for n in range(300)]
    docs = [
        doc(f"d{i}", *(" ".join(rng.choice(words, size=12)) for _ in range(5))) for i in range(60)
    ]
    index = DenseIndex(tmp_path / "dense", HashingEmbedder())
    for start in range(0, 60, 20):  # three segments
        index.update(docs[start : start + 20])
    index.update([], delete=["d3", "d41"])
    live = [c for d in docs if d.doc_id not in ("d3", "d41") for c in d.chunks]
    embedder = HashingEmbedder()
    matrix = embedder.embed([c.text for c in live])
    for query in ("w1 w2 w3", "w200 w17", "w5"):
        scores = matrix @ embedder.embed([query])[0]
        expected = sorted(range(len(live)), key=lambda i: (-scores[i], i))[:10]
        assert chunk_ids(index.search(query, k=10)) == [live[i].chunk_id for i in expected]


def test_indexed_holds_fingerprints_including_chunkless_documents(index: DenseIndex) -> None:
    assert index.indexed() == {"cats": "fp-cats", "dogs": "fp-dogs", "hotel": "fp-hotel",
                               "empty": "fp-empty"}  # fmt: skip


def test_delete_and_replace(index: DenseIndex) -> None:
    index.update([], delete=["cats", "nobody"])
    assert "cats" not in index.indexed()
    assert not [h for h in index.search("cat garden", k=10) if h.doc_id == "cats"]
    index.update([doc("dogs", "A puppy sleeps in its basket.", fingerprint="fp-2")])
    assert index.indexed()["dogs"] == "fp-2"
    texts = [h.text for h in index.search("dog puppy ball basket", k=10)]
    assert "A puppy sleeps in its basket." in texts
    assert "A dog runs after the ball in the park." not in texts


def test_update_is_idempotent_and_last_duplicate_wins(index: DenseIndex) -> None:
    before = state(index)
    index.update(CORPUS)
    index.update(CORPUS)
    assert state(index) == before
    index.update([doc("x", "first"), doc("x", "second version", fingerprint="fp-x2")])
    assert index.indexed()["x"] == "fp-x2"
    assert [h.text for h in index.search("first second version") if h.doc_id == "x"] == [
        "second version"
    ]


def test_nothing_to_do_writes_nothing(index: DenseIndex) -> None:
    manifest = index.path / MANIFEST
    stamp = manifest.stat().st_ino
    index.update([], delete=["unknown"])
    index.update([])
    assert manifest.stat().st_ino == stamp


def test_reopen_sees_the_same_index(index: DenseIndex) -> None:
    reopened = DenseIndex(index.path, HashingEmbedder())
    assert state(reopened) == state(index)
    reopened.update([], delete=["dogs"])
    assert "dogs" not in index.indexed()  # another instance sees the write


def test_compaction_drops_dead_rows(index: DenseIndex) -> None:
    before = state(index)
    for n in range(4):
        index.update([doc("cats", "The cat sat on the mat.", "Cats are running across the garden.",
                          fingerprint="fp-cats")])  # fmt: skip
        assert index.stats()["dead"] <= 0.3 * index.stats()["rows"]
        assert n < 3 or index.stats()["segments"] <= 2
    assert state(index) == before
    stats = index.stats()
    assert stats["rows"] - stats["dead"] == 4
    names = {p.name for p in index.path.iterdir() if p.name.startswith("seg-")}
    assert len(names) == 3 * stats["segments"]  # superseded segment files are gone


def test_many_small_updates_are_merged(tmp_path: Path) -> None:
    index = DenseIndex(tmp_path / "dense", HashingEmbedder())
    for n in range(dense.MAX_SEGMENTS + 3):
        index.update([doc(f"d{n}", f"chunk number {n}")])
    assert index.stats()["segments"] <= dense.MAX_SEGMENTS
    assert len(index.indexed()) == dense.MAX_SEGMENTS + 3
    assert index.search("chunk number 17", k=1)[0].chunk_id == "d17#0"


def test_unicode_text_round_trips(index: DenseIndex) -> None:
    text = "Fahrräder dürfen im Innenhof abgestellt werden 🚲."
    index.update([doc("bikes", text)])
    hit = index.search("Fahrräder Innenhof", k=1)[0]
    assert hit.text == text


def test_another_embedder_empties_the_index(index: DenseIndex) -> None:
    other = DenseIndex(index.path, HashingEmbedder(dim=64))
    assert other.indexed() == {}
    assert other.search("cat") == []
    assert DenseIndex(index.path, HashingEmbedder(dim=64)).indexed() == {}


def test_refuses_a_foreign_folder_and_mismatched_chunks(tmp_path: Path) -> None:
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(InvalidInput, match="holds no Assay dense index"):
        DenseIndex(folder, HashingEmbedder())
    index = DenseIndex(tmp_path / "dense", HashingEmbedder())
    bad = IndexedDocument("a", "fp", (ChunkText("b#0", "b", 0, 1, "x"),))
    with pytest.raises(InvalidInput, match="belongs to document 'b'"):
        index.update([bad])


def test_unknown_language_for_snippets(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no stemmer"):
        DenseIndex(tmp_path / "dense", HashingEmbedder(), language="xx")


# -- crash safety ----------------------------------------------------------------------------


def test_leftovers_of_a_crash_are_ignored_then_swept(index: DenseIndex) -> None:
    before = state(index)
    (index.path / f"{MANIFEST}.tmp").write_text('{"format": 1, "segm')  # half-written
    (index.path / "seg-000999.npy.tmp").write_bytes(b"\x93NUMPY garbage")
    (index.path / "seg-000999.json").write_text("{not json")
    reopened = DenseIndex(index.path, HashingEmbedder())
    assert state(reopened) == before
    reopened.update([doc("new", "a fresh chunk")])
    leftovers = [p.name for p in index.path.iterdir() if "999" in p.name or p.suffix == ".tmp"]
    assert leftovers == []


def test_failure_before_the_manifest_keeps_the_old_state(
    index: DenseIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = state(index)
    real_replace = os.replace

    def replace(src: object, dst: object) -> None:
        if str(dst).endswith(MANIFEST):
            # Corrupt the new manifest's temp file, then die before it is renamed.
            Path(str(src)).write_text("garbage")
            raise OSError("simulated crash before the manifest was replaced")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="simulated crash"):
        index.update([doc("cats", "Totally new text.", fingerprint="fp-new")], delete=["dogs"])
    monkeypatch.undo()
    assert state(index) == before  # the instance kept no half-made state
    reopened = DenseIndex(index.path, HashingEmbedder())
    assert state(reopened) == before
    reopened.update([doc("cats", "Totally new text.", fingerprint="fp-new")])
    assert reopened.indexed()["cats"] == "fp-new"


def test_killed_writer_leaves_a_consistent_index(tmp_path: Path) -> None:
    """SIGKILL a process that keeps rewriting one document; whatever moment it dies at,
    the index holds one complete version whose fingerprint matches its chunks."""
    folder = tmp_path / "dense"
    DenseIndex(folder, HashingEmbedder()).update([doc("a", "version 0 alpha", "version 0 beta")])
    code = f"""
import sys
from assay.search.embeddings import HashingEmbedder
from assay.records import ChunkText, IndexedDocument
from assay.search.dense import DenseIndex
index = DenseIndex({str(folder)!r}, HashingEmbedder())
n = 1
while True:
    texts = [f"version {{n}} alpha", f"version {{n}} beta"] + [f"filler {{n}} {{i}}" for i in
             range(n % 50)]
    chunks = tuple(ChunkText(f"a#{{i}}", "a", i, i + 1, t) for i, t in enumerate(texts))
    index.update([IndexedDocument("a", f"v{{n}}", chunks)])
    if n == 3:
        print("running", flush=True)
    n += 1
"""
    writer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "running"
    time.sleep(0.5)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    writer.stdout.close()

    index = DenseIndex(folder, HashingEmbedder())
    fingerprint = index.indexed()["a"]
    version = fingerprint.removeprefix("v") if fingerprint.startswith("v") else "0"
    hits = index.search("version alpha beta filler", k=100)
    assert {h.text for h in hits if "version" in h.text} == {
        f"version {version} alpha",
        f"version {version} beta",
    }
    assert all(h.text.split()[1] == version for h in hits)
    index.update([doc("a", "after the crash")])
    assert [h.text for h in index.search("after crash", k=10)] == ["after the crash"]


def test_a_second_writer_waits_then_conflicts(index: DenseIndex) -> None:
    slow = DenseIndex(index.path, HashingEmbedder(), lock_timeout=0.2)
    with (index.path / LOCK_FILE).open("a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        with pytest.raises(Conflict, match="being written by another process"):
            slow.update([doc("x", "blocked")])
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    slow.update([doc("x", "now it works")])
    assert "x" in index.indexed()


def test_a_reader_survives_compaction_by_another_instance(index: DenseIndex) -> None:
    reader = DenseIndex(index.path, HashingEmbedder())
    assert reader.search("cat")  # loads the segments
    for n in range(3):
        index.update([doc("cats", f"Cats version {n}.", fingerprint=f"fp-{n}")])
    hits = reader.search("cats version", k=10)
    assert [h.text for h in hits if h.doc_id == "cats"] == ["Cats version 2."]
    assert json.loads((index.path / MANIFEST).read_text())["format"] == FORMAT


# -- with the real model ---------------------------------------------------------------------


def test_minilm_finds_a_paraphrase(tmp_path: Path) -> None:
    if importlib.util.find_spec("onnxruntime") is None:
        missing("onnxruntime is not installed (pip install -e '.[embeddings]')")
    index = DenseIndex(tmp_path / "dense", MiniLMEmbedder(threads=1))
    index.update(
        [
            doc("cctv", "Recordings made on board are overwritten automatically after 72 hours."),
            doc("fares", "A monthly ticket for zone A costs 49 euros from January 2025."),
            doc("depot", "The new e-bus depot Auenweg opened on 21 March 2025."),
        ]
    )
    hits = index.search("How long is camera footage from buses kept?", k=3)
    assert hits[0].doc_id == "cctv"
    assert hits[0].score > hits[1].score + 0.1
