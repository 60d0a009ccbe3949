"""The offline extractive generator: the embedded default, deterministic, no LLM.

It answers by quoting. Every sentence of every passage is scored by the distinct question
words (lowercased, stop words removed, Snowball-stemmed) it shares with the question, each
weighted by how rare it is among the sentences (``log(1 + sentences / sentences holding
it)``), so "bicycles" outweighs "reimbursed" when every sentence mentions reimbursement.
The best one to three sentences, each scoring at least half of the best, are quoted in
passage order, each followed by its citation ``[n]``. When no sentence shares a word with
the question it says, in the project language, that no passage answers. Its output is
labelled ``offline-extractive`` so nobody mistakes it for a model's answer.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache

import Stemmer

from assay.corpus.sentences import sentence_spans
from assay.errors import InvalidInput
from assay.llm.prompts import (
    DEFAULT_TEMPLATE,
    GERMAN_TEMPLATE,
    LANGUAGE_NAMES,
    match_rendered,
    parse_passages,
    render_rag_prompt,
)
from assay.llm.records import Citation, Generation, Message, prompt_hash

MODEL_NAME = "offline-extractive"
PARAMS: dict[str, str] = {"kind": "offline", "note": "extractive, no LLM"}
MAX_SENTENCES = 3

NO_ANSWER: dict[str, str] = {
    "en": "None of the passages answers this question.",
    "de": "Keine der Textstellen beantwortet diese Frage.",
}

_STEMMERS: dict[str, str] = {
    "da": "danish",
    "de": "german",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "it": "italian",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "sv": "swedish",
}

# Function words that carry no topic; both lists apply whatever the project language,
# because projects mix English and German documents.
_STOP_WORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers him his how i if in into is it its
    itself just me more most my no nor not now of off on once only or other our ours out
    over own same she should so some such than that the their theirs them then there these
    they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours s t per via much many
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer
    anderes auch auf aus bei bin bis bist da damit dann das dass dem den denn der des dich
    dir du durch ein eine einem einen einer eines er es etwas euch euer für gegen gibt hab
    habe haben hat hatte hier hin hinter ich ihm ihn ihnen ihr ihre im in ist ja jede jedem
    jeden jeder jedes jetzt kann kein keine können man mein meine mich mir mit muss nach
    nicht nichts noch nun nur ob oder ohne sehr sein seine sich sie sind so soll sollen
    über um und uns unser unter viel vom von vor war waren warum was weil welche welchem
    welchen welcher welches wenn wer werden wie wieder will wir wird wo wurde zu zum zur
    je pro viele
    """
_STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


class OfflineGenerator:
    """Extractive answers; ``answer`` takes structured input, ``generate`` rendered prompts.

    ``template`` and ``language`` are only needed by :meth:`generate`, which recovers the
    question and passages from a prompt rendered with that template (or a built-in one).
    """

    def __init__(self, template: str = DEFAULT_TEMPLATE, language: str = "en") -> None:
        self.template = template
        self.language = language

    def __repr__(self) -> str:
        return f"OfflineGenerator(language={self.language!r})"

    def answer(
        self,
        question: str,
        passages: Sequence[tuple[str, str]],
        *,
        history: Sequence[Message] = (),
        template: str = DEFAULT_TEMPLATE,
        language: str = "en",
    ) -> Generation:
        """Quote the sentences that best match the question, with their citations.

        The prompt hash is that of the prompt an LLM would have been given, so answers to
        the same input compare across generators.
        """
        messages = render_rag_prompt(template, question, passages, history, language)
        return _extract(question, passages, language, prompt_hash(messages))

    def generate(self, messages: Sequence[Message]) -> Generation:
        """Answer a prompt rendered by :func:`render_rag_prompt` (the last user message)."""
        if not messages or messages[-1].role != "user":
            raise InvalidInput("the offline generator needs a user message last")
        for template in dict.fromkeys((self.template, DEFAULT_TEMPLATE, GERMAN_TEMPLATE)):
            values = match_rendered(template, messages[-1].content)
            if values is not None and "question" in values:
                language = _language_of(values, template, self.language)
                passages = parse_passages(values.get("passages", ""))
                return _extract(values["question"], passages, language, prompt_hash(messages))
        raise InvalidInput(
            "the offline generator only reads prompts rendered from its prompt template "
            "(question and numbered passages); call assay.llm.generate_answer instead"
        )

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        """The answer of :meth:`generate`, a word at a time."""
        yield from _pieces(self.generate(messages).text)

    def stream_answer(
        self,
        question: str,
        passages: Sequence[tuple[str, str]],
        *,
        history: Sequence[Message] = (),
        template: str = DEFAULT_TEMPLATE,
        language: str = "en",
    ) -> Iterator[str]:
        """The text of :meth:`answer`, a word at a time."""
        text = self.answer(
            question, passages, history=history, template=template, language=language
        ).text
        yield from _pieces(text)


