"""Frozen dataset versions: create, hash, diff, export from the snapshot, experiments on a
version (assay.review.versions, version_diff, version_export)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import sqlalchemy as sa

from assay.corpus.ingest import ingest_bytes, replace_document
from assay.errors import Conflict, InvalidInput, NotFound
from assay.experiments import create_experiment
from assay.formats import get_format
from assay.gold.items import create_item, editable_copy, save_item, set_status
from assay.people.accounts import create_account
from assay.records import Document, Evidence, Item, Project, Turn
from assay.review.copies import copy_item
from assay.review.version_diff import diff_versions
from assay.review.version_export import export_bundle_of
from assay.review.versions import create_version, get_version, list_versions, read_snapshot
from assay.store.projects import create_project, get_project
from assay.store.schema import experiments, items
from assay.store.workspace import Workspace

TRAIN = "The night train leaves at 22:40. Bikes travel free on weekdays."
LEAVE = "Staff get 30 days of leave. Unused days expire in March."


def _gold(ws: Workspace, project: Project, doc_id: str, query: str, end: int) -> Item:
    passage = Evidence(doc_id=doc_id, start=0, end=end, text=TRAIN[:end])
    item = create_item(
        ws, project, Item(turns=[Turn(query=query, answer="yes", evidence=[passage])])
    )
    return set_status(ws, project, item.id, "accepted", item.version)


def _setup(ws: Workspace) -> tuple[Project, Document, list[Item]]:
    project = create_project(ws, "p")
    train = ingest_bytes(ws, project, "train.txt", TRAIN.encode())
    ingest_bytes(ws, project, "leave.txt", LEAVE.encode())
    accepted = [_gold(ws, project, train.id, q, 32) for q in ("When?", "Which train?")]
    create_item(ws, project, Item(turns=[Turn(query="a draft")]))
    return project, train, accepted


def test_a_version_freezes_the_accepted_gold_with_a_content_hash(any_ws: Workspace) -> None:
    project, _, accepted = _setup(any_ws)
    annotator = create_account(any_ws, "ada", "a long password 1").id
    copy = copy_item(any_ws, project, accepted[0].id, annotator)
    set_status(any_ws, project, copy, "accepted", 1)  # a copy is never gold

    v1 = create_version(any_ws, project, "v1")
    same = create_version(any_ws, project, "v1-again")

    assert (v1.item_count, v1.evidence_count, v1.chunking) == (2, 2, "default")
    assert v1.hash == same.hash and len(v1.hash) == 64  # same content, other time and name
    assert [v.name for v in list_versions(any_ws, project)] == ["v1-again", "v1"]
    snapshot = read_snapshot(any_ws, v1)
    assert sorted(i.id for i in snapshot.items) == sorted(i.id for i in accepted)
    assert {d.name for d in snapshot.bundle.documents} == {"train.txt", "leave.txt"}
    assert v1.summary["documents"] == 2 and v1.summary["statuses"] == ["accepted"]
    with_drafts = create_version(any_ws, project, "v1-drafts", statuses=["accepted", "draft"])
    assert with_drafts.item_count == 3 and with_drafts.hash != v1.hash


def test_bad_versions_get_clear_errors(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    create_item(any_ws, project, Item(turns=[Turn(query="a draft")]))
    with pytest.raises(InvalidInput, match=r"nothing to freeze: .* \(it holds 1 draft\)"):
        create_version(any_ws, project, "v1")
    with pytest.raises(InvalidInput, match="unknown item status 'done'"):
        create_version(any_ws, project, "v1", statuses=["done"])
    item = create_item(any_ws, project, Item(turns=[Turn(query="q", answer="a")]))
    set_status(any_ws, project, item.id, "accepted", 1)
    create_version(any_ws, project, "v1")
    with pytest.raises(Conflict, match="already has a dataset version named 'v1'"):
        create_version(any_ws, project, "v1")
    with pytest.raises(NotFound, match=r"no dataset version 'v9' \(versions: v1\)"):
        diff_versions(any_ws, project, "v1", "v9")
    with pytest.raises(NotFound, match="no dataset version 'v8' "):
        diff_versions(any_ws, project, "v8", "v1")
    with pytest.raises(NotFound, match="no dataset versions 'v8' and 'v9'"):
        diff_versions(any_ws, project, "v8", "v9")


def test_diff_names_added_removed_and_changed_items(any_ws: Workspace) -> None:
    project, doc, accepted = _setup(any_ws)
    train = doc.id
    create_version(any_ws, project, "v1")
    edited = editable_copy(accepted[0])
    edited.turns[0].answer = "at 22:40"
    edited.turns[0].evidence[0].label = "distracting"
    edited.turns[0].evidence.append(Evidence(doc_id=train, start=33, end=63, text=TRAIN[33:63]))
    save_item(any_ws, project, accepted[0].id, edited, accepted[0].version)
    set_status(any_ws, project, accepted[1].id, "rejected", accepted[1].version)
    added = _gold(any_ws, project, train, "Bikes?", 20)
    create_version(any_ws, project, "v2")

    diff = diff_versions(any_ws, project, "v1", "v2")

    assert [d.id for d in diff.added] == [added.id]
    assert [d.id for d in diff.removed] == [accepted[1].id]
    assert [d.id for d in diff.changed] == [accepted[0].id]
    fields = {(c.field, c.change) for c in diff.changed[0].changes}
    assert fields == {("answer", "changed"), ("evidence", "relabelled"), ("evidence", "added")}
    assert diff.evidence == {"added": 2, "removed": 1, "relabelled": 1}
    assert diff.documents == {"added": [], "removed": [], "changed": []}
    assert not diff.same and diff_versions(any_ws, project, "v2", "v2").same


def test_export_writes_the_snapshot_not_the_live_items(any_ws: Workspace, tmp_path: Path) -> None:
    project, doc, accepted = _setup(any_ws)
    train = doc.id
    v1 = create_version(any_ws, project, "v1")
    edited = editable_copy(accepted[0])
    edited.turns[0].query = "changed after freezing"
    save_item(any_ws, project, accepted[0].id, edited, accepted[0].version)
    replace_document(any_ws, project, doc, "train.txt", b"Another text entirely.")

    bundle = export_bundle_of(any_ws, project, read_snapshot(any_ws, v1))
    get_format("native").write(bundle, tmp_path / "v1.zip")
    get_format("beir").write(bundle, tmp_path / "beir", chunking=bundle.target_chunking)

    with zipfile.ZipFile(tmp_path / "v1.zip") as zf:
        manifest = json.loads(zf.read("manifest.json"))
        lines = zf.read("items.jsonl").decode().splitlines()
    assert manifest["extra"]["dataset_version"] == {"name": "v1", "hash": v1.hash}
    assert v1.hash in manifest["project"]["notes"]
    assert sorted(json.loads(x)["turns"][0]["query"] for x in lines) == ["When?", "Which train?"]
    qrels = (tmp_path / "beir" / "qrels" / "test.tsv").read_text().splitlines()
    assert len(qrels) == 3 and all(f"{train}#0" in line for line in qrels[1:])
    corpus = (tmp_path / "beir" / "corpus.jsonl").read_text()
    assert "night train" in corpus  # the frozen text, though the live document changed


def test_experiments_run_on_a_versions_items(any_ws: Workspace) -> None:
    project, doc, accepted = _setup(any_ws)
    v1 = create_version(any_ws, project, "v1")
    edited = editable_copy(accepted[0])
    edited.turns[0].query = "changed after freezing"
    save_item(any_ws, project, accepted[0].id, edited, accepted[0].version)
    _gold(any_ws, project, doc.id, "accepted later", 20)

    made = create_experiment(any_ws, project, "e1", pipelines=["keyword"], version="v1")

    assert made.task_count == 2
    assert made.selection["version"] == {"name": "v1", "hash": v1.hash}
    with any_ws.engine.connect() as conn:
        stored = conn.scalar(sa.select(experiments.c.dataset_version_id))
    assert stored == get_version(any_ws, project, "v1").id
    with pytest.raises(NotFound, match="no dataset version 'v7'"):
        create_experiment(any_ws, project, "e2", pipelines=["keyword"], version="v7")
    replace_document(any_ws, project, doc, "train.txt", b"Another text entirely.")
    with pytest.raises(InvalidInput, match=r"cites documents that were changed .*: train\.txt"):
        create_experiment(any_ws, project, "e3", pipelines=["keyword"], version="v1")


def test_a_version_is_read_at_one_moment(any_ws: Workspace) -> None:
    """A save committed while a version is being read is not half in it: the version's reads
    all see the gold as it was when the first of them ran."""
    from assay.review.versions import _one_moment

    project = create_project(any_ws, "p")
    create_item(any_ws, project, Item(turns=[Turn(query="first")]))
    count = sa.select(sa.func.count()).select_from(items)
    with _one_moment(any_ws.engine) as conn:
        before = conn.scalar(count)
        create_item(any_ws, project, Item(turns=[Turn(query="saved meanwhile")]))
        assert conn.scalar(count) == before == 1
    with any_ws.engine.connect() as conn:
        assert conn.scalar(count) == 2


def test_a_versions_native_export_imports_back_to_the_same_hash(
    any_ws: Workspace, tmp_path: Path
) -> None:
    """Frozen here, exported, imported into another workspace (SQLite) and frozen there:
    the same content, so the same hash, whichever database each workspace uses."""
    from assay.store.settings import Settings
    from assay.transfer import import_bundle

    project, _, _ = _setup(any_ws)
    v1 = create_version(any_ws, project, "v1")
    native = get_format("native")
    native.write(export_bundle_of(any_ws, project, read_snapshot(any_ws, v1)), tmp_path / "v1.zip")

    with Workspace.open(Settings(home=tmp_path / "other")) as other:
        import_bundle(other, "p", native.read(tmp_path / "v1.zip"))
        again = create_version(other, get_project(other, "p"), "v1")

    assert (again.item_count, again.evidence_count) == (v1.item_count, v1.evidence_count)
    assert again.hash == v1.hash


def test_the_streamed_hash_is_that_of_the_whole_canonical_json(any_ws: Workspace) -> None:
    """The hash gathered item by item (in creation order, spilled to a file) equals the
    sha256 of the one canonical JSON text with the items sorted by id."""
    import hashlib

    from assay.review.version_hash import canonical_item, canonical_json, content_hash

    project, _, _ = _setup(any_ws)
    v1 = create_version(any_ws, project, "v1")
    snapshot = read_snapshot(any_ws, v1)
    gold = list(snapshot.items)
    docs = list(snapshot.bundle.documents)
    chunking = snapshot.bundle.chunkings[0]
    whole = {
        "items": sorted((canonical_item(i, {}) for i in gold), key=lambda i: str(i["id"])),
        "documents": sorted(
            ({"name": d.name, "sha256": d.sha256, "text_sha256": d.text_sha256} for d in docs),
            key=lambda d: d["name"],
        ),
        "chunking": {"name": chunking.name, "method": chunking.method, "params": chunking.params},
    }
    expected = hashlib.sha256(canonical_json(whole).encode()).hexdigest()
    assert content_hash(reversed(gold), docs, chunking) == expected == v1.hash


def test_a_version_file_changed_by_hand_is_refused(any_ws: Workspace) -> None:
    project, _, _ = _setup(any_ws)
    v1 = create_version(any_ws, project, "v1")
    path = any_ws.blobs.path(v1.blob)
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(Conflict, match="its stored file does not match its hash"):
        read_snapshot(any_ws, v1)


def test_evidence_is_checked_the_same_a_few_passages_at_a_time(
    any_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Items needing review (what a version leaves out) are found alike whether the
    passages are read all at once or one document and one passage at a time."""
    from assay.corpus import anchoring
    from tests.test_transfer import stale_project

    project, stale, _fine = stale_project(any_ws)
    other = ingest_bytes(any_ws, project, "leave.txt", LEAVE.encode())
    cited = Evidence(doc_id=other.id, text="Unused days expire in March.")
    also = create_item(any_ws, project, Item(turns=[Turn(query="q", evidence=[cited])]))
    set_status(any_ws, project, also.id, "accepted", also.version)
    with any_ws.engine.begin() as conn:
        whole = anchoring.items_needing_review(conn, project.id, ["accepted"])
    monkeypatch.setattr(anchoring, "ROW_BATCH", 1)
    monkeypatch.setattr(anchoring, "DOC_BATCH", 1)
    with any_ws.engine.begin() as conn:
        piecewise = anchoring.items_needing_review(conn, project.id, ["accepted"])
    assert piecewise == whole and list(whole) == [stale]
    version = create_version(any_ws, project, "v1")
    assert version.summary["left_out_needing_review"] == [stale] and version.item_count == 2


def test_a_version_read_a_page_of_one_item_at_a_time_is_the_same(
    any_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gold is read a page at a time by creation time and id: items created at the same
    moment are neither skipped nor read twice across pages."""
    from assay.review import versions

    project, doc, accepted = _setup(any_ws)
    more = [_gold(any_ws, project, doc.id, f"q{n}", 20) for n in range(3)]
    with any_ws.engine.begin() as conn:  # two of them at one moment
        moment = conn.scalar(sa.select(items.c.created_at).where(items.c.id == more[0].id))
        conn.execute(items.update().where(items.c.id == more[1].id).values(created_at=moment))
    whole = create_version(any_ws, project, "whole")
    monkeypatch.setattr(versions, "PAGE", 1)
    paged = create_version(any_ws, project, "paged")
    assert (paged.item_count, paged.hash) == (whole.item_count, whole.hash) == (5, whole.hash)
    frozen = [i.id for i in read_snapshot(any_ws, paged).items]
    assert sorted(frozen) == sorted(i.id for i in accepted + more) and len(set(frozen)) == 5
