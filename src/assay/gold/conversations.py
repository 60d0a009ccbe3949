"""Quality checks for multi-turn conversations (pure functions over an Item).

These are RAGAPHENE's export warnings, restated over our turn model: every passage the
retriever showed should be rated, every turn should carry enrichments, the answerability
enrichment should agree with the relevant passages, and a conversation should use a variety
of relevant passages (the diversity rule). They are warnings: a draft may break them and a
conversation can still be submitted; the checklist before export shows them.

``conversation_checks`` also returns the single-turn findings of
:func:`assay.gold.checks.check_item` (empty question or answer, passages that lost their
anchor), so a page needs one call.

The second half drafts answers as suggestions for ``assay generate``:
``turn.original_answer`` and ``turn.generation`` are set, ``turn.answer`` (the gold answer)
is never touched. Answering a conversation turn, for the web workbench and ``assay chat``
alike, lives in :mod:`assay.gold.turn_answers`, which also writes the one stored shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.gold.checks import Finding, check_item
from assay.gold.item_lists import iter_items
from assay.gold.items import StaleItem, editable_copy, save_item
from assay.gold.turn_answers import context_doc_id, doc_names, history_messages
from assay.llm import Generation, Generator, GeneratorError, GeneratorSettings, generate_answer
from assay.records import Context, Evidence, Item, Project, Turn
from assay.search.indexes import search
from assay.search.retriever import RetrieverSettings, query_text
from assay.store.workspace import Workspace

ANSWERABILITY = "answerability"
NEEDS_RELEVANT = frozenset({"ANSWERABLE", "PARTIAL"})
NO_RELEVANT = frozenset({"UNANSWERABLE"})


def answerability(turn: Turn) -> list[str]:
    """The turn's answerability values, upper-cased (the key is matched case-insensitively)."""
    for key, values in turn.enrichments.items():
        if key.strip().lower() == ANSWERABILITY:
            return [str(v).strip().upper() for v in values if str(v).strip()]
    return []


def _passage_key(doc_id: str | None, text: str) -> tuple[str, str]:
    return (doc_id or "", " ".join(text.split()))


def _rated(context: Context, evidence: Iterable[Evidence]) -> bool:
    """A retrieved context counts as rated when some evidence covers the same passage."""
    doc_id = context_doc_id(context)
    text = " ".join(str(context.get("text") or "").split())
    start, end = context.get("start"), context.get("end")
    for ev in evidence:
        if text and " ".join(ev.text.split()) == text:
            return True
        if (
            doc_id is not None
            and ev.doc_id == doc_id
            and isinstance(start, int)
            and (ev.start, ev.end) == (start, end)
        ):
            return True
    return False


def unrated_contexts(turn: Turn) -> list[int]:
    """1-based positions of the turn's retrieved contexts that no evidence rates (those an
    external system returned from outside the corpus cannot be rated and are not counted)."""
    return [
        index
        for index, context in enumerate(turn.retrieved, 1)
        if isinstance(context, dict)
        and not context.get("outside_corpus")
        and not _rated(context, turn.evidence)
    ]


def message_count(item: Item) -> int:
    """Messages as RAGAPHENE counts them: each non-empty question and answer is one."""
    return sum(bool(t.query.strip()) + bool(t.answer.strip()) for t in item.turns)


def diversity_needed(messages: int) -> int:
    """RAGAPHENE's rule: ``max((messages/2 - 1) * 2 - 1, 0)`` unique relevant passages."""
    return max(int((messages / 2 - 1) * 2 - 1), 0)


def unique_relevant(item: Item) -> int:
    return len(
        {
            _passage_key(ev.doc_id, ev.text)
            for turn in item.turns
            for ev in turn.evidence
            if ev.label == "relevant"
        }
    )


def _turn_findings(turn: Turn, n: int, last: bool) -> list[Finding]:
    findings: list[Finding] = []
    where = f"turn {n}: "
    unrated = unrated_contexts(turn)
    if unrated:
        findings.append(
            Finding(
                "warning",
                "passages_unrated",
                f"{where}{len(unrated)} retrieved passage(s) not marked relevant or irrelevant",
                n,
                "evidence",
                {"count": len(unrated), "positions": unrated},
            )
        )
    if not any(values for values in turn.enrichments.values()):
        findings.append(
            Finding(
                "warning",
                "enrichments_missing",
                f"{where}no enrichments set",
                n,
                "enrichments",
            )
        )
    labels = set(answerability(turn))
    relevant = sum(1 for ev in turn.evidence if ev.label == "relevant")
    if labels & NEEDS_RELEVANT and relevant == 0 and not last:
        findings.append(
            Finding(
                "warning",
                "answerable_without_relevant",
                f"{where}marked answerable but no passage is marked relevant",
                n,
                "evidence",
            )
        )
    if labels & NO_RELEVANT and relevant > 0:
        findings.append(
            Finding(
                "warning",
                "unanswerable_with_relevant",
                f"{where}marked unanswerable but {relevant} passage(s) are marked relevant",
                n,
                "evidence",
                {"count": relevant},
            )
        )
    return findings


