"""The index that locates imported passages answers exactly as ``str.find`` does."""

from __future__ import annotations

import random

from assay.corpus.anchoring import INDEX_AFTER, INDEX_CHARS, DocumentTexts, locate
from assay.corpus.ingest import ingest_bytes
from assay.corpus.text_index import TextIndex
from assay.records import Project
from assay.store.workspace import Workspace


def document(rng: random.Random, words: int) -> str:
    vocabulary = ["rail", "ferry", "hotel", "euro", "night", "fare", "claim", "Zürich", "日本"]
    parts = [rng.choice(vocabulary) + rng.choice(["", "s", ".", ","]) for _ in range(words)]
    return "".join(part + rng.choice([" ", " ", " ", "\n", "  ", "\n\n"]) for part in parts)


def test_find_gives_what_str_find_gives() -> None:
    rng = random.Random(7)
    text = document(rng, 6000)
    text += text[: len(text) // 3]  # whole passages occur twice: the first one counts
    index = TextIndex(text)
    assert index.anchors  # the sparse keys exist at all
    needles = []
    for _ in range(1500):
        start = rng.randrange(len(text) - 10)
        needles.append(text[start : start + rng.choice([1, 5, 30, 80, 520, 2000])])
    needles += ["", "absent passage " * 8, text[:600] + "x", "x" + text[-600:], text]
    needles += [n.replace(" ", "  ", 1) for n in needles[:200]]  # near misses
    for needle in needles:
        assert index.find(needle) == text.find(needle), needle[:60]


def test_find_in_text_without_word_starts() -> None:
    text = "列車" * 5000 + "ホテル" + "列車" * 100
    assert TextIndex(text).find("ホテル" + "列車" * 20) == text.find("ホテル")
    assert TextIndex(text).find("ホテルホテル") == -1


def test_document_texts_index_often_searched_documents_within_their_budget(
    ws: Workspace, project: Project
) -> None:
    rng = random.Random(3)
    texts = [document(rng, 12000) for _ in range(3)]
    assert min(len(t) for t in texts) >= INDEX_CHARS  # long enough to get an index
    ids = [ingest_bytes(ws, project, f"d{n}.txt", t.encode()).id for n, t in enumerate(texts)]
    budget = 2 * max(len(t) for t in texts) + 10  # one text and its index, not more
    with ws.engine.connect() as conn:
        found = DocumentTexts(conn, project.id, max_chars=budget)
        for _ in range(2):  # each document comes back after the others pushed it out
            for doc_id in ids:
                text = found.get(doc_id)
                assert text is not None
                for _ in range(INDEX_AFTER + 2):
                    start = rng.randrange(len(text) - 600)
                    needle = text[start : start + 520]
                    assert found.locate(doc_id, text, needle) == locate(text, needle)
                assert list(found.indexes) == [doc_id]  # the others were dropped for it
                assert found.chars <= budget
        unbounded = DocumentTexts(conn, project.id)
        for doc_id in ids:
            text = unbounded.get(doc_id)
            assert text is not None
            for _ in range(INDEX_AFTER):
                unbounded.locate(doc_id, text, text[100:700])
        assert sorted(unbounded.indexes) == sorted(ids)
