"""The JSON API of judging mode's inputs and outputs, the twins of ``assay judge import-runs``,
``assay judge progress``, ``assay export autojudge`` and ``assay import autojudge``:

- ``POST /api/projects/{name}/judging/topics`` and ``.../judging/runs``: upload a topics file
  or a run file (JSON Lines, gzip, or for runs a zip of run files) as multipart ``file``;
  ``lenient`` skips bad lines. A strict import with a bad line answers 422 listing every
  problem (file, line, field) and stores nothing;
- ``GET .../judging/progress?mode=&judge=``: "N of M judged" per topic and run;
- ``GET .../judging/judgments?mode=&topic_id=&run_id=&doc_id=&sentence_idx=&judge=``: one
  judge's judgment of one unit (the caller's by default; version 0 when not made yet);
- ``GET .../judging/export?mode=&topic=&judge=&dataset=``: autojudge-annotate's JSON Lines;
- ``POST .../judging/import``: upload such JSON Lines (multipart ``file``) to merge by
  username.

Imports run in the request (they are one transaction each) and answer their report.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from assay.formats.autojudge import write_records
from assay.judging.assignments import assign_topics, list_assignments, unassign_topics
from assay.judging.judgment_files import import_judgments, judgment_records
from assay.judging.judgments import MODES, Unit, get_judgment, unit_texts
from assay.judging.run_import import import_judging_inputs
from assay.judging.units import progress
from assay.people.accounts import get_account
from assay.records import INT32, Project
from assay.store.workspace import Workspace
from assay.transfer.files import safe_stem, unpack
from assay.web.actors import actor_id
from assay.web.bounds import Storable
from assay.web.render import open_project
from assay.web.routes.imports import TRUE, UPLOAD_FACTOR
from assay.web.uploads import read_upload, too_large, upload_body

router = APIRouter()
T = TypeVar("T")
Mode = Literal["report", "document", "citation"]
P = "/api/projects/{name}/judging"
NO_NUL = r"^[^\x00]*$"
"""Ids and names are compared in the database: PostgreSQL's text holds no NUL."""

UPLOAD = upload_body({"lenient": {"type": "boolean", "description": "skip bad lines"}})


async def _with_upload(
    request: Request, name: str, work: Callable[[Workspace, Project, Path, bool, int], T]
) -> T | Response:
    """Store the uploaded file in a temporary folder of its own (its name kept: errors name
    it), run ``work(ws, project, path, lenient, actor)``, remove it. Not under the
    workspace's ``imports`` folder: that one belongs to the import jobs, whose cleanup
    removes every folder no job needs."""
    ws, project = await run_in_threadpool(open_project, request, name)
    limit = UPLOAD_FACTOR * ws.settings.max_file_bytes
    upload = await read_upload(request, limit)
    shown = Path(upload.filename or "upload").name
    if upload.too_large:
        return too_large(request, "transfer.too_large", shown, limit / 1024 / 1024)
    lenient = upload.fields.get("lenient", "").lower() in TRUE
    actor = await run_in_threadpool(actor_id, request)
    with tempfile.TemporaryDirectory(prefix="assay-judging-") as folder:
        stored = Path(folder) / safe_stem(shown)
        stored.write_bytes(bytes(upload.data))
        return await run_in_threadpool(work, ws, project, stored, lenient, actor)


@router.post(f"{P}/topics", tags=["judging"], openapi_extra=UPLOAD)
async def api_import_topics(request: Request, name: str) -> Any:
    """Import TREC RAG topics (JSON Lines requests; a topic held already takes the new
    fields)."""

    def work(ws: Workspace, project: Project, path: Path, lenient: bool, actor: int) -> Any:
        report = import_judging_inputs(ws, project, topics=path, lenient=lenient, author=actor)
        return report.as_json()

    return await _with_upload(request, name, work)


@router.post(f"{P}/runs", tags=["judging"], openapi_extra=UPLOAD)
async def api_import_runs(request: Request, name: str) -> Any:
    """Import run reports for the project's topics: one run file (JSON Lines, gzip
    accepted) or a zip of run files; embedded documents become documents of the project."""

    def work(ws: Workspace, project: Project, path: Path, lenient: bool, actor: int) -> Any:
        runs = unpack(path, path.parent / "runs") if path.suffix.lower() == ".zip" else path
        report = import_judging_inputs(ws, project, runs=[runs], lenient=lenient, author=actor)
        return report.as_json()

    return await _with_upload(request, name, work)


@router.get(f"{P}/progress", tags=["judging"])
def api_progress(
    request: Request,
    name: str,
    mode: Mode = "report",
    judge: str | None = Query(None, pattern=NO_NUL, max_length=64, description="a user name"),
) -> Any:
    """How far the judges got: per topic and run (per topic in document mode) how many units
    are judged, by ``judge`` or by anyone."""
    ws, project = open_project(request, name)
    judge_id = get_account(ws, judge).id if judge else None
    rows = progress(ws, project, mode, judge_id=judge_id)
    return {
        "mode": mode,
        "judge": judge,
        "rows": [
            {"topic_id": r.topic_id, "run_id": r.run_id, "judged": r.judged, "total": r.total}
            for r in rows
        ],
        "judged": sum(r.judged for r in rows),
        "total": sum(r.total for r in rows),
    }