def conversation_checks(item: Item, project: Project) -> list[Finding]:
    """All findings for a conversation: single-turn rules plus RAGAPHENE's warnings.

    The answerability checks skip the last turn's "answerable without relevant" case, as
    RAGAPHENE does for the turn being worked on. Turn numbers in findings are 1-based.
    """
    findings = [
        f
        for f in check_item(item, project)
        # Conversation turns are typed by enrichments, not by the single-turn query types.
        if f.code != "unknown_query_type"
    ]
    for number, turn in enumerate(item.turns, 1):
        findings.extend(_turn_findings(turn, number, last=number == len(item.turns)))
    needed = diversity_needed(message_count(item))
    have = unique_relevant(item)
    if have < needed:
        findings.append(
            Finding(
                "warning",
                "diversity_low",
                f"the conversation uses {have} unique relevant passage(s); "
                f"{needed} are expected for its length",
                None,
                "evidence",
                {"have": have, "needed": needed},
            )
        )
    return findings


# ---------------------------------------------------------------- answering turns


def generator_label(settings: GeneratorSettings) -> str:
    """How a page or terminal names the generator; the offline one is not an LLM."""
    if settings.kind == "offline":
        return "extractive, no LLM"
    return f"{settings.model or settings.kind} ({settings.kind})"


def generation_record(generation: Generation, kind: str) -> dict[str, Any]:
    """What is stored with a suggested answer (drafted or synthesized): never a key, only
    how it was made; ``kind``: the generator's."""
    return {
        "model": generation.model,
        "prompt_hash": generation.prompt_hash,
        "params": dict(generation.params),
        "kind": kind,
    }


@dataclass
class DraftReport:
    items: int = 0
    turns: int = 0
    drafted: int = 0
    skipped: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


def _needs_draft(turn: Turn, overwrite: bool) -> bool:
    if turn.answer.strip() or not turn.query.strip():
        return False
    return overwrite or not turn.original_answer.strip()


def draft_answers(
    ws: Workspace,
    project: Project,
    generator: Generator,
    settings: GeneratorSettings,
    retriever: RetrieverSettings,
    *,
    statuses: Sequence[str] | None = ("draft",),
    limit: int | None = None,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> DraftReport:
    """Suggest answers for turns without one. Passages: the turn's relevant evidence, else
    what the project's retriever finds. The suggestion goes to ``original_answer`` with its
    ``generation`` record; the gold ``answer`` stays empty for a person to write or accept."""
    report = DraftReport()
    todo = [
        item
        for item in iter_items(ws, project, statuses=list(statuses) if statuses else None)
        if any(_needs_draft(t, overwrite) for t in item.turns)
    ]
    if limit is not None:
        todo = todo[:limit]
    for done, item in enumerate(todo, 1):
        report.items += 1
        data = editable_copy(item)
        drafted = 0
        for index, turn in enumerate(item.turns):
            if not _needs_draft(turn, overwrite):
                continue
            report.turns += 1
            history = [(t.query, t.answer or t.original_answer) for t in item.turns[:index]]
            try:
                generation, passages = _draft(
                    ws, project, generator, settings, retriever, turn, history
                )
            except GeneratorError as exc:
                report.failed += 1
                report.errors.append(f"item {item.id}, turn {index + 1}: {exc}")
                continue
            record = generation_record(generation, settings.kind)
            record["passages"] = passages
            data.turns[index].original_answer = generation.text
            data.turns[index].generation = record
            drafted += 1
        if not drafted:
            report.skipped += 1
        else:
            try:
                save_item(ws, project, item.id, data, base_version=item.version)
                report.drafted += drafted
            except StaleItem:  # a person saved it while we drafted: theirs stays
                report.failed += drafted
                report.errors.append(f"item {item.id}: changed while drafting; run again")
        if progress:
            progress(done, len(todo))
    return report


def _draft(
    ws: Workspace,
    project: Project,
    generator: Generator,
    settings: GeneratorSettings,
    retriever: RetrieverSettings,
    turn: Turn,
    history: Sequence[tuple[str, str]],
) -> tuple[Generation, list[dict[str, Any]]]:
    relevant = [e for e in turn.evidence if e.label == "relevant" and e.text.strip()]
    if relevant:
        names = doc_names(ws, project, (e.doc_id for e in relevant if e.doc_id))
        passages = [(names.get(e.doc_id or "", "passage"), e.text) for e in relevant]
        used = [
            {"doc_id": e.doc_id, "start": e.start, "end": e.end, "from": "evidence"}
            for e in relevant
        ]
    else:
        query_from = retriever.query_from
        if query_from == "rewrite" and not turn.rewrite.strip():
            query_from = "last_turn"
        q = query_text([h for h, _ in history] + [turn.query], turn.rewrite, query_from)
        hits = search(ws, project, q, retriever.k, retriever=retriever)
        names = doc_names(ws, project, (h.doc_id for h in hits))
        passages = [(names[h.doc_id], h.text) for h in hits]
        used = [{"doc_id": h.doc_id, "chunk_id": h.chunk_id, "from": "retrieved"} for h in hits]
    generation = generate_answer(
        generator,
        turn.query,
        passages,
        history_messages(history),
        settings.prompt_template,
        project.language,
    )
    return generation, used
