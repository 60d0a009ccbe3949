"""Experiments in the database: create (with a snapshot of every task), read, cancel.

Creating an experiment freezes its tasks, gold included, so later edits to items change no
run. Pages and the CLI read experiments through :func:`list_experiments` and
:func:`get_experiment` (with aggregates per pipeline); their stored results through
``assay.experiments.results``. Write functions take the caller's ``conn=`` (an entry point's
one transaction per operation) and open a transaction of their own only without one.

One experiment is found by id or by name (:func:`find_experiment`; an id wins over a name of
digits).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from assay.corpus.chunkings import get_chunking
from assay.errors import Conflict, InvalidInput, NotFound
from assay.experiments.concurrency import check_concurrency
from assay.experiments.costs import cost_totals
from assay.experiments.pipelines import (
    PipelineSpec,
    attach_local_files,
    check_outgoing,
    check_pipelines,
    parse_pipeline,
)
from assay.experiments.query_match import file_overlaps
from assay.experiments.runfiles import display_name
from assay.experiments.scoring import aggregate, metric_plan
from assay.experiments.tasks import (
    Task,
    build_tasks,
    check_statuses,
    task_from_json,
    task_to_json,
    version_tasks,
)
from assay.gold.project_config import generator_settings
from assay.gold.statuses import DEFAULT_STATUSES, describe, is_every_status
from assay.people.actors import AUTHOR_NAME, acting_account
from assay.records import Project
from assay.review.versions import get_version
from assay.store.db import as_utc, reading, record_from_row, transaction, utcnow
from assay.store.projects import check_name
from assay.store.schema import accounts, experiment_results, experiment_tasks, experiments
from assay.store.workspace import Workspace

STATES: tuple[str, ...] = ("pending", "running", "cancelled", "done", "failed")


@dataclass(frozen=True, slots=True)
class Experiment:
    id: int
    project_id: int
    name: str
    mode: str
    selection: dict[str, Any]
    pipelines: list[dict[str, Any]]
    metrics: list[Any]
    status: str
    stop_requested: bool
    task_count: int
    done_count: int
    error_count: int
    message: str
    author: str
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    aggregates: dict[str, Any] = field(default_factory=dict)
    """Per pipeline: :func:`assay.experiments.scoring.aggregate` plus ``errors`` (only
    filled by :func:`get_experiment`)."""
    costs: dict[str, Any] = field(default_factory=dict)
    """Tokens and cost per pipeline and in total: :func:`assay.experiments.costs.cost_totals`
    (only filled by :func:`get_experiment`)."""
    budget: dict[str, Any] | None = None
    """The current run's cap (:class:`assay.experiments.budget.Budget` as JSON), if any."""

    @property
    def total(self) -> int:
        """Units of work: every task through every pipeline."""
        return self.task_count * len(self.pipelines)

    @property
    def metric_names(self) -> list[str]:
        return [m if isinstance(m, str) else str(m.get("name")) for m in self.metrics]


def _experiment(
    row: Any, aggregates: dict[str, Any] | None = None, costs: dict[str, Any] | None = None
) -> Experiment:
    return record_from_row(
        Experiment,
        row,
        pipelines=[_without_paths(p) for p in row.pipelines],
        stop_requested=bool(row.stop_requested),
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
        started_at=as_utc(row.started_at) if row.started_at else None,
        finished_at=as_utc(row.finished_at) if row.finished_at else None,
        aggregates=aggregates or {},
        costs=costs or {},
    )


def _without_paths(pipeline: dict[str, Any]) -> dict[str, Any]:
    """A pipeline as stored, except that a file stored as a path (before files were
    uploaded) shows only its last part: server paths never reach a page. Such a pipeline
    cannot run; its error asks for the file to be uploaded."""
    shown = dict(pipeline)
    for key in ("run_file", "answers_file"):
        if isinstance(shown.get(key), str) and shown[key]:
            shown[key] = display_name(shown[key])
    return shown


