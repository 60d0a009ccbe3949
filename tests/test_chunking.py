"""Chunkers: span properties on arbitrary text, worked examples, LangChain parity, errors."""

from __future__ import annotations

import random
import re
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.corpus import recursive_packing
from assay.corpus.chunker_params import DEFAULT_SEPARATORS
from assay.corpus.chunker_registry import CHUNKERS, chunk_text, describe_chunkers
from assay.corpus.sentences import sentence_spans
from assay.corpus.splitters import recursive_spans, token_spans
from assay.errors import InvalidInput
from assay.records import Span

WORD_TOKEN = re.compile(r"\w+|[^\w\s]")

# --- text generators ----------------------------------------------------------------------

FRAGMENTS = [
    "Die Größe",
    "z. B.",
    "Dr. Müller",
    "Nr. 5",
    "Straße",
    "über",
    "e\u0301",  # e + combining acute
    "a\u0308\u0323",  # two combining marks
    "👩‍👩‍👧",  # ZWJ sequence
    "👍🏽",  # emoji with skin tone modifier
    "日本語",
    "٣٤",
    "\t",
    "\u00a0",  # no-break space (whitespace for str.isspace)
    "\u2028",
    "...",
    ". ",
    "\n",
    "\n\n",
    "\n\n\n\n",
    " ",
    "   ",
    "word",
    "retrieval",
    "Evaluation.",
]

VOCABULARY = (
    "the of retrieval evaluation document passage Größe naïve über Straße and chunk index "
    "query answer model score rank gold annotator review Dokument café"
)

mixed_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=120
).map("".join)
any_text = st.one_of(st.text(max_size=400), mixed_text)

PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def assert_well_formed(text: str, spans: list[Span], *, may_overlap: bool) -> None:
    """The properties every chunker promises, whatever the text."""
    previous: Span | None = None
    for start, end in spans:
        assert 0 <= start < end <= len(text)
        chunk = text[start:end]
        assert chunk.strip(), f"whitespace-only chunk {chunk!r}"
        assert not chunk[0].isspace() and not chunk[-1].isspace(), f"untrimmed {chunk!r}"
        if previous is not None:
            assert start > previous[0] and end > previous[1], "spans not ascending"
            if not may_overlap:
                assert start >= previous[1], "spans overlap"
        previous = (start, end)
    covered = [False] * len(text)
    for start, end in spans:
        covered[start:end] = [True] * (end - start)
    lost = [i for i, char in enumerate(text) if not char.isspace() and not covered[i]]
    assert not lost, f"characters not in any chunk at {lost[:5]}"


# --- properties ---------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(
    text=any_text,
    max_length=st.integers(1, 120),
    overlap_share=st.floats(0, 0.9),
    separators=st.sampled_from([DEFAULT_SEPARATORS, ("\n\n", "\n", " "), (" ",), (), ("ab",)]),
)
def test_recursive_spans_properties(
    text: str, max_length: int, overlap_share: float, separators: tuple[str, ...]
) -> None:
    overlap = min(int(max_length * overlap_share), max_length - 1)
    spans = recursive_spans(text, max_length=max_length, overlap=overlap, separators=separators)
    assert_well_formed(text, spans, may_overlap=overlap > 0)
    assert all(end - start <= max_length for start, end in spans)


# texts dense in separators, and settings under which the recursive chunker's three ways of
# finding chunks (piece ends, windows, pieces packed one by one) must agree
separator_soup = st.text(
    alphabet=st.sampled_from(["a", "b", " ", "\n", ".", "-", "é"]), max_size=300
)
packing_cases = {
    "max_length": st.integers(1, 60),
    "overlap_share": st.sampled_from([0.0, 0.0, 0.1, 0.3, 0.6, 0.9]),
    "separators": st.sampled_from(
        [DEFAULT_SEPARATORS, ("\n\n\n", "\n"), ("--", " "), ("---", "-"), ("a-a", "a"), (". ",)]
    ),
}


