"""Asking the project's generator for suggestions, and storing them only when all is well.

Two kinds (see :mod:`assay.gold.suggestions` for how they are kept and decided):

* :func:`suggest_relevance`: a label (relevant, distracting, irrelevant) and a short reason
  for passages of one turn: the passages named, else the turn's retrieved contexts, else the
  project retriever's top ``k`` for the question. Passages the turn already marks, or that
  wait with a pending suggestion, are left out. They are asked in batches of
  :data:`BATCH`; every reply is read strictly (:mod:`assay.llm.suggestion_replies`).
* :func:`suggest_rewrite`: a standalone rewrite of a conversation turn's question, drafted
  from the earlier turns.

Only an LLM can make them: with the offline generator (the default) both raise
:class:`NeedsLLM`, which says how to set one. A failed request (timeout, refused, server
error) or an unusable reply raises, and nothing is stored: suggestions are written in one
transaction after every batch has come back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.corpus.anchoring import DocumentTexts
from assay.errors import InvalidInput, NotFound
from assay.gold.item_lists import list_items
from assay.gold.items import get_item
from assay.gold.project_config import generator_settings, retriever_settings
from assay.gold.suggestions import Suggestion, insert_suggestions, list_suggestions
from assay.gold.turn_answers import canonical_context
from assay.llm import Generation, Generator, GeneratorError, GeneratorSettings, make_generator
from assay.llm.endpoints import outgoing_policy
from assay.llm.fanout import in_order
from assay.llm.prompts import (
    RELEVANCE_PROMPT_VERSION,
    REWRITE_PROMPT_VERSION,
    relevance_prompt,
    rewrite_prompt,
)
from assay.llm.records import Message
from assay.llm.suggestion_replies import ReplyError, parse_judgments, parse_rewrite
from assay.llm.traffic import Traffic, workspace_traffic
from assay.records import Item, Project, Turn
from assay.search.embeddings import workspace_embedder
from assay.search.indexes import search
from assay.store.db import reading, transaction
from assay.store.workspace import Workspace

BATCH = 6
"""Passages per request: enough to share the question, few enough for a short reply."""
MAX_PASSAGES = 50
MIN_MAX_TOKENS = 1024
"""A relevance reply needs room for a reason per passage: a smaller ``max_tokens`` setting is
raised to this for suggestions (the stored parameters say so)."""


class NeedsLLM(InvalidInput):
    """The project's generator is the offline one, which cannot judge or rewrite."""


@dataclass(frozen=True, slots=True)
class Passage:
    """A span of a document: what a relevance suggestion is about."""

    doc_id: str
    start: int
    end: int
    text: str = ""


@dataclass(slots=True)
class SuggestReport:
    """What one request made: the suggestions stored, and the passages left out with why."""

    created: list[Suggestion] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    model: str = ""


# ---------------------------------------------------------------- the generator


def llm_settings(project: Project) -> GeneratorSettings:
    """The project's generator settings, refused (:class:`NeedsLLM`) when they name the
    offline generator; JSON mode on, as the replies are JSON."""
    settings = generator_settings(project)
    if settings.kind == "offline":
        raise NeedsLLM(
            f"suggestions need an LLM, and project {project.name!r} uses the offline "
            "extractive generator, which cannot judge relevance or rewrite questions. Set an "
            f"LLM with: assay projects settings --project {project.name} --generator "
            '\'{"kind": "openai", "base_url": "http://127.0.0.1:11434/v1", "model": "…"}\' '
            "(docs/llm.md)"
        )
    return dataclasses.replace(
        settings, json_mode=True, max_tokens=max(settings.max_tokens, MIN_MAX_TOKENS)
    )


def _params(settings: GeneratorSettings, generation: Generation, prompt: str) -> dict[str, Any]:
    params = dict(generation.params) or {
        "kind": settings.kind,
        "model": settings.model,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "json_mode": settings.json_mode,
    }
    return {**params, "prompt": prompt}


def _model(settings: GeneratorSettings, generation: Generation) -> str:
    return (generation.model or settings.model or settings.kind)[:200]


