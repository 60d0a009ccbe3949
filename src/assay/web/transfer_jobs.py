"""What the import and export routes share: the app's job registry and the JSON of formats
and jobs.

Jobs run in threads kept by the app's ``JobRegistry`` (``web.jobs``); ``create_app`` makes
the registry and keeps it on ``app.state`` (nothing at import).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any
from urllib.parse import quote

from fastapi import Request

from assay.formats import FormatSpec
from assay.transfer.files import takes_folder
from assay.web.jobs import DONE, Job, JobRegistry

SHOWN = 50
"""Skipped and flagged records listed in an import report, and notes of an export."""


def registry(request: Request) -> JobRegistry:
    jobs = request.app.state.transfer_jobs
    assert isinstance(jobs, JobRegistry)
    return jobs


def uses_chunking(spec: FormatSpec) -> bool:
    """Whether the writer names the chunks of one chunking (its ``chunking`` option)."""
    try:
        module = importlib.import_module(f"assay.formats.{spec.module}")
        return "chunking" in inspect.signature(module.write).parameters
    except (ImportError, AttributeError, ValueError):
        return False


def format_json(spec: FormatSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "extensions": list(spec.extensions),
        "folder": takes_folder(spec),
        "chunking": uses_chunking(spec),
    }


def job_json(job: Job) -> dict[str, Any]:
    data = job.snapshot()
    base = f"/api/projects/{quote(job.project)}/transfer/jobs/{job.id}"
    data["events"] = f"{base}/events"
    data["download"] = f"{base}/download" if data["state"] == DONE and job.file else None
    return data
