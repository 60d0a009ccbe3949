"""The offline judging page from the server, the twin of ``assay judge html``:
``GET /api/projects/{name}/judging/offline-page?mode=&topic=&dataset=&language=`` answers the
HTML file (:mod:`assay.judging.offline_page`) as a download."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import StringConstraints

from assay.formats.trec_rag import MAX_ID
from assay.judging.offline_page import offline_page
from assay.transfer.files import safe_stem
from assay.web.render import open_project

router = APIRouter()

TopicId = Annotated[str, StringConstraints(pattern=r"^[^\x00]*$", max_length=MAX_ID)]


@router.get("/api/projects/{name}/judging/offline-page", tags=["judging"])
def api_offline_page(
    request: Request,
    name: str,
    mode: Literal["reports", "documents", "citations"] = Query("reports"),
    topic: list[TopicId] = Query([], max_length=10_000, description="topic ids; default: all"),
    dataset: str | None = Query(
        None, max_length=500, pattern=r"^[^\x00]*$", description="default: the project's name"
    ),
    language: Literal["en", "de"] | None = Query(None, description="default: the project's"),
) -> Response:
    """One self-contained HTML file that judges open from disk, work in without a server,
    and download as autojudge JSON Lines (``POST .../judging/import`` merges them)."""
    ws, project = open_project(request, name)
    page = offline_page(
        ws,
        project,
        mode=mode,
        topic_ids=topic,
        dataset=project.name if dataset is None else dataset,
        language=language,
    )
    filename = f"{safe_stem(project.name)}-{mode}.html"
    return Response(
        page.html,
        media_type="text/html; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
