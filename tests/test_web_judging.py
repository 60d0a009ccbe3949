"""The judging workbench's pages and the route its autosave uses: saves with versions and
conflicts, several judges per unit, progress and the unjudged-first order, refusals of
spans and fields that do not fit, and who may judge."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.judging.judgments import Unit, get_judgment, list_judgments
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.judging_sample import judging_project

URL = "/api/projects/ferries/judging/judgments"
REPORT = (
    "The 🚢 night ferry leaves at 22:40. In winter the last one leaves at 21:15. Have a good trip."
)


@pytest.fixture
def project(any_ws: Workspace, tmp_path: Path) -> Project:
    return judging_project(any_ws, tmp_path)


def client_of(ws: Workspace, author: str = "") -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")  # the CSRF cookie
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    if author:
        client.cookies.set("assay_author", author)
    return client


def span(text: str, part: str, shift: int = 0, **extra: Any) -> dict[str, Any]:
    start = text.index(part)
    return {"start": shift + start, "end": shift + start + len(part), "text": part, **extra}


def page_data(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="judging-data">(.*?)</script>', html)
    assert found, "the workbench has no data island"
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_a_report_judgment_with_spans_in_two_sentences_is_saved_and_versioned(
    any_ws: Workspace, project: Project
) -> None:
    client = client_of(any_ws)
    spans = [
        span(REPORT, "night ferry leaves", sentence_idx=0),
        span(REPORT, "In winter", sentence_idx=1),
    ]
    body = {"mode": "report", "topic_id": "t1", "run_id": "alpha", "version": 0,
            "rating": "Mostly Good", "comment": "fine", "spans": spans}  # fmt: skip
    first = client.put(URL, json=body)
    assert first.status_code == 200, first.text
    saved = first.json()
    assert (saved["version"], saved["rating"], saved["spans"]) == (1, "Mostly Good", spans)
    # the emoji counts as one character, as in Python
    assert spans[0]["start"] == 6

    again = client.put(URL, json={**body, "version": 1, "comment": "better"})
    assert again.json()["version"] == 2
    # a save from a page that read version 1 meets version 2: 409 with the stored one
    stale = client.put(URL, json={**body, "version": 1, "comment": "from another tab"})
    assert stale.status_code == 409
    assert stale.json()["current"]["comment"] == "better"
    assert stale.json()["current"]["version"] == 2
    # and a "new" judgment of a unit judged already is a conflict too
    assert client.put(URL, json=body).status_code == 409
    stored = list_judgments(any_ws, project, mode="report")
    assert [(j.comment, j.version) for j in stored] == [("better", 2)]


def test_document_and_citation_judgments_including_a_sentence_without_citations(
    any_ws: Workspace, project: Project
) -> None:
    client = client_of(any_ws)
    doc = "Night ferry\n\nThe night ferry 🚢 leaves at 22:40 from pier 3. Bikes ride free."
    document = {"mode": "document", "topic_id": "t1", "doc_id": "ferry", "version": 0,
                "rating": "Perfect", "spans": [span(doc, "leaves at 22:40")]}  # fmt: skip
    assert client.put(URL, json=document).status_code == 200
    sentence = "In winter the last one leaves at 21:15."
    winter = "Winter timetable\n\nFrom December the last ferry leaves at 21:15."
    citation = {"mode": "citation", "topic_id": "t1", "run_id": "alpha", "sentence_idx": 1,
                "doc_id": "winter", "version": 0, "rating": "Perfect",
                "report_spans": [span(sentence, "leaves at 21:15")],
                "spans": [span(winter, "the last ferry leaves at 21:15")]}  # fmt: skip
    saved = client.put(URL, json=citation)
    assert saved.status_code == 200, saved.text
    assert saved.json()["report_spans"] == citation["report_spans"]
    lone = {"mode": "citation", "topic_id": "t1", "run_id": "alpha", "sentence_idx": 2,
            "version": 0, "rating": "Bad", "comment": "says nothing"}  # fmt: skip
    assert client.put(URL, json=lone).status_code == 200
    me = list_judgments(any_ws, project, mode="citation")[0].judge_id
    unit = Unit.citation("t1", "alpha", 2, None)
    judgment = get_judgment(any_ws, project, unit, me)
    assert judgment is not None and judgment.comment == "says nothing"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"spans": [{"start": 0, "end": 3, "text": "Thx"}]}, "does not match"),
        ({"spans": [{"start": 3, "end": 5, "text": " 🚢"}]}, "trimmed"),
        ({"doc_id": "ferry"}, "doc_id: a report judgment has none"),
        ({"run_id": None}, "run_id: a report judgment needs one"),
        ({"rating": "Great"}, "not on the project's scale"),
        ({"report_spans": [{"start": 0, "end": 3, "text": "The"}]}, "citation judgments only"),
        ({"spans": [{"start": 0, "end": 3, "text": "The", "sentence_idx": 1}]}, "outside sentence"),
    ],
)
def test_judgments_that_do_not_fit_are_refused_and_nothing_is_stored(
    any_ws: Workspace, project: Project, change: dict[str, Any], words: str
) -> None:
    body = {"mode": "report", "topic_id": "t1", "run_id": "alpha", "version": 0, **change}
    answer = client_of(any_ws).put(URL, json=body)
    assert answer.status_code == 422
    assert words in answer.text
    assert list_judgments(any_ws, project) == []


def test_several_judges_judge_the_same_unit_each_their_own(
    any_ws: Workspace, project: Project
) -> None:
    body = {"mode": "report", "topic_id": "t1", "run_id": "beta", "version": 0}
    assert client_of(any_ws, "Ada").put(URL, json={**body, "rating": "Perfect"}).status_code == 200
    assert client_of(any_ws, "Bob").put(URL, json={**body, "rating": "Bad"}).status_code == 200
    ratings = {j.judge: j.rating for j in list_judgments(any_ws, project)}
    assert ratings == {"Ada": "Perfect", "Bob": "Bad"}

    # Bob's workbench: his own judgment, and two judges so far; Cy has judged nothing
    bob = page_data(client_of(any_ws, "Bob").get("/projects/ferries/judging/reports?topic=t1").text)
    beta = next(u for u in bob["units"] if u["run_id"] == "beta")
    assert (beta["judged"], beta["judges"], beta["judgment"]["rating"]) == (True, 2, "Bad")
    cy = page_data(client_of(any_ws, "Cy").get("/projects/ferries/judging/reports?topic=t1").text)
    assert [u["judgment"] for u in cy["units"]] == [None, None]


def test_the_workbench_pages_and_the_overview(any_ws: Workspace, project: Project) -> None:
    client = client_of(any_ws)
    body = {"mode": "citation", "topic_id": "t1", "run_id": "alpha", "sentence_idx": 0,
            "doc_id": "ferry", "version": 0, "comment": "checked"}  # fmt: skip
    assert client.put(URL, json=body).status_code == 200

    data = page_data(client.get("/projects/ferries/judging/citations?topic=t1").text)
    keys = [(u["run_id"], u["sentence_idx"], u["doc_id"]) for u in data["units"]]
    assert keys == [("alpha", 0, "ferry"), ("alpha", 1, "winter"), ("alpha", 1, "ferry"),
                    ("alpha", 2, None), ("beta", 0, "ferry")]  # fmt: skip
    assert data["ratings"][0]["value"] == "Not rated"
    assert set(data["documents"]) == {"ferry", "winter"}
    # unjudged first, one run only
    first = page_data(
        client.get("/projects/ferries/judging/citations?topic=t1&run=alpha&unjudged=1").text
    )
    assert [u["judged"] for u in first["units"]] == [False, False, False, True]
    docs = page_data(client.get("/projects/ferries/judging/documents?topic=t1").text)
    assert [u["doc_id"] for u in docs["units"]] == ["ferry", "winter"]
    assert docs["documents"]["ferry"]["text"].startswith("Night ferry\n\n")

    overview = client.get("/projects/ferries/judging?mode=citations").text
    assert "1 of 5 judged" in overview and "0 of 2 judged" in overview
    # the way on: the results page, and the offline page of the mode shown
    assert 'href="/projects/ferries/judging-results"' in overview
    offline = "/api/projects/ferries/judging/offline-page?mode=citations"
    assert f'href="{offline}"' in overview
    assert client.get(offline).text.startswith("<!doctype html>")
    assert client.get("/projects/ferries/judging?mode=votes").status_code == 404
    assert 'href="/projects/ferries/judging"' in client.get("/projects/ferries").text
    german = client.get("/projects/ferries/judging", headers={"Accept-Language": "de"}).text
    assert "1 von 5 bewertet" in german

    assert client.get("/projects/ferries/judging/votes?topic=t1").status_code == 404
    assert client.get("/projects/ferries/judging/reports?topic=nope").status_code == 404
    assert client.get("/projects/ferries/judging/reports?topic=t1&run=nope").status_code == 422


def test_only_those_who_may_judge_save_judgments(any_ws: Workspace, project: Project) -> None:
    create_account(any_ws, "root", "correct horse battery", admin=True)
    for name, role in (("vera", "viewer"), ("ann", "annotator")):
        account = create_account(any_ws, name, "correct horse battery")
        set_role(any_ws, project.id, account.id, role)
    set_team_mode(any_ws, True)
    body = {"mode": "report", "topic_id": "t1", "run_id": "alpha", "version": 0, "rating": "Bad"}
    answers = {}
    for name in ("vera", "ann"):
        client = client_of(any_ws)
        signed = client.post(
            "/api/session", json={"username": name, "password": "correct horse battery"}
        )
        assert signed.status_code == 200, signed.text
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        assert client.get("/projects/ferries/judging/reports?topic=t1").status_code == 200
        answers[name] = client.put(URL, json=body).status_code
    assert answers == {"vera": 403, "ann": 200}