def create_experiment(
    ws: Workspace,
    project: Project,
    name: str,
    *,
    pipelines: Sequence[str | Mapping[str, Any] | PipelineSpec],
    mode: str = "retrieval",
    metrics: Iterable[str | Mapping[str, Any]] | None = None,
    statuses: str | Iterable[str] | None = DEFAULT_STATUSES,
    turns: str = "all",
    seed: int = 0,
    chunking: str | None = None,
    embedder: str = "minilm",
    author: int | None = None,
    tasks: Sequence[Task] | None = None,
    version: str | None = None,
    concurrency: int | None = None,
    conn: sa.Connection | None = None,
) -> Experiment:
    """Check everything, build the tasks (unless given) and store them with the experiment,
    all in one transaction: the caller's ``conn`` when given, else one of its own.
    ``embedder`` serves semantic_similarity. ``version``: the tasks come from that frozen
    dataset version (``statuses`` is then the version's), not from the live items; its
    chunking is the default. ``concurrency``: units to run at once per worker (default:
    from the endpoints' ``max_in_flight``)."""
    name = check_name(name, "experiment")
    concurrency = check_concurrency(concurrency)
    plan = metric_plan(metrics, mode, generator_settings(project))
    specs = [
        p
        if isinstance(p, PipelineSpec)
        else parse_pipeline(p if isinstance(p, str) else attach_local_files(ws, p))
        for p in pipelines
    ]
    check_pipelines(specs, mode)
    check_outgoing(ws, specs, [j.generator for j in plan.judges] + [m.generator for m in plan.llm])
    wanted = check_statuses(statuses)
    frozen = get_version(ws, project, version, conn=conn) if version is not None else None
    if frozen is not None:
        chunking = chunking or frozen.chunking
        wanted = check_statuses(frozen.summary.get("statuses"))
    chunk = get_chunking(ws, project, chunking, conn=conn)
    if tasks is None and frozen is not None:
        tasks = version_tasks(ws, project, frozen, chunk, turns=turns, seed=seed, conn=conn)
    if tasks is None:
        tasks = build_tasks(
            ws, project, statuses=wanted, turns=turns, seed=seed, chunking=chunk.name, conn=conn
        )
    if not tasks:
        shown = describe(wanted)
        raise InvalidInput(
            f"no tasks: project {project.name!r} has no items with status {shown}; accept "
            "some items or choose other statuses"
        )
    for spec in specs:  # a run or answers file naming none of the questions is refused
        file_overlaps(ws, spec, tasks, f"project {project.name!r}")
    selection: dict[str, Any] = {
        "statuses": "all" if is_every_status(wanted) else list(wanted),
        "turns": turns,
        "seed": seed,
        "chunking": chunk.name,
        "embedder": embedder,
    }
    if frozen is not None:
        selection["version"] = {"name": frozen.name, "hash": frozen.hash}
    if concurrency is not None:
        selection["concurrency"] = concurrency
    now = utcnow()
    with transaction(ws.engine, conn) as conn:
        clash = conn.scalar(
            sa.select(experiments.c.id).where(
                experiments.c.project_id == project.id, experiments.c.name == name
            )
        )
        if clash:
            raise Conflict(
                f"project {project.name!r} already has an experiment named {name!r}",
                key="raised.experiment_name_taken",
                project=project.name,
                name=name,
            )
        experiment_id = insert_experiment(
            conn,
            project,
            name,
            mode=mode,
            selection=selection,
            pipelines=[s.model_dump(mode="json") for s in specs],
            metrics=plan.to_json(),
            tasks=tasks,
            author=author if author is not None else acting_account(ws, conn=conn),
            at=now,
            dataset_version_id=frozen.id if frozen is not None else None,
        )
        return get_experiment(ws, project, experiment_id, with_aggregates=False, conn=conn)


def insert_experiment(
    conn: sa.Connection,
    project: Project,
    name: str,
    *,
    mode: str,
    selection: dict[str, Any],
    pipelines: list[dict[str, Any]],
    metrics: list[Any],
    tasks: Sequence[Task],
    author: int,
    at: datetime,
    done: int | None = None,
    dataset_version_id: int | None = None,
) -> int:
    """Write an experiment and its frozen tasks; returns its id. ``done``: the experiment
    comes finished (an import) with that many results; else it waits for its run."""
    finished = at if done is not None else None
    experiment_id = conn.execute(
        experiments.insert().values(
            project_id=project.id,
            name=name,
            mode=mode,
            selection=selection,
            pipelines=pipelines,
            metrics=metrics,
            status="pending" if done is None else "done",
            stop_requested=False,
            task_count=len(tasks),
            done_count=done or 0,
            error_count=0,
            message="",
            author_id=author,
            created_at=at,
            updated_at=at,
            started_at=finished,
            finished_at=finished,
            dataset_version_id=dataset_version_id,
        )
    ).inserted_primary_key[0]  # type: ignore[index]
    insert_tasks(int(experiment_id), tasks, conn=conn)
    return int(experiment_id)


def insert_tasks(experiment_id: int, tasks: Sequence[Task], *, conn: sa.Connection) -> None:
    """Freeze an experiment's tasks, in their order."""
    if not tasks:
        return
    conn.execute(
        experiment_tasks.insert(),
        [
            {
                "experiment_id": experiment_id,
                "task_id": task.task_id,
                "ordinal": ordinal,
                "item_id": task.item_id,
                "query_type": task.query_type,
                "data": task_to_json(task),
            }
            for ordinal, task in enumerate(tasks)
        ],
    )


def list_experiments(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> list[Experiment]:
    """The project's experiments, newest first (without aggregates)."""
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            select_experiments()
            .where(experiments.c.project_id == project.id)
            .order_by(experiments.c.created_at.desc(), experiments.c.id.desc())
        ).all()
    return [_experiment(r) for r in rows]


