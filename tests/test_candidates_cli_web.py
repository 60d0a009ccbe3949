"""The two front ends of candidates: `assay candidates ...` and the JSON API with its page."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app

LOG = [
    {"q": "How do I reset my password?", "a": "Use the link.", "vote": "down"},
    {"q": "how do I reset my password", "a": "Use the link."},
    {"q": "Where do I find my invoices? mail ops@shop.example", "a": "Under Account."},
    {"q": "Which countries do you ship to?"},
]


def lines(rows: list[dict[str, str]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_the_cli_imports_samples_assigns_and_shows_coverage(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    runner = CliRunner()

    def cli(*args: str) -> str:
        result = runner.invoke(make_app(), ["--home", str(home), *args])
        assert result.exit_code == 0, result.output
        return result.stdout

    cli("init", "--project", "shop")
    log = tmp_path / "log.jsonl"
    log.write_text(lines(LOG) + '{"q": 5}\n')
    broken = runner.invoke(
        make_app(), ["--home", str(home), "candidates", "import", str(log), "--map", "question=q"]
    )
    assert broken.exit_code == 1
    assert "log.jsonl: line 5, field 'question': expected text, found a number" in broken.output
    out = cli("candidates", "import", str(log), "--map", "question=q,answer=a,feedback=vote",
              "--skip-bad")  # fmt: skip
    assert "Imported 4 question(s) from 5 line(s) (1 skipped): 3 group(s)" in out
    assert "Masked: email 1." in out
    groups = json.loads(cli("candidates", "groups", "--json"))
    assert groups["groups"][0]["asked"] == 2 and groups["groups"][0]["negative"] == 1
    assert "[EMAIL]" in cli("candidates", "list")
    sample = json.loads(cli("candidates", "sample", "-n", "2", "--difficulty", "0", "--json"))
    assert len(sample["picks"]) == 2 and all(p["reasons"] for p in sample["picks"])
    out = cli("candidates", "assign", "-n", "2", "--difficulty", "0")
    assert "Made 2 item(s) and assigned them: the pool 2." in out
    cover = json.loads(cli("candidates", "coverage", "--json"))
    assert cover["totals"]["clusters"] >= 1
    assert "Gaps, most asked first" in cli("candidates", "coverage")
    help_text = cli("candidates", "import", "--help")
    assert "--map" in help_text and "--skip-bad" in help_text


def test_the_api_takes_the_sample_shown_and_refuses_a_changed_one(ws: Workspace) -> None:
    create_project(ws, "shop")
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    api = "/api/projects/shop"
    sent = client.post(
        f"{api}/candidates/imports",
        files={"file": ("log.jsonl", lines(LOG).encode())},
        data={"map": "question=q,answer=a,feedback=vote", "mask": "ORDER=#\\d+"},
    )
    assert sent.status_code == 201, sent.text
    assert sent.json()["grouping"]["groups"] == 3
    bad = client.post(f"{api}/candidates/imports", files={"file": ("x.jsonl", b"[1]\n")})
    assert bad.status_code == 422 and "line 1: not a JSON object" in bad.json()["detail"]
    assert [i["name"] for i in client.get(f"{api}/candidates/imports").json()["imports"]] == [
        "log.jsonl"
    ]
    shown = client.get(f"{api}/candidates/sample", params={"n": 2, "difficulty": 0}).json()
    ids = [p["group_id"] for p in shown["picks"]]
    stale = client.post(f"{api}/candidates/assignments", json={"n": 2, "groups": ids[::-1],
                                                               "difficulty": 0})  # fmt: skip
    assert stale.status_code == 409
    taken = client.post(
        f"{api}/candidates/assignments", json={"n": 2, "groups": ids, "difficulty": 0}
    )
    assert taken.status_code == 201, taken.text
    assert taken.json()["tasks"] == {"": 2} and len(taken.json()["item_ids"]) == 2
    assert client.get(f"{api}/candidates/groups", params={"open": True}).json()["total"] == 1
    assert "gaps" in client.get(f"{api}/coverage").json()
    page = client.get("/projects/shop/candidates")
    assert page.status_code == 200 and "Production questions" in page.text
    client.cookies.set("assay_lang", "de")
    assert "Fragen aus dem Betrieb" in client.get("/projects/shop/candidates").text
