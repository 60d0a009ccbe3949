"""A deterministic LLM judge by rule over the prompt's text, for Assay's and Ragas's prompts.

Served through :class:`tests.fakes.openai_server.Computed`, it answers every prompt of the
LLM metric catalogue (:mod:`assay.experiments.catalogue_prompts`) and of Ragas 0.4.3's
faithfulness, answer relevancy, context precision, context recall and answer correctness
with the same verdicts for the same texts, so the two tools can be compared on equal terms:

- claims / statements of a text: its sentences (``assay.metrics.overlap.split_sentences``);
- a statement is supported by passages when at least 60 % of its content words (three
  letters or more, a few function words left out) occur in them;
- a passage is useful for a reference answer when it supports at least half of the
  reference's content words;
- the questions an answer replies to: its first sentence put three ways; noncommittal when
  it says it does not know.

A prompt it does not recognise gets a reply that is not JSON, which both tools must report.
"""

from __future__ import annotations

import json
import re
from typing import Any

from assay.metrics.overlap import split_sentences

_WORD = re.compile(r"[a-z0-9äöüß]+")
_FUNCTION = frozenset(
    "the and for are was were with that this from have has not but its you your can all "
    "any per out who how what which when where why does did into".split()
)
_EVASIVE = ("don't know", "do not know", "not sure", "cannot answer", "no information")
SUPPORT = 0.6
USEFUL = 0.5
UNKNOWN = "I cannot read this prompt."


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _FUNCTION}


def share(statement: str, text: str) -> float:
    wanted = words(statement)
    return len(wanted & words(text)) / len(wanted) if wanted else 0.0


def supports(text: str, statement: str) -> bool:
    return share(statement, text) >= SUPPORT


def useful(passage: str, reference: str) -> bool:
    return share(reference, passage) >= USEFUL


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


def questions(answer: str, count: int) -> list[str]:
    first = (sentences(answer) or [answer.strip()])[0].rstrip(".!?")
    forms = [f"{first}?", f"Is it true that {first}?", f"What do we know: {first}?"]
    return [forms[i % len(forms)] for i in range(count)]


def evasive(answer: str) -> int:
    return int(any(phrase in answer.lower() for phrase in _EVASIVE))


def _between(text: str, start: str, end: str) -> str:
    head = text.index(start) + len(start)
    tail = text.index(end, head) if end else len(text)
    return text[head:tail]


def _numbered(block: str) -> list[str]:
    parts = re.split(r"(?m)^\d+\. ", block)
    return [p.strip() for p in parts[1:]]


def _assay(prompt: str) -> str | None:
    reply = "\n\nReply with one JSON"
    if prompt.startswith("Break the text below"):
        return json.dumps({"claims": sentences(_between(prompt, "Text:\n", reply))})
    if prompt.startswith("Below are numbered passages"):
        passages = _between(prompt, "Passages:\n", "\n\nStatements:\n")
        statements = _numbered(_between(prompt, "Statements:\n", reply))
        verdicts = [
            {"statement": n, "reason": "rule", "verdict": int(supports(passages, s))}
            for n, s in enumerate(statements, start=1)
        ]
        return json.dumps({"verdicts": verdicts})
    if prompt.startswith("Read the answer below and write"):
        count = int(re.search(r"write (\d+) different", prompt).group(1))  # type: ignore[union-attr]
        answer = _between(prompt, "Answer:\n", reply)
        return json.dumps({"questions": questions(answer, count), "noncommittal": evasive(answer)})
    if prompt.startswith("Decide whether the passage below"):
        passage = _between(prompt, "Passage:\n", "\n\nReference answer:\n")
        reference = _between(prompt, "Reference answer:\n", reply)
        return json.dumps({"reason": "rule", "verdict": int(useful(passage, reference))})
    return None


def _ragas(prompt: str, choices: int) -> list[str] | None:
    marker = "Now perform the same with the following input\ninput: "
    if marker not in prompt:
        return None
    data: dict[str, Any] = json.loads(_between(prompt, marker, "\nOutput: "))
    if prompt.startswith("Given a question and an answer, analyze the complexity"):
        return [json.dumps({"statements": sentences(data["answer"])})]
    if prompt.startswith("Your task is to judge the faithfulness"):
        verdicts = [
            {"statement": s, "reason": "rule", "verdict": int(supports(data["context"], s))}
            for s in data["statements"]
        ]
        return [json.dumps({"statements": verdicts})]
    if prompt.startswith("Generate a question for the given answer"):
        asked = questions(data["response"], choices)
        flag = evasive(data["response"])
        return [json.dumps({"question": q, "noncommittal": flag}) for q in asked]
    if prompt.startswith("Given question, answer and context verify"):
        verdict = int(useful(data["context"], data["answer"]))
        return [json.dumps({"reason": "rule", "verdict": verdict})] * choices
    if prompt.startswith("Given a context, and an answer, analyze each sentence"):
        found = [
            {"statement": s, "reason": "rule", "attributed": int(supports(data["context"], s))}
            for s in sentences(data["answer"])
        ]
        return [json.dumps({"classifications": found})] * choices
    if prompt.startswith("Given a ground truth and an answer statements"):
        truth, answer = data["ground_truth"], data["answer"]
        whole_truth, whole_answer = " ".join(truth), " ".join(answer)
        tp = [s for s in answer if supports(whole_truth, s)]
        fp = [s for s in answer if not supports(whole_truth, s)]
        fn = [s for s in truth if not supports(whole_answer, s)]

        def listed(found: list[str]) -> list[dict[str, str]]:
            return [{"statement": s, "reason": "rule"} for s in found]

        return [json.dumps({"TP": listed(tp), "FP": listed(fp), "FN": listed(fn)})]
    return None


def answer(body: dict[str, Any]) -> list[str]:
    """The reply (one per choice asked for with ``n``) to a chat-completions request."""
    prompt = str(body["messages"][-1]["content"])
    choices = int(body.get("n") or 1)
    ours = _assay(prompt)
    if ours is not None:
        return [ours] * choices
    return _ragas(prompt, choices) or [UNKNOWN] * choices
