"""One task of an experiment across its pipelines: the gold, each pipeline's retrieved
passages with the gold hits marked, its answer and a word diff against the reference."""

from __future__ import annotations

import difflib
import re
from typing import Any

from assay.corpus.documents import get_document
from assay.errors import NotFound
from assay.experiments import get_experiment, task_results
from assay.experiments.imported import annotator_scores
from assay.experiments.tasks import Task, task_to_json
from assay.records import Project
from assay.store.workspace import Workspace

WORD = re.compile(r"\S+")


def word_diff(answer: str, reference: str) -> list[tuple[str, str]]:
    """``(op, words)`` pieces turning the reference into the answer: ``equal``, ``delete``
    (only in the reference) and ``insert`` (only in the answer)."""
    ours, theirs = WORD.findall(answer), WORD.findall(reference)
    matcher = difflib.SequenceMatcher(a=theirs, b=ours, autojunk=False)
    pieces: list[tuple[str, str]] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            pieces.append(("equal", " ".join(theirs[a0:a1])))
            continue
        if a1 > a0:
            pieces.append(("delete", " ".join(theirs[a0:a1])))
        if b1 > b0:
            pieces.append(("insert", " ".join(ours[b0:b1])))
    return pieces


SHOWN = (
    "task_id",
    "item_id",
    "turn",
    "query",
    "turns",
    "query_type",
    "answer",
    "alternatives",
    "unanswerable",
    "evidence",
)
"""The fields of a task the drill-down shows, in this order."""


def judge_errors(details: dict[str, Any]) -> list[dict[str, str]]:
    """The judge and LLM metrics that failed on this result: the message and the reply the
    judge gave (what could not be read), to show beside the value ``error``."""
    judges = details.get("judges")
    if not isinstance(judges, dict):
        return []
    return [
        {"metric": str(name), "error": str(j["error"]), "reply": str(j.get("reply") or "")}
        for name, j in judges.items()
        if isinstance(j, dict) and j.get("error")
    ]


def task_json(task: Task) -> dict[str, Any]:
    data = {**task_to_json(task), "query": task.query()}
    return {key: data[key] for key in SHOWN}


def drill_down(ws: Workspace, project: Project, ref: str, task_id: str) -> dict[str, Any]:
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    task, results = task_results(ws, project, experiment.id, task_id)
    gold = {c for e in task.evidence if e.label == "relevant" for c in e.chunk_ids}
    names: dict[str, str] = {}
    texts: dict[str, str] = {}

    def passage(doc_id: str, start: Any, end: Any) -> str:
        if doc_id not in texts:
            try:
                document = get_document(ws, project, doc_id)
                texts[doc_id], names[doc_id] = document.text, document.name
            except NotFound:
                texts[doc_id], names[doc_id] = "", doc_id
        if isinstance(start, int) and isinstance(end, int):
            return texts[doc_id][start:end]
        return ""

    pipelines = []
    for spec in experiment.pipelines:
        result = results.get(str(spec["name"]))
        entry: dict[str, Any] = {"pipeline": spec["name"], "ran": result is not None}
        if result is not None:
            retrieved = []
            for hit in result.retrieved:
                doc_id = str(hit.get("doc_id") or "")
                text = passage(doc_id, hit.get("start"), hit.get("end")) if doc_id else ""
                outside = hit.get("start") is None and not text  # not in the corpus
                if outside:
                    text = str(hit.get("text") or "")  # the system's own text
                retrieved.append(
                    {
                        **hit,
                        "text": text,
                        "document": doc_id if outside else names.get(doc_id, doc_id),
                        "hit": hit.get("chunk_id") in gold,
                        "outside": outside,
                    }
                )
            reference = task.references[0] if task.references else ""
            entry.update(
                answer=result.answer,
                error=result.error,
                metrics=result.metrics,
                timings=result.timings,
                retrieved=retrieved,
                diff=[{"op": op, "text": text} for op, text in word_diff(result.answer, reference)]
                if result.answer and reference
                else [],
                annotators=annotator_scores(result.details),
                judge_errors=judge_errors(result.details),
            )
        pipelines.append(entry)
    evidence = task_json(task)["evidence"]
    for ev in evidence:
        if ev["doc_id"]:
            passage(ev["doc_id"], None, None)
            ev["document"] = names.get(ev["doc_id"], ev["doc_id"])
    return {
        "experiment": {"id": experiment.id, "name": experiment.name, "mode": experiment.mode},
        "task": {**task_json(task), "evidence": evidence},
        "gold_chunk_ids": sorted(gold),
        "pipelines": pipelines,
    }
