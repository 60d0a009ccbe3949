"""Judging results: the runs' leaderboard and the judges' agreement (a page, and its JSON
twins), and the document ratings as graded qrels (see docs/judging.md, "From judgments to
evaluation").

The page lives at ``/projects/{name}/judging-results``, beside the workbench's
``/projects/{name}/judging/{mode}`` pages rather than under them.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse

from assay.judging.agreement import judging_agreement
from assay.judging.leaderboard import MEASURES, leaderboard, trec_leaderboard
from assay.judging.qrels import judged_qrels, rating_grades, trec_qrels
from assay.records import to_json
from assay.web.bounds import Storable
from assay.web.render import open_project, render

router = APIRouter()

Topics = Query(default=[], max_length=100, description="Only these topics (default: all).")
Sort = Query(default="mean_rating", max_length=40, description=f"One of: {', '.join(MEASURES)}.")


@router.get("/api/projects/{name}/judging/leaderboard", tags=["judging"])
def api_leaderboard(
    request: Request, name: str, topic: list[Storable] = Topics, sort: str = Sort
) -> Any:
    """Every run with its values per topic and over all topics (``all``): mean rating,
    supported sentences, citation precision; ranked by ``sort``."""
    ws, project = open_project(request, name)
    return to_json(leaderboard(ws, project, topic_ids=topic, sort=sort))


@router.get(
    "/api/projects/{name}/judging/leaderboard.trec",
    tags=["judging"],
    response_class=PlainTextResponse,
)
def api_leaderboard_trec(
    request: Request, name: str, topic: list[Storable] = Topics, sort: str = Sort
) -> PlainTextResponse:
    """The leaderboard as TREC text: ``run measure topic value``, tab separated, with
    ``all`` rows."""
    ws, project = open_project(request, name)
    text = trec_leaderboard(leaderboard(ws, project, topic_ids=topic, sort=sort))
    return PlainTextResponse(text, headers=_attachment(f"{project.name}-leaderboard.txt"))


@router.get("/api/projects/{name}/judging/agreement", tags=["judging"])
def api_agreement(request: Request, name: str) -> Any:
    """Agreement among judges per mode: ratings (exact, Krippendorff's alpha ordinal) and
    spans (character-overlap F1), over all judges and per judge pair."""
    ws, project = open_project(request, name)
    return to_json(judging_agreement(ws, project))


@router.get("/api/projects/{name}/judging/qrels", tags=["judging"])
def api_qrels(request: Request, name: str, topic: list[Storable] = Topics) -> Any:
    """The document ratings as graded qrels ``{topic_id: {doc_id: grade}}``, with the
    grade of each rating."""
    ws, project = open_project(request, name)
    qrels = judged_qrels(ws, project, topic_ids=topic)
    return {"project": project.name, "grades": rating_grades(project), "qrels": qrels}


@router.get(
    "/api/projects/{name}/judging/qrels.trec", tags=["judging"], response_class=PlainTextResponse
)
def api_qrels_trec(
    request: Request, name: str, topic: list[Storable] = Topics
) -> PlainTextResponse:
    """The same qrels as TREC text: ``topic_id 0 doc_id grade`` per line."""
    ws, project = open_project(request, name)
    text = trec_qrels(judged_qrels(ws, project, topic_ids=topic))
    return PlainTextResponse(text, headers=_attachment(f"{project.name}-qrels.txt"))


def _attachment(filename: str) -> dict[str, str]:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in filename)
    return {"Content-Disposition": f'attachment; filename="{safe}"'}


@router.get(
    "/projects/{name}/judging-results", response_class=HTMLResponse, include_in_schema=False
)
def results_page(request: Request, name: str, sort: str = Sort) -> HTMLResponse:
    ws, project = open_project(request, name)
    return render(
        request,
        "judging_results.html",
        project=project,
        section="judging",
        board=leaderboard(ws, project, sort=sort),
        agreement=judging_agreement(ws, project),
    )