# ---------------------------------------------------------------- passages


def _turn_of(item: Item, turn: int) -> Turn:
    if not 1 <= turn <= len(item.turns):
        raise NotFound(f"item {item.id!r} has no turn {turn} (it has {len(item.turns)})")
    return item.turns[turn - 1]


def _question(item: Item, turn: int) -> tuple[str, list[str]]:
    """The question to judge passages against, and earlier questions that give it context
    (none when the turn has a standalone rewrite, which is used instead)."""
    current = item.turns[turn - 1]
    if current.rewrite.strip():
        return current.rewrite, []
    if not current.query.strip():
        raise InvalidInput(f"turn {turn} has no question yet; write it first")
    return current.query, [t.query for t in item.turns[: turn - 1]]


def _candidates(
    ws: Workspace, project: Project, turn: Turn, question: str, k: int
) -> list[Passage]:
    """The turn's retrieved contexts that name a span of one of our documents, else the
    retriever's top ``k`` for the question."""
    found = []
    for entry in turn.retrieved:
        context = canonical_context(entry) if isinstance(entry, dict) else {}
        doc_id, start, end = context.get("doc_id"), context.get("start"), context.get("end")
        if isinstance(doc_id, str) and isinstance(start, int) and isinstance(end, int):
            found.append(Passage(doc_id, start, end))
    if found:
        return found
    settings = retriever_settings(project)
    embedder = workspace_embedder(ws, settings.embedder) if settings.kind != "keyword" else None
    hits = search(ws, project, question, k, retriever=settings, embedder=embedder)
    return [Passage(h.doc_id, h.start, h.end) for h in hits]


def _with_texts(
    ws: Workspace, project: Project, passages: Sequence[Passage]
) -> tuple[list[Passage], list[dict[str, Any]]]:
    """The passages with their text as their document holds it now; those whose document or
    offsets are gone are left out with the reason."""
    kept, skipped = [], []
    with reading(ws.engine, None) as conn:
        texts = DocumentTexts(conn, project.id)
        for p in passages:
            text = texts.get(p.doc_id)
            span = {"doc_id": p.doc_id, "start": p.start, "end": p.end}
            if text is None:
                skipped.append({**span, "reason": "no such document in this project"})
            elif not 0 <= p.start < p.end <= len(text):
                skipped.append({**span, "reason": f"outside the document (0..{len(text)})"})
            elif not text[p.start : p.end].strip():
                skipped.append({**span, "reason": "the passage is blank"})
            else:
                kept.append(Passage(p.doc_id, p.start, p.end, text[p.start : p.end]))
    return kept, skipped


def _open(
    ws: Workspace, project: Project, item: Item, turn: Turn, wanted: Sequence[Passage]
) -> tuple[list[Passage], list[dict[str, Any]]]:
    """Leave out passages marked in the turn already, waiting with a pending suggestion, or
    named twice."""
    marked = {(e.doc_id, e.start, e.end) for e in turn.evidence}
    number = item.turns.index(turn) + 1
    pending = {
        (s.doc_id, s.start, s.end)
        for s in list_suggestions(ws, project, item.id, turn=number, state="pending")
        if s.kind == "relevance"
    }
    kept, skipped, seen = [], [], set()
    for p in wanted:
        key = (p.doc_id, p.start, p.end)
        span = {"doc_id": p.doc_id, "start": p.start, "end": p.end}
        if key in marked:
            skipped.append({**span, "reason": "marked in this turn already"})
        elif key in pending:
            skipped.append({**span, "reason": "a suggestion for it is pending"})
        elif key not in seen:
            kept.append(p)
        seen.add(key)
    return kept, skipped


# ---------------------------------------------------------------- suggesting