@PROPERTY_SETTINGS
@given(text=separator_soup, **packing_cases)
def test_recursive_windows_give_the_chunks_of_pieces_and_packing(
    text: str, max_length: int, overlap_share: float, separators: tuple[str, ...]
) -> None:
    """A chunk is found with one rfind, not by listing every piece, and the next one starts
    where packing with overlap would start it: same chunks, also in runs of a repeated
    separator (blank lines) and with bordered ones."""
    overlap = min(int(max_length * overlap_share), max_length - 1)
    given = {"max_length": max_length, "overlap": overlap, "separators": separators}
    fast = recursive_spans(text, **given)
    with patch.object(recursive_packing, "_use_windows", lambda _separator, _params: False):
        slow = recursive_spans(text, **given)
    assert fast == slow


@PROPERTY_SETTINGS
@given(text=st.one_of(separator_soup, any_text), **packing_cases)
def test_recursive_piece_ends_give_the_chunks_of_windows_and_packing(
    text: str, max_length: int, overlap_share: float, separators: tuple[str, ...]
) -> None:
    """The whole text packed from a list of its top-level piece ends (two bisections a
    chunk) gives the chunks of the other two ways: windows, and pieces packed one by one."""
    overlap = min(int(max_length * overlap_share), max_length - 1)
    given = {"max_length": max_length, "overlap": overlap, "separators": separators}
    by_piece_ends = recursive_spans(text, **given)
    with patch.object(recursive_packing, "_top_piece_ends", lambda *_args: (0, None)):
        by_windows = recursive_spans(text, **given)
        with patch.object(recursive_packing, "_use_windows", lambda _separator, _params: False):
            by_pieces = recursive_spans(text, **given)
    assert by_piece_ends == by_windows == by_pieces


@pytest.mark.parametrize("seed", range(12))
def test_recursive_windows_on_realistic_texts(seed: int) -> None:
    text = realistic_text(seed) + "".join(random.Random(seed).choices(FRAGMENTS, k=400))
    for size, overlap in ((40, 0), (200, 0), (1000, 0), (40, 12), (200, 50), (1000, 200)):
        fast = recursive_spans(text, max_length=size, overlap=overlap)
        with patch.object(recursive_packing, "_top_piece_ends", lambda *_args: (0, None)):
            assert recursive_spans(text, max_length=size, overlap=overlap) == fast
            with patch.object(recursive_packing, "_use_windows", lambda _sep, _params: False):
                assert recursive_spans(text, max_length=size, overlap=overlap) == fast


@PROPERTY_SETTINGS
@given(text=any_text, size=st.integers(1, 40), overlap_share=st.floats(0, 0.9))
def test_token_spans_properties(text: str, size: int, overlap_share: float) -> None:
    overlap = min(int(size * overlap_share), size - 1)
    spans = token_spans(text, size=size, overlap=overlap)
    assert_well_formed(text, spans, may_overlap=overlap > 0)
    assert all(len(WORD_TOKEN.findall(text[start:end])) <= size for start, end in spans)
    # Every window but the last is full.
    assert all(len(WORD_TOKEN.findall(text[start:end])) == size for start, end in spans[:-1])


@PROPERTY_SETTINGS
@given(
    text=any_text,
    sentences=st.integers(1, 5),
    overlap_share=st.floats(0, 0.9),
    language=st.sampled_from(["en", "de", "fr"]),
)
def test_sentence_spans_properties(
    text: str, sentences: int, overlap_share: float, language: str
) -> None:
    overlap = min(int(sentences * overlap_share), sentences - 1)
    spans = sentence_spans(text, sentences=sentences, overlap=overlap, language=language)
    assert_well_formed(text, spans, may_overlap=overlap > 0)
    singles = sentence_spans(text, language=language)
    assert_well_formed(text, singles, may_overlap=False)
    # Every chunk runs from the start of one sentence to the end of a later one, at most
    # `sentences` sentences on.
    starts = [start for start, _ in singles]
    ends = [end for _, end in singles]
    for start, end in spans:
        first, last = starts.index(start), ends.index(end)
        assert 0 <= last - first < sentences


# --- recursive: examples --------------------------------------------------------------------


def chunks(text: str, spans: list[Span]) -> list[str]:
    return [text[start:end] for start, end in spans]


