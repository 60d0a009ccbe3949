"""Prompt templates for answering from passages (RAG).

A template is plain text with up to four named placeholders: ``{question}``,
``{passages}``, ``{history}`` and ``{language}``; ``{{`` and ``}}`` are literal braces. It
renders to the last user message. Earlier turns of a conversation go before it as chat
messages, unless the template places ``{history}`` itself, in which case they are written
into the text instead.

Passages are numbered from 1 in the order given and written as ``[n] label`` followed by the
passage text on the next lines, so an answer can cite them as ``[1]``, ``[2]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from string import Formatter

from assay.errors import InvalidInput
from assay.llm.records import Message

PLACEHOLDERS: tuple[str, ...] = ("question", "passages", "history", "language")

DEFAULT_TEMPLATE = """\
Answer the question below from the numbered passages, and from nothing else.
Back every statement with the number of the passage it comes from in square brackets, \
for example [1] or [2][3].
If the passages do not hold the answer, say plainly that they do not answer the question; \
do not guess.
Write the answer in {language}.

Passages:

{passages}

Question: {question}
"""

GERMAN_TEMPLATE = """\
Beantworte die folgende Frage ausschließlich anhand der nummerierten Textstellen.
Belege jede Aussage mit der Nummer der Textstelle in eckigen Klammern, zum Beispiel [1] \
oder [2][3].
Wenn die Textstellen die Antwort nicht enthalten, sage deutlich, dass sie die Frage nicht \
beantworten; rate nicht.
Antworte auf Deutsch.

Textstellen:

{passages}

Frage: {question}
"""

LANGUAGE_NAMES: dict[str, str] = {
    "da": "Danish",
    "de": "German",
    "en": "English",
    "es": "Spanish",
    "fi": "Finnish",
    "fr": "French",
    "it": "Italian",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "sv": "Swedish",
}

_HEADER = re.compile(r"^\[(\d+)\](?: (.*))?$", re.MULTILINE)


def default_template(language: str) -> str:
    """The built-in template for a project language: German for ``de``, else English."""
    return GERMAN_TEMPLATE if language.strip().lower() == "de" else DEFAULT_TEMPLATE


def language_name(language: str) -> str:
    """English name of a language code for the ``{language}`` placeholder ("de" → German)."""
    code = language.strip().lower()
    return LANGUAGE_NAMES.get(code, code or "the language of the question")


def template_fields(template: str) -> list[str]:
    """Placeholder names in order of appearance; InvalidInput for anything not allowed."""
    try:
        parsed = list(Formatter().parse(template))
    except ValueError as exc:
        raise InvalidInput(
            f"malformed braces in the prompt template: {exc}; "
            "write {{ and }} for a literal brace"
        ) from exc
    names: list[str] = []
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        shown = (
            "{"
            + name
            + (f"!{conversion}" if conversion else "")
            + (f":{spec}" if spec else "")
            + "}"
        )
        if name not in PLACEHOLDERS:
            raise InvalidInput(
                f"unknown placeholder {shown} in the prompt template; "
                f"allowed: {', '.join(PLACEHOLDERS)}"
            )
        if spec or conversion:
            raise InvalidInput(
                f"placeholder {shown} in the prompt template: conversions and format specs "
                f"are not supported; write {{{name}}}"
            )
        names.append(name)
    return names


def check_template(template: str) -> None:
    """Raise InvalidInput unless ``template`` parses, uses only known placeholders and asks
    the question."""
    if "question" not in template_fields(template):
        raise InvalidInput(
            "the prompt template has no {question} placeholder, so the model would never "
            "see the question"
        )


def format_passages(passages: Sequence[tuple[str, str]]) -> str:
    """``[1] label`` then the text, one blank line between passages."""
    blocks = []
    for number, (label, text) in enumerate(passages, start=1):
        header = f"[{number}] {label}".rstrip()
        blocks.append(f"{header}\n{text.strip()}")
    return "\n\n".join(blocks)


def parse_passages(block: str) -> list[tuple[str, str]]:
    """The inverse of :func:`format_passages`: ``(label, text)`` pairs.

    Headers must be numbered 1, 2, 3 … in order, so a ``[7]`` inside a passage's text is not
    taken for a header.
    """
    headers = []
    expected = 1
    for match in _HEADER.finditer(block):
        if int(match.group(1)) == expected:
            headers.append(match)
            expected += 1
    passages = []
    for index, match in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(block)
        passages.append((match.group(2) or "", block[match.end() : end].strip()))
    return passages


def format_history(history: Sequence[Message]) -> str:
    """Earlier turns as ``User: …`` / ``Assistant: …`` lines, for templates with {history}."""
    names = {"user": "User", "assistant": "Assistant", "system": "System"}
    return "\n".join(f"{names[m.role]}: {m.content.strip()}" for m in history)


def render_rag_prompt(
    template: str,
    question: str,
    passages: Sequence[tuple[str, str]],
    history: Sequence[Message] = (),
    language: str = "en",
) -> list[Message]:
    """The chat messages for one question: earlier turns, then the filled-in template."""
    names = template_fields(template)
    if "question" not in names:
        check_template(template)  # raises with the message about the missing question
    if not question.strip():
        raise InvalidInput("the question is empty; there is nothing to answer")
    values = {
        "question": question.strip(),
        "passages": format_passages(passages),
        "history": format_history(history),
        "language": language_name(language),
    }
    text = Formatter().vformat(template, (), values)
    before = [] if "history" in names else list(history)
    return [*before, Message("user", text)]


def match_rendered(template: str, text: str) -> dict[str, str] | None:
    """The placeholder values a text was rendered with from ``template``, or None.

    Lets a generator that only receives messages (the offline one) recover its structured
    input; exact for anything :func:`render_rag_prompt` produced.
    """
    pattern = ["^"]
    seen: set[str] = set()
    for literal, name, _spec, _conversion in Formatter().parse(template):
        pattern.append(re.escape(literal))
        if name is None:
            continue
        if name in seen:
            pattern.append(f"(?P={name})")
        else:
            pattern.append(f"(?P<{name}>.*?)")
            seen.add(name)
    pattern.append("$")
    match = re.match("".join(pattern), text, re.DOTALL)
    return None if match is None else match.groupdict()


# ---------------------------------------------------------------- suggestions for annotators
#
# Relevance labels for passages and standalone rewrites of conversation questions: the model's
# reply is a JSON object read strictly by assay.llm.suggestion_replies, and what it proposes
# waits for a person (assay.gold.suggestions). The version names go into the stored
# parameters, so a changed prompt shows in the acceptance rates.

RELEVANCE_PROMPT_VERSION = "relevance-1"
REWRITE_PROMPT_VERSION = "rewrite-1"
SUGGESTION_PASSAGE_CHARS = 2000
"""A passage longer than this is cut (marked "[…]") in a relevance prompt."""

RELEVANCE_SYSTEM = """\
You help people build a test collection for a search and question-answering system. For a \
question and some numbered passages, judge each passage on its own:

- "relevant": the passage states (part of) the answer to the question;
- "distracting": the passage is about the same subject and looks useful, but does not \
answer the question (a near miss: another case, another period, another product);
- "irrelevant": the passage has nothing useful for the question.

Give every passage a short reason of at most 25 words, written in {language}.
Reply with one JSON object and nothing else, in this shape:
{{"judgments": [{{"passage": 1, "label": "relevant", "reason": "..."}}, ...]}}
with exactly one entry for each passage number."""

REWRITE_SYSTEM = """\
You help people build a test collection of conversations with a question-answering system. \
The last question of a conversation often leans on earlier turns ("And in winter?", "How \
much does it cost?"). Rewrite it as a standalone question that a search engine could answer \
without the conversation: resolve pronouns and ellipsis from the earlier turns, keep its \
meaning and its language ({language}), add nothing the user did not ask. If it already \
stands alone, return it unchanged.
Reply with one JSON object and nothing else: {{"rewrite": "..."}}"""


def relevance_prompt(
    question: str,
    passages: Sequence[str],
    earlier_questions: Sequence[str] = (),
    language: str = "en",
) -> list[Message]:
    """The messages asking for one label and reason per passage (numbered from 1). Earlier
    questions of a conversation give the last one its context."""
    if not question.strip():
        raise InvalidInput("the question is empty; there is nothing to judge passages against")
    if not passages:
        raise InvalidInput("there are no passages to judge")
    lines = []
    if earlier_questions:
        lines.append("Earlier questions in this conversation:")
        lines.extend(f"- {q.strip()}" for q in earlier_questions if q.strip())
        lines.append("")
    lines.append(f"Question: {question.strip()}")
    lines.append("")
    lines.append("Passages:")
    for number, text in enumerate(passages, start=1):
        body = text.strip()
        if len(body) > SUGGESTION_PASSAGE_CHARS:
            body = body[:SUGGESTION_PASSAGE_CHARS].rstrip() + " […]"
        lines += ["", f"[{number}]", body]
    system = RELEVANCE_SYSTEM.format(language=language_name(language))
    return [Message("system", system), Message("user", "\n".join(lines))]


def rewrite_prompt(
    earlier: Sequence[tuple[str, str]], question: str, language: str = "en"
) -> list[Message]:
    """The messages asking for a standalone rewrite of ``question`` after the earlier
    ``(question, answer)`` turns of its conversation."""
    if not question.strip():
        raise InvalidInput("the question is empty; there is nothing to rewrite")
    lines = ["Conversation so far:"]
    for query, answer in earlier:
        lines.append(f"User: {query.strip()}")
        if answer.strip():
            said = " ".join(answer.split())
            if len(said) > SUGGESTION_PASSAGE_CHARS // 2:
                said = said[: SUGGESTION_PASSAGE_CHARS // 2].rstrip() + " […]"
            lines.append(f"Assistant: {said}")
    if not earlier:
        lines.append("(none: this is the first question)")
    lines += ["", f"Last question: {question.strip()}"]
    system = REWRITE_SYSTEM.format(language=language_name(language))
    return [Message("system", system), Message("user", "\n".join(lines))]
