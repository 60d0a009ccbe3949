"""The offline judging page (assay.judging.offline_page, ``assay judge html``): what it embeds,
how safely, and the command. The page itself, in Chromium from file://, is judged in
tests/browser/test_judging_offline.py."""

from __future__ import annotations

import hashlib
import json
import re
from base64 import b64encode
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import InvalidInput, NotFound
from assay.judging.offline_page import page_payload, render_page, script_json
from assay.judging.reports import get_documents, topic_doc_ids
from assay.judging.run_import import import_judging_inputs
from assay.judging.units import topic_units
from assay.records import Project
from assay.store.projects import create_project, update_project_settings
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.conftest import SHARED

KIDDIE = SHARED / "fixtures" / "autojudge" / "kiddie"
HOSTILE = "</script><img src=x onerror=alert(1)> <!-- & \u2028\u2029 </SCRIPT >"


def _kiddie(ws: Workspace, name: str = "kiddie") -> Project:
    project = create_project(ws, name)
    import_judging_inputs(
        ws, project, topics=KIDDIE / "topics" / "kiddie-topics.jsonl", runs=[KIDDIE / "runs"]
    )
    return project


def _embedded(html: str) -> object:
    found = re.search(r'<script type="application/json" id="judging-data">(.*?)</script>', html)
    assert found is not None
    return json.loads(found.group(1))


def test_script_json_leaves_nothing_that_ends_the_element_or_opens_markup() -> None:
    value = {"text": HOSTILE, "ids": ["a<b", "c>d"], "lone": "x\ud800y"}
    text = script_json(value)
    for character in "<>&\u2028\u2029":
        assert character not in text
    assert "\\u003c/script\\u003e" in text and "\\ud800" in text
    text.encode("utf-8")  # a lone surrogate could not be written as UTF-8
    assert json.loads(text) == value  # the escapes mean the same characters


def test_report_payload_holds_the_topics_reports_documents_and_scale(any_ws: Workspace) -> None:
    project = _kiddie(any_ws)
    payload = page_payload(any_ws, project, mode="reports", topic_ids=["bee", "leaf"], dataset="K")
    assert (payload["mode"], payload["dataset"], payload["project"]) == ("report", "K", "kiddie")
    assert payload["language"] == "en"  # the project's
    assert payload["ratings"] == ["Not rated", "Perfect", "Mostly Good", "So-so", "Bad"]
    assert [t["request_id"] for t in payload["topics"]] == ["bee", "leaf"]
    assert payload["topics"][1]["title"] == "fall leaf color change chlorophyll"
    leaf = [r for r in payload["reports"] if r["topic_id"] == "leaf"]
    assert [r["run_id"] for r in leaf] == ["run1", "run2", "run3", "run4"]
    first = leaf[0]
    assert first["team_id"] == "teamA"
    assert first["sentences"][0] == {
        "text": "Leaves change color in fall because of a green pigment called chlorophyll.",
        "citations": ["Chlorophyll"],
    }
    # every document the reports name is embedded once, as autojudge-annotate writes one
    held = get_documents(any_ws, project, [d for r in payload["reports"] for d in r["doc_ids"]])
    assert set(payload["documents"]) == set(held)
    chlorophyll = payload["documents"]["Chlorophyll"]
    assert list(chlorophyll) == ["id", "text", "title", "url"]
    assert chlorophyll["text"] == held["Chlorophyll"].body
    assert f"{chlorophyll['title']}\n\n{chlorophyll['text']}" == held["Chlorophyll"].text
    assert payload["units"] == 8


def test_a_sentence_without_citations_has_no_citations_key(any_ws: Workspace) -> None:
    project = _kiddie(any_ws)
    payload = page_payload(any_ws, project, mode="citations", dataset="K")
    sentences = [s for r in payload["reports"] for s in r["sentences"]]
    assert all(s.get("citations") != [] for s in sentences)
    citation_units = sum(len(topic_units(any_ws, project, t, "citation")) for t in
                         ("leaf", "cloud", "bee", "earthworms", "hibernation"))  # fmt: skip
    assert payload["units"] == citation_units == 113


def test_document_payload_lists_each_topics_documents(any_ws: Workspace) -> None:
    project = _kiddie(any_ws)
    project = update_project_settings(any_ws, project, {"judging_ratings": ["-", "yes", "no"]})
    payload = page_payload(any_ws, project, mode="documents", topic_ids=["cloud"], dataset="K")
    assert payload["ratings"] == ["-", "yes", "no"]
    assert payload["reports"] == []
    assert payload["topics"][0]["doc_ids"] == topic_doc_ids(any_ws, project, "cloud")
    assert set(payload["documents"]) == set(payload["topics"][0]["doc_ids"])
    assert payload["units"] == len(payload["topics"][0]["doc_ids"])


