"""Assay: gold-standard RAG evaluation datasets from your own documents.

Python API in short::

    import assay
    ws = assay.open_workspace("assay-data")
    project = assay.projects.create_project(ws, "handbook", language="en")
    assay.ingest.ingest_paths(ws, project, ["docs/"])
    hits = assay.search.indexes.search(ws, project, "parental leave", k=5)

See docs/python-api.md.
"""

from __future__ import annotations

from assay.workspace import Workspace, open_workspace

__version__ = "0.1.0"
__all__ = ["Workspace", "__version__", "open_workspace"]
