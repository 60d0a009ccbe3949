"""LLM drafts (``assay synthesize``) as a job of the workspace's queue, started from a page.

Drafting asks the project's generator once per sampled chunk, which takes minutes, so the
page queues a job and follows it. Its row is a ``transfer_jobs`` row of kind ``synthesis``
(state, progress ``done`` of ``total`` drafts, message, result), read by every server
process like an import's. Each draft is stored in its own transaction as it is made
(:func:`assay.gold.synthesis.synthesize`): a cancel stops at the next draft and keeps those
made; a job whose process died is not run again when a worker resumes it (it ends failed,
saying the drafts made are kept), since running it again would draft the same chunks twice.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from assay.gold.synthesis import DEFAULT_TYPES, synthesize
from assay.jobs.transfer_jobs import (
    CANCELLED,
    DONE,
    FAILED,
    SYNTHESIS,
    TransferJob,
    end_job,
    new_job,
)
from assay.jobs.transfer_work import Cancelled, JobProgress, fail_job, queue_job, take_job
from assay.store.projects import get_project
from assay.store.workspace import Workspace

if TYPE_CHECKING:
    from assay.gold.synthesis import SynthesisReport
    from assay.jobs import Jobs

INTERRUPTED = (
    "interrupted: the job stopped before it finished; the drafts made so far are kept "
    "(the items list, status draft); start it again for more"
)


def start_synthesis(
    ws: Workspace,
    jobs: Jobs,
    project: str,
    *,
    n: int = 20,
    types: list[str] | None = None,
    seed: int = 0,
    chunking: str | None = None,
) -> TransferJob:
    """Queue drafting ``n`` items from sampled chunks of ``project`` (what ``assay
    synthesize`` does)."""
    job_id = new_job(ws, SYNTHESIS, project, "llm")
    payload = {
        "transfer": job_id,
        "n": n,
        "types": list(types or DEFAULT_TYPES),
        "seed": seed,
        "chunking": chunking,
    }
    return queue_job(ws, jobs, SYNTHESIS, payload)


def run_synthesis(ws: Workspace, payload: dict[str, Any]) -> None:
    job_id = str(payload["transfer"])
    job = take_job(ws, job_id)
    if job is None:
        return
    if job.started:  # a run of it began in a process that died: never draft the same twice
        end_job(ws, job_id, FAILED, INTERRUPTED)
        return
    progress = JobProgress(ws, job_id)
    try:
        report = synthesize(
            ws,
            get_project(ws, job.project),
            n=int(payload["n"]),
            types=list(payload["types"]),
            seed=int(payload["seed"]),
            chunking=payload.get("chunking"),
            progress=lambda done, total: progress("drafting", done, total),
        )
    except Cancelled:
        end_job(ws, job_id, CANCELLED, "cancelled; the drafts made so far are kept")
        return
    except Exception as exc:
        fail_job(ws, job_id, exc)
        return
    end_job(ws, job_id, DONE, result=report_json(report))


def report_json(report: SynthesisReport) -> dict[str, Any]:
    """The ids of the drafts made, those skipped with why, counts per query type."""
    return {
        "created": report.created,
        "skipped": [asdict(s) for s in report.skipped],
        "per_type": report.per_type,
        "sampled": report.sampled,
        "chunking": report.chunking,
    }
