"""RAGTools trigram support (golden values from RAGTools' own tests) and RAGAPHENE-style
lexical overlap (phrases, sentences, coverage with offsets)."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInput
from assay.metrics.overlap import (
    STOP_WORDS,
    content_words,
    coverage,
    covered_spans,
    jaccard,
    passage_score,
    phrase_overlaps,
    sentence_overlaps,
    split_sentences,
)
from assay.metrics.support import (
    STOPWORDS,
    annotate_support,
    context_trigrams,
    split_units,
    support_score,
    tokenize,
)

CONTEXTS = ["This is a test context.", "Another context sentence.", "Final piece of context."]


# --- trigram support ----------------------------------------------------------------------


def test_golden_partial_support() -> None:
    result = annotate_support("This is a test answer. It has multiple sentences.", CONTEXTS)
    assert abs(result.score - 0.483) < 0.01
    first, second = result.units
    assert first.text == "This is a test answer."
    assert round(first.score, 2) == 0.67  # RAGTools prints "[1,0.67]" (1-based source)
    assert first.source == 0
    assert second.text == " It has multiple sentences."
    assert second.score == pytest.approx(1 / 3)  # "sentences" ~ "sentence." in context 2
    assert second.source == 1
    answer = "This is a test answer. It has multiple sentences."
    words = {
        answer[token.start : token.end]: token.score
        for unit in result.units
        for token in unit.tokens
        if token.score is not None
    }
    # stop words and one-character tokens are not scored
    assert words == {
        "This": 1.0,
        "test": 1.0,
        "answer": 0.0,
        "multiple": 0.0,
        "sentences": pytest.approx(6 / 9),
    }


def test_golden_full_and_no_support() -> None:
    full = annotate_support("This is a test context. Another context sentence.", CONTEXTS)
    assert full.score == pytest.approx(1.0)
    assert all(unit.score == 1.0 for unit in full.units if unit.text.strip())
    assert annotate_support("Unrelated content here. Completely different.", CONTEXTS).score < 0.2
    assert support_score("This is a test context.", CONTEXTS) == 1.0


def test_empty_answer_and_missing_contexts() -> None:
    empty = annotate_support("", CONTEXTS)
    assert empty.score == 0.0
    assert empty.units == ()
    with pytest.raises(InvalidInput, match="at least one context"):
        annotate_support("text", [])


def test_units_cover_code_and_punctuation() -> None:
    answer = "Special characters: !@#$%. Punctuation marks: ,;:."
    units = annotate_support(answer, CONTEXTS).units
    assert [u.text for u in units] == ["Special characters: !", "@#$%.", " Punctuation marks: ,;:."]
    code = "See:\n```julia\nx = 1\n\ny = f(x)\n```\nand `inline` code."
    spans = split_units(code)
    texts = [code[start:end] for start, end in spans]
    assert texts == [
        "See:",
        "\n",
        "```julia",
        "\n",
        "x = 1",
        "\n",
        "y = f(x)",
        "\n",
        "```",
        "\n",
        "and ",
        "`inline`",
        " code.",
    ]


def test_tokenizer_and_context_set() -> None:
    text = "f(x) => y!"
    assert [text[s:e] for s, e in tokenize(text)] == ["f", "(", "x", ")", " ", "=>", " ", "y", "!"]
    grams = context_trigrams("a test.")
    # "test" glued to its one-character neighbours: " test."
    assert grams == {"test", " te", "tes", "est", "st."}
    assert "it" in STOPWORDS and "It" in STOPWORDS and "this" not in STOPWORDS


def test_support_is_case_sensitive() -> None:
    assert annotate_support("TEST", ["test"]).score == 0.0


def test_token_offsets_point_into_the_answer() -> None:
    answer = "Another context. Final piece!"
    for unit in annotate_support(answer, CONTEXTS).units:
        assert answer[unit.start : unit.end] == unit.text
        for token in unit.tokens:
            assert unit.start <= token.start < token.end <= unit.end


# --- lexical overlap ----------------------------------------------------------------------


def test_phrase_overlaps_grow_greedily_and_give_offsets() -> None:
    source = "The cat sat on the mat today, said “Bob”."
    target = "Yesterday the cat sat on the mat. Bob said 'hi'."
    matches = phrase_overlaps(source, target)
    assert len(matches) == 1
    match = matches[0]
    assert (match.start, match.end, match.text) == (0, 22, "The cat sat on the mat")
    assert match.target_spans == ((10, 32),)
    assert target[10:32].lower() == "the cat sat on the mat"


def test_phrase_overlaps_minimum_and_all_occurrences() -> None:
    assert phrase_overlaps("big red dog", "a big red car") == []  # only two words match
    assert [m.text for m in phrase_overlaps("big red", "big red car", min_tokens=2)] == ["big red"]
    repeated = phrase_overlaps("one two three", "one two three and one two three")
    assert repeated[0].target_spans == ((0, 13), (18, 31))
    # a phrase shorter than min_tokens at the end of the source is not kept
    assert phrase_overlaps("x y", "x y", min_tokens=3) == []
    with pytest.raises(InvalidInput):
        phrase_overlaps("a", "a", min_tokens=0)


def test_curly_quotes_match_straight_ones() -> None:
    matches = phrase_overlaps("it’s a “fine” day", 'It\'s a "fine" day indeed')
    assert [m.text for m in matches] == ["it’s a “fine” day"]


def test_sentences_content_words_and_jaccard() -> None:
    text = "First one.  Second! Third?? Fourth without end"
    assert [text[s:e] for s, e in split_sentences(text)] == [
        "First one",
        "Second",
        "Third",
        "Fourth without end",
    ]
    assert content_words("The Größe of it is 3 x-rays") == {"größe", "rays"}
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), {"a"}) == 0.0
    assert 60 <= len(STOP_WORDS) <= 120


def test_sentence_overlaps_and_coverage() -> None:
    response = "The Eiffel Tower is 330 metres tall and was completed in 1889."
    passage = (
        "Paris has many sights. The Eiffel Tower is 330 metres tall! "
        "It was completed in 1889 for the fair."
    )
    sentences = sentence_overlaps(response, passage)
    assert [s.text for s in sentences] == [
        "The Eiffel Tower is 330 metres tall",
        "It was completed in 1889 for the fair.",
    ]
    for sentence in sentences:
        assert passage[sentence.start : sentence.end] == sentence.text
        for phrase in sentence.phrases:
            for start, end in phrase.target_spans:  # passage offsets
                assert passage[start:end].lower() == response[phrase.start : phrase.end].lower()
    assert sentences[0].score == pytest.approx(5 / 7)
    assert passage_score(sentences) == pytest.approx((5 / 7 + 0.25) / 2)
    spans = covered_spans(response, [passage])
    assert spans == [(0, 35), (40, 61)]
    assert coverage(response, [passage]) == pytest.approx(56 / len(response))


def test_coverage_edges() -> None:
    assert coverage("", ["anything"]) == 0.0
    assert coverage("no overlap at all here", ["something else entirely"]) == 0.0
    text = "alpha beta gamma delta"
    assert coverage(text, [text]) == 1.0
    # spans from several passages are merged, not double counted
    assert coverage(text, ["alpha beta gamma", "beta gamma delta"]) == 1.0
    # a sentence below the similarity threshold contributes no phrase
    assert coverage(text, ["alpha beta gamma"], min_score=0.9) == 0.0


# --- tokens people write in answers: URLs, numbers, citation markers ---------------------


def _tokens(text: str) -> list[str]:
    return [text[s:e] for s, e in tokenize(text)]


def test_urls_are_one_token_and_end_no_sentence() -> None:
    text = "See https://kelm.example/report-2023.pdf?page=2, or www.kelm.example. Then call."
    tokens = _tokens(text)
    assert "https://kelm.example/report-2023.pdf?page=2" in tokens
    assert "www.kelm.example" in tokens  # the full stop after it ends the sentence
    assert [text[s:e] for s, e in split_units(text)] == [
        "See https://kelm.example/report-2023.pdf?page=2, or www.kelm.example.",
        " Then call.",
    ]


@pytest.mark.parametrize("number", ["1,234.5", "3.2%", "1.234,5", "2023", "0.5"])
def test_numbers_with_separators_are_one_token(number: str) -> None:
    text = f"It was {number} in total."
    assert _tokens(text) == ["It", " ", "was", " ", number, " ", "in", " ", "total", "."]
    assert [text[s:e] for s, e in split_units(text)] == [text]


def test_a_number_glued_to_letters_stays_a_word() -> None:
    assert _tokens("abc123 123abc") == ["abc123", " ", "123abc"]


def test_a_number_scores_against_the_same_number_only() -> None:
    context = ["Revenue rose by 3.2% to 1,234.5 million."]
    assert annotate_support("Revenue rose by 3.2%.", context).score == pytest.approx(
        annotate_support("Revenue rose by.", context).units[0].score
    )
    tokens = annotate_support("Revenue 3.2% 1,234.5 4.7%", context).units[0].tokens
    scores = {t.start: t.score for t in tokens if t.score is not None}
    assert scores == {0: 1.0, 8: 1.0, 13: 1.0, 21: 0.0}  # "4.7%" shares no trigram


@pytest.mark.parametrize("marker", ["[1]", "[12]", "[2, 3]", "[4-6]", "[1;2]"])
def test_citation_markers_are_not_scored(marker: str) -> None:
    context = ["The ferry leaves at night."]
    plain = annotate_support("The ferry leaves at night.", context)
    cited = annotate_support(f"The ferry leaves at night {marker}.", context)
    assert plain.units[0].score == 1.0
    assert cited.units[0].score == 1.0  # the marker neither lowers nor raises it
    unit = cited.units[0]
    markers = [t for t in unit.tokens if unit.text[t.start : t.end] == marker]
    assert len(markers) == 1 and markers[0].score is None


def test_a_citation_after_the_full_stop_stays_with_its_sentence() -> None:
    text = "The ferry leaves at night.[1] It stops at pier 3. [2][3] Done."
    assert [text[s:e] for s, e in split_units(text)] == [
        "The ferry leaves at night.[1]",
        " It stops at pier 3. [2][3]",
        " Done.",
    ]


def test_brackets_that_are_not_citations_are_still_tokens() -> None:
    assert _tokens("[a]") == ["[", "a", "]"]
