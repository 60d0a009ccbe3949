"""Ragas samples (JSON Lines): one ``SingleTurnSample`` per turn, for ``EvaluationDataset``.

Each line holds Ragas' sample fields: ``user_input`` (the question), ``reference`` (the
reference answer), ``response`` (the answer the turn's generator gave, when it has one),
``reference_contexts`` (the texts of the relevant passages), ``retrieved_contexts`` (the
texts the retriever returned for the turn), and the ids Ragas' id-based metrics compare:
``reference_context_ids`` (the chunks of the export's chunking that hold the relevant
passages) and ``retrieved_context_ids`` (the chunk id of each retrieved passage, else the id
its own system gave it). ``EvaluationDataset.from_jsonl`` and ``from_list`` read the lines as
they are; Ragas ignores the other key, ``assay``, which keeps what its fields cannot hold.

Ragas has one flat list of reference ids, Assay has AND/OR groups (passages of one group
are alternatives, any one suffices; every group is needed). ``reference_context_ids`` is
the groups flattened, so Ragas' id-based recall (reference ids retrieved / reference ids)
counts every alternative as needed and reads lower than Assay's and AutoRAG's group recall
(groups with a member retrieved / groups) whenever a group has more than one member. The
groups themselves are in ``assay.reference_context_groups``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.formats import Bundle
from assay.formats.beir import queries
from assay.formats.groups import retrieval_groups
from assay.formats.jsontext import dumps_line
from assay.records import Context, Item, Turn

SAMPLE_KEYS = (
    "user_input",
    "retrieved_contexts",
    "reference_contexts",
    "retrieved_context_ids",
    "reference_context_ids",
    "response",
    "reference",
)
"""Ragas ``SingleTurnSample`` fields an export fills, in Ragas' order."""


def write(bundle: Bundle, path: Path, *, chunking: str | None = None, **_: Any) -> list[str]:
    """One line per turn of every item; returns notes on what Ragas cannot be given."""
    notes: list[str] = []
    name = chunking or bundle.target_chunking
    if name is None:
        notes.append("no chunking: reference_context_ids are empty")
    with path.open("w", encoding="utf-8") as out:
        for item in bundle.items:
            for sample in item_samples(item, notes):
                out.write(dumps_line(sample) + "\n")
    return notes


def item_samples(item: Item, notes: list[str]) -> list[dict[str, Any]]:
    """The item's samples, one per turn (a conversation's turns each their own sample; the
    turns before are in ``assay.history``)."""
    samples = []
    history: list[dict[str, str]] = []
    for index, (turn, (query_id, _)) in enumerate(zip(item.turns, queries(item), strict=True)):
        samples.append(_sample(item, index, turn, query_id, list(history), notes))
        history.append({"role": "user", "content": turn.query})
        if turn.answer:
            history.append({"role": "assistant", "content": turn.answer})
    return samples


def _sample(
    item: Item,
    index: int,
    turn: Turn,
    query_id: str,
    history: list[dict[str, str]],
    notes: list[str],
) -> dict[str, Any]:
    where = f"item {item.id} turn {index + 1}"
    groups, unmapped = retrieval_groups(turn)
    if unmapped:
        notes.append(
            f"{where}: {unmapped} relevant passage(s) map to no chunk of the export's "
            "chunking; their text is in reference_contexts, no id in reference_context_ids"
        )
    relevant = [e for e in turn.evidence if e.label == "relevant"]
    retrieved_ids = [_context_id(c) for c in turn.retrieved]
    if any(i is None for i in retrieved_ids):
        notes.append(
            f"{where}: {retrieved_ids.count(None)} retrieved passage(s) carry no id; "
            "retrieved_context_ids leaves them out"
        )
    extra: dict[str, Any] = {
        "item_id": item.id,
        "query_id": query_id,
        "turn": index + 1,
        "query_type": turn.query_type,
        "reference_context_groups": groups,
        "distracting_context_ids": _unique(
            c for e in turn.evidence if e.label == "distracting" for c in e.chunk_ids
        ),
    }
    if turn.rewrite:
        extra["rewrite"] = turn.rewrite
    if history:
        extra["history"] = history
    if turn.alternatives:
        extra["alternative_references"] = list(turn.alternatives)
    unanchored = [c.get("text", "") for c in turn.retrieved if not c.get("doc_id")]
    if unanchored:
        extra["unanchored_contexts"] = unanchored
    sample: dict[str, Any] = {
        "user_input": turn.query,
        "retrieved_contexts": [c.get("text", "") for c in turn.retrieved],
        "reference_contexts": _unique(e.text for e in relevant),
        "retrieved_context_ids": [i for i in retrieved_ids if i is not None],
        "reference_context_ids": _unique(c for group in groups for c in group),
        "response": turn.original_answer or None,
        "reference": turn.answer or None,
        "assay": extra,
    }
    return sample


def _context_id(context: Context) -> str | None:
    """The id a retrieved passage is compared by: our chunk id, else its own system's id."""
    for key in ("chunk_id", "document_id"):
        value = context.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _unique(values: Any) -> list[str]:
    return list(dict.fromkeys(values))
