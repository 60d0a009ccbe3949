"""Contexts as RAGAPHENE and MTRAG write them, and passages as Assay keeps them.

A context (``document_id``, ``text``, ``feedback.relevant[<user>].value`` yes/no) becomes a
turn's retrieved entry and one evidence per vote; the contexts' texts become documents (one
per ``document_id``, its distinct texts joined by blank lines) so evidence anchors by
offsets. Writing goes the other way and rebuilds the votes from the evidence.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from assay.errors import InvalidInput
from assay.formats import Bundle, DocumentRecord
from assay.formats.common import as_object, field_dict, field_str, parse_iso, safe_name, sub_dict
from assay.parsing.common import normalize_text
from assay.records import Context, Evidence

CONTEXT_KEYS = ("document_id", "text", "title", "url", "score", "feedback", "query")
VOTES = {"yes": "relevant", "no": "irrelevant"}
DISTRACTING = "distracting"
"""Neither format has the label: a "no" vote carries ``"label": "distracting"`` beside its
value (their tools read only the value), so the label survives a trip."""


def sub_list(obj: dict[str, Any], key: str) -> list[Any]:
    """``obj[key]`` when it is a list, else an empty one (for keys Assay wrote itself)."""
    value = obj.get(key)
    return value if isinstance(value, list) else []


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# ---------------------------------------------------------------- times


def iso_time(stamp: Any) -> datetime | None:
    """Unix seconds (or milliseconds, for values past the year 5000) as a time."""
    if not is_number(stamp):
        return None
    seconds = stamp / 1000 if abs(stamp) > 1e11 else stamp
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def unix_time(value: datetime | str | None, default: int = 0) -> int:
    """A time (or an ISO string) as Unix seconds; ``default`` when unknown."""
    moment = parse_iso(value)
    return int(moment.timestamp()) if moment else default


# ---------------------------------------------------------------- contexts ↔ passages


@dataclass
class ContextCorpus:
    """Documents made of the contexts' texts, so evidence can point at them by offsets."""

    texts: dict[str, list[str]] = field(default_factory=dict)
    offsets: dict[tuple[str, str], int] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)

    def add(self, document_id: str, text: str, title: str = "") -> tuple[int, int]:
        """Where ``text`` (normalised as documents are) lies in the document's text."""
        text = normalize_text(text)
        key = (document_id, text)
        if key not in self.offsets:
            parts = self.texts.setdefault(document_id, [])
            self.offsets[key] = sum(len(p) + 2 for p in parts)
            parts.append(text)
        if title and document_id not in self.titles:
            self.titles[document_id] = title
        start = self.offsets[key]
        return start, start + len(text)

    def documents(self) -> list[DocumentRecord]:
        return [
            DocumentRecord(
                ref=doc_id,
                name=safe_name(doc_id, "document") + ".txt",
                media_type="text/plain",
                text="\n\n".join(parts),
                metadata={
                    "source_id": doc_id,
                    **({"title": self.titles[doc_id]} if doc_id in self.titles else {}),
                },
            )
            for doc_id, parts in self.texts.items()
            if any(p.strip() for p in parts)
        ]


def read_contexts(
    contexts: list[Any], where: str, corpus: ContextCorpus
) -> tuple[list[Context], list[Evidence]]:
    """A message's contexts as the turn's retrieved list and its evidence (one per vote)."""
    retrieved: list[Context] = []
    evidence: list[Evidence] = []
    for index, value in enumerate(contexts, 1):
        here = f"{where}, context {index}"
        context = as_object(value, here)
        doc_id = context.get("document_id")
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str):
            raise InvalidInput(f"{here}: field 'document_id' must be a string")
        text = field_str(context, "text", here)
        title = context.get("title")
        start, end = corpus.add(doc_id, text, title if isinstance(title, str) else "")
        unknown = {k: v for k, v in context.items() if k not in CONTEXT_KEYS}
        entry = {k: copy.deepcopy(context[k]) for k in CONTEXT_KEYS if k in context}
        entry["document_id"] = doc_id
        if unknown:
            entry["ragaphene"] = copy.deepcopy(unknown)
        retrieved.append(cast(Context, entry))
        votes = field_dict(field_dict(context, "feedback", here), "relevant", here)
        for voter, vote in votes.items():
            if not isinstance(vote, dict):
                raise InvalidInput(f"{here}: the vote of {voter!r} must be an object")
            label = VOTES.get(str(vote.get("value", "")).strip().lower())
            if label is None or not text.strip():
                continue  # other values are kept in retrieved and written back as they were
            if label == "irrelevant" and vote.get("label") == DISTRACTING:
                label = DISTRACTING
            evidence.append(
                Evidence(
                    doc_id=doc_id,
                    start=start,
                    end=end,
                    text=normalize_text(text),
                    label=label,
                    origin="retrieved",
                    author=voter,
                    created_at=iso_time(vote.get("timestamp")),
                )
            )
    return retrieved, evidence


