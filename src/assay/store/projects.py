"""Projects: a named collection of documents, chunkings and (later) gold items."""

from __future__ import annotations

import functools
import shutil
from typing import Any

import sqlalchemy as sa

from assay.errors import Conflict, InvalidInput, NotFound
from assay.records import Project
from assay.store.db import as_utc, reading, transaction, utcnow
from assay.store.review_schema import dataset_versions
from assay.store.schema import chunkings, documents, items, projects
from assay.store.workspace import Workspace

STAGING = "\x1f"
"""Name prefix of the hidden project an ``import --replace`` builds (see ``project_lock``)."""

LANGUAGES: dict[str, str] = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
}
"""Project languages; the language picks the search analyzer (stemmer)."""

DEFAULT_CHUNKING = {"name": "default", "method": "recursive", "params": {"max_length": 1000}}


def project_from_row(row: Any) -> Project:
    """A project from its row (or anything with its columns as attributes)."""
    return Project(
        id=row.id,
        name=row.name,
        language=row.language,
        settings=dict(row.settings or {}),
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
        importing_since=as_utc(row.import_started_at) if row.import_token else None,
    )


def check_name(name: str, what: str = "project") -> str:
    cleaned = name.strip()
    if not cleaned:
        raise InvalidInput(f"{what} name must not be empty")
    if len(cleaned) > 200:
        raise InvalidInput(f"{what} name is longer than 200 characters")
    if any(ord(ch) < 32 or ch == "/" for ch in cleaned):
        raise InvalidInput(f"{what} name {cleaned!r} must not contain '/' or control characters")
    return cleaned


def check_language(language: str) -> str:
    if language not in LANGUAGES:
        valid = ", ".join(f"{code} ({label})" for code, label in LANGUAGES.items())
        raise InvalidInput(f"unsupported language {language!r}; choose one of: {valid}")
    return language


def create_project(
    ws: Workspace,
    name: str,
    language: str = "en",
    settings: dict[str, Any] | None = None,
    *,
    hidden: bool = False,
    conn: sa.Connection | None = None,
) -> Project:
    """Create a project with its default chunking (recursive, 1000 characters). ``hidden``:
    the project an ``import --replace`` builds, left out of the project list."""
    name = (STAGING if hidden else "") + check_name(name)
    language = check_language(language)
    now = utcnow()
    with transaction(ws.engine, conn) as conn:
        if conn.execute(sa.select(projects.c.id).where(projects.c.name == name)).first():
            raise Conflict(
                f"a project named {name!r} already exists",
                key="raised.project_name_taken",
                name=name,
            )
        project_id = conn.execute(
            projects.insert().values(
                name=name,
                language=language,
                settings=settings or {},
                created_at=now,
                updated_at=now,
            )
        ).inserted_primary_key[0]  # type: ignore[index]
        conn.execute(
            chunkings.insert().values(
                project_id=project_id,
                name=DEFAULT_CHUNKING["name"],
                method=DEFAULT_CHUNKING["method"],
                params=DEFAULT_CHUNKING["params"],
                is_default=True,
                created_at=now,
            )
        )
        return get_project(ws, name, conn=conn)


def list_projects(ws: Workspace, *, conn: sa.Connection | None = None) -> list[Project]:
    """The workspace's projects by name (without the hidden one an ``import --replace`` is
    building: it takes the replaced project's place when the import has finished)."""
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(projects)
            .where(sa.not_(projects.c.name.startswith(STAGING, autoescape=True)))
            .order_by(projects.c.name)
        ).all()
    return [project_from_row(row) for row in rows]


@functools.cache
def _by_name() -> sa.Select[Any]:
    """Every request reads its project: a statement built once per process, with a bound
    parameter, costs a third of one built per call."""
    return sa.select(projects).where(projects.c.name == sa.bindparam("name", type_=sa.String))


def get_project(ws: Workspace, name: str, *, conn: sa.Connection | None = None) -> Project:
    with reading(ws.engine, conn) as reader:
        row = reader.execute(_by_name(), {"name": name}).first()
    if row is None:
        known = ", ".join(p.name for p in list_projects(ws, conn=conn)) or "none yet"
        raise NotFound(
            f"no project named {name!r} (projects: {known})",
            key="raised.no_project",
            name=name,
            known=known,
        )
    return project_from_row(row)


def resolve_project(ws: Workspace, name: str | None) -> Project:
    """The named project, or the only one when no name is given."""
    if name:
        return get_project(ws, name)
    found = list_projects(ws)
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFound(
            "the workspace has no projects yet: create one with `assay projects create NAME` "
            "(or pass --project NAME to `assay ingest`)"
        )
    names = ", ".join(p.name for p in found)
    raise InvalidInput(f"the workspace has several projects ({names}); choose one with --project")


def rename_project(
    ws: Workspace, project: Project, new_name: str, *, conn: sa.Connection | None = None
) -> Project:
    new_name = check_name(new_name)
    with transaction(ws.engine, conn) as conn:
        clash = conn.execute(
            sa.select(projects.c.id).where(projects.c.name == new_name, projects.c.id != project.id)
        ).first()
        if clash:
            raise Conflict(
                f"a project named {new_name!r} already exists",
                key="raised.project_name_taken",
                name=new_name,
            )
        conn.execute(
            projects.update()
            .where(projects.c.id == project.id)
            .values(name=new_name, updated_at=utcnow())
        )
        return get_project(ws, new_name, conn=conn)


def update_project_settings(
    ws: Workspace, project: Project, settings: dict[str, Any], *, conn: sa.Connection | None = None
) -> Project:
    with transaction(ws.engine, conn) as conn:
        conn.execute(
            projects.update()
            .where(projects.c.id == project.id)
            .values(settings=settings, updated_at=utcnow())
        )
        return get_project(ws, project.name, conn=conn)


def bump_corpus_version(conn: sa.Connection, project_id: int) -> None:
    """Tell search indexes the project's documents or chunkings changed (in the same
    transaction as the change, so the number and the data commit together)."""
    conn.execute(
        projects.update()
        .where(projects.c.id == project_id)
        .values(corpus_version=projects.c.corpus_version + 1)
    )


def corpus_version(conn: sa.Connection, project_id: int) -> int:
    version = conn.scalar(sa.select(projects.c.corpus_version).where(projects.c.id == project_id))
    return int(version or 0)


def delete_project(ws: Workspace, project: Project, *, conn: sa.Connection | None = None) -> None:
    """Delete the project, its documents, chunks and indexes; then drop unused blobs, unless
    the caller holds the transaction (``conn``): blobs wait until it has committed."""
    with transaction(ws.engine, conn) as writing:
        # Items (and with them turns and evidence) go first: evidence points at documents, and
        # PostgreSQL may check that link before a single cascading delete has reached it.
        writing.execute(items.delete().where(items.c.project_id == project.id))
        writing.execute(projects.delete().where(projects.c.id == project.id))
    shutil.rmtree(ws.index_path(project.id, 0).parent, ignore_errors=True)
    if conn is None:
        delete_unused_blobs(ws)


def delete_unused_blobs(ws: Workspace) -> int:
    """Drop the stored originals no document of any project refers to any more (a dataset
    version's zip, in the same store, stays while its version does)."""
    with ws.engine.connect() as conn:
        used = set(conn.scalars(sa.select(documents.c.sha256).distinct()))
        used |= set(conn.scalars(sa.select(dataset_versions.c.blob)))
    return ws.blobs.delete_unused(used)
