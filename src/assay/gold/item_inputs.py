"""What an editor, an import or a generator sends to store an item: :class:`ItemIn` with its
:class:`TurnIn` turns (evidence as :class:`~assay.corpus.anchoring.EvidenceIn`), and the
statuses an item may have. Drafts may be incomplete; ``assay.gold.checks`` judges
completeness when an item is submitted.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.corpus.anchoring import EvidenceIn
from assay.records import Item

Status = Literal["draft", "submitted", "accepted", "rejected"]
STATUSES: tuple[str, ...] = ("draft", "submitted", "accepted", "rejected")


class TurnIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = ""
    rewrite: str = ""
    query_type: str = "fact_single"
    enrichments: dict[str, list[str]] = Field(default_factory=dict)
    answer: str = ""
    alternatives: list[str] = Field(default_factory=list)
    original_answer: str = ""
    generation: dict[str, Any] = Field(default_factory=dict)
    retrieved: list[dict[str, Any]] = Field(default_factory=list)
    evidence: list[EvidenceIn] = Field(default_factory=list)


class ItemIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["qa", "conversation"] = "qa"
    notes: str = ""
    origin: str = "human"
    extra: dict[str, Any] = Field(default_factory=dict)
    turns: list[TurnIn] = Field(default_factory=lambda: [TurnIn()])


def item_input(item: Item) -> ItemIn:
    """The editable form of a stored item (what an editor sends back when saving)."""
    return ItemIn(
        kind=item.kind,  # type: ignore[arg-type]
        notes=item.notes,
        origin=item.origin,
        extra=item.extra,
        turns=[
            TurnIn(
                query=t.query,
                rewrite=t.rewrite,
                query_type=t.query_type,
                enrichments=t.enrichments,
                answer=t.answer,
                alternatives=list(t.alternatives),
                original_answer=t.original_answer,
                generation=t.generation,
                retrieved=list(t.retrieved),
                evidence=[
                    EvidenceIn(
                        doc_id=e.doc_id,
                        start=e.start,
                        end=e.end,
                        text=e.text,
                        label=e.label,  # type: ignore[arg-type]
                        grade=e.grade,
                        group=e.group,
                        origin=e.origin,  # type: ignore[arg-type]
                        anchor=e.anchor,  # type: ignore[arg-type]
                        author=e.author,
                        created_at=e.created_at.isoformat(),
                    )
                    for e in t.evidence
                ],
            )
            for t in item.turns
        ],
    )