def test_recursive_packs_paragraphs_then_sentences() -> None:
    text = "First one. Second one.\n\nA much longer paragraph. It has two sentences.\n\nEnd."
    spans = recursive_spans(text, max_length=30)
    assert chunks(text, spans) == [
        "First one. Second one.",
        "A much longer paragraph.",
        "It has two sentences.",
        "End.",
    ]


def test_recursive_keeps_whole_text_when_it_fits() -> None:
    text = "  Short text.\n\nStill short.  "
    assert recursive_spans(text, max_length=100) == [(2, len(text) - 2)]


def test_recursive_cuts_hard_when_no_separator_is_left() -> None:
    text = "x" * 25
    assert recursive_spans(text, max_length=10) == [(0, 10), (10, 20), (20, 25)]
    assert recursive_spans(text, max_length=10, overlap=3) == [(0, 10), (7, 17), (14, 24), (21, 25)]


def test_recursive_overlap_prefers_piece_boundaries() -> None:
    text = "aa bb cc dd ee ff gg"
    spans = recursive_spans(text, max_length=8, overlap=3, separators=(" ",))
    # Each word piece ("bb ") is 3 characters, so one word carries over; LangChain agrees.
    assert chunks(text, spans) == ["aa bb", "bb cc", "cc dd", "dd ee", "ee ff gg"]


def test_recursive_overlap_falls_back_to_a_word_start() -> None:
    # Each sentence is one piece, longer than the overlap: start inside it, at a word.
    text = "alpha beta gamma. delta epsilon zeta. eta theta iota."
    spans = recursive_spans(text, max_length=40, overlap=12, separators=(". ",))
    assert chunks(text, spans) == [
        "alpha beta gamma. delta epsilon zeta.",
        "zeta. eta theta iota.",
    ]


def test_recursive_empty_and_blank_text() -> None:
    assert recursive_spans("") == []
    assert recursive_spans(" \n\n \t ") == []


def test_recursive_counts_code_points() -> None:
    text = "👍🏽👍🏽 e\u0301e\u0301"
    spans = recursive_spans(text, max_length=4, separators=(" ",))
    assert chunks(text, spans) == ["👍🏽👍🏽", "e\u0301e\u0301"]


# --- recursive: parity with LangChain -------------------------------------------------------


def realistic_text(seed: int) -> str:
    """Paragraphs of sentences with single and double newlines, some German words."""
    rng = random.Random(seed)
    words = VOCABULARY.split()
    paragraphs = []
    for _ in range(rng.randint(3, 30)):
        sentences = [
            " ".join(rng.choice(words) for _ in range(rng.randint(3, 30))).capitalize() + "."
            for _ in range(rng.randint(1, 12))
        ]
        paragraphs.append(rng.choice([" ", " ", "\n"]).join(sentences))
    return "".join(p + rng.choice(["\n\n", "\n\n", "\n", "\n\n\n"]) for p in paragraphs)


