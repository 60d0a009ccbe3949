"""Judging mode's JSON API (web.routes.judging_api): topics and runs uploaded, progress, one
judgment, the autojudge JSON Lines out and back in, bad uploads refused naming file, line and
field, and who may import in team mode."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from assay.judging.judgments import list_judgments
from assay.judging.reports import list_reports, list_topics
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.test_judging_io import BASE, KIDDIE, judge_three_modes
from tests.test_web_review import PASSWORD, client_for

P = "/api/projects/kiddie/judging"


def upload(client: TestClient, url: str, name: str, data: bytes, **fields: str) -> Any:
    return client.post(url, files={"file": (name, data)}, data=fields)


def runs_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted((KIDDIE / "runs").iterdir()):
            archive.write(path, f"runs/{path.name}")
    return buffer.getvalue()


def test_runs_go_in_judgments_come_out_and_go_back_in(any_ws: Workspace) -> None:
    project = create_project(any_ws, "kiddie")
    client = client_for(any_ws)
    topics = (KIDDIE / "topics" / "kiddie-topics.jsonl").read_bytes()
    done = upload(client, f"{P}/topics", "kiddie-topics.jsonl", topics)
    assert done.status_code == 200, done.text
    assert done.json()["topics_added"] == 5
    done = upload(client, f"{P}/runs", "kiddie-runs.zip", runs_zip())
    assert done.status_code == 200, done.text
    assert done.json()["reports_added"] == 20 and done.json()["documents_added"] > 0

    ada = create_account(any_ws, "ada", PASSWORD).id
    judge_three_modes(any_ws, project, ada)
    shown = client.get(f"{P}/progress", params={"mode": "report", "judge": "ada"}).json()
    assert (shown["judged"], shown["total"]) == (1, 20)
    assert shown["rows"][0] == {"topic_id": "leaf", "run_id": "run1", "judged": 1, "total": 1}
    assert client.get(f"{P}/progress", params={"mode": "reports"}).status_code == 422

    unit = {"mode": "citation", "topic_id": "leaf", "run_id": "run1", "sentence_idx": 0,
            "doc_id": "Chlorophyll"}  # fmt: skip
    mine = client.get(f"{P}/judgments", params=unit).json()
    assert (mine["version"], mine["rating"], mine["spans"]) == (0, None, [])  # the caller's
    ada_s = client.get(f"{P}/judgments", params={**unit, "judge": "ada"}).json()
    assert (ada_s["version"], ada_s["rating"]) == (1, "So-so")
    assert ada_s["report_spans"] == [{"start": 0, "end": 6, "text": "Leaves"}]
    missing = client.get(f"{P}/judgments", params={**unit, "run_id": "run9"})
    assert missing.status_code == 404 and "run9" in missing.json()["detail"]

    exported = client.get(f"{P}/export", params={"dataset": "round 1"})
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    assert 'filename="kiddie-judgments.jsonl"' in exported.headers["content-disposition"]
    lines = [json.loads(line) for line in exported.text.splitlines()]
    assert [("run_id" in r, "docid" in r, "citation" in r) for r in lines] == [
        (True, False, False), (False, True, False), (False, False, True),
    ]  # fmt: skip
    assert {r["dataset"] for r in lines} == {"round 1"}
    only = client.get(f"{P}/export", params=[("mode", "document"), ("topic", "leaf")])
    assert len(only.text.splitlines()) == 1

    # back in, into a second project holding the same runs
    create_project(any_ws, "copy")
    other = "/api/projects/copy/judging"
    assert upload(client, f"{other}/topics", "t.jsonl", topics).status_code == 200
    assert upload(client, f"{other}/runs", "runs.zip", runs_zip()).status_code == 200
    merged = upload(client, f"{other}/import", "judgments.jsonl", exported.content)
    assert merged.status_code == 200, merged.text
    assert (merged.json()["added"], merged.json()["judges"]) == (3, ["ada"])
    again = upload(client, f"{other}/import", "judgments.jsonl", exported.content)
    assert again.json()["unchanged"] == 3


def test_bad_uploads_are_refused_naming_file_line_and_field(any_ws: Workspace) -> None:
    project = create_project(any_ws, "kiddie")
    client = client_for(any_ws)
    invalid = (BASE / "example-rag-topics-invalid.jsonl").read_bytes()
    refused = upload(client, f"{P}/topics", "invalid.jsonl", invalid)
    assert refused.status_code == 422
    assert "invalid.jsonl line 2: field 'title': required" in refused.json()["detail"]
    assert list_topics(any_ws, project) == []
    lenient = upload(client, f"{P}/topics", "invalid.jsonl", invalid, lenient="true")
    assert lenient.status_code == 200 and lenient.json()["topics_added"] == 1

    run = (BASE / "my_best_run_01.jsonl").read_text()
    bad_runs = {
        "past.jsonl": json.dumps(
            {
                "metadata": {"team_id": "t", "run_id": "r", "topic_id": "28"},
                "responses": [{"text": "x", "citations": [3]}],
                "references": ["a"],
            }
        ),
        "unembedded.jsonl": json.dumps(
            {
                "metadata": {"team_id": "t", "run_id": "r", "topic_id": "28"},
                "responses": [{"text": "x", "citations": [0]}],
                "references": ["a", "b"],
                "documents": {"a": {"id": "a", "text": "A."}},
            }
        ),
        "twice.jsonl": run.strip() + "\n" + run,
        "broken.jsonl": "{not json",
    }
    expected = {
        "past.jsonl": "past.jsonl line 1: field 'responses[0].citations': citation index 3",
        "unembedded.jsonl": "unembedded.jsonl line 1: field 'documents': the report embeds "
        "documents but not 'b'",
        "twice.jsonl": "twice.jsonl line 2: a second report for topic",
        "broken.jsonl": "broken.jsonl line 1: malformed JSON",
    }
    for name, text in bad_runs.items():
        refused = upload(client, f"{P}/runs", name, text.encode())
        assert refused.status_code == 422, refused.text
        assert expected[name] in refused.json()["detail"]
    assert list_reports(any_ws, project) == []

    line = {"dataset": "x", "request_id": "moon", "topic_id": "moon", "run_id": "run1",
            "team_id": "teamA", "username": "ada", "rating": "Bad", "comment": "",
            "spans": []}  # fmt: skip
    refused = upload(client, f"{P}/import", "offline.jsonl", json.dumps(line).encode())
    assert refused.status_code == 422
    assert (
        "offline.jsonl line 1: field 'topic_id': the project has no judging topic 'moon'"
        in (refused.json()["detail"])
    )
    assert list_judgments(any_ws, project) == []


def test_team_mode_imports_need_import_and_exports_need_export(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project = create_project(any_ws, "kiddie")
    create_account(any_ws, "root", PASSWORD, admin=True)
    for name, role in (("lead", "lead"), ("ann", "annotator")):
        set_role(any_ws, project.id, create_account(any_ws, name, PASSWORD).id, role)
    set_team_mode(any_ws, True)
    topics = (KIDDIE / "topics" / "kiddie-topics.jsonl").read_bytes()
    annotator = client_for(any_ws, "ann")
    assert upload(annotator, f"{P}/topics", "t.jsonl", topics).status_code == 403
    assert annotator.get(f"{P}/export").status_code == 403
    assert annotator.get(f"{P}/progress").status_code == 200  # reading the project
    lead = client_for(any_ws, "lead")
    assert upload(lead, f"{P}/topics", "t.jsonl", topics).status_code == 200
    assert lead.get(f"{P}/export").status_code == 200
