"""The project an import writes into: an existing one, a new one, or a hidden stand-in that
takes the replaced project's place when a ``--replace`` import has finished."""

from __future__ import annotations

from assay.errors import InvalidInput, NotFound
from assay.formats import ProjectInfo
from assay.records import Project
from assay.store.projects import LANGUAGES, create_project, get_project
from assay.store.workspace import Workspace
from assay.transfer.batches import Batches


def target_project(
    ws: Workspace, batches: Batches, name: str, info: ProjectInfo, replace: bool
) -> tuple[Project, bool, Project | None]:
    """``(project to write into, made by this import, project it replaces at the end)``; the
    projects are locked and the lock is committed, so edits see it at once."""
    name = name or info.name
    if not name:
        raise InvalidInput("name the project to import into (--project)")
    try:
        existing: Project | None = get_project(ws, name, conn=batches.current)
    except NotFound:
        existing = None
    batches.open()
    if existing is not None:
        batches.lock(existing.id)
        if not replace:
            batches.commit()
            return existing, False, None
    language = info.language if info.language in LANGUAGES else "en"
    settings = dict(existing.settings if existing and not info.settings else info.settings)
    made = create_project(
        ws, f"{batches.token[:8]} {name}"[:190] if existing else name, language, settings,
        hidden=existing is not None, conn=batches.current,
    )  # fmt: skip
    batches.note("project", str(made.id))
    batches.lock(made.id)
    batches.commit()
    return made, True, existing
