"""Prompt templates: checking, rendering, and reading a rendered prompt back."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInput
from assay.llm import Message
from assay.llm.prompts import (
    DEFAULT_TEMPLATE,
    GERMAN_TEMPLATE,
    check_template,
    default_template,
    format_passages,
    match_rendered,
    parse_passages,
    render_rag_prompt,
    template_fields,
)

PASSAGES = [
    ("policy.md", "Cars earn 0.30 EUR per km."),
    ("faq.html", "Bikes earn 0.10 EUR per km.\nAsk HR for details."),
]


@pytest.mark.parametrize("template", [DEFAULT_TEMPLATE, GERMAN_TEMPLATE])
def test_built_in_templates_are_valid(template: str) -> None:
    check_template(template)
    assert {"question", "passages"} <= set(template_fields(template))


def test_unknown_placeholder_is_named_with_the_allowed_ones() -> None:
    with pytest.raises(InvalidInput) as caught:
        check_template("Context: {passages}\nQ: {question}\nUser: {foo}")
    assert str(caught.value) == (
        "unknown placeholder {foo} in the prompt template; "
        "allowed: question, passages, history, language"
    )


@pytest.mark.parametrize("template", ["{} {question}", "{0} {question}", "{question.upper}"])
def test_positional_and_attribute_placeholders_are_unknown(template: str) -> None:
    with pytest.raises(InvalidInput, match="unknown placeholder"):
        check_template(template)


@pytest.mark.parametrize(
    "template", ["Q: {question", "Q: {question}}", "Q: question}", "{question} {passages"]
)
def test_malformed_braces(template: str) -> None:
    with pytest.raises(InvalidInput, match="malformed braces in the prompt template"):
        check_template(template)


@pytest.mark.parametrize("template", ["{question!r}", "{question:>20}"])
def test_conversions_and_format_specs_are_refused(template: str) -> None:
    with pytest.raises(InvalidInput, match="conversions and format specs are not supported"):
        check_template(template)


def test_a_template_must_ask_the_question() -> None:
    with pytest.raises(InvalidInput, match=r"no \{question\} placeholder"):
        check_template("Summarise: {passages}")


def test_literal_braces_stay_and_passage_braces_are_not_parsed() -> None:
    template = 'Reply as {{"answer": "..."}}.\n{passages}\nQ: {question}'
    passages = [("code.py", "value = {missing} and {{ }}")]
    [message] = render_rag_prompt(template, "What is value?", passages)
    assert message.content == (
        'Reply as {"answer": "..."}.\n[1] code.py\nvalue = {missing} and {{ }}\nQ: What is value?'
    )


def test_render_numbers_the_passages_and_names_the_language() -> None:
    [message] = render_rag_prompt(DEFAULT_TEMPLATE, "  Rate for bikes? ", PASSAGES, language="de")
    assert message.role == "user"
    assert (
        "[1] policy.md\nCars earn 0.30 EUR per km.\n\n[2] faq.html\nBikes earn" in message.content
    )
    assert "Question: Rate for bikes?\n" in message.content
    assert "Write the answer in German." in message.content


def test_history_goes_before_the_prompt_as_messages() -> None:
    history = [Message("user", "Hi"), Message("assistant", "Hello, ask away.")]
    messages = render_rag_prompt(DEFAULT_TEMPLATE, "Rate for cars?", PASSAGES, history)
    assert messages[:2] == history
    assert messages[2].role == "user"
    assert len(messages) == 3


def test_history_placeholder_writes_the_turns_into_the_text() -> None:
    history = [Message("user", "Hi"), Message("assistant", "Hello.")]
    template = "Earlier:\n{history}\n\n{passages}\n\nNow: {question}"
    [message] = render_rag_prompt(template, "Rate?", PASSAGES, history)
    assert message.content.startswith("Earlier:\nUser: Hi\nAssistant: Hello.\n\n[1] policy.md")


def test_empty_question_is_refused() -> None:
    with pytest.raises(InvalidInput, match="the question is empty"):
        render_rag_prompt(DEFAULT_TEMPLATE, "  \n", PASSAGES)


def test_no_passages_renders_an_empty_block() -> None:
    [message] = render_rag_prompt("{passages}|{question}", "Q?", [])
    assert message.content == "|Q?"


def test_german_template_for_german_projects() -> None:
    assert default_template("de") is GERMAN_TEMPLATE
    assert default_template("en") is DEFAULT_TEMPLATE
    assert default_template("fr") is DEFAULT_TEMPLATE
    [message] = render_rag_prompt(GERMAN_TEMPLATE, "Wie hoch?", PASSAGES, language="de")
    assert "Antworte auf Deutsch." in message.content
    assert "Frage: Wie hoch?" in message.content


def test_passages_survive_a_round_trip() -> None:
    passages = [
        ("a.md", "First line.\n[7] is a footnote, not a header."),
        ("", "No label here."),
        ("c.md", "Third."),
    ]
    block = format_passages(passages)
    assert block.startswith("[1] a.md\nFirst line.")
    assert "\n\n[2]\nNo label here." in block
    assert parse_passages(block) == passages


def test_match_rendered_recovers_the_values() -> None:
    [message] = render_rag_prompt(DEFAULT_TEMPLATE, "Rate for bikes?", PASSAGES, language="en")
    values = match_rendered(DEFAULT_TEMPLATE, message.content)
    assert values is not None
    assert values["question"] == "Rate for bikes?"
    assert values["language"] == "English"
    assert parse_passages(values["passages"]) == [
        ("policy.md", "Cars earn 0.30 EUR per km."),
        ("faq.html", "Bikes earn 0.10 EUR per km.\nAsk HR for details."),
    ]
    assert match_rendered(DEFAULT_TEMPLATE, "something else entirely") is None
