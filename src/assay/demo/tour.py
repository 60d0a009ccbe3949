"""The inputs the README's CLI tour names, so the tour runs as pasted.

Most are files shipped in ``samples/`` (a reader copies them with ``cp``); the run for the
tour's CI gate cannot be shipped, because it names the task and chunk ids of the reader's own
demo project, so :func:`write_keyword_run` ranks the demo's questions with keyword search, a
stand-in for the reader's RAG system.
"""

from __future__ import annotations

from pathlib import Path

from assay.experiments.tasks import build_tasks
from assay.records import Project
from assay.search.indexes import search
from assay.store.workspace import Workspace

RUN_TAG = "assay-keyword"
RUN_DEPTH = 10


def write_keyword_run(ws: Workspace, project: Project, path: Path) -> int:
    """A TREC run (``task_id Q0 chunk_id rank score tag``) of the project's accepted items,
    each ranked by BM25 on the default chunking; returns the number of tasks ranked."""
    tasks = build_tasks(ws, project)
    lines = []
    for task in tasks:
        for hit in search(ws, project, task.query(), k=RUN_DEPTH):
            lines.append(f"{task.task_id} Q0 {hit.chunk_id} {hit.rank} {hit.score:.4f} {RUN_TAG}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return len(tasks)
