"""Assay: gold-standard RAG evaluation datasets from your own documents.

Python API in short::

    from assay import open_workspace
    from assay.corpus.ingest import ingest_paths
    from assay.search.indexes import search
    from assay.store.projects import create_project

    ws = open_workspace("assay-data")      # creates the workspace when it is missing
    project = create_project(ws, "handbook", language="en")
    ingest_paths(ws, project, ["docs/"])
    hits = search(ws, project, "parental leave", k=5)

The packages follow the pipeline: ``store`` (workspace, database, projects), ``corpus``
(documents, parsing, chunking, ingest, anchoring), ``search``, ``llm``, ``gold`` (items,
conversations, checks, synthesis), ``metrics``, ``formats``, ``experiments``, ``transfer``,
and the two front ends ``web`` and ``cli``.

See docs/python-api.md. ``Workspace`` and ``open_workspace`` are loaded on first use, so that
``import assay`` (and the CLI's ``--help``) does not pay for SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.store.workspace import Workspace, open_workspace

__version__ = "0.1.0"
__all__ = ["Workspace", "__version__", "open_workspace"]


def __getattr__(name: str) -> Any:
    """``assay.open_workspace``, ``assay.Workspace`` and stage packages (``assay.store``) on
    first use."""
    if name in ("Workspace", "open_workspace"):
        return getattr(importlib.import_module("assay.store.workspace"), name)
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"assay.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"assay.{name}":
                raise
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
