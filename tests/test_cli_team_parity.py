"""The CLI's side of the team operations: ``assay items create|edit|submit --json``,
``assay versions -p X SUBCOMMAND``, ``assay projects settings --judging-ratings`` and
``assay users invite|invites|revoke-invite``, on a real SQLite workspace."""

from __future__ import annotations

import json
from pathlib import Path

from assay.corpus.documents import list_documents
from assay.gold.items import create_item, set_status
from assay.people.accounts import get_account
from assay.people.invites import accept_invite
from assay.records import Item, Turn
from assay.store.projects import get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.test_cli_versions import LEAVE, home, invoke

__all__ = ["home"]  # the fixture, shared with test_cli_versions


def _item_json(home: Path, answer: str) -> dict[str, object]:
    with Workspace.open(Settings(home=home)) as ws:
        doc = list_documents(ws, get_project(ws, "handbook"))[0]
    passage = {"doc_id": doc.id, "start": 0, "end": 43, "text": LEAVE[:43]}
    turn = {"query": "How many days of leave?", "answer": answer, "query_type": "fact_single"}
    return {"turns": [{**turn, "evidence": [passage]}]}


def test_items_are_created_edited_and_submitted_from_json(home: Path, tmp_path: Path) -> None:
    source = tmp_path / "item.json"
    source.write_text(json.dumps(_item_json(home, "30")))
    made = invoke(home, "items", "create", "--json", str(source))
    assert made.exit_code == 0, made.output
    item = json.loads(made.output)["item"]
    assert item["status"] == "draft" and item["version"] == 1
    assert item["turns"][0]["evidence"][0]["text"] == LEAVE[:43]

    edit = json.dumps({"version": 1, "item": _item_json(home, "30 days")})
    edited = invoke_stdin(home, edit, "items", "edit", item["id"], "--json", "-")
    assert edited.exit_code == 0, edited.output
    assert json.loads(edited.output)["item"]["turns"][0]["answer"] == "30 days"
    stale = invoke_stdin(home, edit, "items", "edit", item["id"], "--json", "-")
    assert stale.exit_code == 1 and "changed elsewhere" in stale.output  # nothing overwritten

    submitted = invoke_stdin(home, '{"version": 2}', "items", "submit", item["id"], "--json", "-")
    assert submitted.exit_code == 0, submitted.output
    assert json.loads(submitted.output)["item"]["status"] == "submitted"

    bad = invoke_stdin(home, "{nope", "items", "create", "--json", "-")
    assert bad.exit_code == 1 and "standard input: not valid JSON" in bad.output
    wrong = invoke_stdin(home, '{"turns": "x"}', "items", "create", "--json", "-")
    assert wrong.exit_code == 1 and "turns" in wrong.output
    no_item = invoke_stdin(home, '{"version": 1}', "items", "edit", item["id"], "--json", "-")
    assert no_item.exit_code == 1 and '"item"' in no_item.output
    empty = invoke_stdin(home, '{"turns": [{"query": "Why?"}]}', "items", "create", "--json", "-")
    draft = json.loads(empty.output)["item"]["id"]
    refused = invoke(home, "items", "submit", draft)  # no answer, no evidence
    assert refused.exit_code == 1


def invoke_stdin(home: Path, text: str, *args: str):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from assay.cli import make_app

    return CliRunner().invoke(make_app(), ["--home", str(home), *args], input=text)


def test_versions_take_the_project_before_the_subcommand(home: Path) -> None:
    assert invoke(home, "projects", "create", "other").exit_code == 0
    with Workspace.open(Settings(home=home)) as ws:
        project = get_project(ws, "handbook")
        item = create_item(ws, project, Item(turns=[Turn(query="Ask first?", answer="yes")]))
        set_status(ws, project, item.id, "accepted", item.version)
    assert invoke(home, "versions", "-p", "handbook", "create", "v1").exit_code == 0
    listed = invoke(home, "versions", "-p", "handbook", "list")
    assert listed.exit_code == 0 and "v1" in listed.output
    shown = invoke(home, "versions", "-p", "handbook", "show", "v1", "--json")
    assert json.loads(shown.output)["version"]["name"] == "v1"
    other = invoke(home, "versions", "-p", "other", "list")
    assert "No versions yet" in other.output
    inner = invoke(home, "versions", "-p", "other", "list", "-p", "handbook")
    assert "v1" in inner.output  # the sub-command's own option wins
    neither = invoke(home, "versions", "list")
    assert neither.exit_code == 1 and "several projects" in neither.output


def test_the_rating_scale_from_the_cli(home: Path) -> None:
    changed = invoke(
        home, "projects", "settings", "-p", "handbook", "--judging-ratings", "Unrated,Good,Bad"
    )
    assert changed.exit_code == 0, changed.output
    assert "judging ratings: Unrated, Good, Bad" in changed.output
    shown = json.loads(invoke(home, "projects", "settings", "-p", "handbook", "--json").output)
    assert shown["judging_ratings"] == ["Unrated", "Good", "Bad"]
    one = invoke(home, "projects", "settings", "-p", "handbook", "--judging-ratings", "Only")
    assert one.exit_code == 1 and "at least two" in one.output
    reset = invoke(home, "projects", "settings", "-p", "handbook", "--reset", "judging_ratings")
    assert "Not rated, Perfect, Mostly Good, So-so, Bad" in reset.output


def test_invites_from_the_cli(home: Path) -> None:
    made = invoke(
        home, "users", "invite", "nia", "-p", "handbook", "--role", "annotator",
        "--base-url", "https://assay.example.org/", "--json",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    link = json.loads(made.output)["link"]
    assert link.startswith("https://assay.example.org/invite/")
    listed = json.loads(invoke(home, "users", "invites", "--json").output)
    assert [(i["username"], i["state"], i["role"]) for i in listed] == [
        ("nia", "open", "annotator")
    ]
    with Workspace.open(Settings(home=home)) as ws:
        accept_invite(ws, link.rsplit("/", 1)[1], "a long new password")
        assert get_account(ws, "nia").can_sign_in
    revoke = invoke(home, "users", "revoke-invite", str(listed[0]["id"]))
    assert revoke.exit_code == 1 and "used already" in revoke.output
    second = invoke(home, "users", "invite", "sam")
    assert second.exit_code == 0 and "/invite/" in second.output
    sam = json.loads(invoke(home, "users", "invites", "--json").output)[0]
    assert invoke(home, "users", "revoke-invite", str(sam["id"])).exit_code == 0
    assert [
        i["username"] for i in json.loads(invoke(home, "users", "invites", "--json").output)
    ] == ["nia"]
    role_without_project = invoke(home, "users", "invite", "kim", "--role", "lead")
    assert role_without_project.exit_code == 1 and "together" in role_without_project.output
