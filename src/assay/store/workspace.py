"""A workspace: settings, the database engine and the folders for blobs and indexes.

Wiring only: opening applies migrations (and, when asked to, creates the folder); every rule
about projects, documents or search lives in the stage modules, which take a Workspace as first
argument. The Python API creates a missing workspace on open; the CLI creates one only in
``assay init`` and ``assay demo`` (see :func:`workspace_exists`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFound
from assay.store.blobs import BlobStore
from assay.store.db import create_engine, migrate
from assay.store.import_lock import recover_interrupted_imports
from assay.store.settings import Settings
from assay.store.shared_files import SharedFiles, shared_files


@dataclass
class Workspace:
    settings: Settings
    engine: sa.Engine
    blobs: BlobStore
    index_root: Path
    files: SharedFiles | None = None
    """In team mode on PostgreSQL, the database copy of the files processes share
    (:mod:`assay.store.shared_files`); None on SQLite, where the folder is the store."""
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)
    _shared_lock: Any = field(default_factory=threading.RLock, repr=False)

    @classmethod
    def open(cls, settings: Settings | None = None, *, create: bool = True) -> Workspace:
        """Open the workspace of ``settings``; a missing one is created, or with
        ``create=False`` refused with :class:`NotFound` naming the folder."""
        settings = settings or Settings()
        home = settings.home
        if not create and not workspace_exists(settings):
            raise NotFound(f"no Assay workspace in {home.resolve()}")
        home.mkdir(parents=True, exist_ok=True)
        engine = create_engine(settings.resolved_database_url(), settings.threads)
        migrate(engine)
        recover_interrupted_imports(engine)  # undo what a killed import left half-written
        return cls.of(settings, engine)

    @classmethod
    def of(cls, settings: Settings, engine: sa.Engine) -> Workspace:
        """The workspace of an engine already migrated (a worker process's own engine)."""
        files = shared_files(engine)
        return cls(
            settings=settings,
            engine=engine,
            blobs=BlobStore(settings.home / "blobs", files),
            index_root=settings.home / "indexes",
            files=files,
        )

    def index_path(self, project_id: int, chunking_id: int, kind: str = "keyword") -> Path:
        """Folder of one search index. The database name keeps two databases sharing a
        workspace folder from sharing indexes."""
        return self.index_root / self._database_key() / f"p{project_id}" / f"c{chunking_id}-{kind}"

    def _database_key(self) -> str:
        url = self.engine.url
        if url.get_backend_name() == "sqlite":
            return "sqlite"
        return f"{url.get_backend_name()}-{url.host or 'local'}-{url.port or ''}-{url.database}"

    def shared(self, key: str, build: Callable[[], Any]) -> Any:
        """One object per workspace for ``key``, built on first use: an embedder (loading
        MiniLM takes ~0.5 s) is made once and shared by every search of the process."""
        with self._shared_lock:  # threads of one run ask at once; one object must win
            if key not in self._shared:
                self._shared[key] = build()
            return self._shared[key]

    def forget(self, key: str) -> None:
        """Drop the shared object of ``key`` (the next :meth:`shared` builds it again)."""
        self._shared.pop(key, None)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def workspace_exists(settings: Settings) -> bool:
    """A workspace exists when its folder does and holds its database (SQLite), or when the
    database lives elsewhere (``ASSAY_DATABASE_URL``) and the folder exists."""
    home = settings.home
    if not home.is_dir():
        return False
    return bool(settings.database_url) or (home / "assay.db").is_file()


def open_workspace(home: str | Path | None = None, **settings: Any) -> Workspace:
    """Open the workspace in ``home``, creating it when missing; other settings as keywords.

    Settings not given come from ``ASSAY_*`` environment variables, then the defaults.
    """
    if home is not None:
        settings["home"] = Path(home)
    return Workspace.open(Settings(**settings))
