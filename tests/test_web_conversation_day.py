"""The conversation workbench's day-to-day API: the conversation's own generator (what it may
choose, refused by name otherwise), one conversation exported as RAGAPHENE JSON, and
conversations kept apart from single-turn items in lists, counts and the editor's address."""

from __future__ import annotations

import json

import pytest

from assay.errors import InvalidInput
from assay.gold.item_lists import list_items
from assay.gold.items import create_item, get_item
from assay.gold.project_config import conversation_generator, update_settings
from assay.records import Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.test_web_conversations import API, events, make_client, start


def test_a_conversation_chooses_within_the_project_generator(ws: Workspace) -> None:
    project = create_project(ws, "gen", "en")
    assert conversation_generator(project, {}).kind == "offline"
    assert conversation_generator(project, {"generator": {"kind": "offline"}}).kind == "offline"
    with pytest.raises(InvalidInput, match="kind 'openai' is not set up for this project"):
        conversation_generator(project, {"generator": {"kind": "openai"}})
    url = "http://127.0.0.1:9/v1"
    project = update_settings(
        ws, project, {"generator": {"kind": "openai", "base_url": url, "model": "m"}}
    )
    chosen = conversation_generator(
        project, {"generator": {"model": "m2", "temperature": 0.7, "max_tokens": 64}}
    )
    assert (chosen.kind, chosen.base_url, chosen.model) == ("openai", url, "m2")
    assert (chosen.temperature, chosen.max_tokens) == (0.7, 64)
    offline = conversation_generator(project, {"generator": {"kind": "offline"}})
    assert offline.kind == "offline"
    with pytest.raises(InvalidInput, match="base_url cannot be chosen per conversation"):
        conversation_generator(project, {"generator": {"base_url": "http://elsewhere/v1"}})
    with pytest.raises(InvalidInput, match="for kind 'openai' only"):
        conversation_generator(project, {"generator": {"kind": "offline", "model": "x"}})
    with pytest.raises(InvalidInput, match="temperature"):
        conversation_generator(project, {"generator": {"temperature": 9}})
    with pytest.raises(InvalidInput, match="kind 'local' is not set up"):
        conversation_generator(project, {"generator": {"kind": "local"}})


def test_the_api_refuses_a_generator_choice_and_stores_nothing(
    ws: Workspace, project: Project
) -> None:
    client = make_client(ws, project)
    sent = client.post(API, json={"query": "When?", "generator": {"base_url": "http://x/v1"}})
    assert sent.status_code == 422
    assert "base_url cannot be chosen per conversation" in sent.json()["detail"]
    assert list_items(ws, project, kind="conversation", limit=0)[0] == 0

    saved = start(client)
    item_id, version = saved["item"]["id"], saved["item"]["version"]
    body = saved["input"]
    body["extra"]["generator"] = {"kind": "openai"}
    refused = client.put(f"{API}/{item_id}", json={"version": version, "item": body})
    assert refused.status_code == 422
    assert "kind 'openai' is not set up" in refused.json()["detail"]
    body["extra"]["generator"] = {"kind": "offline", "temperature": 0.5}
    assert client.put(f"{API}/{item_id}", json={"version": version, "item": body}).is_success
    assert get_item(ws, project, item_id).extra["generator"] == {
        "kind": "offline",
        "temperature": 0.5,
    }
    again = events(
        client.post(
            f"{API}/{item_id}/turns",
            json={"query": "And in winter?", "version": version + 1, "generator": {}},
        )
    )
    assert again[-1]["type"] == "done"
    assert get_item(ws, project, item_id).extra["generator"] == {}


def test_one_conversation_exports_as_ragaphene_json(any_ws: Workspace) -> None:
    project = create_project(any_ws, "test", "en")
    client = make_client(any_ws, project)
    first = start(client)
    other = start(client, "Do bikes ride free?")
    item_id = first["item"]["id"]
    response = client.get(f"{API}/{item_id}/ragaphene")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    disposition = response.headers["content-disposition"]
    assert disposition == f'attachment; filename="test-conversation-{item_id[:8]}.ragaphene.json"'
    data = json.loads(response.content)
    assert isinstance(data, dict) and data["schema_version"] == 2
    assert data["messages"][0]["text"] == "When does the night ferry leave?"
    assert other["item"]["id"] != item_id
    assert "Do bikes ride free?" not in response.text  # this conversation only

    qa = create_item(any_ws, project, Item(turns=[Turn(query="Single?")]))
    assert client.get(f"{API}/{qa.id}/ragaphene").status_code == 404
    assert client.get(f"{API}/nope/ragaphene").status_code == 404


def test_conversations_stay_apart_from_single_turn_items(ws: Workspace, project: Project) -> None:
    client = make_client(ws, project)
    conv = start(client)["item"]["id"]
    create_item(ws, project, Item(turns=[Turn(query="How much is a ticket?")]))
    overview = client.get("/api/projects/test").json()
    assert (overview["items"], overview["single_turn"], overview["conversations"]) == (2, 1, 1)

    moved = client.get(f"/projects/test/items/{conv}?task=3", follow_redirects=False)
    assert moved.status_code == 303
    assert moved.headers["location"] == f"/projects/test/conversations/{conv}?task=3"
    page = client.get("/projects/test/items").text
    assert f'href="/projects/test/conversations/{conv}"' in page
    assert "Conversation · 1 turn(s)" in page
    only = client.get("/projects/test/items?kind=conversation").text
    assert "How much is a ticket?" not in only


def test_the_vocabulary_names_its_single_choice_enrichments(
    ws: Workspace, project: Project
) -> None:
    client = make_client(ws, project)
    url = "/api/projects/test/conversation-settings"
    assert client.get(url).json()["enrichments_single"] == ["answerability"]
    changed = client.put(
        url,
        json={"enrichments": {"Tone": ["formal", "casual"]}, "enrichments_single": ["Tone"]},
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["enrichments_single"] == ["Tone"]
    refused = client.put(url, json={"enrichments_single": "Tone"})
    assert refused.status_code == 422


def test_a_choice_the_project_no_longer_allows_never_blocks_a_save(
    ws: Workspace, project: Project
) -> None:
    client = make_client(ws, project)
    saved = start(client, "When does the night ferry leave?")
    url = "http://127.0.0.1:9/v1"
    update_settings(ws, project, {"generator": {"kind": "openai", "base_url": url, "model": "m"}})
    item_id, version = saved["item"]["id"], saved["item"]["version"]
    body = saved["input"]
    body["extra"]["generator"] = {"kind": "openai", "model": "m2"}
    first = client.put(f"{API}/{item_id}", json={"version": version, "item": body})
    assert first.status_code == 200, first.text
    update_settings(ws, project, {"generator": None})  # back to the offline generator
    body["turns"][0]["answer"] = "Mine: at 22:40."
    later = client.put(f"{API}/{item_id}", json={"version": version + 1, "item": body})
    assert later.status_code == 200, later.text
    regenerated = events(
        client.post(
            f"{API}/{item_id}/turns/1/generate",
            json={"version": version + 2, "source": "retrieved"},
        )
    )
    assert regenerated[-1]["type"] == "error"
    assert "kind 'openai' is not set up" in regenerated[-1]["detail"]
    assert get_item(ws, project, item_id).turns[0].answer == "Mine: at 22:40."
