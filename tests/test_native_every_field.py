"""The native format carries every field of an item, its turns and evidence.

The first test fills every field, exports the project to native, imports it into a new project
and compares the stored records field by field. The second reads the field lists of the
records themselves (one family, used by the store and by every format), so a field added to
``Item``, ``Turn``, ``Evidence``, ``StatusChange`` or ``Comment`` that the native format does not
write fails here.
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from assay.corpus.documents import list_documents
from assay.corpus.ingest import ingest_bytes
from assay.formats import Bundle, DocumentRecord, ProjectInfo, get_format
from assay.gold.items import create_item, get_item, save_item, set_status
from assay.people.actors import account_for
from assay.records import Comment, Evidence, Item, StatusChange, Turn
from assay.review.comments import add_comment, list_comments, resolve_comment
from assay.store.projects import create_project, delete_project, get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle

POLICY = "Hotels are refunded up to 140 euros per night. Taxis only at night."
LEAVE = "Staff get 30 days of paid leave. Carry-over ends in March."

NOT_IN_NATIVE = {
    "chunk_ids": "the chunks holding a passage follow from its offsets and chunks.jsonl",
}
"""Stored fields that the native file expresses by its structure instead of a key."""

RENAMED = {"doc_id": "doc", "item_id": "item", "parent_id": "parent"}
"""Evidence names its document by the document's unique name in the file; a comment its item
and the comment it replies to."""

COMMENT_NOT_IN_NATIVE = {"anchor": "worked out against the item's text when comments are read"}


def _full_item(ws: Workspace) -> Item:
    project = create_project(ws, "every-field", language="de", settings={"k": 1})
    policy = ingest_bytes(ws, project, "policy.txt", POLICY.encode())
    leave = ingest_bytes(ws, project, "leave.md", LEAVE.encode())
    data = Item(
        kind="conversation",
        notes="checked twice",
        origin="synthetic",
        extra={"source": "handbook", "weights": [1, 2.5], "nested": {"a": None}},
        turns=[
            Turn(
                query="How much is a hotel night?",
                rewrite="Hotel refund per night?",
                query_type="fact_multi",
                enrichments={"answerability": ["answerable"], "domain": ["travel", "cost"]},
                answer="Up to 140 euros.",
                alternatives=["140 euros", "EUR 140"],
                original_answer="About 140.",
                generation={"model": "m", "temperature": 0.2, "prompt_hash": "abc"},
                retrieved=[
                    {"doc_id": policy.id, "start": 0, "end": 47, "score": 1.5, "rank": 1},
                ],
                evidence=[
                    Evidence(
                        doc_id=policy.id,
                        text="Hotels are refunded up to 140 euros per night.",
                        group=1,
                        grade=3,
                        origin="selected",
                        author="rita",
                        created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                    ),
                    Evidence(
                        doc_id=leave.id,
                        text="Carry-over ends in March.",
                        label="distracting",
                        group=2,
                        grade=0,
                        origin="llm-suggestion",
                        author="tom",
                        created_at=datetime(2026, 1, 3, tzinfo=UTC),
                    ),
                ],
            ),
            Turn(query="And leave?", answer="30 days.", query_type="fact_single"),
        ],
    )
    item = create_item(ws, project, data, author=account_for(ws, "rita"))
    item = save_item(ws, project, item.id, data, item.version, author=account_for(ws, "tom"))
    item = set_status(ws, project, item.id, "submitted", item.version, actor=account_for(ws, "tom"))
    first = add_comment(
        ws, project, item.id, "Gross or net?", author=account_for(ws, "lena"),
        target="evidence", turn=0, evidence=0, start=10, end=18,
    )  # fmt: skip
    add_comment(ws, project, item.id, "Gross.", author=account_for(ws, "rita"), parent_id=first.id)
    add_comment(ws, project, item.id, "Second turn is thin.", author=account_for(ws, "tom"))
    resolve_comment(ws, project, item.id, first.id, True, actor=account_for(ws, "tom"))
    return set_status(ws, project, item.id, "accepted", item.version, actor=account_for(ws, "lena"))


def _comparable(value: object, names: dict[str, str]) -> object:
    """A record as plain values, with document ids replaced by document names."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            if f.name in NOT_IN_NATIVE:
                continue
            field_value = getattr(value, f.name)
            if f.name == "doc_id":
                field_value = names.get(field_value, field_value)
            out[f.name] = _comparable(field_value, names)
        return out
    if isinstance(value, list | tuple):
        return [_comparable(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _comparable(v, names) for k, v in value.items()}
    return value


def test_every_field_survives_a_native_round_trip(any_ws: Workspace, tmp_path: Path) -> None:
    before = _full_item(any_ws)
    source = get_project(any_ws, "every-field")
    native = get_format("native")
    native.write(export_bundle(any_ws, source, statuses=["accepted"]), tmp_path / "p.zip")
    names_before = {d.id: d.name for d in list_documents(any_ws, source)}
    comments_before = list_comments(any_ws, source, before.id)
    delete_project(any_ws, source)  # item ids are unique in a workspace: free them
    report = import_bundle(any_ws, "copy", native.read(tmp_path / "p.zip"))
    assert [o.status for o in report.outcomes if o.kind == "item"] == ["imported"]

    copy = get_project(any_ws, "copy")
    after = get_item(any_ws, copy, before.id)
    names_after = {d.id: d.name for d in list_documents(any_ws, copy)}
    assert _comparable(after, names_after) == _comparable(before, names_before)
    # the comments come back with their threads, anchors, authors, resolution and times
    comments_after = list_comments(any_ws, copy, before.id)
    root = {c.id: n for n, c in enumerate(comments_before)}
    root_after = {c.id: n for n, c in enumerate(comments_after)}

    def plain(found: list[Comment], numbers: dict[int, int]) -> list[object]:
        return [
            _comparable(dataclasses.replace(c, id=0, parent_id=numbers.get(c.parent_id or 0)), {})
            for c in found
        ]

    assert plain(comments_after, root_after) == plain(comments_before, root)
    assert [c.body for c in comments_after] == ["Gross or net?", "Gross.", "Second turn is thin."]
    first = comments_before[0]  # every field set (a thread's first comment has no parent)
    assert first.resolved is True
    assert all(
        getattr(first, f.name) is not None and getattr(first, f.name) != ""
        for f in dataclasses.fields(Comment)
        if f.name != "parent_id"
    )
    # Every field was really set, so equality above compares something in each of them.
    assert before.version == 4 and before.status == "accepted"
    assert all(getattr(before.turns[0], f.name) for f in dataclasses.fields(Turn))
    assert all(
        getattr(before.turns[0].evidence[0], f.name) not in (None, "")
        for f in dataclasses.fields(Evidence)
        if f.name not in NOT_IN_NATIVE
    )
    assert before.status_history == [] and after.status_history == []  # read by exports only
    # The status history (who accepted it, when) comes back too.
    history = export_bundle(any_ws, copy, statuses=["accepted"]).items
    changes = [(c.status, c.actor) for c in next(iter(history)).status_history]
    assert changes == [("submitted", "tom"), ("accepted", "lena")]


def _native_keys(tmp_path: Path) -> tuple[set[str], set[str], set[str], set[str], set[str]]:
    """The keys the native writer gives an item, a turn, an evidence, a status change and a
    comment."""
    bundle = Bundle(
        project=ProjectInfo(name="p"),
        documents=[DocumentRecord(ref="d", name="d.txt", data=b"abc", text="abc")],
        items=[
            Item(
                id="00000000-0000-4000-8000-000000000001",
                turns=[Turn(query="q", evidence=[Evidence(doc_id="d", text="a")])],
                status_history=[StatusChange("accepted", "lena")],
            )
        ],
        comments=[Comment(id=1, item_id="00000000-0000-4000-8000-000000000001", body="b")],
    )
    get_format("native").write(bundle, tmp_path / "k.zip")
    with zipfile.ZipFile(tmp_path / "k.zip") as zf:
        item = json.loads(zf.read("items.jsonl").decode().splitlines()[0])
        comment = json.loads(zf.read("comments.jsonl").decode().splitlines()[0])
    turn = item["turns"][0]
    keys = set(item), set(turn), set(turn["evidence"][0]), set(item["status_history"][0])
    return (*keys, set(comment))


def _missing(record: type, keys: set[str], handled_elsewhere: set[str]) -> set[str]:
    names = {f.name for f in dataclasses.fields(record)}
    return {n for n in names - handled_elsewhere if RENAMED.get(n, n) not in keys}


def test_native_writes_every_field_of_the_records(tmp_path: Path) -> None:
    item_keys, turn_keys, evidence_keys, change_keys, comment_keys = _native_keys(tmp_path)
    structural = set(NOT_IN_NATIVE)
    assert _missing(Item, item_keys, structural) == set()
    assert _missing(Turn, turn_keys, structural) == set()
    assert _missing(Evidence, evidence_keys, structural) == set()
    assert _missing(StatusChange, change_keys, structural) == set()
    assert _missing(Comment, comment_keys, set(COMMENT_NOT_IN_NATIVE)) == set()


def test_the_field_check_notices_a_missing_field(tmp_path: Path) -> None:
    grown = dataclasses.make_dataclass(
        "Grown", [(f.name, f.type) for f in dataclasses.fields(Item)] + [("reviewer", str)]
    )
    item_keys, _, _, _, _ = _native_keys(tmp_path)
    assert _missing(grown, item_keys, set(NOT_IN_NATIVE)) == {"reviewer"}
