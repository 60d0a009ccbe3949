"""QA drafts from the corpus: sample chunks, ask a generator for a question and answer per
chunk and query type, and store each pair as a draft item for a human to fix and accept.

The idea follows RAGTools' ``build_qa_evals``; the drafts here stay drafts. Each one is marked
``origin="llm-suggestion"``, keeps the generated answer as ``original_answer`` (so edits can be
measured) and points at its source chunk as evidence: relevant for answerable types,
distracting for ``unanswerable``. The offline generator cannot write questions, so it gets a
deterministic extractive stand-in, labelled as such. :func:`acceptance_rates` tells how many
drafts humans kept, per generator model and query type.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from assay.corpus.chunkings import get_chunking, iter_chunk_spans
from assay.corpus.sentences import sentence_spans
from assay.errors import InvalidInput
from assay.gold.conversations import generation_record
from assay.gold.items import create_item
from assay.gold.project_config import generator_settings
from assay.gold.taxonomy import UNANSWERABLE, QueryType, query_types
from assay.llm import Generation, Generator, GeneratorError, Message, make_generator, prompt_hash
from assay.llm.endpoints import outgoing_policy
from assay.llm.fanout import in_order
from assay.llm.offline import _STOP_WORDS, OfflineGenerator
from assay.llm.prompts import language_name
from assay.llm.traffic import workspace_traffic
from assay.records import Evidence, Item, Project, Turn
from assay.store.db import reading
from assay.store.schema import documents, items, turns
from assay.store.workspace import Workspace

ORIGIN = "llm-suggestion"
DEFAULT_TYPES: tuple[str, ...] = ("fact_single", "summary", "reasoning", UNANSWERABLE)
OFFLINE_MODEL = "offline-extractive"
OFFLINE_PARAMS: dict[str, str] = {"kind": "offline", "note": "extractive, no LLM"}
MAX_PASSAGE_CHARS = 6000

SynthesisProgress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each draft attempt."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A draft that was not stored, and why."""

    chunk_id: str
    doc_id: str
    query_type: str
    reason: str


@dataclass(slots=True)
class SynthesisReport:
    requested: int
    sampled: int
    chunking: str
    seed: int
    created: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    per_type: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SampledChunk:
    chunk_id: str
    doc_id: str
    start: int
    end: int
    text: str


# ---------------------------------------------------------------- sampling


def sample_chunks(
    ws: Workspace, project: Project, n: int, seed: int, chunking: str | None = None
) -> list[SampledChunk]:
    """Up to ``n`` non-blank chunks, spread over documents: documents are visited in a seeded
    random order, one chunk from each per round, so a long document cannot crowd out the rest."""
    found = get_chunking(ws, project, chunking)
    by_doc: dict[str, list[tuple[str, int, int]]] = {}
    for chunk_id, doc_id, start, end in iter_chunk_spans(ws, found):
        by_doc.setdefault(doc_id, []).append((chunk_id, start, end))
    rng = random.Random(seed)
    order = list(by_doc)
    rng.shuffle(order)
    for doc_id in order:
        rng.shuffle(by_doc[doc_id])
    texts = _document_texts(ws, project, order)
    picked: list[SampledChunk] = []
    while len(picked) < n and any(by_doc[d] for d in order):
        for doc_id in order:
            if len(picked) >= n:
                break
            while by_doc[doc_id]:
                chunk_id, start, end = by_doc[doc_id].pop()
                text = texts.get(doc_id, "")[start:end]
                if text.strip():
                    picked.append(SampledChunk(chunk_id, doc_id, start, end, text))
                    break
    return picked


def _document_texts(
    ws: Workspace, project: Project, doc_ids: Sequence[str], *, conn: sa.Connection | None = None
) -> dict[str, str]:
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(documents.c.id, documents.c.text).where(
                documents.c.project_id == project.id, documents.c.id.in_(list(doc_ids))
            )
        ).all()
    return {row.id: row.text or "" for row in rows}


# ---------------------------------------------------------------- prompting


def draft_prompt(passage: str, query_type: QueryType, language: str) -> list[Message]:
    """The messages asking for one question-and-answer pair of one type about one passage."""
    label, definition = query_type.text("en")
    if query_type.id == UNANSWERABLE:
        task = (
            "Write a question on the passage's topic that a reader could reasonably ask but "
            "that the passage does not answer and does not let anyone work out. As the answer, "
            "explain in one or two sentences why the passage cannot answer it."
        )
    else:
        task = (
            "Write one question a real user might ask that the passage answers, and the "
            "correct answer based only on the passage. Do not mention 'the passage' in the "
            "question."
        )
    system = (
        "You help build a test set for a question-answering system over a document "
        "collection. Reply with one JSON object and nothing else: "
        '{"question": "...", "answer": "..."}.'
    )
    user = (
        f"Question type: {label} ({query_type.id})\n"
        f"What this type means: {definition or label}\n\n"
        f"{task}\n"
        f"Write both in {language_name(language)}.\n\n"
        f'Passage:\n"""\n{passage[:MAX_PASSAGE_CHARS]}\n"""'
    )
    return [Message("system", system), Message("user", user)]


