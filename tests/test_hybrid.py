"""Reciprocal rank fusion by hand, and HybridIndex over a real keyword and dense index."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import InvalidInput
from assay.records import ChunkText, IndexedDocument
from assay.search.dense import DenseIndex
from assay.search.embeddings import HashingEmbedder
from assay.search.hybrid import HybridIndex, rrf
from assay.search.keyword import KeywordIndex


def doc(doc_id: str, *texts: str, fingerprint: str | None = None) -> IndexedDocument:
    chunks = []
    offset = 0
    for n, text in enumerate(texts):
        chunks.append(ChunkText(f"{doc_id}#{n}", doc_id, offset, offset + len(text), text))
        offset += len(text) + 1
    return IndexedDocument(doc_id, fingerprint or f"fp-{doc_id}", tuple(chunks))


# -- rrf -------------------------------------------------------------------------------------


def test_rrf_equal_weights_by_hand() -> None:
    fused = rrf({"a": ["x", "y", "z"], "b": ["y", "x", "w"]}, {"a": 1.0, "b": 1.0}, k=60)
    assert [item for item, _score in fused] == ["x", "y", "z", "w"]
    scores = dict(fused)
    assert scores["x"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["y"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["z"] == pytest.approx(1 / 63)
    assert scores["w"] == pytest.approx(1 / 63)


def test_rrf_weights_change_the_order() -> None:
    fused = rrf({"a": ["x", "y", "z"], "b": ["y", "x", "w"]}, {"a": 2.0, "b": 1.0}, k=0)
    assert fused == [
        ("x", pytest.approx(2 / 1 + 1 / 2)),
        ("y", pytest.approx(2 / 2 + 1 / 1)),
        ("z", pytest.approx(2 / 3)),
        ("w", pytest.approx(1 / 3)),
    ]
    fused = rrf({"a": ["p", "q"], "b": ["q"]}, {"a": 1.0, "b": 0.5}, k=1)
    assert fused == [("q", pytest.approx(1 / 3 + 0.5 / 2)), ("p", pytest.approx(1 / 2))]


def test_rrf_ties_missing_weights_duplicates_and_empty() -> None:
    # Equal scores: the better best rank wins, then first appearance.
    assert [i for i, _ in rrf({"a": ["x", "y"], "b": ["z"]}, {}, k=60)] == ["x", "z", "y"]
    assert rrf({"a": ["x", "x", "y"]}, {"a": 1.0}, k=0) == [
        ("x", pytest.approx(1.0)),
        ("y", pytest.approx(1 / 3)),
    ]
    assert rrf({}, {}) == []
    assert rrf({"a": ["x"]}, {"a": 0.0}) == [("x", 0.0)]
    with pytest.raises(InvalidInput):
        rrf({"a": ["x"]}, {}, k=-1)


# -- HybridIndex -----------------------------------------------------------------------------

CORPUS = [
    doc("trams", "The tram company was founded in 1962 to run the city lines."),
    doc("hotel", "Hotel costs are refunded up to 140 euros per night in Hamburg."),
    doc("cctv", "Recordings made on board are overwritten automatically after 72 hours."),
    doc("fares", "A monthly ticket costs 49 euros.", "Night buses run every thirty minutes."),
]


@pytest.fixture
def members(tmp_path: Path) -> dict[str, KeywordIndex | DenseIndex]:
    keyword = KeywordIndex(tmp_path / "keyword", "en")
    vectors = DenseIndex(tmp_path / "dense", HashingEmbedder())
    return {"keyword": keyword, "dense": vectors}


@pytest.fixture
def hybrid(members: dict[str, KeywordIndex | DenseIndex]) -> HybridIndex:
    index = HybridIndex(members, {"keyword": 1.0, "dense": 1.0})
    index.update(CORPUS)
    return index


def test_search_fuses_member_rankings(
    hybrid: HybridIndex, members: dict[str, KeywordIndex | DenseIndex]
) -> None:
    query = "hotel night costs"
    hits = hybrid.search(query, k=3)
    rankings = {
        name: [h.chunk_id for h in index.search(query, 100)] for name, index in members.items()
    }
    expected = rrf(rankings, {"keyword": 1.0, "dense": 1.0}, 60)[:3]
    assert [(h.chunk_id, h.score) for h in hits] == [
        (chunk_id, pytest.approx(score)) for chunk_id, score in expected
    ]
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].chunk_id == "hotel#0"


def test_hits_keep_the_keyword_snippet(
    hybrid: HybridIndex, members: dict[str, KeywordIndex | DenseIndex]
) -> None:
    top = hybrid.search("refunded hotel", k=1)[0]
    from_keyword = members["keyword"].search("refunded hotel", k=1)[0]
    assert (top.text, top.snippet, top.highlights) == (
        from_keyword.text,
        from_keyword.snippet,
        from_keyword.highlights,
    )
    assert top.score != from_keyword.score  # fused, not BM25


def test_chunks_found_by_one_member_only_are_kept(
    members: dict[str, KeywordIndex | DenseIndex],
) -> None:
    index = HybridIndex(members, {"keyword": 1.0, "dense": 1.0})
    index.update(CORPUS)
    # "1962" is a keyword-only hit for the tram chunk; dense ranks every chunk.
    hits = index.search("1962", k=10)
    assert hits[0].chunk_id == "trams#0"
    assert len(hits) == 5


def test_a_weight_decides_between_members(tmp_path: Path) -> None:
    keyword = KeywordIndex(tmp_path / "keyword", "en")
    vectors = DenseIndex(tmp_path / "dense", HashingEmbedder())
    docs = [doc("a", "beta alpha"), doc("b", "alpha beta gamma")]
    for member in (keyword, vectors):
        member.update(docs)
    query = "alpha beta"
    by_keyword = [h.chunk_id for h in keyword.search(query)]
    by_dense = [h.chunk_id for h in vectors.search(query)]
    assert by_keyword != by_dense  # the members disagree on the top chunk
    members = {"keyword": keyword, "dense": vectors}
    favour_keyword = HybridIndex(members, {"keyword": 2.0, "dense": 1.0}).search(query)
    favour_dense = HybridIndex(members, {"keyword": 1.0, "dense": 2.0}).search(query)
    assert favour_keyword[0].chunk_id == by_keyword[0]
    assert favour_dense[0].chunk_id == by_dense[0]
    only_dense = HybridIndex(members, {"keyword": 0.0, "dense": 1.0}).search(query)
    assert [h.chunk_id for h in only_dense] == by_dense


def test_update_and_indexed_reach_every_member(
    hybrid: HybridIndex, members: dict[str, KeywordIndex | DenseIndex]
) -> None:
    expected = {d.doc_id: d.fingerprint for d in CORPUS}
    assert hybrid.indexed() == expected
    assert all(member.indexed() == expected for member in members.values())
    hybrid.update([], delete=["cctv"])
    assert all("cctv" not in member.indexed() for member in members.values())
    # A member that fell behind: the document is not reported, so sync refills both.
    members["dense"].update([doc("hotel", "changed", fingerprint="fp-new")])
    assert "hotel" not in hybrid.indexed()
    assert set(hybrid.indexed()) == {"trams", "fares"}


def test_k_and_depth(hybrid: HybridIndex, members: dict[str, KeywordIndex | DenseIndex]) -> None:
    assert len(hybrid.search("costs euros", k=2)) == 2
    shallow = HybridIndex(members, {}, depth=1)
    assert len(shallow.search("costs euros", k=1)) == 1
    assert len(shallow.search("costs euros", k=4)) == 4  # members are searched k deep
    with pytest.raises(InvalidInput, match="k must be at least 1"):
        hybrid.search("costs", k=0)
    assert hybrid.search("   ") == []


def test_rejects_bad_configuration(members: dict[str, KeywordIndex | DenseIndex]) -> None:
    with pytest.raises(InvalidInput, match="at least one member"):
        HybridIndex({}, {})
    with pytest.raises(InvalidInput, match="'bm25', which are not member"):
        HybridIndex(members, {"bm25": 1.0})
    with pytest.raises(InvalidInput, match=">= 0"):
        HybridIndex(members, {"dense": -1.0})
    with pytest.raises(InvalidInput, match="above 0"):
        HybridIndex(members, {"dense": 0.0, "keyword": 0.0})
    with pytest.raises(InvalidInput, match="depth"):
        HybridIndex(members, {}, depth=0)