def _extract(
    question: str, passages: Sequence[tuple[str, str]], language: str, hashed: str
) -> Generation:
    code = language.strip().lower()
    wanted = set(_terms(question, code))
    sentences: list[tuple[int, int, int, set[str]]] = []  # (passage, start, end, shared terms)
    if wanted:
        for index, (_label, text) in enumerate(passages):
            for start, end in _sentences(text, code):
                shared = wanted.intersection(_terms(text[start:end], code))
                sentences.append((index, start, end, shared))
    # A shared word counts more the fewer sentences hold it (inverse sentence frequency).
    holding = Counter(term for *_span, shared in sentences for term in shared)
    weight = {term: math.log(1 + len(sentences) / count) for term, count in holding.items()}
    candidates = [
        (sum(weight[t] for t in shared), index, start, end)
        for index, start, end, shared in sentences
        if shared
    ]
    if not candidates:
        return Generation(
            text=NO_ANSWER.get(code, NO_ANSWER["en"]),
            model=MODEL_NAME,
            prompt_hash=hashed,
            params=dict(PARAMS),
            finish_reason="no_answer",
        )
    best = max(score for score, *_ in candidates)
    ranked = sorted(candidates, key=lambda c: (-c[0], c[1], c[2]))
    chosen = sorted(
        [c for c in ranked if c[0] >= best / 2][:MAX_SENTENCES], key=lambda c: (c[1], c[2])
    )
    parts: list[str] = []
    citations: list[Citation] = []
    for _score, index, start, end in chosen:
        label, text = passages[index]
        sentence = _SPACE.sub(" ", text[start:end]).strip()
        parts.append(f"{sentence} [{index + 1}]")
        citations.append(Citation(index + 1, label, index, start, end))
    return Generation(
        text=" ".join(parts),
        model=MODEL_NAME,
        prompt_hash=hashed,
        params=dict(PARAMS),
        finish_reason="stop",
        citations=tuple(citations),
    )


def _terms(text: str, language: str) -> list[str]:
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP_WORDS and len(w) > 1]
    stemmer = _stemmer(language)
    return words if stemmer is None else list(stemmer.stemWords(words))


@lru_cache(maxsize=16)
def _stemmer(language: str) -> Stemmer.Stemmer | None:
    name = _STEMMERS.get(language)
    return None if name is None else Stemmer.Stemmer(name)


def _sentences(text: str, language: str) -> list[tuple[int, int]]:
    if not text.strip():
        return []
    code = language if re.fullmatch(r"[a-z]{2,3}", language) else "en"
    return sentence_spans(text, language=code)


def _language_of(values: dict[str, str], template: str, default: str) -> str:
    name = values.get("language")
    if name is not None:
        for code, english in LANGUAGE_NAMES.items():
            if english == name:
                return code
        return name
    return "de" if template == GERMAN_TEMPLATE else default


def _pieces(text: str) -> Iterator[str]:
    yield from re.findall(r"\s*\S+", text)
