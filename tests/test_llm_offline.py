"""The offline extractive generator: quotes, citations, no-answer, determinism."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInput
from assay.llm import (
    GeneratorSettings,
    Message,
    generate_answer,
    make_generator,
    prompt_hash,
    stream_answer,
)
from assay.llm.offline import OfflineGenerator
from assay.llm.prompts import DEFAULT_TEMPLATE, GERMAN_TEMPLATE, render_rag_prompt

TRAVEL = (
    "The travel policy applies to all employees. "
    "Private cars are reimbursed at 0.30 EUR per kilometre. "
    "Bicycles are reimbursed at 0.10 EUR per kilometre. "
    "Receipts must be submitted within 30 days."
)
LEAVE = "Employees get 30 days of annual leave. Leave requests go to the line manager."
PASSAGES = [("travel-policy.md", TRAVEL), ("leave-policy.md", LEAVE)]


def test_quotes_the_best_sentence_with_its_citation_and_offsets() -> None:
    generation = generate_answer(
        OfflineGenerator(), "How much are private cars reimbursed per kilometre?", PASSAGES
    )
    assert generation.text == "Private cars are reimbursed at 0.30 EUR per kilometre. [1]"
    [citation] = generation.citations
    assert (citation.marker, citation.label, citation.passage) == (1, "travel-policy.md", 0)
    assert citation.start is not None and citation.end is not None
    assert TRAVEL[citation.start : citation.end] == (
        "Private cars are reimbursed at 0.30 EUR per kilometre."
    )
    assert generation.model == "offline-extractive"
    assert generation.params == {"kind": "offline", "note": "extractive, no LLM"}
    assert generation.finish_reason == "stop"


def test_several_sentences_come_in_passage_order() -> None:
    generation = generate_answer(
        OfflineGenerator(), "How many days for leave or for receipts?", PASSAGES
    )
    assert generation.text == (
        "Receipts must be submitted within 30 days. [1] Employees get 30 days of annual leave. [2]"
    )
    assert [c.passage for c in generation.citations] == [0, 1]


def test_never_more_than_three_sentences() -> None:
    text = " ".join(f"Rule {n} concerns parking." for n in range(1, 8))
    generation = generate_answer(OfflineGenerator(), "parking rule", [("rules.md", text)])
    assert generation.text == (
        "Rule 1 concerns parking. [1] Rule 2 concerns parking. [1] Rule 3 concerns parking. [1]"
    )


def test_weak_matches_are_left_out() -> None:
    passages = [("a", "Cars are fast. Red cars with four doors are reimbursed at 0.30 EUR.")]
    generation = generate_answer(OfflineGenerator(), "red cars four doors reimbursed", passages)
    assert generation.text == "Red cars with four doors are reimbursed at 0.30 EUR. [1]"


def test_no_overlap_says_so_in_english_and_german() -> None:
    english = generate_answer(OfflineGenerator(), "Who founded the company?", PASSAGES)
    assert english.text == "None of the passages answers this question."
    assert english.citations == ()
    assert english.finish_reason == "no_answer"

    german = generate_answer(
        OfflineGenerator(), "Wer hat die Firma gegründet?", PASSAGES, language="de"
    )
    assert german.text == "Keine der Textstellen beantwortet diese Frage."


def test_stop_words_alone_match_nothing() -> None:
    generation = generate_answer(OfflineGenerator(), "What is the of and?", PASSAGES)
    assert generation.finish_reason == "no_answer"


def test_no_passages_means_no_answer() -> None:
    generation = generate_answer(OfflineGenerator(), "Private cars?", [])
    assert generation.finish_reason == "no_answer"


def test_german_words_match_after_stemming() -> None:
    passages = [("reise.md", "Für Dienstreisen mit dem Fahrrad gibt es 0,10 EUR je Kilometer.")]
    generation = generate_answer(
        OfflineGenerator(), "Was zahlt die Firma für Fahrräder?", passages, language="de"
    )
    assert generation.text == "Für Dienstreisen mit dem Fahrrad gibt es 0,10 EUR je Kilometer. [1]"


def test_same_input_same_answer_and_hash_of_the_llm_prompt() -> None:
    question = "How are bicycles reimbursed?"
    first = generate_answer(OfflineGenerator(), question, PASSAGES)
    second = generate_answer(OfflineGenerator(), question, PASSAGES)
    assert first == second
    expected = prompt_hash(render_rag_prompt(DEFAULT_TEMPLATE, question, PASSAGES))
    assert first.prompt_hash == expected


def test_generate_reads_a_rendered_prompt() -> None:
    question = "How are bicycles reimbursed?"
    history = [Message("user", "Hello"), Message("assistant", "Hi.")]
    messages = render_rag_prompt(DEFAULT_TEMPLATE, question, PASSAGES, history)
    generation = OfflineGenerator().generate(messages)
    assert generation.text == "Bicycles are reimbursed at 0.10 EUR per kilometre. [1]"
    assert generation.prompt_hash == prompt_hash(messages)
    assert [c.label for c in generation.citations] == ["travel-policy.md"]


def test_generate_reads_the_german_template_and_answers_in_german() -> None:
    messages = render_rag_prompt(GERMAN_TEMPLATE, "Wer ist der Gründer?", PASSAGES, language="de")
    assert OfflineGenerator().generate(messages).text == (
        "Keine der Textstellen beantwortet diese Frage."
    )


def test_generate_with_a_custom_template() -> None:
    template = "Q: {question}\nSources:\n{passages}"
    messages = render_rag_prompt(template, "annual leave days", PASSAGES)
    generation = OfflineGenerator(template=template).generate(messages)
    assert generation.text == "Employees get 30 days of annual leave. [2]"


def test_generate_refuses_prompts_it_cannot_read() -> None:
    with pytest.raises(InvalidInput, match="only reads prompts rendered from its prompt template"):
        OfflineGenerator().generate([Message("user", "Tell me a joke.")])
    with pytest.raises(InvalidInput, match="needs a user message last"):
        OfflineGenerator().generate([])


def test_streams_the_same_text() -> None:
    generator = OfflineGenerator()
    question = "How much are private cars reimbursed?"
    whole = generate_answer(generator, question, PASSAGES).text
    deltas = list(stream_answer(generator, question, PASSAGES))
    assert len(deltas) > 1
    assert "".join(deltas) == whole
    messages = render_rag_prompt(DEFAULT_TEMPLATE, question, PASSAGES)
    assert "".join(generator.stream(messages)) == whole


def test_offline_is_the_default_generator() -> None:
    generator = make_generator(GeneratorSettings())
    assert isinstance(generator, OfflineGenerator)
    generation = generate_answer(generator, "annual leave", PASSAGES)
    assert generation.citations[0].label == "leave-policy.md"


def test_passages_must_be_label_text_pairs() -> None:
    with pytest.raises(InvalidInput, match="passage 2 must be a \\(label, text\\) pair"):
        generate_answer(OfflineGenerator(), "q", [("a", "b"), ("only one",)])