def _norm(text: str) -> str:
    return " ".join(normalize_text(text).split())


def write_contexts(
    retrieved: Sequence[Mapping[str, Any]],
    evidence: list[Evidence],
    doc_ids: dict[str, str],
    default_author: str,
) -> list[dict[str, Any]]:
    """Contexts with ``feedback.relevant`` rebuilt from the evidence (the evidence is what
    annotators edit); evidence that matches no retrieved context is added as a context."""
    used: set[int] = set()
    contexts: list[dict[str, Any]] = []

    def matches(ev: Evidence, document_id: str, text: str) -> bool:
        same_doc = ev.doc_id is None or doc_ids.get(ev.doc_id, ev.doc_id) == document_id
        return same_doc and _norm(ev.text) == _norm(text)

    for entry in retrieved:
        if not isinstance(entry, dict):
            continue
        document_id = _document_id(entry, doc_ids)
        text = str(entry.get("text") or "")
        context: dict[str, Any] = {"document_id": document_id, "text": text}
        for key in ("title", "url", "score", "query"):
            if key in entry:
                context[key] = entry[key]
        mine: list[int] = []
        voters: set[str] = set()
        for i, ev in enumerate(evidence):
            voter = ev.author or default_author
            if i in used or voter in voters or not text.strip():
                continue
            if matches(ev, document_id, text):
                mine.append(i)
                voters.add(voter)
        used.update(mine)
        feedback = _feedback(entry.get("feedback"), [evidence[i] for i in mine], default_author)
        if feedback or "feedback" in entry:
            context["feedback"] = feedback
        context.update(sub_dict(entry, "ragaphene"))
        contexts.append(_ordered(context))
    for index, ev in enumerate(evidence):
        if index in used or not ev.text.strip():
            continue
        document_id = doc_ids.get(ev.doc_id or "", ev.doc_id or "")
        mine = [
            j
            for j in range(index, len(evidence))
            if j not in used and matches(evidence[j], document_id, ev.text)
        ]
        used.update(mine)
        contexts.append(
            {
                "document_id": document_id,
                "text": ev.text,
                "feedback": _feedback(None, [evidence[j] for j in mine], default_author),
            }
        )
    return contexts


def _document_id(entry: dict[str, Any], doc_ids: dict[str, str]) -> str:
    value = entry.get("document_id")
    if isinstance(value, str) and value:
        return value
    doc_id = entry.get("doc_id")
    return doc_ids.get(doc_id, doc_id) if isinstance(doc_id, str) else ""


def _ordered(context: dict[str, Any]) -> dict[str, Any]:
    known = {k: context[k] for k in CONTEXT_KEYS if k in context}
    return {**known, **{k: v for k, v in context.items() if k not in known}}


def _feedback(raw: Any, votes: list[Evidence], default_author: str) -> dict[str, Any]:
    """The context's feedback: other metrics as they were, ``relevant`` from the evidence;
    a vote that did not change keeps its original timestamp."""
    feedback = copy.deepcopy(raw) if isinstance(raw, dict) else {}
    before = feedback.pop("relevant", None)
    before = before if isinstance(before, dict) else {}
    relevant: dict[str, Any] = {}
    for ev in votes:
        author = ev.author or default_author
        value = "yes" if ev.label == "relevant" else "no"
        old = before.get(author)
        if (
            isinstance(old, dict)
            and str(old.get("value", "")).strip().lower() == value
            and (old.get("label") == DISTRACTING) == (ev.label == DISTRACTING)
        ):
            relevant[author] = old
        else:
            relevant[author] = {"value": value, "timestamp": unix_time(ev.created_at)}
            if ev.label == DISTRACTING:  # a "no" that looks relevant: Assay's own word
                relevant[author]["label"] = DISTRACTING
    for author, old in before.items():  # votes we do not model ("maybe") stay as they were
        if author not in relevant and str(_vote_value(old)) not in VOTES:
            relevant[author] = old
    if relevant:
        feedback = {"relevant": relevant, **feedback}
    return feedback


def _vote_value(vote: Any) -> str:
    return str(vote.get("value", "")).strip().lower() if isinstance(vote, dict) else ""


def document_ids(bundle: Bundle) -> dict[str, str]:
    """Bundle document ref → the document id other tools know it by."""
    found: dict[str, str] = {}
    for doc in bundle.documents:
        source = doc.metadata.get("source_id") if isinstance(doc.metadata, dict) else None
        found[doc.ref] = source if isinstance(source, str) and source else doc.ref
    return found
