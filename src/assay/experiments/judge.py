"""LLM-as-judge metrics: a prompt template, categorical values, a verdict read from the reply.

The template may use ``${SYSTEM_INST}``, ``${EXAMPLES}``, ``${CONTEXT}`` (the contexts the
system was given, each as ``[DOCUMENT]\\n…\\n[END]``), ``${INPUT}`` (the conversation and the
question), ``${PREDICTION}`` (the system's answer) and ``${REFERENCE}`` (the reference
answers). The verdict is the text inside ``<verdict>…</verdict>``, else the reply's first
non-empty line, matched case-insensitively to the metric's values. A reply that matches no
value, or a judge that fails, gives the value ``"error"`` for that task and a message; it
never stops a run.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.errors import InvalidInput
from assay.experiments.tasks import Task
from assay.llm import GeneratorSettings, make_generator
from assay.llm.outgoing import OutgoingPolicy
from assay.llm.records import Generation, Generator, GeneratorError, Message
from assay.llm.traffic import Traffic

ERROR = "error"
PLACEHOLDERS = ("SYSTEM_INST", "EXAMPLES", "CONTEXT", "INPUT", "PREDICTION", "REFERENCE")
DEFAULT_INSTRUCTION = (
    "You judge answers of a question-answering assistant. Read the documents, the "
    "conversation and the answer, then give your verdict."
)
DEFAULT_TEMPLATE = """${SYSTEM_INST}

${EXAMPLES}

Documents:
${CONTEXT}
Conversation and question:
${INPUT}

Answer to judge:
${PREDICTION}

Reference answer:
${REFERENCE}

Think briefly, then write your verdict inside <verdict></verdict> tags, using exactly one of
the allowed values."""
_VERDICT = re.compile(r"<verdict>(.*?)</verdict>", re.IGNORECASE | re.DOTALL)
_TRIM = " \t\r\n.:;,!*\"'`"


@dataclass(frozen=True, slots=True)
class JudgeMetric:
    """A judge metric as stored with an experiment (plain JSON through :meth:`to_json`)."""

    name: str
    values: tuple[str, ...]
    generator: GeneratorSettings
    template: str = DEFAULT_TEMPLATE
    instruction: str = DEFAULT_INSTRUCTION
    examples: str = ""

    def __post_init__(self) -> None:
        where = f"judge metric {self.name!r}"
        if not self.name.strip():
            raise InvalidInput("a judge metric needs a name")
        if not self.values or any(not isinstance(v, str) or not v.strip() for v in self.values):
            raise InvalidInput(f"{where}: values must be a non-empty list of text labels")
        if ERROR in (v.lower() for v in self.values):
            raise InvalidInput(f"{where}: {ERROR!r} is reserved for unparseable verdicts")
        if self.generator.kind == "offline":
            raise InvalidInput(
                f"{where}: the offline generator cannot judge; use kind 'openai' or 'local'"
            )
        unknown = sorted(set(string.Template(self.template).get_identifiers()) - set(PLACEHOLDERS))
        if unknown or not string.Template(self.template).is_valid():
            raise InvalidInput(
                f"{where}: unknown placeholder(s) {', '.join(unknown) or '(malformed $)'}; "
                f"the template may use: {', '.join('${' + p + '}' for p in PLACEHOLDERS)}"
            )

    def to_json(self) -> dict[str, Any]:
        settings = {f: getattr(self.generator, f) for f in GeneratorSettings.__dataclass_fields__}
        return {
            "kind": "judge",
            "name": self.name,
            "values": list(self.values),
            "generator": settings,
            "template": self.template,
            "instruction": self.instruction,
            "examples": self.examples,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeMetric:
        known = {"kind", "name", "values", "generator", "template", "instruction", "examples"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidInput(
                f"judge metric: unknown field(s) {', '.join(unknown)}; valid: {', '.join(known)}"
            )
        values = data.get("values")
        if not isinstance(values, list):
            raise InvalidInput("judge metric: values must be a list of text labels")
        return cls(
            name=str(data.get("name", "")),
            values=tuple(values),
            generator=GeneratorSettings.from_mapping(data.get("generator") or {}),
            template=str(data.get("template") or DEFAULT_TEMPLATE),
            instruction=str(data.get("instruction") or DEFAULT_INSTRUCTION),
            examples=str(data.get("examples") or ""),
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge's value for one task (one of the metric's values, or ``"error"``)."""

    value: str
    reply: str = ""
    error: str = ""
    usage: dict[str, Any] = field(default_factory=dict)


def parse_verdict(reply: str, values: Sequence[str]) -> str | None:
    """The allowed value a reply names, or None: the ``<verdict>`` tag's text, else the
    first non-empty line, compared without case and surrounding punctuation."""
    tagged = _VERDICT.search(reply)
    if tagged is not None:
        candidate = tagged.group(1)
    else:
        candidate = next((line for line in reply.splitlines() if line.strip()), "")
    wanted = candidate.strip(_TRIM).lower()
    for value in values:
        if value.strip().lower() == wanted:
            return value
    return None


def context_block(contexts: Sequence[str]) -> str:
    return "".join(f"[DOCUMENT]\n{text}\n[END]\n" for text in contexts)


def render_judge_prompt(
    metric: JudgeMetric, task: Task, answer: str, contexts: Sequence[str]
) -> str:
    conversation = [f"{m['role']}: {m['content']}" for m in task.history]
    conversation.append(f"user: {task.turns[-1] if task.turns else ''}")
    allowed = ", ".join(metric.values)
    return string.Template(metric.template).safe_substitute(
        SYSTEM_INST=f"{metric.instruction}\nAllowed values: {allowed}.",
        EXAMPLES=metric.examples,
        CONTEXT=context_block(contexts),
        INPUT="\n".join(conversation),
        PREDICTION=answer,
        REFERENCE="\n".join(task.references) or "(none)",
    )


def judge(
    generator: Generator, metric: JudgeMetric, task: Task, answer: str, contexts: Sequence[str]
) -> Verdict:
    """Ask the judge once; any failure becomes the value ``"error"`` with a message."""
    prompt = render_judge_prompt(metric, task, answer, contexts)
    try:
        generation = generator.generate([Message("user", prompt)])
    except (GeneratorError, InvalidInput) as exc:
        return Verdict(ERROR, error=f"judge {metric.name!r} failed: {exc}")
    value = parse_verdict(generation.text, metric.values)
    if value is None:
        return Verdict(
            ERROR,
            reply=generation.text,
            error=(
                f"judge {metric.name!r}: no allowed value ({', '.join(metric.values)}) in the "
                f"reply {generation.text[:120]!r}"
            ),
            usage=_usage(generation),
        )
    return Verdict(value, reply=generation.text, usage=_usage(generation))


def _usage(generation: Generation) -> dict[str, Any]:
    """The call's usage, marked ``cached`` when the response cache answered it."""
    return {**generation.usage, "cached": True} if generation.cached else generation.usage


def make_judge(
    metric: JudgeMetric, traffic: Traffic | None = None, policy: OutgoingPolicy | None = None
) -> Generator:
    """The judge's generator; the API key comes from the environment and goes where the
    workspace's outgoing ``policy`` allows; the endpoint's gate and the response cache come
    from ``traffic``."""
    return make_generator(metric.generator, traffic=traffic, policy=policy)
