"""The agreement page of a project and its JSON twin (``/api/projects/{name}/agreement``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from assay.corpus.chunkings import list_chunkings
from assay.records import to_json
from assay.review.adjudication import waiting_for_adjudication
from assay.review.agreement import COLUMNS, column_value
from assay.review.figure_cache import cached_agreement
from assay.web.actors import blind_to_unreviewed
from assay.web.render import open_project, render

router = APIRouter()


@router.get("/api/projects/{name}/agreement", tags=["review"])
def api_agreement(request: Request, name: str, chunking: str = "") -> Any:
    """Inter-annotator agreement over the items done in overlap: overall, per annotator
    pair, per annotator against the adjudicated gold and per query type (see
    docs/team-workflow.md). ``chunking``: compare passages as that chunking's chunk ids
    (default: by characters). Computed once per change to the project and kept
    (``computed_at`` says when)."""
    ws, project = open_project(request, name)
    blind = blind_to_unreviewed(request, project)
    report, computed_at = cached_agreement(
        ws, project, chunking=chunking or None, reviewed_only=blind
    )
    return {**to_json(report), "computed_at": computed_at.isoformat()}


@router.get("/projects/{name}/agreement", response_class=HTMLResponse, include_in_schema=False)
def agreement_page(request: Request, name: str, chunking: str = "") -> HTMLResponse:
    ws, project = open_project(request, name)
    blind = blind_to_unreviewed(request, project)
    report, computed_at = cached_agreement(
        ws, project, chunking=chunking or None, reviewed_only=blind
    )
    tables = [
        ("overall", [("all", report.overall)]),
        ("pairs", [(row.name, row.measures) for row in report.pairs]),
        ("gold", [(row.name, row.measures) for row in report.gold]),
        ("query_types", [(row.name, row.measures) for row in report.query_types]),
    ]
    return render(
        request,
        "agreement.html",
        project=project,
        section="agreement",
        report=report,
        computed_at=computed_at,
        tables=[
            (key, [(name, [column_value(m, path) for path, _ in COLUMNS]) for name, m in rows])
            for key, rows in tables
        ],
        columns=[path for path, _ in COLUMNS],
        chunkings=[c.name for c in list_chunkings(ws, project)],
        waiting=None if blind else len(waiting_for_adjudication(ws, project)),
        blind=blind,
    )