@router.get(f"{P}/judgments", tags=["judging"])
def api_judgment(
    request: Request,
    name: str,
    mode: Mode,
    topic_id: str = Query(pattern=NO_NUL, min_length=1, max_length=200),
    run_id: str | None = Query(None, pattern=NO_NUL, min_length=1, max_length=200),
    doc_id: str | None = Query(None, pattern=NO_NUL, min_length=1, max_length=500),
    sentence_idx: int | None = Query(None, ge=0, le=INT32),
    judge: str | None = Query(
        None, pattern=NO_NUL, max_length=64, description="a user name; default: you"
    ),
) -> Any:
    """One judge's judgment of one unit, with the ``version`` a save sends back (0 and an
    empty judgment when the judge has not judged it)."""
    ws, project = open_project(request, name)
    unit = Unit(mode, topic_id, run_id, doc_id, sentence_idx)
    unit_texts(ws, project, unit)  # 404/422 for a unit the project does not have
    judge_id = get_account(ws, judge).id if judge else actor_id(request)
    found = get_judgment(ws, project, unit, judge_id)
    shown: dict[str, Any] = {
        "mode": mode,
        "topic_id": topic_id,
        "run_id": run_id,
        "doc_id": doc_id,
        "sentence_idx": sentence_idx,
        "judge": found.judge if found else judge,
        "rating": found.rating if found else None,
        "comment": found.comment if found else "",
        "spans": [s.as_json() for s in found.spans] if found else [],
        "report_spans": [s.as_json() for s in found.report_spans] if found else [],
        "version": found.version if found else 0,
        "updated_at": found.updated_at.isoformat() if found else None,
    }
    return shown


@router.get(f"{P}/export", tags=["judging"])
def api_export(
    request: Request,
    name: str,
    mode: list[Mode] = Query([], description="repeatable; default: all three"),
    topic: list[Storable] = Query([], description="topic ids; default: all"),
    judge: str | None = Query(
        None, pattern=NO_NUL, max_length=64, description="a user name; default: all"
    ),
    dataset: str | None = Query(
        None, pattern=NO_NUL, max_length=500, description="default: the project"
    ),
) -> Response:
    """The judged units as autojudge-annotate's JSON Lines (one judgment per line, the exact
    keys of its report, document and citation records)."""
    ws, project = open_project(request, name)
    judge_id = get_account(ws, judge).id if judge else None
    records = judgment_records(
        ws, project, modes=mode or MODES, dataset=dataset, topic_ids=topic, judge_id=judge_id
    )
    body = io.StringIO()
    write_records(records, body)
    filename = f"{safe_stem(project.name)}-judgments.jsonl"
    return Response(
        body.getvalue(),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.post(f"{P}/import", tags=["judging"], openapi_extra=UPLOAD)
async def api_import_judgments(request: Request, name: str) -> Any:
    """Merge judgments (autojudge-annotate's JSON Lines, as the offline page downloads them)
    by username: a judge's line replaces that judge's judgment of the unit. A line without a
    username is the caller's."""

    def work(ws: Workspace, project: Project, path: Path, lenient: bool, actor: int) -> Any:
        return import_judgments(ws, project, path, lenient=lenient, author=actor).as_json()

    return await _with_upload(request, name, work)


class AssignmentBody(BaseModel):
    """Topics of one mode given to (or taken back from) judges, by user name."""

    model_config = ConfigDict(extra="forbid")
    mode: Mode = "report"
    topics: list[Annotated[str, Field(min_length=1, max_length=200, pattern=NO_NUL)]] = Field(
        min_length=1, max_length=10_000
    )
    judges: list[Annotated[str, Field(min_length=1, max_length=64, pattern=NO_NUL)]] = Field(
        min_length=1, max_length=1_000
    )


@router.get(f"{P}/assignments", tags=["judging"])
def api_judging_assignments(request: Request, name: str, mode: Mode | None = None) -> Any:
    """Which topics were given to which judges (of one mode)."""
    ws, project = open_project(request, name)
    return {"assignments": [asdict(a) for a in list_assignments(ws, project, mode=mode)]}


@router.post(f"{P}/assignments", tags=["judging"])
def api_assign_judging(request: Request, name: str, body: AssignmentBody) -> Any:
    """Give topics to judges; answers how many assignments are new."""
    ws, project = open_project(request, name)
    by = actor_id(request)
    added = assign_topics(ws, project, body.mode, body.topics, body.judges, assigned_by=by)
    return {"added": added}


@router.post(f"{P}/assignments/remove", tags=["judging"])
def api_unassign_judging(request: Request, name: str, body: AssignmentBody) -> Any:
    """Take topics back from judges (their judgments stay); answers how many were removed."""
    ws, project = open_project(request, name)
    return {"removed": unassign_topics(ws, project, body.mode, body.topics, body.judges)}