def parse_draft(reply: str) -> tuple[str, str]:
    """Question and answer from a reply: the first JSON object anywhere in it that has both
    as non-empty text. InvalidInput, with the reason, when there is none."""
    decoder = json.JSONDecoder()
    seen_object = False
    for match in re.finditer(r"\{", reply):
        try:
            value, _end = decoder.raw_decode(reply, match.start())
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        seen_object = True
        question, answer = value.get("question"), value.get("answer")
        if (
            isinstance(question, str)
            and isinstance(answer, str)
            and question.strip()
            and answer.strip()
        ):
            return question.strip(), answer.strip()
    if seen_object:
        raise InvalidInput(
            f"the reply has no JSON object with a non-empty question and answer: {reply!r:.120}"
        )
    raise InvalidInput(f"the reply holds no JSON object: {reply!r:.120}")


# ---------------------------------------------------------------- offline stand-in

_WORD = re.compile(r"[^\W\d_][\w'-]*")

_OFFLINE_TEXT: dict[str, dict[str, str]] = {
    "en": {
        "fact_single": "What does the document say about {phrase}?",
        "summary": "What is said overall about {phrase}?",
        "reasoning": "What follows from what the document says about {phrase}?",
        UNANSWERABLE: "What will change about {phrase} in the next ten years?",
        "no_answer": "The documents do not say; they only cover {phrase} as it is now.",
        "other": "What does the document say about {phrase}?",
    },
    "de": {
        "fact_single": "Was sagt das Dokument über {phrase}?",
        "summary": "Was wird insgesamt über {phrase} gesagt?",
        "reasoning": "Was folgt aus dem, was das Dokument über {phrase} sagt?",
        UNANSWERABLE: "Was wird sich an {phrase} in den nächsten zehn Jahren ändern?",
        "no_answer": "Die Dokumente sagen es nicht; sie behandeln {phrase} nur im jetzigen Stand.",
        "other": "Was sagt das Dokument über {phrase}?",
    },
}


def key_phrase(sentence: str) -> str:
    """The longest run of consecutive content words (at most five; the first wins a tie)."""
    best: list[str] = []
    run: list[str] = []
    for word in [*_WORD.findall(sentence), ""]:
        if word and word.lower() not in _STOP_WORDS and len(word) > 1:
            run.append(word)
            continue
        if len(run[:5]) > len(best):
            best = run[:5]
        run = []
    return " ".join(best) or " ".join(sentence.split()[:5]) or "this topic"


def offline_draft(passage: str, query_type: str, language: str) -> tuple[str, str]:
    """A question and answer without an LLM: a templated question about the key phrase of the
    passage's first sentence, answered by quoting it (two sentences for the wider types)."""
    code = language if language in _OFFLINE_TEXT else "en"
    text = _OFFLINE_TEXT[code]
    sentence_code = code if code in ("en", "de") else "en"
    spans = sentence_spans(passage, language=sentence_code)
    sentences = [" ".join(passage[s:e].split()) for s, e in spans if passage[s:e].strip()]
    sentences = sentences or [" ".join(passage.split())]
    phrase = key_phrase(sentences[0])
    first = phrase.split()[0]
    if code != "de" and sentences[0].startswith(first) and first[1:].islower():
        phrase = first.lower() + phrase[len(first) :]  # "Train tickets" opened the sentence
    question = text.get(query_type, text["other"]).format(phrase=phrase)
    if query_type == UNANSWERABLE:
        return question, text["no_answer"].format(phrase=phrase)
    wide = query_type in ("summary", "reasoning")
    return question, " ".join(sentences[: 2 if wide else 1])


# ---------------------------------------------------------------- synthesis


