"""KeywordIndex on real on-disk tantivy indexes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tantivy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import Conflict, InvalidInput
from assay.records import ChunkText, Hit, IndexedDocument
from assay.search.analysis import (
    SNIPPET_CHARS,
    build_analyzer,
    make_snippet,
    matched_spans,
    query_terms,
)
from assay.search.keyword import KeywordIndex


def doc(doc_id: str, *texts: str, fingerprint: str | None = None) -> IndexedDocument:
    """A document whose chunks are the given texts laid end to end."""
    chunks = []
    offset = 0
    for n, text in enumerate(texts):
        chunks.append(ChunkText(f"{doc_id}#{n}", doc_id, offset, offset + len(text), text))
        offset += len(text) + 1
    return IndexedDocument(doc_id, fingerprint or f"fp-{doc_id}", tuple(chunks))


def chunk_ids(hits: list[Hit]) -> list[str]:
    return [hit.chunk_id for hit in hits]


def highlighted(hit: Hit) -> list[str]:
    return [hit.snippet[start:end] for start, end in hit.highlights]


@pytest.fixture
def english(tmp_path: Path) -> KeywordIndex:
    index = KeywordIndex(tmp_path / "kw-en", "en")
    index.update(
        [
            doc("cats", "The cat sat on the mat.", "Cats are running across the garden."),
            doc("dogs", "A dog runs after the ball in the park."),
            doc("mail", "Send an e-mail about C++ templates to the team."),
        ]
    )
    return index


@pytest.fixture
def german(tmp_path: Path) -> KeywordIndex:
    index = KeywordIndex(tmp_path / "kw-de", "de")
    index.update(
        [
            doc("policy", "Die Reisekostenrichtlinie gilt für alle Dienstreisen."),
            doc("rules", "Diese Richtlinie regelt die Erstattung von Hotelkosten."),
            doc("bikes", "Fahrräder dürfen im Innenhof abgestellt werden."),
        ]
    )
    return index


def test_add_then_search_returns_hit_fields(english: KeywordIndex) -> None:
    hits = english.search("ball park")
    assert len(hits) == 1
    hit = hits[0]
    assert (hit.doc_id, hit.chunk_id, hit.rank) == ("dogs", "dogs#0", 1)
    assert hit.text == "A dog runs after the ball in the park."
    assert (hit.start, hit.end) == (0, len(hit.text))
    assert hit.score > 0
    assert highlighted(hit) == ["ball", "park"]


def test_ranks_are_consecutive_and_scores_descend(english: KeywordIndex) -> None:
    hits = english.search("the cat dog ball")
    assert [hit.rank for hit in hits] == list(range(1, len(hits) + 1))
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_chunk_with_all_query_words_ranks_first(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw", "en")
    index.update(
        [
            doc("a", "invoice approval deadline for travel"),
            doc("b", "invoice invoice invoice numbers"),
            doc("c", "approval workflow for managers"),
            doc("d", "deadline extension rules"),
        ]
    )
    hits = index.search("invoice approval deadline")
    assert hits[0].chunk_id == "a#0"
    assert set(chunk_ids(hits)) == {"a#0", "b#0", "c#0", "d#0"}


def test_k_limits_and_k_beyond_corpus_returns_everything_matching(english: KeywordIndex) -> None:
    assert len(english.search("the", k=1)) == 1
    everything = english.search("the", k=10_000)
    assert sorted(chunk_ids(everything)) == ["cats#0", "cats#1", "dogs#0", "mail#0"]


def test_k_below_one_is_invalid(english: KeywordIndex) -> None:
    with pytest.raises(InvalidInput, match="k must be at least 1"):
        english.search("cat", k=0)


def test_delete_removes_all_chunks_of_a_document(english: KeywordIndex) -> None:
    english.update([], delete=["cats"])
    assert english.search("cat") == []
    assert chunk_ids(english.search("dog")) == ["dogs#0"]
    assert "cats" not in english.indexed()


def test_update_replaces_the_chunks_of_a_document(english: KeywordIndex) -> None:
    english.update([doc("cats", "Only parrots live here now.", fingerprint="fp-2")])
    assert english.search("cat") == []
    hits = english.search("parrot")
    assert chunk_ids(hits) == ["cats#0"]
    assert english.indexed()["cats"] == "fp-2"


def test_update_is_idempotent(english: KeywordIndex) -> None:
    again = doc("dogs", "A dog runs after the ball in the park.")
    english.update([again])
    english.update([again])
    assert chunk_ids(english.search("ball")) == ["dogs#0"]
    assert len(english.indexed()) == 3


def test_deleting_unknown_documents_is_harmless(english: KeywordIndex) -> None:
    english.update([], delete=["never-indexed"])
    assert len(english.indexed()) == 3


def test_same_doc_twice_in_one_update_keeps_the_last(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw", "en")
    index.update([doc("x", "first version", fingerprint="1"), doc("x", "second", fingerprint="2")])
    assert index.search("first") == []
    assert chunk_ids(index.search("second")) == ["x#0"]
    assert index.indexed() == {"x": "2"}


def test_indexed_tracks_fingerprints_including_empty_documents(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw", "en")
    assert index.indexed() == {}
    index.update([doc("a", "alpha", fingerprint="a1"), doc("empty", fingerprint="e1")])
    assert index.indexed() == {"a": "a1", "empty": "e1"}
    index.update([doc("a", "alpha beta", fingerprint="a2")], delete=["empty"])
    assert index.indexed() == {"a": "a2"}


def test_reopening_in_a_new_instance_sees_the_same_index(tmp_path: Path) -> None:
    path = tmp_path / "kw"
    first = KeywordIndex(path, "en")
    first.update([doc("a", "persistent storage works", fingerprint="a1"), doc("b", "other")])
    second = KeywordIndex(path, "en")
    assert second.indexed() == {"a": "a1", "b": "fp-b"}
    assert chunk_ids(second.search("storage")) == ["a#0"]
    second.update([], delete=["a"])
    assert first.search("storage") == []  # the first instance sees the other's commit


def test_folder_is_created_with_parents(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "deep" / "er" / "kw", "en")
    index.update([doc("a", "hello")])
    assert (tmp_path / "deep" / "er" / "kw").is_dir()


def test_unknown_language_lists_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"'xx'.*de, .*en, .*fr"):
        KeywordIndex(tmp_path / "kw", "xx")


@pytest.mark.parametrize(
    ("language", "text", "query"),
    [
        ("fr", "Les chevaux mangent dans la prairie.", "cheval"),
        ("es", "Los niños juegan en las calles.", "calle"),
        ("it", "Le biciclette sono parcheggiate.", "bicicletta"),
        ("nl", "De fietsen staan in de tuinen.", "tuin"),
    ],
)
def test_other_snowball_languages_stem(
    tmp_path: Path, language: str, text: str, query: str
) -> None:
    index = KeywordIndex(tmp_path / language, language)
    index.update([doc("a", text)])
    assert chunk_ids(index.search(query)) == ["a#0"]


def test_reopening_with_another_language_empties_the_index(tmp_path: Path) -> None:
    path = tmp_path / "kw"
    KeywordIndex(path, "en").update([doc("a", "running")])
    german = KeywordIndex(path, "de")
    assert german.indexed() == {}  # the sync code refills it with German analysis
    german.update([doc("a", "Fahrräder")])
    assert chunk_ids(german.search("Fahrrad")) == ["a#0"]


def test_refuses_a_foreign_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "kw").mkdir()
    (tmp_path / "kw" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InvalidInput, match="holds no Assay keyword index"):
        KeywordIndex(tmp_path / "kw", "en")
    assert (tmp_path / "kw" / "notes.txt").exists()


def test_chunk_of_another_document_is_rejected(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw", "en")
    stray = IndexedDocument("a", "fp", (ChunkText("b#0", "b", 0, 5, "hello"),))
    with pytest.raises(InvalidInput, match=r"'b#0'.*'b'.*'a'"):
        index.update([stray])
    assert index.indexed() == {}


def test_english_stemming_matches_and_highlights_word_forms(english: KeywordIndex) -> None:
    hits = english.search("running")
    assert sorted(chunk_ids(hits)) == ["cats#1", "dogs#0"]
    by_chunk = {hit.chunk_id: highlighted(hit) for hit in hits}
    assert by_chunk == {"cats#1": ["running"], "dogs#0": ["runs"]}
    cats = english.search("cat")
    assert sorted(chunk_ids(cats)) == ["cats#0", "cats#1"]
    assert {w for hit in cats for w in highlighted(hit)} == {"cat", "Cats"}


def test_german_stemming_plural_and_umlaut(german: KeywordIndex) -> None:
    assert chunk_ids(german.search("Richtlinien")) == ["rules#0"]
    assert chunk_ids(german.search("Reisekostenrichtlinien")) == ["policy#0"]
    bikes = german.search("Fahrrad")
    assert chunk_ids(bikes) == ["bikes#0"]
    assert highlighted(bikes[0]) == ["Fahrräder"]
    for spelling in ("fahrräder", "FAHRRADER", "fahrraeder"):
        assert chunk_ids(german.search(spelling)) == ["bikes#0"], spelling


def test_german_compounds_are_not_split(german: KeywordIndex) -> None:
    # A known limit (docs/backends.md): Snowball stems words, it does not decompound them.
    assert chunk_ids(german.search("Richtlinie")) == ["rules#0"]


def test_german_query_highlights_the_compound(german: KeywordIndex) -> None:
    hits = german.search("Reisekostenrichtlinie")
    assert highlighted(hits[0]) == ["Reisekostenrichtlinie"]


@pytest.mark.parametrize(
    "query",
    [
        "foo AND (bar",
        "C++",
        "e-mail",
        '"unbalanced',
        "title:cat",
        "cat*",
        "cat~2",
        "a^2",
        "[1 TO 5]",
        "-cat",
        "+cat",
        "NOT",
        "\\",
        "'",
        "{}",
        "\x00",
        "🙂 cat",
    ],
)
def test_hostile_queries_do_not_raise(english: KeywordIndex, query: str) -> None:
    english.search(query)


def test_query_syntax_is_read_as_plain_words(english: KeywordIndex) -> None:
    assert chunk_ids(english.search("e-mail")) == ["mail#0"]
    assert highlighted(english.search("e-mail")[0]) == ["e", "mail"]
    assert chunk_ids(english.search("C++")) == ["mail#0"]
    assert english.search("NOT dog")[0].chunk_id == "dogs#0"
    assert chunk_ids(english.search("title:cat")) != []


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "!!! ??? ...", "()", "-- ++"])
def test_queries_without_words_return_nothing(english: KeywordIndex, query: str) -> None:
    assert english.search(query) == []


def test_search_on_an_empty_index(tmp_path: Path) -> None:
    assert KeywordIndex(tmp_path / "kw", "en").search("anything") == []


def test_long_chunk_gets_a_short_snippet_around_the_match(tmp_path: Path) -> None:
    filler = " ".join(f"word{n}" for n in range(200))
    text = f"{filler} the quarterly revenue report shows growth {filler}"
    index = KeywordIndex(tmp_path / "kw", "en")
    index.update([doc("long", text)])
    hit = index.search("revenue growth")[0]
    assert hit.text == text
    assert len(hit.snippet) <= SNIPPET_CHARS
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert "quarterly revenue report shows growth" in hit.snippet
    assert highlighted(hit) == ["revenue", "growth"]
    inner = hit.snippet.strip("…")
    assert inner.split()[0] in text.split() and inner.split()[-1] in text.split()


def test_snippet_prefers_the_passage_with_most_distinct_terms(tmp_path: Path) -> None:
    filler = " ".join(["lorem"] * 80)
    text = f"alpha {filler} alpha {filler} alpha beta gamma {filler}"
    index = KeywordIndex(tmp_path / "kw", "en")
    index.update([doc("d", text)])
    hit = index.search("alpha beta gamma")[0]
    assert highlighted(hit)[-3:] == ["alpha", "beta", "gamma"]


def test_snippet_of_one_overlong_token_is_cut_by_characters() -> None:
    analyzer = build_analyzer("en")
    text = "x" * 300 + "-needle-" + "y" * 300
    snippet, highlights = make_snippet(analyzer, text, {"needl"})
    assert len(snippet) <= SNIPPET_CHARS
    assert [snippet[s:e] for s, e in highlights] == ["needle"]


LONG_FILLER = " ".join(f"Größe{n} naïve café 東京 🙂" for n in range(30))


@pytest.mark.parametrize(
    ("language", "text", "query"),
    [
        ("en", "The cat (Cats!) sat on the mat, cat-like.", "cats"),
        ("en", f"{LONG_FILLER} the quarterly revenue grew {LONG_FILLER}", "revenue growth"),
        ("en", f"alpha {LONG_FILLER} beta gamma {LONG_FILLER} alpha", "alpha beta gamma"),
        ("de", f"{LONG_FILLER} Fahrräder und Dienstreisen {LONG_FILLER} Fahrrad", "Fahrrad reise"),
        ("de", "Über die Straße läuft der Bär zum Fluss.", "bär fluss"),
    ],
)
def test_highlights_are_the_words_the_analyzer_matches_in_the_snippet(
    tmp_path: Path, language: str, text: str, query: str
) -> None:
    """Tantivy marks a hit's matched words in UTF-8 bytes; they must be the very words the
    analyzer matches, in characters, so non-ASCII text before a match shifts nothing."""
    index = KeywordIndex(tmp_path / "kw", language)
    index.update([doc("d", text)])
    hit = index.search(query)[0]
    analyzer = build_analyzer(language)
    terms = set(query_terms(analyzer, query))
    assert hit.highlights
    assert list(hit.highlights) == matched_spans(analyzer, hit.snippet, terms)
    assert len(hit.snippet) <= SNIPPET_CHARS
    assert hit.snippet.removeprefix("…").removesuffix("…") in text


@settings(max_examples=300, deadline=None)
@given(
    before=st.lists(st.sampled_from(["lorem", "Größe,", "a", "(x)", "verylongwordindeed"])),
    after=st.lists(st.sampled_from(["ipsum", "東京", "b", "café.", "z" * 30])),
    gap=st.sampled_from([" ", "  ", "\n", " \t", "\u00a0"]),
)
def test_snippet_is_whole_words_around_the_match(
    before: list[str], after: list[str], gap: str
) -> None:
    text = gap.join([*before, "needle", *after])
    snippet, highlights = make_snippet(build_analyzer("en"), text, {"needl"})
    assert len(snippet) <= SNIPPET_CHARS
    assert [snippet[s:e] for s, e in highlights] == ["needle"]
    inner = snippet.removeprefix("…").removesuffix("…")
    assert inner in text
    assert snippet.startswith("…") == (not text.startswith(inner))
    assert snippet.endswith("…") == (not text.endswith(inner))
    assert set(inner.split()) <= set(text.split())


def test_a_second_writer_gets_a_clear_conflict(tmp_path: Path) -> None:
    path = tmp_path / "kw"
    index = KeywordIndex(path, "en", lock_timeout=0.2)
    index.update([doc("a", "alpha")])
    other = tantivy.Index.open(str(path)).writer(heap_size=15_000_000, num_threads=1)
    try:
        with pytest.raises(Conflict, match=re.escape(str(path)) + ".*another process"):
            index.update([doc("b", "beta")])
    finally:
        other.wait_merging_threads()
    index.update([doc("b", "beta")])
    assert set(index.indexed()) == {"a", "b"}


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=200))
def test_arbitrary_queries_never_raise(english: KeywordIndex, query: str) -> None:
    hits = english.search(query, k=3)
    assert len(hits) <= 3
    for hit in hits:
        for start, end in hit.highlights:
            assert 0 <= start < end <= len(hit.snippet)


def test_stop_words_are_not_highlighted_when_the_query_has_other_words(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "hl", "en")
    text = "How long are the recordings kept and who can see them?"
    index.update([IndexedDocument("d", "f", (ChunkText("d#0", "d", 0, len(text), text),))])
    hit = index.search("how long are recordings kept", 1)[0]
    marked = {hit.snippet[s:e].lower() for s, e in hit.highlights}
    assert marked == {"long", "recordings", "kept"}
    only_stop = index.search("who are", 1)[0]
    assert {only_stop.snippet[s:e].lower() for s, e in only_stop.highlights} == {"are", "who"}
