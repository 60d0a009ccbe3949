"""A workspace: settings, the database engine and the folders for blobs and indexes.

Wiring only: opening creates the folder and applies migrations; every rule about projects,
documents or search lives in the stage modules, which take a Workspace as first argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.blobs import BlobStore
from assay.db import create_engine, migrate
from assay.settings import Settings


@dataclass
class Workspace:
    settings: Settings
    engine: sa.Engine
    blobs: BlobStore
    index_root: Path
    _embedders: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, settings: Settings | None = None) -> Workspace:
        settings = settings or Settings()
        home = settings.home
        home.mkdir(parents=True, exist_ok=True)
        engine = create_engine(settings.resolved_database_url())
        migrate(engine)
        return cls(
            settings=settings,
            engine=engine,
            blobs=BlobStore(home / "blobs"),
            index_root=home / "indexes",
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

    def embedder(self, name: str) -> Any:
        """The embedder ``name``, built once per workspace (loading MiniLM takes ~0.5 s)."""
        if name not in self._embedders:
            from assay.embeddings import make_embedder

            self._embedders[name] = make_embedder(name)
        return self._embedders[name]

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_workspace(home: str | Path | None = None, **settings: Any) -> Workspace:
    """Open (and create if needed) the workspace in ``home``; other settings as keywords.

    Settings not given come from ``ASSAY_*`` environment variables, then the defaults.
    """
    if home is not None:
        settings["home"] = Path(home)
    return Workspace.open(Settings(**settings))
