"""Answering a conversation turn without ever writing over what a person wrote.

A turn's ``answer`` is human text: typed by an annotator, or a suggestion a person took.
A generator never writes over it. Answering a turn streams text deltas and stores nothing
until the generator has finished; then the text becomes

* the turn's answer, when the turn has none yet (the first answer of a new turn), or
* a **draft** kept beside the answer in ``generation["draft"]`` (text, model, prompt hash,
  parameters), which a person takes (:func:`take_draft`: it becomes the answer, recorded in
  the item's history under their name) or discards (:func:`discard_draft`).

A failed, hung or interrupted generation stores nothing over what was there: a regenerated
turn keeps its answer and version; a new turn keeps no answer and records the error.

The web workbench and ``assay chat`` (:func:`answered_turn`) store a turn in one shape: its
retrieved contexts (:func:`retrieved_entry`) and how its answer was made
(:func:`answer_record`, with how the contexts were retrieved); :func:`canonical_context`
reads the older CLI shape (``document_id`` instead of ``doc_id``) too.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

from assay.corpus.documents import document_names
from assay.errors import AssayError, Conflict, InvalidInput, NotFound
from assay.gold.items import StaleItem, editable_copy, get_item, save_item
from assay.gold.project_config import conversation_generator, retriever_settings
from assay.llm import (
    Generation,
    Generator,
    GeneratorSettings,
    Message,
    generate_answer,
    make_generator,
    stream_answer,
)
from assay.llm.endpoints import outgoing_policy
from assay.llm.prompts import render_rag_prompt
from assay.llm.records import prompt_hash
from assay.llm.traffic import Traffic, workspace_gates
from assay.people.actors import account_name
from assay.records import Context, Hit, Item, Project, Turn
from assay.search.embeddings import workspace_embedder
from assay.search.indexes import search
from assay.search.retriever import RetrieverSettings, parse_retriever_settings, query_text
from assay.store.db import utcnow
from assay.store.workspace import Workspace

OVERRIDES = ("kind", "k", "query_from")
DRAFT = "draft"
_KEEP_CONTROLS = frozenset("\t\n\r")
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


# ---------------------------------------------------------------- questions


def question_text(raw: str, where: str = "query") -> str:
    """The question as stored: control characters (other than tab and line breaks) removed,
    outer whitespace stripped. Refused when nothing visible is left, so no empty turn or
    conversation is ever created from it."""
    if any(unicodedata.category(ch) == "Cs" for ch in raw):
        raise InvalidInput(f"{where}: the text holds a lone surrogate, which is not valid Unicode")
    text = "".join(
        ch for ch in raw if ch in _KEEP_CONTROLS or unicodedata.category(ch) != "Cc"
    ).strip()
    if all(unicodedata.category(ch) in _INVISIBLE for ch in text):
        raise InvalidInput(
            f"{where}: the question is empty or made only of control characters; type a question"
        )
    return text


# ---------------------------------------------------------------- retrieved contexts


def retrieved_entry(hit: Hit, name: str) -> Context:
    """The one stored shape of a retrieved context (``title`` is the document's name then)."""
    return {
        "chunk_id": hit.chunk_id,
        "doc_id": hit.doc_id,
        "start": hit.start,
        "end": hit.end,
        "score": hit.score,
        "rank": hit.rank,
        "text": hit.text,
        "title": name,
    }


def canonical_context(entry: Mapping[str, Any]) -> Context:
    """A stored context in the current shape. ``assay chat`` once wrote our document id as
    ``document_id`` (recognisable by its ``chunk_id``); imported files use ``document_id``
    for their own ids, which stay as they are."""
    if "doc_id" not in entry and "chunk_id" in entry and "document_id" in entry:
        moved = {k: v for k, v in entry.items() if k != "document_id"}
        moved["doc_id"] = entry["document_id"]
        return cast(Context, moved)
    return cast(Context, entry)


def context_doc_id(entry: Mapping[str, Any]) -> str | None:
    """Our document id of a stored context, or None when it names none."""
    value = canonical_context(entry).get("doc_id")
    return value if isinstance(value, str) and value else None


def doc_names(ws: Workspace, project: Project, doc_ids: Iterable[str]) -> dict[str, str]:
    """Document names by id; an id whose document is gone names itself."""
    wanted = list(dict.fromkeys(doc_ids))
    names = document_names(ws, project, wanted)
    return {doc_id: names.get(doc_id, doc_id) for doc_id in wanted}


def conversation_retriever(project: Project, overrides: Mapping[str, Any]) -> RetrieverSettings:
    """The project's retriever settings with a conversation's overrides (kind, k, query_from)."""
    unknown = sorted(set(overrides) - set(OVERRIDES))
    if unknown:
        raise InvalidInput(
            f"conversation retriever: unknown override(s) {', '.join(unknown)}; "
            f"a conversation may set: {', '.join(OVERRIDES)}"
        )
    return parse_retriever_settings({**retriever_settings(project).model_dump(), **overrides})


Retrieve = Callable[..., tuple[list[Context], dict[str, Any]]]  # as retrieve() below


def retrieve(
    ws: Workspace,
    project: Project,
    questions: Sequence[str],
    rewrite: str,
    overrides: dict[str, Any],
) -> tuple[list[Context], dict[str, Any]]:
    """Contexts for the last question, with the project's retriever settings overridden by
    the conversation's (kind, k, query_from); returns the contexts and how they were found."""
    settings = conversation_retriever(project, overrides)
    query = query_text(list(questions), rewrite or None, settings.query_from)
    embedder = workspace_embedder(ws, settings.embedder) if settings.kind != "keyword" else None
    hits = search(ws, project, query, settings.k, retriever=settings, embedder=embedder)
    names = doc_names(ws, project, (h.doc_id for h in hits))
    contexts = [retrieved_entry(h, names[h.doc_id]) for h in hits]
    return contexts, {"settings": settings.model_dump(), "query": query}


# ---------------------------------------------------------------- generating


def history_messages(turns: Sequence[tuple[str, str]]) -> list[Message]:
    """Earlier ``(question, answer)`` turns as chat messages (unanswered ones ask only)."""
    messages: list[Message] = []
    for query, answer in turns:
        messages.append(Message("user", query))
        if answer:
            messages.append(Message("assistant", answer))
    return messages


def turn_passages(
    ws: Workspace, project: Project, turn: Turn, source: str
) -> list[tuple[str, str]]:
    """``(document name, text)`` to answer from: the passages marked relevant, or all the
    retrieved contexts."""
    if source == "relevant":
        chosen = [e for e in turn.evidence if e.label == "relevant"]
        names = doc_names(ws, project, (e.doc_id for e in chosen if e.doc_id))
        return [(names.get(e.doc_id or "", ""), e.text) for e in chosen]
    contexts = [canonical_context(r) for r in turn.retrieved if isinstance(r, dict)]
    names = doc_names(ws, project, filter(None, (context_doc_id(c) for c in contexts)))
    return [
        (names.get(context_doc_id(c) or "", str(c.get("title") or "")), str(c.get("text") or ""))
        for c in contexts
    ]


def model_label(settings: GeneratorSettings) -> str:
    """The model name stored and shown; the offline generator names itself."""
    return settings.model if settings.kind != "offline" else "offline-extractive"


def answer_record(
    settings: GeneratorSettings, messages: Sequence[Message], source: str, count: int
) -> dict[str, Any]:
    """How an answer was made, stored with it (never a key): the one shape for every turn."""
    return {
        "model": model_label(settings),
        "kind": settings.kind,
        "prompt_hash": prompt_hash(messages),
        "params": {"temperature": settings.temperature, "max_tokens": settings.max_tokens},
        "passages": source,
        "passage_count": count,
    }


def answered_turn(
    ws: Workspace,
    project: Project,
    generator: Generator,
    settings: GeneratorSettings,
    earlier: Sequence[Turn],
    query: str,
    retriever: Retrieve | None = None,
) -> tuple[Turn, Generation | None]:
    """A new turn after ``earlier``, retrieved and answered as the workbench answers a new
    turn (same contexts, generation record and failure record) but in one call and not
    stored: ``assay chat`` saves the whole conversation at the end. A failed generation
    leaves no answer and the error in ``generation["error"]``, so the chat can go on. The
    stored model is the one that answered, when the generator names it. ``retriever`` (a
    later stage's chat source) replaces :func:`retrieve`."""
    asks_rewrite = retriever_settings(project).query_from == "rewrite"  # a chat has no rewrite
    overrides = {"query_from": "last_turn"} if asks_rewrite else {}
    questions = [t.query for t in earlier] + [query]
    retrieved, how = (retriever or retrieve)(ws, project, questions, "", overrides)
    turn = Turn(query=query, retrieved=retrieved)
    chosen = turn_passages(ws, project, turn, "retrieved")
    history = history_messages([(t.query, t.answer) for t in earlier])
    template, language = settings.prompt_template, project.language
    messages = render_rag_prompt(template, query, chosen, history, language)
    record = {**answer_record(settings, messages, "retrieved", len(chosen)), "retrieval": how}
    try:
        generation = generate_answer(generator, query, chosen, history, template, language)
    except AssayError as exc:  # GeneratorError and bad passages alike, as on the web
        turn.generation = {**record, "error": str(exc)}
        return turn, None
    if not generation.text.strip():
        turn.generation = {**record, "error": "the generator returned no text"}
        return turn, None
    turn.answer = turn.original_answer = generation.text
    turn.generation = {**record, "model": generation.model or record["model"]}
    return turn, generation


def answer_events(
    ws: Workspace,
    project: Project,
    item: Item,
    index: int,
    *,
    source: str,
    actor: int,
    first: bool,
) -> Iterator[dict[str, Any]]:
    """Answer turn ``index``: ``{"type": "delta", "text"}`` events while the generator
    writes, then one ``done`` (``stored`` is ``answer`` or ``draft``) or ``error`` event
    carrying the stored ``item``. Only a finished answer is stored; after a failure a new
    turn (``first``) records the error and keeps no answer, any other turn is left as it was."""
    data = editable_copy(item)
    turn = data.turns[index]
    try:  # the conversation's own generator choice, checked when it was saved
        settings = conversation_generator(project, data.extra)
    except AssayError as exc:
        yield {"type": "error", "detail": str(exc), "item": item}
        return
    chosen = turn_passages(ws, project, turn, source)
    history = history_messages([(t.query, t.answer) for t in data.turns[:index]])
    messages = render_rag_prompt(
        settings.prompt_template, turn.query, chosen, history, project.language
    )
    record = answer_record(settings, messages, source, len(chosen))
    parts: list[str] = []
    error = ""
    try:
        # the workbench's streams share the endpoint's gate with every job of the server
        generator = make_generator(
            settings, traffic=Traffic(workspace_gates(ws)), policy=outgoing_policy(ws)
        )
        for delta in stream_answer(
            generator, turn.query, chosen, history, settings.prompt_template, project.language
        ):
            parts.append(delta)
            yield {"type": "delta", "text": delta}
    except GeneratorExit:  # the page went away: what arrived so far is not an answer
        if first:
            _record_failure(ws, project, item.id, index, record, "the page left", actor)
        raise
    except AssayError as exc:  # GeneratorError and bad settings alike
        error = str(exc)
    text = "".join(parts)
    if not error and not text.strip():
        error = "the generator returned no text"
    if error:
        stored = item
        if first:
            stored = _record_failure(ws, project, item.id, index, record, error, actor)
        yield {"type": "error", "detail": error, "item": stored}
        return
    kind, stored = _store_generated(ws, project, item.id, index, text, record, actor)
    yield {"type": "done", "stored": kind, "item": stored}


# ---------------------------------------------------------------- storing and taking


def _change_turn(
    ws: Workspace,
    project: Project,
    item_id: str,
    index: int,
    change: Callable[[Turn], str | None],
    actor: int,
) -> tuple[str | None, Item]:
    """Apply ``change`` (which returns the history action, or None to leave the turn alone)
    to turn ``index`` as stored now. A machine write only touches fields no person is
    editing, so on a version race it reads the newer version and applies the change again."""
    for _attempt in range(3):
        item = get_item(ws, project, item_id)
        data = editable_copy(item)
        if index >= len(data.turns):
            raise NotFound(f"conversation {item_id!r} has no turn {index + 1} any more")
        action = change(data.turns[index])
        if action is None:
            return None, item
        try:
            return action, save_item(
                ws, project, item_id, data, item.version, author=actor, action=action
            )
        except StaleItem:
            continue
    raise Conflict(f"conversation {item_id!r} kept changing; the generated text was not stored")


def _store_generated(
    ws: Workspace,
    project: Project,
    item_id: str,
    index: int,
    text: str,
    record: dict[str, Any],
    actor: int,
) -> tuple[str, Item]:
    def change(turn: Turn) -> str:
        if turn.answer.strip():
            draft = {"text": text, **record, "created_at": utcnow().isoformat()}
            turn.generation = {**turn.generation, DRAFT: draft}
            return "generate-draft"
        turn.answer = turn.original_answer = text
        turn.generation = {**record, "retrieval": turn.generation.get("retrieval", {})}
        return "generate-answer"

    action, item = _change_turn(ws, project, item_id, index, change, actor)
    return ("draft" if action == "generate-draft" else "answer"), item


def _record_failure(
    ws: Workspace,
    project: Project,
    item_id: str,
    index: int,
    record: dict[str, Any],
    error: str,
    actor: int,
) -> Item:
    """A new turn whose first answer failed: no answer, the error and how it was asked."""

    def change(turn: Turn) -> str | None:
        if turn.answer.strip():
            return None  # someone answered it meanwhile: leave their text alone
        keep = {k: v for k, v in turn.generation.items() if k in ("retrieval", DRAFT)}
        turn.generation = {**record, **keep, "error": error}
        return "generate-failed"

    return _change_turn(ws, project, item_id, index, change, actor)[1]


def _draft_turn(item: Item, number: int, base_version: int) -> tuple[Any, Turn, dict[str, Any]]:
    if item.version != base_version:
        raise StaleItem(item, base_version)
    if not 1 <= number <= len(item.turns):
        raise NotFound(f"conversation {item.id!r} has no turn {number}")
    data = editable_copy(item)
    turn = data.turns[number - 1]
    draft = turn.generation.get(DRAFT)
    if not isinstance(draft, dict) or not isinstance(draft.get("text"), str):
        raise InvalidInput(f"turn {number} has no draft answer")
    return data, turn, draft


def take_draft(
    ws: Workspace, project: Project, item: Item, number: int, base_version: int, actor: int
) -> Item:
    """Make turn ``number``'s draft its answer (and its original answer, with the draft's
    generation record). The answer it replaces stays in the item's history."""
    data, turn, draft = _draft_turn(item, number, base_version)
    retrieval = turn.generation.get("retrieval", {})
    turn.answer = turn.original_answer = draft["text"]
    turn.generation = {k: v for k, v in draft.items() if k != "text"}
    taken_by = account_name(ws, actor)
    turn.generation.update(retrieval=retrieval, taken_by=taken_by, taken_at=utcnow().isoformat())
    return save_item(ws, project, item.id, data, base_version, author=actor, action="take-draft")


def discard_draft(
    ws: Workspace, project: Project, item: Item, number: int, base_version: int, actor: int
) -> Item:
    """Drop turn ``number``'s draft; the answer stays as it is."""
    data, turn, _draft = _draft_turn(item, number, base_version)
    turn.generation = {k: v for k, v in turn.generation.items() if k != DRAFT}
    return save_item(ws, project, item.id, data, base_version, author=actor, action="discard-draft")
