"""Every action carries its actor: writes record account ids, names become accounts once,
ownership follows the id. On SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace

import sqlalchemy as sa
from fastapi.testclient import TestClient

from assay.formats import Bundle, get_format
from assay.gold.item_lists import list_items
from assay.gold.items import create_item, get_item, item_events
from assay.people.accounts import USERNAME, account_by_id, create_account, list_accounts
from assay.people.actors import account_for, account_ids, acting_account
from assay.people.ownership import owns_item
from assay.records import Evidence, Item, StatusChange, Turn
from assay.store.projects import create_project, get_project
from assay.store.schema import accounts, events, evidence, items
from assay.store.workspace import Workspace
from assay.transfer.exporting import export_bundle
from assay.transfer.importing import import_bundle
from assay.web import create_app
from tests import test_web_signin
from tests.test_web_signin import PASSWORD, browser, sign_in

team = test_web_signin.team  # the fixture: team mode, root (admin), project p, bob annotates

LONG = "Prof. " + "Ü" * 80 + " von Lüdenscheidt"


def _author_ids(ws: Workspace) -> dict[str, int]:
    with ws.engine.connect() as conn:
        return dict(conn.execute(sa.select(items.c.id, items.c.author_id)).all())


def test_names_become_accounts_once(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD, display_name="Alice A.")
    with any_ws.engine.begin() as conn:
        first = account_ids(conn, ["alice", "Alice A.", "Zoë", LONG, "", "  "])
    with any_ws.engine.begin() as conn:
        again = account_ids(conn, ["Zoë", LONG, "ZOË"])
    assert first["alice"] == first["Alice A."] == alice.id  # user name, then display name
    assert set(first) == {"alice", "Alice A.", "Zoë", LONG}  # empty names: the acting account
    assert again["Zoë"] == first["Zoë"] and again[LONG] == first[LONG]  # no second account
    zoe, long_one, clash = (account_by_id(any_ws, again[n]) for n in ("Zoë", LONG, "ZOË"))
    assert (zoe.username, zoe.display_name, zoe.origin) == ("zoe", "Zoë", "imported")
    assert clash.username == "zoe-2" and clash.display_name == "ZOË"
    assert long_one.display_name == LONG and USERNAME.match(long_one.username)
    assert not any(a.can_sign_in for a in (zoe, long_one, clash))


def test_the_cli_acts_as_the_local_owner_or_as_assay_author(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p", "en")
    local = acting_account(any_ws)
    assert account_by_id(any_ws, local).origin == "local"
    mine = create_item(any_ws, project, Item(turns=[Turn(query="q")]))
    named_ws = replace(any_ws, settings=any_ws.settings.model_copy(update={"author": "Rita R."}))
    theirs = create_item(named_ws, project, Item(turns=[Turn(query="q")]))
    assert _author_ids(any_ws)[mine.id] == local
    assert theirs.author == "Rita R."
    rita = account_by_id(any_ws, _author_ids(any_ws)[theirs.id])
    assert (rita.display_name, rita.origin) == ("Rita R.", "imported")
    assert item_events(any_ws, project, theirs.id)[0]["actor"] == "Rita R."


def test_web_writes_in_team_mode_record_the_signed_in_account(team: Workspace) -> None:
    bob = next(a for a in list_accounts(team) if a.username == "bob")
    client = browser(team)
    sign_in(client, "bob")
    client.cookies.set("assay_author", "Somebody Else")  # the name box counts only in personal mode
    made = client.post("/api/projects/p/items", json={"turns": [{"query": "Mine?"}]})
    assert made.status_code == 201, made.text
    item = made.json()["item"]
    assert item["author"] == "bob"
    assert _author_ids(team)[item["id"]] == bob.id
    with team.engine.connect() as conn:
        actors = conn.execute(sa.select(events.c.actor_id)).scalars().all()
    assert actors == [bob.id]
    assert "Somebody Else" not in {a.display_name for a in list_accounts(team)}


def test_personal_mode_records_the_local_owner_or_the_name_given(any_ws: Workspace) -> None:
    create_project(any_ws, "p", "en")
    client = TestClient(create_app(any_ws))
    client.get("/api/session")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    plain = client.post("/api/projects/p/items", json={"turns": [{"query": "a"}]}).json()
    client.cookies.set("assay_author", "Ada%20L.")
    named = client.post("/api/projects/p/items", json={"turns": [{"query": "b"}]}).json()
    ids = _author_ids(any_ws)
    assert ids[plain["item"]["id"]] == acting_account(any_ws)
    assert plain["item"]["author"] == "Local user"
    ada = account_by_id(any_ws, ids[named["item"]["id"]])
    assert (ada.display_name, ada.origin, named["item"]["author"]) == (
        "Ada L.",
        "imported",
        "Ada L.",
    )


def test_ownership_follows_the_account_not_its_name(team: Workspace) -> None:
    bob = next(a for a in list_accounts(team) if a.username == "bob")
    project = get_project(team, "p")
    item = create_item(team, project, Item(turns=[Turn(query="q")]), author=bob.id)
    impostor = create_account(team, "carol", PASSWORD, display_name="bob")
    with team.engine.begin() as conn:
        conn.execute(accounts.update().where(accounts.c.id == bob.id).values(display_name="Rob"))
    assert owns_item(team, project.id, item.id, bob.id)
    assert not owns_item(team, project.id, item.id, impostor.id)
    assert get_item(team, project, item.id).author == "Rob"
    client = browser(team)
    sign_in(client, "bob")
    assert client.get(f"/api/projects/p/items/{item.id}").status_code == 200
    assert list_items(team, project, author="Rob")[0] == 1  # lists filter by the shown name
    assert list_items(team, project, author="bob")[0] == 1  # and by the user name


def test_native_import_keeps_file_authors_without_duplicates(any_ws: Workspace, tmp_path) -> None:  # type: ignore[no-untyped-def]
    turn = Turn(query="q", evidence=[Evidence(text="unlocated", author="Vera V.")])
    record = Item(
        author="Nadia N.",
        turns=[turn],
        status="accepted",
        status_history=[StatusChange("accepted", "Rev Iewer")],
    )
    import_bundle(any_ws, "p", Bundle(items=[record]), lenient=True)
    counted = len(list_accounts(any_ws))
    project = get_project(any_ws, "p")
    (stored,) = list_items(any_ws, project)[1]
    assert stored.author == "Nadia N."
    full = get_item(any_ws, project, stored.id)
    assert full.turns[0].evidence[0].author == "Vera V."
    made = {a.display_name: a for a in list_accounts(any_ws) if a.origin == "imported"}
    assert set(made) == {"Nadia N.", "Vera V.", "Rev Iewer"}
    # out as a native file and in again: the same accounts, none made twice
    out = tmp_path / "p.zip"
    get_format("native").write(export_bundle(any_ws, project), out)
    import_bundle(any_ws, "copy", get_format("native").read(out))
    assert len(list_accounts(any_ws)) == counted
    copy = get_project(any_ws, "copy")
    again = get_item(any_ws, copy, list_items(any_ws, copy)[1][0].id, conn=None)
    assert again.author == "Nadia N." and again.turns[0].evidence[0].author == "Vera V."
    with any_ws.engine.connect() as conn:
        authors = set(conn.execute(sa.select(evidence.c.author_id)).scalars())
        imports = conn.execute(
            sa.select(events.c.project_id, events.c.actor_id).where(events.c.action == "import")
        ).all()
    assert authors == {made["Vera V."].id}
    local = acting_account(any_ws)
    assert sorted(imports) == sorted([(project.id, local), (copy.id, local)])
    # streamed (as assay import reads it): the names come with the items, found, not made
    import_bundle(any_ws, "streamed", get_format("native").stream(out))
    assert len(list_accounts(any_ws)) == counted
    streamed = get_project(any_ws, "streamed")
    found = get_item(any_ws, streamed, list_items(any_ws, streamed)[1][0].id)
    assert found.author == "Nadia N." and found.turns[0].evidence[0].author == "Vera V."
    table = tmp_path / "new.csv"  # a name met only while streaming becomes an account
    table.write_text("id,query,author\na,q,Zoe Z.\n", encoding="utf-8")
    import_bundle(any_ws, "streamed", get_format("csv").stream(table))
    assert "Zoe Z." in {a.display_name for a in list_accounts(any_ws) if a.origin == "imported"}


def test_the_demo_author_is_an_account(any_ws: Workspace) -> None:
    demo = account_for(any_ws, "assay-demo")
    assert account_by_id(any_ws, demo).origin == "imported"
    assert account_for(any_ws, "assay-demo") == demo
