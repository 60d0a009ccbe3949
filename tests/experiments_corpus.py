"""A small project for experiment tests: three documents, small chunks, accepted items."""

from __future__ import annotations

from dataclasses import dataclass

from assay.corpus.chunkings import create_chunking
from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item
from assay.records import Document, Evidence, Item, Project, Turn
from assay.store.workspace import Workspace

TRAVEL = """Travel policy

Employees book trains in second class. First class is allowed for trips longer than four hours.

Hotel costs are refunded up to 120 euros per night in large cities and 90 euros elsewhere.

Meals on business trips are covered by a daily allowance of 28 euros.
"""

LEAVE = """Leave policy

Every employee has 30 days of paid leave per calendar year.

Unused leave can be carried over until the end of March of the following year.

Parental leave is granted according to the federal law and does not reduce annual leave.
"""

SECURITY = """Information security

Passwords must have at least 14 characters and are changed only after a suspected leak.

Laptops are encrypted with full disk encryption before they are handed out.

Security incidents are reported to the security desk within one hour.
"""


@dataclass
class Corpus:
    project: Project
    travel: Document
    leave: Document
    security: Document
    items: list[Item]


def ev(doc: Document, text: str, group: int | None = None, label: str = "relevant") -> Evidence:
    return Evidence(doc_id=doc.id, text=text, group=group, label=label)  # type: ignore[arg-type]


def build_corpus(ws: Workspace, project: Project, *, statuses: bool = True) -> Corpus:
    travel = ingest_bytes(ws, project, "travel.txt", TRAVEL.encode())
    leave = ingest_bytes(ws, project, "leave.txt", LEAVE.encode())
    security = ingest_bytes(ws, project, "security.txt", SECURITY.encode())
    create_chunking(
        ws, project, "para", "recursive", {"max_length": 120, "overlap": 0}, make_default=True
    )
    specs = [
        Item(
            turns=[
                Turn(
                    query="How much is the hotel refund per night in large cities?",
                    answer="Up to 120 euros per night.",
                    alternatives=["120 euros"],
                    evidence=[ev(travel, "refunded up to 120 euros per night in large cities")],
                )
            ]
        ),
        Item(
            turns=[
                Turn(
                    query="How many days of paid leave does an employee get?",
                    answer="30 days per calendar year.",
                    query_type="fact_single",
                    evidence=[ev(leave, "30 days of paid leave per calendar year")],
                )
            ]
        ),
        Item(
            kind="conversation",
            extra={"source_id": "conv-7"},
            turns=[
                Turn(
                    query="How long must passwords be?",
                    answer="At least 14 characters.",
                    evidence=[ev(security, "at least 14 characters")],
                ),
                Turn(
                    query="And how are laptops protected?",
                    rewrite="How are laptops protected?",
                    answer="With full disk encryption.",
                    query_type="fact_multi",
                    evidence=[
                        ev(security, "encrypted with full disk encryption", group=1),
                        ev(security, "reported to the security desk", group=2),
                    ],
                ),
                Turn(
                    query="Who pays for my lunch on the moon?",
                    answer="The documents do not say.",
                    query_type="unanswerable",
                ),
            ],
        ),
    ]
    items = [create_item(ws, project, spec, status="accepted") for spec in specs]
    items.append(
        create_item(
            ws,
            project,
            Item(turns=[Turn(query="A draft question about meals?", answer="28 euros.")]),
        )
    )
    return Corpus(project, travel, leave, security, items)
