"""Which questions of a run the gold knows: a run and qrels (or a project's tasks) that
share no query id are refused, a partial overlap is counted for a warning; and the scoring
of a run against qrels alone (``assay eval --qrels … --run …``), which checks them first.

A run scored against gold it shares no query id with scores 0.0 on every measure, which
looks like a result; it is nearly always two files that name their questions differently.
Run ids in the form older Assay files used (``ITEM::TURN``, see
:mod:`assay.formats.query_ids`) are read as the qrels' ids they stand for.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.errors import InvalidInput
from assay.experiments.pipelines import PipelineSpec
from assay.experiments.runfiles import Qrels, load_file, ranking, read_run
from assay.experiments.tasks import Task, task_lookup
from assay.formats.query_ids import newer_form
from assay.metrics import evaluate, parse_metric
from assay.store.workspace import Workspace

EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class Overlap:
    """How the query ids of a run and of its gold line up."""

    gold: str
    """What the gold is, for messages (``the qrels q.tsv``, ``project 'demo'``)."""
    run: str
    matched: int
    gold_only: tuple[str, ...]
    """Questions of the gold the run has no line for."""
    run_only: tuple[str, ...]
    """Query ids of the run the gold does not know (ignored when scoring)."""
    renamed: int = 0
    """Run ids in an older Assay form read as the gold's."""

    def warning(self, missing_counts: str) -> str | None:
        """One line for a partial overlap (None when every id is matched); ``missing_counts``
        says how the gold's questions without a run line are scored."""
        parts = []
        if self.gold_only:
            parts.append(
                f"{len(self.gold_only)} of {self.matched + len(self.gold_only)} questions of "
                f"{self.gold} have no line in the run {self.run} ({missing_counts}; e.g. "
                f"{_examples(self.gold_only)})"
            )
        if self.run_only:
            parts.append(
                f"{len(self.run_only)} of {self.matched + len(self.run_only)} query ids of the "
                f"run match no question of {self.gold} and are ignored (e.g. "
                f"{_examples(self.run_only)})"
            )
        return "; ".join(parts) or None

    def to_json(self) -> dict[str, int]:
        return {
            "matched": self.matched,
            "gold_only": len(self.gold_only),
            "run_only": len(self.run_only),
            "renamed": self.renamed,
        }


def _examples(ids: Sequence[str]) -> str:
    return ", ".join(ids[:EXAMPLES]) + (", …" if len(ids) > EXAMPLES else "")


def overlap(
    gold: Collection[str], run: Collection[str], gold_name: str, run_name: str, renamed: int = 0
) -> Overlap:
    """The overlap of the gold's and the run's query ids; refused (InvalidInput) when they
    share none, with examples of each side's ids."""
    known = set(gold)
    hit = {q for q in run if q in known}
    if run and known and not hit:
        _refuse(known, run, gold_name, run_name)
    return Overlap(
        gold=gold_name,
        run=run_name,
        matched=len(hit),
        gold_only=tuple(sorted(q for q in known if q not in hit)),
        run_only=tuple(sorted(q for q in run if q not in known)),
        renamed=renamed,
    )


def task_overlap(
    tasks: Sequence[Task], run: Collection[str], gold_name: str, run_name: str
) -> Overlap:
    """The overlap of a run (or answers file) with a project's tasks, its ids read as
    :func:`assay.experiments.tasks.task_lookup` reads them; refused when none matches."""
    lookup = task_lookup(tasks)
    hit = {lookup[q].task_id for q in run if q in lookup}
    if run and tasks and not hit:
        _refuse({t.query_id or t.task_id for t in tasks}, run, gold_name, run_name)
    return Overlap(
        gold=gold_name,
        run=run_name,
        matched=len(hit),
        gold_only=tuple(t.query_id or t.task_id for t in tasks if t.task_id not in hit),
        run_only=tuple(sorted(q for q in run if q not in lookup)),
    )


def _refuse(gold: Collection[str], run: Collection[str], gold_name: str, run_name: str) -> None:
    raise InvalidInput(
        f"the run {run_name} and {gold_name} share no query id, so every measure would be 0: "
        f"the run has e.g. {_examples(sorted(run))}; {gold_name} has e.g. "
        f"{_examples(sorted(gold))}. Both must name questions the same way (single-turn items "
        "by their id, conversation turns as ID<::>TURN: docs/formats.md, Query ids)"
    )


def with_newer_ids(
    run: Mapping[str, dict[str, float]], known: Collection[str]
) -> tuple[dict[str, dict[str, float]], int]:
    """The run with ids in an older Assay form (``ITEM::TURN``) renamed to the ``known`` ids
    they stand for, and how many were renamed; an id already known is never renamed."""
    wanted = frozenset(known)
    renamed: dict[str, dict[str, float]] = {}
    count = 0
    for qid, scores in run.items():
        target = None if qid in wanted else newer_form(qid, wanted)
        if target is None or target in run or target in renamed:
            renamed.setdefault(qid, scores)
        else:
            renamed[target] = scores
            count += 1
    return renamed, count


def file_overlaps(
    ws: Workspace, spec: PipelineSpec, tasks: Sequence[Task], gold_name: str
) -> dict[str, Overlap]:
    """How the ids of a file pipeline's run and answers files meet the tasks (``run``,
    ``answers``); refused when a file's ids meet none."""
    found: dict[str, Overlap] = {}
    if spec.kind != "file":
        return found
    for kind, ref in (("run", spec.run_file), ("answers", spec.answers_file)):
        if ref is not None:
            ids = list(load_file(ws, ref, kind))
            found[kind] = task_overlap(tasks, ids, gold_name, ref.name)
    return found


def score_run(
    qrels: Qrels, run_path: Path, metrics: Sequence[str], k: int | None, gold_name: str
) -> tuple[dict[str, float | None], Overlap, int]:
    """IR measures (ir_measures' names) of a run file against qrels, no project: the ids
    checked (:func:`overlap`, older forms renamed), the run cut at depth ``k``. The means,
    the overlap and the number of the run's queries."""
    parsed = [parse_metric(m) for m in metrics]
    not_ir = [p.name for p in parsed if p.spec.kind != "ir"]
    if not_ir:
        raise InvalidInput(
            f"--qrels with --run computes IR measures (nDCG@k, R@k, P@k, RR, AP, "
            f"Success@k, Judged@k); not: {', '.join(not_ir)}"
        )
    run, renamed = with_newer_ids(read_run(run_path), qrels)
    matched = overlap(qrels, run, gold_name, str(run_path), renamed)
    if k is not None:
        run = {q: dict(ranking(scores)[:k]) for q, scores in run.items()}
    values = evaluate(qrels, run, [p.name for p in parsed])
    return dict(values), matched, len(run)
