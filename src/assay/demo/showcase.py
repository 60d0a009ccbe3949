"""The demo workspace with something on every page: gold in every status, a review, comments,
a conversation, dataset versions, an experiment run and a judging project.

``scripts/screenshots.py`` photographs every page of it, and a test reads every page of it
in German; both need pages that show their tables, badges and figures, not empty states.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from assay.corpus.documents import get_document, list_documents
from assay.experiments import create_experiment, run_experiment
from assay.gold.item_lists import list_items
from assay.gold.items import create_item, set_status
from assay.judging.judgments import Unit, save_judgment
from assay.judging.run_import import import_judging_inputs
from assay.people.actors import acting_account
from assay.records import Context, Evidence, Item, Project, Turn
from assay.review.comments import add_comment
from assay.review.reviews import review_item
from assay.review.versions import create_version
from assay.store.projects import create_project
from assay.store.workspace import Workspace

from . import open_demo

JUDGING_PROJECT = "judging-demo"
TOPIC = {
    "request_id": "night-ferry",
    "title": "Night ferry departures",
    "problem_statement": "When does the night ferry leave, in summer and in winter?",
}
FERRY = {
    "id": "ferry",
    "title": "Night ferry",
    "text": "The night ferry leaves at 22:40 from pier 3. Bikes ride free.",
}
WINTER = {
    "id": "winter",
    "title": "Winter timetable",
    "text": "From December the last ferry leaves at 21:15.",
}
RUNS = [
    {
        "metadata": {"team_id": "blue", "run_id": "alpha", "topic_id": "night-ferry"},
        "responses": [
            {"text": "The night ferry leaves at 22:40.", "citations": ["ferry"]},
            {"text": "In winter the last one leaves at 21:15.", "citations": ["winter"]},
            {"text": "Have a good trip.", "citations": []},
        ],
        "documents": {"ferry": FERRY, "winter": WINTER},
    },
    {
        "metadata": {"team_id": "green", "run_id": "beta", "topic_id": "night-ferry"},
        "responses": [{"text": "Ferries leave at night.", "citations": ["ferry"]}],
        "documents": {"ferry": FERRY},
    },
]


@dataclass(frozen=True)
class Showcase:
    """What the pages of the showcase are about (ids for their addresses)."""

    project: Project
    item_id: str  # an accepted item with a comment thread
    submitted_id: str  # waiting for review
    rejected_id: str  # sent back with a reason
    conversation_id: str
    document_id: str
    experiment_id: int
    versions: tuple[str, str]
    judging_project: str


def _qa(doc_id: str, query: str, answer: str, quote: str, query_type: str) -> Item:
    passage = Evidence(doc_id=doc_id, start=None, end=None, text=quote)
    return Item(turns=[Turn(query=query, answer=answer, query_type=query_type, evidence=[passage])])


def build_showcase(ws: Workspace, folder: Path) -> Showcase:
    """Fill ``ws`` (fresh) with the demo project and everything around it; ``folder`` takes
    the judging inputs, written as files as a lead would upload them."""
    project, _ = open_demo(ws, with_items=True)
    me = acting_account(ws)
    docs = {d.name: d for d in list_documents(ws, project)}
    profile = get_document(ws, project, docs["company-profile.md"].id)
    first = create_version(ws, project, "v1", author=me)

    waiting = create_item(
        ws,
        project,
        _qa(
            profile.id,
            "Who owns the rest of Kelmtal Mobil?",
            "The District of Kelmtal.",
            "District of Kelmtal",
            "fact_single",
        ),
        author=me,
    )
    waiting = set_status(ws, project, waiting.id, "submitted", waiting.version, actor=me)
    rejected = create_item(
        ws,
        project,
        _qa(profile.id, "Kelmtal Mobil founded when?", "1962.", "1962", "fact_single"),
        author=me,
    )
    rejected = set_status(ws, project, rejected.id, "submitted", rejected.version, actor=me)
    review_item(
        ws,
        project,
        rejected.id,
        "reject",
        rejected.version,
        reviewer=me,
        reason="Write the question as a customer would ask it.",
    )
    create_item(
        ws,
        project,
        _qa(profile.id, "Which bus lines run at night?", "", "night", "summary"),
        author=me,
    )

    accepted = list_items(ws, project, status="accepted", limit=1)[1][0]
    thread = add_comment(
        ws, project, accepted.id, "Is this still true after the 2024 revision?", author=me
    )
    add_comment(
        ws,
        project,
        accepted.id,
        "Yes: the current profile says the same.",
        author=me,
        parent_id=thread.id,
    )

    passage = Context(
        doc_id=profile.id,
        chunk_id=None,
        start=None,
        end=None,
        score=7.25,
        rank=1,
        text=profile.text[:240],
    )
    conversation = create_item(
        ws,
        project,
        Item(
            kind="conversation",
            turns=[
                Turn(
                    query="When was the tram company founded?",
                    answer="In 1962, as Städtische Straßenbahn Kelmstadt.",
                    original_answer="It was founded in 1962 [1].",
                    retrieved=[passage],
                    evidence=[Evidence(doc_id=profile.id, start=None, end=None, text="1962")],
                    enrichments={"answerability": ["ANSWERABLE"]},
                ),
                Turn(
                    query="And who owns it today?",
                    rewrite="Who owns Kelmtal Mobil GmbH today?",
                    answer="The City of Kelmstadt holds 74.9 percent, the District 25.1.",
                    original_answer="The City of Kelmstadt holds 74.9 percent.",
                    enrichments={"answerability": ["ANSWERABLE"], "Multi-Turn": ["Follow-up"]},
                    retrieved=[passage],
                ),
            ],
        ),
        author=me,
    )
    second = create_version(ws, project, "v2", statuses=["accepted", "submitted"], author=me)

    hybrid = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}}
    experiment = create_experiment(
        ws, project, "keyword vs hybrid", pipelines=["keyword", hybrid], version=first.name
    )
    run_experiment(ws, project, experiment.id)

    topics = folder / "topics.jsonl"
    topics.write_text(json.dumps(TOPIC) + "\n", encoding="utf-8")
    runs = folder / "runs.jsonl"
    runs.write_text("".join(json.dumps(run) + "\n" for run in RUNS), encoding="utf-8")
    judged = create_project(ws, JUDGING_PROJECT, "en")
    import_judging_inputs(ws, judged, topics=topics, runs=[runs])
    save_judgment(
        ws,
        judged,
        Unit.report("night-ferry", "alpha"),
        judge_id=me,
        version=0,
        rating="Mostly Good",
        comment="Clear, but the last sentence says nothing.",
    )
    return Showcase(
        project=project,
        item_id=accepted.id,
        submitted_id=waiting.id,
        rejected_id=rejected.id,
        conversation_id=conversation.id,
        document_id=profile.id,
        experiment_id=experiment.id,
        versions=(first.name, second.name),
        judging_project=judged.name,
    )