@pytest.mark.parametrize("strip_whitespace", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_recursive_matches_langchain_without_overlap(seed: int, strip_whitespace: bool) -> None:
    """Same chunks as LangChain after stripping (its chunks may carry whitespace).

    The generated words are never longer than the chunk size, so LangChain never keeps an
    over-long piece whole (see ``test_recursive_differs_from_langchain_on_long_words``).
    """
    text_splitters = pytest.importorskip("langchain_text_splitters")
    text = realistic_text(seed)
    for size in (60, 200, 1000):
        splitter = text_splitters.RecursiveCharacterTextSplitter(
            chunk_size=size,
            chunk_overlap=0,
            separators=list(DEFAULT_SEPARATORS),
            keep_separator="end",
            strip_whitespace=strip_whitespace,
            is_separator_regex=False,
        )
        expected = [chunk.strip() for chunk in splitter.split_text(text)]
        expected = [chunk for chunk in expected if chunk]
        ours = chunks(text, recursive_spans(text, max_length=size))
        assert ours == expected, f"size {size}"


@pytest.mark.parametrize("seed", range(8))
def test_recursive_matches_langchain_overlap_on_words(seed: int) -> None:
    """With word pieces no longer than the overlap, both carry the same whole words over."""
    text_splitters = pytest.importorskip("langchain_text_splitters")
    rng = random.Random(seed)
    words = VOCABULARY.split()[:10]
    text = " ".join(rng.choice(words) for _ in range(600))
    for size, overlap in ((40, 12), (100, 20), (200, 39)):
        splitter = text_splitters.RecursiveCharacterTextSplitter(
            chunk_size=size,
            chunk_overlap=overlap,
            separators=["\n\n", " "],
            keep_separator="end",
            is_separator_regex=False,
        )
        expected = [chunk.strip() for chunk in splitter.split_text(text)]
        spans = recursive_spans(text, max_length=size, overlap=overlap, separators=("\n\n", " "))
        assert chunks(text, spans) == expected, f"size {size}, overlap {overlap}"


def test_recursive_differs_from_langchain_on_long_words() -> None:
    """Documented difference: LangChain keeps a piece with no separator left whole."""
    text_splitters = pytest.importorskip("langchain_text_splitters")
    text = "short " + "x" * 25 + " tail"
    splitter = text_splitters.RecursiveCharacterTextSplitter(
        chunk_size=10, chunk_overlap=0, separators=[" "], keep_separator="end"
    )
    # It also leaves that piece unstripped, separator included.
    assert splitter.split_text(text) == ["short", "x" * 25 + " ", "tail"]
    ours = chunks(text, recursive_spans(text, max_length=10, separators=(" ",)))
    assert ours == ["short", "x" * 10, "x" * 10, "x" * 5, "tail"]


# --- tokens and sentences: examples ---------------------------------------------------------


def test_token_windows_step_by_size_minus_overlap() -> None:
    text = "Hello, world! Größe 3.5"
    # tokens: Hello , world ! Größe 3 . 5
    spans = token_spans(text, size=3, overlap=1)
    assert chunks(text, spans) == ["Hello, world", "world! Größe", "Größe 3.", ".5"]


def test_token_windows_without_overlap_and_empty_text() -> None:
    text = "one two three four five"
    assert chunks(text, token_spans(text, size=2, overlap=0)) == [
        "one two",
        "three four",
        "five",
    ]
    assert token_spans("  \n ") == []


def test_sentences_group_with_overlap() -> None:
    text = "Mr. Smith went to Washington. He arrived at 5 p.m. on Monday. Then he left.\n\nNew para"
    singles = chunks(text, sentence_spans(text))
    assert singles == [
        "Mr. Smith went to Washington.",
        "He arrived at 5 p.m. on Monday.",
        "Then he left.",
        "New para",
    ]
    pairs = chunks(text, sentence_spans(text, sentences=2, overlap=1))
    assert pairs == [
        "Mr. Smith went to Washington. He arrived at 5 p.m. on Monday.",
        "He arrived at 5 p.m. on Monday. Then he left.",
        "Then he left.\n\nNew para",
    ]


GERMAN = (
    "Das ist z. B. ein Test. Dr. Müller wohnt in Nr. 5 in Berlin. Er kam am 3. Mai 2020 an. "
    "Vgl. S. 12 ff. und Abs. 3 d. h. mehr. Die Fa. Meyer zahlt ca. 5 Mio. Euro. "
    "Im 19. Jahrhundert gab es das. Siehe Art. 5 GG. Das ist z.B. gut, bzw. schlecht."
)


def test_sentences_german_abbreviations() -> None:
    assert chunks(GERMAN, sentence_spans(GERMAN, language="de")) == [
        "Das ist z. B. ein Test.",
        "Dr. Müller wohnt in Nr. 5 in Berlin.",
        "Er kam am 3. Mai 2020 an.",
        "Vgl. S. 12 ff. und Abs. 3 d. h. mehr.",
        "Die Fa. Meyer zahlt ca. 5 Mio. Euro.",
        "Im 19. Jahrhundert gab es das.",
        "Siehe Art. 5 GG.",
        "Das ist z.B. gut, bzw. schlecht.",
    ]
    # The English model cuts the same text in wrong places.
    english = chunks(GERMAN, sentence_spans(GERMAN, language="en"))
    assert "Er kam am 3." in english
    assert "Die Fa." in english


def test_sentences_german_known_weak_spots() -> None:
    """Documented: an ordinal before an ordinary noun and unlisted abbreviations still cut."""
    text = "Das 3. Kapitel ist lang. Er wohnt in der Hauptstr. Nr. 5 in Köln."
    assert chunks(text, sentence_spans(text, language="de")) == [
        "Das 3.",
        "Kapitel ist lang.",
        "Er wohnt in der Hauptstr.",
        "Nr. 5 in Köln.",
    ]


# --- registry and errors --------------------------------------------------------------------


def test_chunk_text_dispatches_to_the_chunkers() -> None:
    text = realistic_text(1)
    assert chunk_text(text, "recursive", {"max_length": 200}) == recursive_spans(
        text, max_length=200
    )
    assert chunk_text(text, "tokens", {"size": 50, "overlap": 5}) == token_spans(
        text, size=50, overlap=5
    )
    assert chunk_text(text, "sentences", {"sentences": 3}) == sentence_spans(text, sentences=3)
    # Parameters stored as JSON come back as lists and may arrive as strings from a CLI.
    assert chunk_text(text, "recursive", {"max_length": "200", "separators": [" "]}) == (
        recursive_spans(text, max_length=200, separators=(" ",))
    )


def test_unknown_chunker_lists_the_choices() -> None:
    with pytest.raises(InvalidInput) as raised:
        chunk_text("text", "foo", {})
    assert str(raised.value) == "unknown chunker 'foo'; choose one of: recursive, sentences, tokens"


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("recursive", {"max_length": 0}, "chunker 'recursive': max_length must be >= 1 (got 0)"),
        (
            "recursive",
            {"max_length": 10, "overlap": 10},
            "chunker 'recursive': overlap must be < max_length (got overlap=10, max_length=10)",
        ),
        ("recursive", {"overlap": -1}, "chunker 'recursive': overlap must be >= 0 (got -1)"),
        (
            "recursive",
            {"separators": ["\n", ""]},
            "chunker 'recursive': separators: separators must not contain an empty string",
        ),
        (
            "recursive",
            {"max_lenght": 10},
            "chunker 'recursive': unknown parameter 'max_lenght'; known: max_length, overlap, "
            "separators",
        ),
        ("tokens", {"size": "many"}, "chunker 'tokens': size: Input should be a valid integer"),
        (
            "tokens",
            {"size": 4, "overlap": 4},
            "chunker 'tokens': overlap must be < size (got overlap=4, size=4)",
        ),
        ("tokens", {"tokenizer": "cl100k"}, "chunker 'tokens': tokenizer: Input should be 'words'"),
        (
            "sentences",
            {"sentences": 2, "overlap": 2},
            "chunker 'sentences': overlap must be < sentences (got overlap=2, sentences=2)",
        ),
        ("sentences", {"language": "German"}, "chunker 'sentences': language: String should"),
    ],
)
def test_bad_params_get_a_clear_message(
    method: str, params: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        chunk_text("Some text.", method, params)
    assert str(raised.value).startswith(message)


def test_direct_calls_check_params_too() -> None:
    with pytest.raises(InvalidInput, match="chunker 'recursive': max_length must be >= 1"):
        recursive_spans("text", max_length=0)
    with pytest.raises(InvalidInput, match="chunker 'tokens': size must be >= 1"):
        token_spans("text", size=0, overlap=0)
    with pytest.raises(InvalidInput, match="chunker 'sentences': sentences must be >= 1"):
        sentence_spans("text", sentences=0)


def test_describe_chunkers_lists_params_with_defaults() -> None:
    described = describe_chunkers()
    assert list(described) == ["recursive", "sentences", "tokens"]
    assert set(described) == set(CHUNKERS)
    recursive = described["recursive"]["params"]
    assert recursive["max_length"]["default"] == 1000
    assert recursive["max_length"]["minimum"] == 1
    assert recursive["separators"]["default"] == list(DEFAULT_SEPARATORS)
    assert described["tokens"]["params"]["size"]["default"] == 256
    assert described["tokens"]["params"]["overlap"]["default"] == 32
    assert described["sentences"]["params"]["language"]["default"] == "en"
    for method in described.values():
        assert method["description"]
        assert all(param["description"] for param in method["params"].values())
