"""RAGAPHENE's review mode through a project: ``status_history``, ``original_text`` (an
edited agent turn keeps the original text) and comments import and export equal; the comments
land in the comments table, anchored where the file gives offsets, and comments made in Assay
are written with RAGAPHENE's provenance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.formats import get_format
from assay.gold.item_lists import list_items
from assay.people.actors import account_for
from assay.review.comments import add_comment, list_comments
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from tests.test_formats_ragaphene import rich_conversation, through_project

KEYS = ("status", "status_history", "comments")


def reviewed_conversation() -> dict[str, Any]:
    """The rich conversation after RAGAPHENE's review mode: accepted, an edited answer with
    its original text, and comments on a message, a context, an alternative, a general one
    with a reply, resolved (Assay's added keys)."""
    conversation = rich_conversation()
    conversation["status"] = "reviewed"
    conversation["status_history"].append(
        {"author": "rev", "status": "accepted", "timestamp": 1704085400}
    )
    conversation["comments"] += [
        {
            "comment": "this passage is about trains",
            "author": "rev",
            "created": 1704085310,
            "updated": 1704085320,
            "provenance": {
                "component": "messages[1].documents[1].text",
                "text": "second class",
                "offsets": [21, 33],
            },
        },
        {
            "comment": "shorter is better here",
            "author": "ann",
            "created": 1704085330,
            "updated": 1704085330,
            "provenance": {"component": "messages[3].alternatives[0].text", "text": "Pro rata."},
        },
        {
            "comment": "Turn 3 needs a second look",
            "author": "rev",
            "created": 1704085340,
            "updated": 1704085340,
            "resolved": True,
            "resolved_by": "ann",
        },
        {
            "comment": "Done: the documents really do not say.",
            "author": "ann",
            "created": 1704085350,
            "updated": 1704085350,
            "in_reply_to": 3,
        },
    ]
    return conversation


def test_review_mode_imports_and_exports_equal(any_ws: Workspace, tmp_path: Path) -> None:
    source = tmp_path / "reviewed.json"
    conversation = reviewed_conversation()
    source.write_text(json.dumps(conversation))
    written = through_project(any_ws, source, "review", tmp_path / "out.json")
    for key in KEYS:
        assert written[key] == conversation[key], key
    assert written["messages"][1]["original_text"] == "You get 25 days."
    assert written == conversation

    # the comments are Assay comments now (the alternative's stays with the conversation)
    project = get_project(any_ws, "review")
    _, [row] = list_items(any_ws, project)
    assert row.status == "accepted"
    found = list_comments(any_ws, project, row.id)
    shown = [(c.target, c.turn, c.evidence, c.quote, c.anchor, c.author) for c in found]
    assert shown == [
        ("answer", 0, None, "30", "ok", "rev"),
        ("evidence", 0, 1, "second class", "ok", "rev"),
        ("item", None, None, "", "ok", "rev"),
        ("item", None, None, "", "ok", "ann"),
    ]
    assert found[3].parent_id == found[2].id
    assert (found[2].resolved, found[2].resolved_by) == (True, "ann")

    # and a second trip gives the same file again
    again = through_project(any_ws, tmp_path / "out.json", "again", tmp_path / "again.json")
    assert again == conversation


def test_comments_made_in_assay_get_ragaphenes_provenance(
    any_ws: Workspace, tmp_path: Path
) -> None:
    source = tmp_path / "rich.json"
    source.write_text(json.dumps(rich_conversation()))
    fmt = get_format("ragaphene")
    import_bundle(any_ws, "p", fmt.read(source))
    project = get_project(any_ws, "p")
    _, [row] = list_items(any_ws, project)
    lena = account_for(any_ws, "lena")
    on_answer = add_comment(
        any_ws, project, row.id, "pro rata of what?", author=lena,
        target="answer", turn=1, start=27, end=35,
    )  # fmt: skip
    on_question = add_comment(
        any_ws, project, row.id, "ambiguous", author=lena,
        target="question", turn=2, start=6, end=11,
    )  # fmt: skip
    add_comment(
        any_ws, project, row.id, "first-year rule", author=lena,
        target="evidence", turn=1, evidence=0, start=0, end=14,
    )  # fmt: skip
    add_comment(any_ws, project, row.id, "agreed", author=lena, parent_id=on_answer.id)
    assert (on_answer.quote, on_question.quote) == ("pro rata", "carry")

    fmt.write(export_bundle(any_ws, project), tmp_path / "out.json")
    written = json.loads((tmp_path / "out.json").read_text())["comments"]
    ours = [c for c in written if c["author"] == "lena"]
    assert [c.get("provenance") for c in ours] == [
        {"component": "messages[3].text", "text": "pro rata", "offsets": [27, 35]},
        {"component": "messages[4].text", "text": "carry", "offsets": [6, 11]},
        {
            "component": "messages[3].documents[0].text",
            "text": "In the first y",
            "offsets": [0, 14],
        },
        None,
    ]
    assert ours[3]["in_reply_to"] == written.index(ours[0])
    assert written[0]["comment"] == "check the figure"  # the file's own, first as it was made

    # read back, the Assay comments are the same again
    import_bundle(any_ws, "back", fmt.read(tmp_path / "out.json"))
    back = get_project(any_ws, "back")
    _, [copy] = list_items(any_ws, back)
    before = [
        (c.body, c.target, c.turn, c.evidence, c.start, c.quote)
        for c in list_comments(any_ws, project, row.id)
    ]
    after = [
        (c.body, c.target, c.turn, c.evidence, c.start, c.quote)
        for c in list_comments(any_ws, back, copy.id)
    ]
    assert after == before
