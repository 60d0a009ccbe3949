"""Exports: a background job writes the project in a format into
``<ASSAY_HOME>/exports/<job id>/`` (folder formats zipped) for the download link of
``routes.transfer``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from assay.corpus.anchoring import problems_json
from assay.corpus.chunkings import get_chunking
from assay.errors import InvalidInput
from assay.formats import FormatSpec, Lazy, get_format
from assay.records import Item, Project
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import (
    STATUSES,
    ExportScope,
    choose_statuses,
    chosen_items,
    export_bundle,
    export_scope,
)
from assay.transfer.files import safe_stem, write_file
from assay.web.jobs import Job
from assay.web.state import workspace
from assay.web.transfer_jobs import SHOWN, job_json, registry

router = APIRouter()


class ExportIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: str
    chunking: str | None = None
    statuses: list[str] | None = None
    """Statuses of the items to export (or ``all``); default: accepted."""
    allow_empty: bool = False
    """Export even when no item has the chosen statuses (else 422)."""
    items: list[str] | None = None
    """Export exactly these items, whatever their status (``statuses`` is then ignored)."""
    strict: bool = False
    """Refuse (422, naming the items) when an item's evidence no longer matches its document,
    instead of leaving the item out and listing it in ``needs_review``."""


def export_work(
    ws: Workspace,
    project: Project,
    spec: FormatSpec,
    chunking: str | None,
    statuses: Sequence[str] | None,
    scope: ExportScope,
    only: Sequence[str] | None = None,
) -> Callable[[Job], None]:
    def work(job: Job) -> None:
        folder = ws.settings.home / "exports" / job.id
        folder.mkdir(parents=True, exist_ok=True)
        total = scope.items
        job.progress("documents", 0, total)
        bundle = export_bundle(
            ws,
            project,
            chunking=chunking,
            statuses=statuses,
            items=only,
            needs_review=scope.needs_review,
        )
        items = bundle.items

        def counting() -> Iterator[Item]:
            job.progress("items", 0, total)
            for number, item in enumerate(items, 1):
                if number % 100 == 0 or number == total:
                    job.progress("items", number, total)
                yield item

        bundle.items = Lazy(counting)
        stem = f"{safe_stem(project.name)}-{spec.name}"
        options = {"chunking": bundle.target_chunking} if bundle.target_chunking else {}
        output, notes = write_file(
            spec, bundle, folder, stem, options, lambda: job.progress("zip", total, total)
        )
        job.update(
            file=output,
            result={
                "items": total,
                "size": output.stat().st_size,
                "statuses": list(statuses or STATUSES),
                "left_out": scope.left_out,
                "needs_review": problems_json(scope.needs_review)[:SHOWN],
                "needs_review_count": len(scope.needs_review),
                "notes": notes[:SHOWN],
            },
        )

    return work


@router.post("/api/projects/{name}/transfer/exports", status_code=202, tags=["transfer"])
def api_export(request: Request, name: str, body: ExportIn) -> JSONResponse:
    """Start an export job; follow it at ``events`` (server-sent events) or by polling the job,
    then fetch ``download``."""
    ws = workspace(request)
    project = get_project(ws, name)
    spec = get_format(body.format)
    chunking = body.chunking or None
    if chunking is not None:
        get_chunking(ws, project, chunking)  # NotFound names the chunkings there are
    if body.statuses is not None and not body.statuses:
        raise InvalidInput("choose at least one status to export (or 'all')")
    statuses = choose_statuses(body.statuses)
    scope = export_scope(ws, project, statuses)
    only = None
    if body.items is not None:
        only = chosen_items(ws, project, body.items)
        scope = export_scope(ws, project, None, items=only)
    if body.strict and scope.needs_review:
        raise InvalidInput(scope.strict_message(project.name))
    if scope.items == 0 and not body.allow_empty:
        raise InvalidInput(scope.empty_message(project.name, "'statuses'", "'allow_empty'"))
    job = registry(request).start(
        "export",
        project.name,
        spec.name,
        export_work(ws, project, spec, chunking, statuses, scope, only),
    )
    return JSONResponse(job_json(job), status_code=202)