def test_the_page_embeds_hostile_text_inert_and_allows_only_its_own_code(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project = create_project(any_ws, "hostile")
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps({"request_id": "t<1>", "title": HOSTILE}) + "\n")
    run = tmp_path / "run.jsonl"
    report = {
        "metadata": {"team_id": "team", "run_id": "r1", "topic_id": "t<1>"},
        "responses": [{"text": HOSTILE, "citations": ["evil"]}],
        "documents": {"evil": {"id": "evil", "title": HOSTILE, "text": HOSTILE}},
    }
    run.write_text(json.dumps(report) + "\n")
    import_judging_inputs(any_ws, project, topics=topics, runs=[run])
    payload = page_payload(any_ws, project, mode="citations", dataset=HOSTILE)
    html = render_page(payload)
    # the two script elements end where they should, and nothing else opens an element
    assert len(re.findall("</script", html, re.IGNORECASE)) == 2
    assert "<img" not in html and "<!-- &" not in html and "\u2028" not in html
    assert _embedded(html) == payload
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    assert policy is not None
    script = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    assert len(script) == 1
    digest = b64encode(hashlib.sha256(script[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy.group(1)
    assert "connect-src 'none'" in policy.group(1) and "default-src 'none'" in policy.group(1)
    assert "http://" not in html.replace("http-equiv", "") and "https://" not in html


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"mode": "answers", "dataset": "K"}, InvalidInput, "unknown page mode 'answers'"),
        ({"mode": "reports", "dataset": " "}, InvalidInput, "the dataset label is empty"),
        ({"mode": "reports", "dataset": "K", "topic_ids": ["nope"]}, NotFound,
         "has no judging topic 'nope'"),
        ({"mode": "reports", "dataset": "K", "language": "fr"}, InvalidInput,
         "the offline page speaks en and de, not 'fr'"),
    ],
)  # fmt: skip
def test_bad_requests_name_what_is_wrong(
    any_ws: Workspace, options: dict[str, object], error: type[Exception], message: str
) -> None:
    project = _kiddie(any_ws)
    with pytest.raises(error, match=re.escape(message)):
        page_payload(any_ws, project, **options)  # type: ignore[arg-type]


def test_a_project_without_topics_or_reports_has_nothing_to_judge(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project = create_project(any_ws, "empty")
    with pytest.raises(InvalidInput, match="has no judging topics"):
        page_payload(any_ws, project, mode="reports", dataset="K")
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps({"request_id": "q", "title": "Q"}) + "\n")
    import_judging_inputs(any_ws, project, topics=topics)
    with pytest.raises(InvalidInput, match="nothing to judge in documents mode: topics 'q'"):
        page_payload(any_ws, project, mode="documents", dataset="K")


def test_assay_judge_html_writes_the_page(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    ws = Workspace.open(Settings(home=home), create=True)
    _kiddie(ws)
    ws.close()
    out = tmp_path / "leaf.html"
    runner = CliRunner()
    args = ["--home", str(home), "judge", "html", "--topic", "leaf", "--mode", "citations"]
    result = runner.invoke(make_app(), [*args, "--json", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary == {
        "path": str(out),
        "mode": "citations",
        "dataset": "kiddie",
        "topics": 1,
        "units": 24,
        "bytes": len(out.read_bytes()),
    }
    embedded = _embedded(out.read_text(encoding="utf-8"))
    assert isinstance(embedded, dict) and embedded["mode"] == "citation"

    folder = runner.invoke(make_app(), [*args, str(tmp_path)])
    assert folder.exit_code == 1 and "is a folder; give the HTML file to write" in folder.output


def test_the_page_downloads_from_the_json_api(any_ws: Workspace) -> None:
    project = _kiddie(any_ws)
    client = TestClient(create_app(any_ws))
    url = "/api/projects/kiddie/judging/offline-page"
    done = client.get(url, params={"mode": "documents", "topic": ["bee"], "language": "de"})
    assert done.status_code == 200, done.text
    assert done.headers["content-disposition"] == 'attachment; filename="kiddie-documents.html"'
    assert done.headers["content-type"] == "text/html; charset=utf-8"
    expected = page_payload(
        any_ws, project, mode="documents", topic_ids=["bee"], dataset="kiddie", language="de"
    )
    assert _embedded(done.text) == expected

    assert client.get(url, params={"mode": "answers"}).status_code == 422
    assert client.get(url, params={"topic": "a\x00b"}).status_code == 422
    assert client.get(url, params={"language": "fr"}).status_code == 422
    missing = client.get(url, params={"topic": "nope"})
    assert missing.status_code == 404 and "has no judging topic 'nope'" in missing.text
    blank = client.get(url, params={"dataset": " "})
    assert blank.status_code == 422 and "the dataset label is empty" in blank.text