def suggest_relevance(
    ws: Workspace,
    project: Project,
    item_id: str,
    *,
    actor: int,
    turn: int = 1,
    passages: Sequence[Passage] | None = None,
    k: int = 10,
    generator: Generator | None = None,
    cache: bool = True,
    window: int | None = None,
) -> SuggestReport:
    """Ask for a label and reason per open passage of turn ``turn`` (from 1) and store them
    as pending suggestions (see the module). ``generator`` replaces the project's (tests,
    scripts); the settings still decide the stored parameters. The batches are asked side
    by side (``window``, default the generator's ``max_in_flight``); ``cache=False``
    bypasses the response cache."""
    if passages is not None and len(passages) > MAX_PASSAGES:
        raise InvalidInput(f"at most {MAX_PASSAGES} passages per request, not {len(passages)}")
    if not 1 <= k <= MAX_PASSAGES:
        raise InvalidInput(f"k must be between 1 and {MAX_PASSAGES}, not {k}")
    item = get_item(ws, project, item_id)
    settings = llm_settings(project)
    current = _turn_of(item, turn)
    question, earlier = _question(item, turn)
    wanted = (
        list(passages) if passages is not None else _candidates(ws, project, current, question, k)
    )
    found, gone = _with_texts(ws, project, wanted)
    todo, skipped = _open(ws, project, item, current, found)
    report = SuggestReport(skipped=gone + skipped)
    if not todo:
        return report
    llm = generator or make_generator(
        settings, traffic=_traffic(ws, project, cache), policy=outgoing_policy(ws)
    )
    rows: list[dict[str, Any]] = []

    def ask(batch: list[Passage]) -> tuple[Generation, list[Any]]:
        messages = relevance_prompt(question, [p.text for p in batch], earlier, project.language)
        generation = llm.generate(messages)
        return generation, parse_judgments(generation.text, len(batch))

    batches = [todo[first : first + BATCH] for first in range(0, len(todo), BATCH)]
    asked = in_order(ask, batches, window or settings.max_in_flight)
    for batch, (generation, judgments) in zip(batches, asked, strict=True):
        report.model = _model(settings, generation)
        params = _params(settings, generation, RELEVANCE_PROMPT_VERSION)
        for judgment in judgments:
            p = batch[judgment.passage]
            rows.append(
                {
                    "turn_ordinal": turn - 1,
                    "kind": "relevance",
                    "doc_id": p.doc_id,
                    "start": p.start,
                    "end": p.end,
                    "text": p.text,
                    "label": judgment.label,
                    "reason": judgment.reason,
                    "model": report.model,
                    "prompt_hash": generation.prompt_hash,
                    "params": params,
                    "created_by": actor,
                }
            )
    with transaction(ws.engine, None) as conn:
        ids = insert_suggestions(conn, project, item_id, rows)
        stored = list_suggestions(ws, project, item_id, turn=turn, conn=conn)
    for row, sid in zip(rows, ids, strict=True):
        if sid is None:  # another request stored one for the passage meanwhile
            span = {"doc_id": row["doc_id"], "start": row["start"], "end": row["end"]}
            report.skipped.append({**span, "reason": "a suggestion for it is pending"})
    created = set(ids)
    report.created = [s for s in stored if s.id in created]
    return report


def suggest_rewrite(
    ws: Workspace,
    project: Project,
    item_id: str,
    *,
    actor: int,
    turn: int,
    generator: Generator | None = None,
    cache: bool = True,
) -> Suggestion:
    """Draft a standalone rewrite of turn ``turn``'s question from the turns before it and
    store it as a pending suggestion, in place of the turn's waiting one (which stays as a
    record in the state ``replaced``)."""
    item = get_item(ws, project, item_id)
    settings = llm_settings(project)
    current = _turn_of(item, turn)
    if not current.query.strip():
        raise InvalidInput(f"turn {turn} has no question yet; there is nothing to rewrite")
    earlier = [(t.query, t.answer) for t in item.turns[: turn - 1]]
    messages: list[Message] = rewrite_prompt(earlier, current.query, project.language)
    llm = generator or make_generator(
        settings, traffic=_traffic(ws, project, cache), policy=outgoing_policy(ws)
    )
    generation = llm.generate(messages)
    text = parse_rewrite(generation.text)
    row = {
        "turn_ordinal": turn - 1, "kind": "rewrite", "text": text, "reason": "",
        "model": _model(settings, generation), "prompt_hash": generation.prompt_hash,
        "params": _params(settings, generation, REWRITE_PROMPT_VERSION), "created_by": actor,
    }  # fmt: skip
    with transaction(ws.engine, None) as conn:
        [sid] = insert_suggestions(conn, project, item_id, [row])
        stored = list_suggestions(ws, project, item_id, turn=turn, conn=conn)
    return next(s for s in stored if s.id == sid)  # a rewrite is always stored