def synthesize(
    ws: Workspace,
    project: Project,
    *,
    n: int = 20,
    types: Sequence[str] = DEFAULT_TYPES,
    seed: int = 0,
    chunking: str | None = None,
    generator: Generator | None = None,
    progress: SynthesisProgress | None = None,
    cache: bool = True,
) -> SynthesisReport:
    """Sample ``n`` chunks, assign ``types`` round-robin, and store one draft item per chunk.

    ``generator`` defaults to the project's (with JSON mode on for LLM kinds). A reply that
    cannot be used skips that draft with the reason; nothing here raises for one bad reply.
    Drafts are asked side by side (up to ``max_in_flight``, :mod:`assay.llm.fanout`) and
    stored in sample order; ``cache=False`` (``--no-cache``) bypasses the response cache.

    Generating many drafts takes minutes, so this loop is the entry point of its own short
    transactions and takes no ``conn``: each draft is stored and committed on its own, never
    while a generator is asked (SQLite has one write lock); an interrupted run keeps the
    drafts stored so far.
    """
    if n < 1:
        raise InvalidInput(f"n must be at least 1, got {n}")
    known = {q.id: q for q in query_types(project)}
    wanted = [t.strip() for t in types if t.strip()]
    unknown = [t for t in wanted if t not in known]
    if not wanted or unknown:
        raise InvalidInput(
            f"unknown query type(s) {', '.join(unknown) or '(none given)'}; this project's "
            f"types are: {', '.join(known)}"
        )
    settings = generator_settings(project)
    if generator is None:
        if settings.kind != "offline" and not settings.json_mode:
            settings = dataclasses.replace(settings, json_mode=True)
        generator = make_generator(
            settings,
            traffic=workspace_traffic(ws, project.id, cache=cache),
            policy=outgoing_policy(ws),
        )
    offline = isinstance(generator, OfflineGenerator)
    found = get_chunking(ws, project, chunking)
    sampled = sample_chunks(ws, project, n, seed, found.name)
    report = SynthesisReport(requested=n, sampled=len(sampled), chunking=found.name, seed=seed)
    for t in wanted:
        report.per_type.setdefault(t, {"created": 0, "skipped": 0})

    def draft(index: int) -> tuple[Generation, str, str] | str:
        """Chunk ``index``'s draft, or why there is none (in a thread: no database here)."""
        chunk, query_type = sampled[index], known[wanted[index % len(wanted)]]
        messages = draft_prompt(chunk.text, query_type, project.language)
        try:
            if offline:
                question, answer = offline_draft(chunk.text, query_type.id, project.language)
                generation = Generation(
                    text=answer,
                    model=OFFLINE_MODEL,
                    prompt_hash=prompt_hash(messages),
                    params=dict(OFFLINE_PARAMS),
                )
            else:
                generation = generator.generate(messages)
                question, answer = parse_draft(generation.text)
        except (GeneratorError, InvalidInput) as exc:
            return str(exc)
        return generation, question, answer

    asked = in_order(draft, range(len(sampled)), 1 if offline else settings.max_in_flight)
    for index, drafted in enumerate(asked):
        chunk, query_type = sampled[index], known[wanted[index % len(wanted)]]
        if isinstance(drafted, str):
            report.skipped.append(Skipped(chunk.chunk_id, chunk.doc_id, query_type.id, drafted))
            report.per_type[query_type.id]["skipped"] += 1
        else:
            generation, question, answer = drafted
            kind = str(generation.params.get("kind") or settings.kind)
            draft_ = _draft_item(chunk, query_type.id, question, answer, generation, kind, seed)
            with ws.engine.begin() as conn:  # one draft, one transaction
                item = create_item(ws, project, draft_, status="draft", conn=conn)
            report.created.append(item.id)
            report.per_type[query_type.id]["created"] += 1
        if progress:
            progress(index + 1, len(sampled))
    return report


def _draft_item(
    chunk: SampledChunk,
    query_type: str,
    question: str,
    answer: str,
    generation: Generation,
    kind: str,
    seed: int,
) -> Item:
    source = Evidence(
        doc_id=chunk.doc_id,
        start=chunk.start,
        end=chunk.end,
        text=chunk.text,
        label="distracting" if query_type == UNANSWERABLE else "relevant",
        origin="llm-suggestion",
    )
    return Item(
        kind="qa",
        origin=ORIGIN,
        extra={"synthesis": {"chunk_id": chunk.chunk_id, "seed": seed}},
        turns=[
            Turn(
                query=question,
                query_type=query_type,
                answer=answer,
                original_answer=answer,
                generation=generation_record(generation, kind),
                evidence=[source],
            )
        ],
    )


# ---------------------------------------------------------------- acceptance


def acceptance_rates(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> list[dict[str, Any]]:
    """For LLM-suggested items, per generator model (first turn's) and query type: total,
    accepted, rejected, pending (draft or submitted) and accepted / total (None when 0)."""
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(items.c.status, items.c.query_type, turns.c.generation)
            .join(turns, sa.and_(turns.c.item_id == items.c.id, turns.c.ordinal == 0))
            .where(items.c.project_id == project.id, items.c.origin == ORIGIN)
        ).all()
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for status, query_type, generation in rows:
        model = generation.get("model") if isinstance(generation, dict) else None
        key = (str(model or "unknown"), query_type or "")
        entry = counts.setdefault(key, {"total": 0, "accepted": 0, "rejected": 0, "pending": 0})
        entry["total"] += 1
        if status in ("accepted", "rejected"):
            entry[status] += 1
        else:
            entry["pending"] += 1
    order = {q.id: i for i, q in enumerate(query_types(project))}
    return [
        {
            "model": model,
            "query_type": query_type,
            **entry,
            "acceptance_rate": entry["accepted"] / entry["total"] if entry["total"] else None,
        }
        for (model, query_type), entry in sorted(
            counts.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], len(order)), kv[0][1])
        )
    ]
