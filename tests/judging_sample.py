"""A small judging project for the workbench tests: one topic, two runs (one with a sentence
that cites nothing), two embedded documents, and text outside the BMP (an emoji) before the
spans, so offsets must count code points as the server does."""

from __future__ import annotations

import json
from pathlib import Path

from assay.judging.run_import import import_judging_inputs
from assay.records import Project
from assay.store.projects import create_project
from assay.store.workspace import Workspace

FERRY = {"id": "ferry", "title": "Night ferry", "url": "https://example.org/ferry",
         "text": "The night ferry 🚢 leaves at 22:40 from pier 3. Bikes ride free."}  # fmt: skip
WINTER = {"id": "winter", "title": "Winter timetable",
          "text": "From December the last ferry leaves at 21:15."}  # fmt: skip
RUNS = [
    {
        "metadata": {"team_id": "blue", "run_id": "alpha", "topic_id": "t1"},
        "responses": [
            {"text": "The 🚢 night ferry leaves at 22:40.", "citations": ["ferry"]},
            {"text": "In winter the last one leaves at 21:15.", "citations": ["winter", "ferry"]},
            {"text": "Have a good trip.", "citations": []},
        ],
        "documents": {"ferry": FERRY, "winter": WINTER},
    },
    {
        "metadata": {"team_id": "green", "run_id": "beta", "topic_id": "t1"},
        "responses": [{"text": "Ferries leave at night.", "citations": ["ferry"]}],
        "documents": {"ferry": FERRY},
    },
]
TOPIC = {
    "request_id": "t1",
    "title": "night ferry departure",
    "problem_statement": "When does the night ferry leave, in summer and in winter?",
}


def judging_project(ws: Workspace, folder: Path, name: str = "ferries") -> Project:
    topics = folder / "topics.jsonl"
    topics.write_text(json.dumps(TOPIC) + "\n", encoding="utf-8")
    runs = folder / "runs.jsonl"
    runs.write_text("".join(json.dumps(run) + "\n" for run in RUNS), encoding="utf-8")
    project = create_project(ws, name, "en")
    import_judging_inputs(ws, project, topics=topics, runs=[runs])
    return project