# ---------------------------------------------------------------- many items at once


@dataclass(slots=True)
class BatchReport:
    """What :func:`suggest_items` did: suggestions stored per item, and the turns that failed
    (each failure stored nothing for its turn; the others went on)."""

    items: int = 0
    created: int = 0
    skipped: int = 0
    per_item: dict[str, int] = field(default_factory=dict)
    failed: list[dict[str, Any]] = field(default_factory=list)


def open_item_ids(ws: Workspace, project: Project) -> list[str]:
    """The project's gold items still in work (draft or submitted), oldest first."""
    found: list[str] = []
    for status in ("draft", "submitted"):
        offset = 0
        while True:
            _total, rows = list_items(
                ws, project, status=status, sort="created", offset=offset, limit=500, count=False
            )
            found += [row.id for row in rows]
            if len(rows) < 500:
                break
            offset += 500
    return found


def suggest_items(
    ws: Workspace,
    project: Project,
    *,
    actor: int,
    item_ids: Sequence[str] | None = None,
    kind: str = "relevance",
    k: int = 10,
    progress: Callable[[int, int], None] | None = None,
    cache: bool = True,
) -> BatchReport:
    """Suggestions for every turn of the items named (default: :func:`open_item_ids`):
    relevance labels for each turn's passages, or (``kind="rewrite"``) a rewrite for each
    later conversation turn that has none and no pending one. A turn whose request fails is
    reported and the rest go on; the offline generator is refused before anything is asked.
    Items are worked on side by side, up to the generator's ``max_in_flight``; the report
    lists them in the order given, as one at a time would."""
    if kind not in ("relevance", "rewrite"):
        raise InvalidInput(f"unknown suggestion kind {kind!r}; kinds: relevance, rewrite")
    settings = llm_settings(project)
    ids = list(item_ids) if item_ids is not None else open_item_ids(ws, project)

    def one(item_id: str) -> tuple[int, int, list[dict[str, Any]]]:
        """Suggestions made, passages skipped and failed turns of one item (a thread)."""
        item = get_item(ws, project, item_id)
        made, skipped, failed = 0, 0, []
        for number, turn in enumerate(item.turns, start=1):
            if kind == "rewrite" and (number == 1 or turn.rewrite.strip()):
                continue
            if not turn.query.strip():
                continue
            try:
                if kind == "rewrite":
                    waiting = list_suggestions(
                        ws, project, item_id, turn=number, state="pending", kind="rewrite"
                    )
                    if not waiting:
                        suggest_rewrite(ws, project, item_id, actor=actor, turn=number, cache=cache)
                        made += 1
                    continue
                result = suggest_relevance(
                    ws, project, item_id, actor=actor, turn=number, k=k, cache=cache, window=1
                )
            except (GeneratorError, ReplyError) as exc:
                failed.append({"item_id": item_id, "turn": number, "error": str(exc)})
                continue
            made += len(result.created)
            skipped += len(result.skipped)
        return made, skipped, failed

    report = BatchReport()
    for done, (item_id, (made, skipped, failed)) in enumerate(
        zip(ids, in_order(one, ids, settings.max_in_flight), strict=True), start=1
    ):
        report.items += 1
        report.created += made
        report.skipped += skipped
        report.failed += failed
        report.per_item[item_id] = made
        if progress is not None:
            progress(done, len(ids))
    return report


def _traffic(ws: Workspace, project: Project, cache: bool) -> Traffic:
    return workspace_traffic(ws, project.id, cache=cache)