def get_experiment(
    ws: Workspace,
    project: Project,
    ref: int | str,
    *,
    with_aggregates: bool = True,
    conn: sa.Connection | None = None,
) -> Experiment:
    """One experiment by id or name; with aggregates of its stored results per pipeline."""
    with reading(ws.engine, conn) as conn:
        row = find_experiment(conn, project, ref)
        if not with_aggregates:
            return _experiment(row)
        names = [m if isinstance(m, str) else str(m.get("name")) for m in row.metrics]
        types = dict(
            conn.execute(
                sa.select(experiment_tasks.c.task_id, experiment_tasks.c.query_type).where(
                    experiment_tasks.c.experiment_id == row.id
                )
            ).all()
        )
        per_pipeline: dict[str, list[tuple[str, dict[str, Any]]]] = {
            p["name"]: [] for p in row.pipelines
        }
        errors: dict[str, int] = {p["name"]: 0 for p in row.pipelines}
        used: list[tuple[str, dict[str, Any]]] = []
        for result in conn.execute(
            sa.select(
                experiment_results.c.pipeline,
                experiment_results.c.task_id,
                experiment_results.c.metrics,
                experiment_results.c.details,
                experiment_results.c.error,
            ).where(experiment_results.c.experiment_id == row.id)
        ):
            used.append((result.pipeline, result.details))
            if result.error is not None:
                errors[result.pipeline] = errors.get(result.pipeline, 0) + 1
                continue
            per_pipeline.setdefault(result.pipeline, []).append(
                (types.get(result.task_id, ""), result.metrics)
            )
    aggregates = {
        name: {**aggregate(rows, names), "errors": errors.get(name, 0)}
        for name, rows in per_pipeline.items()
    }
    costs = cost_totals(used, [p["name"] for p in row.pipelines])
    return _experiment(row, aggregates, costs)


def experiment_tasks_of(
    ws: Workspace, experiment_id: int, *, conn: sa.Connection | None = None
) -> list[Task]:
    """The frozen tasks of an experiment, in their order."""
    with reading(ws.engine, conn) as conn:
        rows = conn.scalars(
            sa.select(experiment_tasks.c.data)
            .where(experiment_tasks.c.experiment_id == experiment_id)
            .order_by(experiment_tasks.c.ordinal)
        ).all()
    return [task_from_json(data) for data in rows]


def cancel_experiment(
    ws: Workspace, project: Project, ref: int | str, *, conn: sa.Connection | None = None
) -> Experiment:
    """Ask a run to stop after its current task. A pending experiment is cancelled at once;
    a running one is marked cancelled by its runner (in whatever process it runs)."""
    with transaction(ws.engine, conn) as conn:
        row = find_experiment(conn, project, ref)
        values: dict[str, Any] = {"stop_requested": True, "updated_at": utcnow()}
        if row.status == "pending":
            values["status"] = "cancelled"
        conn.execute(experiments.update().where(experiments.c.id == row.id).values(**values))
        return get_experiment(ws, project, row.id, with_aggregates=False, conn=conn)


def delete_experiment(
    ws: Workspace, project: Project, ref: int | str, *, conn: sa.Connection | None = None
) -> None:
    """Delete an experiment with its tasks and results (the caller's ``conn`` when given)."""
    with transaction(ws.engine, conn) as conn:
        row = find_experiment(conn, project, ref)
        conn.execute(
            experiment_results.delete().where(experiment_results.c.experiment_id == row.id)
        )
        conn.execute(experiment_tasks.delete().where(experiment_tasks.c.experiment_id == row.id))
        conn.execute(experiments.delete().where(experiments.c.id == row.id))


def pipeline_specs(experiment: Experiment) -> list[PipelineSpec]:
    return [parse_pipeline(p) for p in experiment.pipelines]


def _where(project: Project, ref: int | str) -> Any:
    # an id is up to 9 ASCII digits ("³".isdigit() is true too; longer ones overflow the column)
    digits = isinstance(ref, str) and ref.isascii() and ref.isdigit() and len(ref) <= 9
    if (isinstance(ref, int) and 0 <= ref < 2**31) or digits:
        by_id = experiments.c.id == int(ref)
        by_name = experiments.c.name == str(ref)
        return sa.and_(experiments.c.project_id == project.id, sa.or_(by_id, by_name))
    return sa.and_(experiments.c.project_id == project.id, experiments.c.name == str(ref))


def select_experiments() -> sa.Select[Any]:
    """Experiments with their author's shown name (``author``)."""
    return sa.select(experiments, AUTHOR_NAME.label("author")).join(
        accounts, accounts.c.id == experiments.c.author_id
    )


def find_experiment(conn: sa.Connection, project: Project, ref: int | str) -> Any:
    rows = conn.execute(select_experiments().where(_where(project, ref))).all()
    if not rows:
        raise NotFound(
            f"project {project.name!r} has no experiment {ref!r}",
            key="raised.no_experiment",
            project=project.name,
            ref=ref,
        )
    # an id wins over a name that happens to be digits
    return next((r for r in rows if str(r.id) == str(ref)), rows[0])
