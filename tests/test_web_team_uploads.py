"""Team operations in the browser's API: a frozen version exported as a job from its page, LLM
drafts as a job, the judging setup page's uploads and rating scale; who may start them."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.gold.item_lists import list_items
from assay.judging.judgments import Unit, save_judgment
from assay.judging.run_import import import_judging_inputs
from assay.people.accounts import create_account, local_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.sessions import create_session
from assay.review.versions import create_version
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.judging_sample import RUNS, TOPIC
from tests.test_web_transfer import fill, serving, wait


def test_a_version_exports_from_its_page_as_a_job(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p", "en")
    fill(any_ws, project)
    made = create_version(any_ws, project, "v1")
    with serving(any_ws) as client:
        page = client.get("/projects/p/versions/v1")
        assert page.status_code == 200 and 'id="version-export-form"' in page.text
        assert 'value="beir"' in page.text  # the format picker
        started = client.post(
            "/api/projects/p/transfer/exports", json={"format": "native", "version": "v1"}
        )
        assert started.status_code == 202, started.text
        job = wait(client, started.json())
        assert job["state"] == "done", job["message"]
        assert job["result"]["version"] == "v1" and job["result"]["hash"] == made.hash
        assert job["result"]["items"] == 1 and "-v1-" in job["filename"]
        data = client.get(job["download"]).content
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            manifest = json.loads(archive.read("manifest.json"))
        assert made.hash in json.dumps(manifest)
        missing = client.post(
            "/api/projects/p/transfer/exports", json={"format": "native", "version": "nope"}
        )
        assert missing.status_code == 404 and "nope" in missing.json()["detail"]
        german = client.get("/projects/p/versions/v1", headers={"accept-language": "de"})
        assert "Diese Version herunterladen" in german.text


def test_llm_drafts_run_as_a_job_with_progress(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p", "en")
    fill(any_ws, project)
    with serving(any_ws) as client:
        page = client.get("/projects/p/synthesis")
        assert page.status_code == 200 and 'id="synthesis-form"' in page.text
        assert 'href="/projects/p/synthesis"' in client.get("/projects/p").text
        bad = client.post("/api/projects/p/synthesis-jobs", json={"n": 2, "types": ["nope"]})
        assert bad.status_code == 422 and "nope" in bad.json()["detail"]
        started = client.post(
            "/api/projects/p/synthesis-jobs", json={"n": 2, "types": ["fact_single"], "seed": 1}
        )
        assert started.status_code == 202, started.text
        assert started.json()["kind"] == "synthesis"
        job = wait(client, started.json())
        assert job["state"] == "done", job["message"]
        created = job["result"]["created"]
        assert len(created) + len(job["result"]["skipped"]) == job["total"] == job["done"]
        assert created, job["result"]
        drafts = list_items(any_ws, get_project(any_ws, "p"), status="draft")[1]
        assert set(created) <= {d.id for d in drafts}
        assert "synthesis" not in client.get("/projects/p/transfer").text.split("jobs-heading")[1]
        listed = client.get("/projects/p/synthesis").text
        assert 'id="synthesis-jobs"' in listed


def _upload(client: TestClient, path: str, name: str, text: str, lenient: bool = False):  # type: ignore[no-untyped-def]
    files = {"file": (name, text.encode(), "application/octet-stream")}
    return client.post(path, files=files, data={"lenient": "true" if lenient else "false"})


def test_judging_setup_uploads_topics_runs_and_judgments(any_ws: Workspace) -> None:
    create_project(any_ws, "j", "en")
    client = TestClient(create_app(any_ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    page = client.get("/projects/j/judging-setup")
    assert page.status_code == 200 and 'id="upload-runs"' in page.text
    assert 'href="/projects/j/judging-setup"' in client.get("/projects/j/judging").text
    api = "/api/projects/j/judging"
    topics = _upload(client, f"{api}/topics", "topics.jsonl", json.dumps(TOPIC) + "\n")
    assert topics.status_code == 200 and topics.json()["topics_added"] == 1
    runs = "".join(json.dumps(r) + "\n" for r in RUNS)
    answer = _upload(client, f"{api}/runs", "runs.jsonl", runs)
    assert answer.status_code == 200 and answer.json()["reports_added"] == 2
    overview = client.get("/projects/j/judging").text
    assert "alpha" in overview and "beta" in overview
    assert 'id="judgments-download"' in overview
    assert "Topics to judge: 1; runs: 2." in client.get("/projects/j/judging-setup").text

    project = get_project(any_ws, "j")
    save_judgment(
        any_ws, project, Unit("report", "t1", "alpha"),
        judge_id=local_account(any_ws).id, version=0, rating="Perfect",
    )  # fmt: skip
    exported = client.get(f"{api}/export")
    assert exported.status_code == 200 and '"Perfect"' in exported.text
    merged = _upload(client, f"{api}/import", "judgments.jsonl", exported.text)
    assert merged.status_code == 200 and merged.json()["unchanged"] == 1


def test_the_rating_scale_is_set_through_the_settings_api(
    any_ws: Workspace, tmp_path: Path
) -> None:
    create_project(any_ws, "j", "en")
    client = TestClient(create_app(any_ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    scale = ["Unrated", "Good", "Bad"]
    saved = client.put("/api/projects/j/settings", json={"judging_ratings": scale})
    assert saved.status_code == 200, saved.text
    assert client.get("/api/projects/j/conversation-settings").status_code == 200
    assert "Unrated\nGood\nBad" in client.get("/projects/j/judging-setup").text
    one = client.put("/api/projects/j/settings", json={"judging_ratings": ["Only"]})
    assert one.status_code == 422 and "at least two" in one.json()["detail"]
    _judged(any_ws, tmp_path, "Good")
    dropped = client.put("/api/projects/j/settings", json={"judging_ratings": ["Unrated", "Bad"]})
    assert dropped.status_code == 422 and "'Good'" in dropped.json()["detail"]
    reset = client.put("/api/projects/j/settings", json={"judging_ratings": None})
    assert reset.status_code == 422  # the default scale has no 'Good' either
    kept = client.put(
        "/api/projects/j/settings", json={"judging_ratings": ["Unrated", "Good", "Fine"]}
    )
    assert kept.status_code == 200


def _judged(ws: Workspace, folder: Path, rating: str) -> None:
    """A judgment with ``rating`` in project j (its topics and runs imported first)."""
    project = get_project(ws, "j")
    topics, runs = folder / "topics.jsonl", folder / "runs.jsonl"
    topics.write_text(json.dumps(TOPIC) + "\n", encoding="utf-8")
    runs.write_text("".join(json.dumps(r) + "\n" for r in RUNS), encoding="utf-8")
    import_judging_inputs(ws, project, topics=topics, runs=[runs])
    save_judgment(
        ws, get_project(ws, "j"), Unit("report", "t1", "alpha"),
        judge_id=local_account(ws).id, version=0, rating=rating,
    )  # fmt: skip


@pytest.mark.parametrize("role", ["viewer", "annotator", "reviewer"])
def test_only_leads_and_owners_see_and_start_uploads(any_ws: Workspace, role: str) -> None:
    project = create_project(any_ws, "p", "en")
    fill(any_ws, project)
    create_version(any_ws, project, "v1")
    account = create_account(any_ws, role, "correct horse battery")
    set_role(any_ws, project.id, account.id, role)
    create_account(any_ws, "root", "correct horse battery", admin=True)
    set_team_mode(any_ws, True)
    client = TestClient(create_app(any_ws), follow_redirects=False)
    client.cookies.set("assay_session", create_session(any_ws, account.id)[0])
    client.get("/api/session")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    assert client.get("/projects/p/judging-setup").status_code == 403
    assert client.get("/projects/p/synthesis").status_code == 403
    assert client.post("/api/projects/p/synthesis-jobs", json={}).status_code == 403
    assert 'id="version-export-form"' not in client.get("/projects/p/versions/v1").text
    assert 'id="synthesis-link"' not in client.get("/projects/p").text
    assert 'id="judging-setup-link"' not in client.get("/projects/p/judging").text
    export = {"format": "native", "version": "v1"}
    assert client.post("/api/projects/p/transfer/exports", json=export).status_code == 403


def test_an_interrupted_drafting_job_is_not_run_twice(ws: Workspace) -> None:
    from assay.jobs import open_jobs
    from assay.jobs.synthesis_work import run_synthesis, start_synthesis
    from assay.jobs.transfer_jobs import get_job, update_job

    project = create_project(ws, "p", "en")
    fill(ws, project)
    jobs = open_jobs(ws, run_here=False)  # queued, nobody runs it here
    try:
        job = start_synthesis(ws, jobs, "p", n=2, types=["fact_single"])
        payload = {"transfer": job.id, "n": 2, "types": ["fact_single"], "seed": 0}
        update_job(ws, job.id, stage="drafting", done=1, total=2)  # a run that died midway
        run_synthesis(ws, payload)  # a worker resumes the queue's job
        ended = get_job(ws, job.id)
        assert ended.state == "failed" and "drafts made so far are kept" in ended.message
        assert list_items(ws, get_project(ws, "p"), status="draft")[0] == 0
    finally:
        jobs.close()
