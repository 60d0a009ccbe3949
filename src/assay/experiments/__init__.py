"""Experiments: gold items become tasks, pipelines answer them, metrics say how well.

``tasks``      items → tasks (turn selection, gold chunk ids, reference answers)
``pipelines``  pipeline specs (search, external HTTP, files) and running one task
``external``   the HTTP contract client and placing returned contexts in documents
``runfiles``   TREC run files, qrels and JSONL answers; uploaded files kept by sha256
``judge``      LLM-as-judge metrics with verdicts parsed from ``<verdict>`` tags
``scoring``    per-task metrics and aggregates (overall and per query type)
``store``      experiments and their frozen tasks in the database
``results``    the stored results of an experiment, all or one task across pipelines
``runner``     run, cancel and resume with progress; ``evaluate_tasks`` for ``assay eval``
``compare``    two experiments side by side, differences sorted
``judge_agreement``  the LLM judge against people's labels of the same tasks
"""

from __future__ import annotations

from assay.experiments.judge import JudgeMetric, Verdict, judge, parse_verdict
from assay.experiments.pipelines import PipelineSpec, parse_pipeline
from assay.experiments.results import TaskResult, iter_results, task_results
from assay.experiments.runfiles import (
    FileRef,
    keep_file,
    keep_local_file,
    read_answers,
    read_qrels,
    read_run,
)
from assay.experiments.runner import Evaluation, evaluate_tasks, run_experiment
from assay.experiments.scoring import DEFAULT_METRICS, MetricPlan, Outcome, aggregate, metric_plan
from assay.experiments.store import (
    Experiment,
    cancel_experiment,
    create_experiment,
    delete_experiment,
    get_experiment,
    list_experiments,
)
from assay.experiments.tasks import Task, build_tasks, select_turns

__all__ = [
    "DEFAULT_METRICS",
    "Evaluation",
    "Experiment",
    "FileRef",
    "JudgeMetric",
    "MetricPlan",
    "Outcome",
    "PipelineSpec",
    "Task",
    "TaskResult",
    "Verdict",
    "aggregate",
    "build_tasks",
    "cancel_experiment",
    "create_experiment",
    "delete_experiment",
    "evaluate_tasks",
    "get_experiment",
    "iter_results",
    "judge",
    "keep_file",
    "keep_local_file",
    "list_experiments",
    "metric_plan",
    "parse_pipeline",
    "parse_verdict",
    "read_answers",
    "read_qrels",
    "read_run",
    "run_experiment",
    "select_turns",
    "task_results",
]
