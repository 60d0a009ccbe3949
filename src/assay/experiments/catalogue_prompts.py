"""The catalogue metrics' prompts, and strict readers of the judge's JSON replies.

Every prompt asks for one JSON object and nothing else. A reader accepts exactly the shape it
asked for (a fenced ```json block is unwrapped; text around the object is not allowed), and
anything else raises :class:`ReplyError` carrying the reply, so a judge that misbehaves is a
visible error on the task, never a silent 0.

Four prompts serve the five metrics: ``claims`` splits a text into self-contained claims,
``verify`` asks for each numbered statement whether the given passages support it,
``questions`` asks which questions an answer replies to and whether it commits to anything,
``useful`` asks whether one passage helps to reach the reference answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from assay.errors import AssayError

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)


class ReplyError(AssayError):
    """The judge's reply is not the JSON the prompt asked for; ``reply`` is kept to show."""

    def __init__(self, message: str, reply: str) -> None:
        super().__init__(message)
        self.reply = reply


def _passages(contexts: Sequence[str]) -> str:
    return "\n".join(f"[{n}] {text.strip()}" for n, text in enumerate(contexts, start=1))


def _numbered(statements: Sequence[str]) -> str:
    return "\n".join(f"{n}. {text.strip()}" for n, text in enumerate(statements, start=1))


def claims_prompt(question: str, text: str) -> str:
    return f"""Break the text below into the separate factual claims it makes.
Each claim is one short sentence that can be understood without the others: write out what
pronouns refer to, and keep numbers, names and conditions. Leave out greetings, hedges and
sentences that assert nothing. A text that asserts nothing gives an empty list.

Question the text answers:
{question.strip()}

Text:
{text.strip()}

Reply with one JSON object and nothing else: {{"claims": ["first claim", "second claim"]}}"""


def verify_prompt(statements: Sequence[str], contexts: Sequence[str]) -> str:
    return f"""Below are numbered passages and numbered statements. For each statement decide
whether the passages state it or it follows directly from what they state. Knowledge from
outside the passages does not count. Give verdict 1 when the passages support the statement,
0 when they do not (including when they say nothing about it).

Passages:
{_passages(contexts)}

Statements:
{_numbered(statements)}

Reply with one JSON object and nothing else, one entry per statement in order:
{{"verdicts": [{{"statement": 1, "reason": "short reason", "verdict": 1}}]}}"""


def questions_prompt(answer: str, count: int) -> str:
    return f"""Read the answer below and write {count} different questions that it answers
(as a user would ask them). Then say whether the answer is noncommittal: 1 when it evades,
stays vague or says it does not know, 0 when it commits to an answer.

Answer:
{answer.strip()}

Reply with one JSON object and nothing else:
{{"questions": ["question 1", "question 2"], "noncommittal": 0}}"""


def useful_prompt(question: str, context: str, reference: str) -> str:
    return f"""Decide whether the passage below was useful for arriving at the reference
answer to the question: verdict 1 when it holds information the reference answer uses, 0
when it does not.

Question:
{question.strip()}

Passage:
{context.strip()}

Reference answer:
{reference.strip()}

Reply with one JSON object and nothing else: {{"reason": "short reason", "verdict": 1}}"""


def _object(reply: str) -> dict[str, Any]:
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except ValueError:
        raise ReplyError("the reply is not a JSON object", reply) from None
    if not isinstance(data, dict):
        raise ReplyError("the reply is JSON but not an object", reply)
    return data


def _flag(value: Any, what: str, reply: str) -> int:
    if isinstance(value, bool) or value not in (0, 1):
        raise ReplyError(f"{what} must be 0 or 1, got {value!r}", reply)
    return int(value)


def read_claims(reply: str) -> list[str]:
    """``{"claims": [text, ...]}`` → the claims (empty texts refused)."""
    claims = _object(reply).get("claims")
    if not isinstance(claims, list) or not all(isinstance(c, str) and c.strip() for c in claims):
        raise ReplyError('"claims" must be a list of non-empty texts', reply)
    return [c.strip() for c in claims]


def read_verdicts(reply: str, count: int) -> list[int]:
    """One 0/1 verdict per statement, numbered 1..count in order."""
    verdicts = _object(reply).get("verdicts")
    if not isinstance(verdicts, list) or len(verdicts) != count:
        got = len(verdicts) if isinstance(verdicts, list) else "no list"
        raise ReplyError(f'"verdicts" must list {count} statement(s), got {got}', reply)
    found: list[int] = []
    for number, entry in enumerate(verdicts, start=1):
        if not isinstance(entry, dict) or entry.get("statement") != number:
            raise ReplyError(f"verdict {number} must be an object with statement {number}", reply)
        found.append(_flag(entry.get("verdict"), f"verdict of statement {number}", reply))
    return found


def read_questions(reply: str) -> tuple[list[str], int]:
    """``{"questions": [...], "noncommittal": 0|1}`` → (questions, noncommittal)."""
    data = _object(reply)
    questions = data.get("questions")
    if (
        not isinstance(questions, list)
        or not questions
        or not all(isinstance(q, str) and q.strip() for q in questions)
    ):
        raise ReplyError('"questions" must be a non-empty list of texts', reply)
    return [q.strip() for q in questions], _flag(data.get("noncommittal"), "noncommittal", reply)


def read_useful(reply: str) -> int:
    """``{"verdict": 0|1}`` → the verdict."""
    return _flag(_object(reply).get("verdict"), "verdict", reply)
