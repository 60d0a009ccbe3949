from __future__ import annotations

import pytest

from assay.corpus.chunkings import get_chunking, list_chunkings
from assay.corpus.ingest import ingest_bytes
from assay.errors import Conflict, InvalidInput, NotFound
from assay.store.projects import (
    create_project,
    delete_project,
    get_project,
    list_projects,
    rename_project,
    resolve_project,
)
from assay.store.workspace import Workspace


def test_create_makes_default_chunking(ws: Workspace) -> None:
    project = create_project(ws, "handbook", "de")
    assert project.language == "de"
    default = get_chunking(ws, project)
    assert (default.name, default.method, default.is_default) == ("default", "recursive", True)
    assert [c.name for c in list_chunkings(ws, project)] == ["default"]


def test_names_are_unique_and_checked(ws: Workspace) -> None:
    create_project(ws, "a")
    with pytest.raises(Conflict, match="already exists"):
        create_project(ws, "a")
    with pytest.raises(InvalidInput, match="must not be empty"):
        create_project(ws, "  ")
    with pytest.raises(InvalidInput, match=r"unsupported language 'xx'.*en \(English\)"):
        create_project(ws, "b", "xx")


def test_rename(ws: Workspace) -> None:
    a = create_project(ws, "a")
    create_project(ws, "b")
    with pytest.raises(Conflict):
        rename_project(ws, a, "b")
    renamed = rename_project(ws, a, "c")
    assert renamed.id == a.id and renamed.name == "c"
    with pytest.raises(NotFound, match="no project named 'a'"):
        get_project(ws, "a")


def test_resolve_needs_a_name_when_several(ws: Workspace) -> None:
    with pytest.raises(NotFound, match="no projects yet"):
        resolve_project(ws, None)
    only = create_project(ws, "only")
    assert resolve_project(ws, None) == only
    create_project(ws, "second")
    with pytest.raises(InvalidInput, match="several projects \\(only, second\\)"):
        resolve_project(ws, None)


def test_delete_removes_documents_and_unused_blobs(ws: Workspace) -> None:
    keep = create_project(ws, "keep")
    drop = create_project(ws, "drop")
    shared = ingest_bytes(ws, keep, "shared.txt", b"shared text")
    ingest_bytes(ws, drop, "shared.txt", b"shared text")
    only = ingest_bytes(ws, drop, "only.txt", b"only in the dropped project")
    delete_project(ws, drop)
    assert [p.name for p in list_projects(ws)] == ["keep"]
    assert ws.blobs.path(shared.sha256).exists()
    assert not ws.blobs.path(only.sha256).exists()
