"""Pipelines: what answers the tasks, and running one task through one.

Three kinds of pipeline:

``search``    a retriever of this project (keyword, dense or hybrid) plus a generator
              (offline, openai, local; the API key only ever comes from the environment);
``external``  a RAG service behind the HTTP contract of docs/evaluation.md;
``file``      what a system already produced: a TREC run file and/or JSONL answers,
              uploaded first (see :mod:`assay.experiments.runfiles`): a spec refers to a
              stored file by sha256 and name, never by a path on the server.

Modes: ``retrieval`` (retrieve only), ``generation`` (answer from the gold passages) and
``rag`` (retrieve, then answer from what was retrieved). :class:`PipelineRunner` prepares a
pipeline once (generator, files, document texts) and runs tasks one by one; a failure of one
task comes back as an :class:`Outcome` with ``error`` set, never as an exception.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from assay.errors import AssayError, InvalidInput
from assay.experiments.costs import call_usage
from assay.experiments.external import ContextResolver, ExternalClient
from assay.experiments.runfiles import FileRef, keep_local_file, load_file, ranking
from assay.experiments.scoring import Outcome
from assay.experiments.tasks import Task, task_lookup
from assay.llm import GeneratorSettings, generate_answer, make_generator
from assay.llm.endpoints import check_chosen, outgoing_policy
from assay.llm.records import Generator, Message
from assay.llm.traffic import Traffic, service_gate, workspace_traffic
from assay.records import Chunking, Project
from assay.search.embeddings import workspace_embedder
from assay.search.filters import parse_filters
from assay.search.retriever import RetrieverSettings
from assay.search.stages import (
    Retrieval,
    Stages,
    check_stage_generators,
    make_stage_tools,
    retrieve,
)
from assay.store.workspace import Workspace

PipelineKind = Literal["search", "external", "file"]
PRESETS: dict[str, dict[str, Any]] = {
    "keyword": {"retriever": {"kind": "keyword"}},
    "dense": {"retriever": {"kind": "dense"}},
    "hybrid": {"retriever": {"kind": "hybrid"}},
}


class PipelineSpec(BaseModel):
    """One pipeline of an experiment, as stored (no secrets: keys come from the env)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=200)
    kind: PipelineKind = "search"
    retriever: RetrieverSettings = Field(default_factory=RetrieverSettings)
    generator: dict[str, Any] = Field(default_factory=dict)
    endpoint: str = ""
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    retries: int = Field(default=2, ge=0, le=10)
    run_file: FileRef | None = None
    answers_file: FileRef | None = None
    rewrite: str = "none"
    rewrite_generator: dict[str, Any] = Field(default_factory=dict)
    reranker: dict[str, Any] = Field(default_factory=dict)
    expand: int = 0
    filters: dict[str, Any] = Field(default_factory=dict)

    @field_validator("run_file", "answers_file", mode="before")
    @classmethod
    def _no_paths(cls, value: Any) -> Any:
        if value == "":  # how specs without files were stored before uploads
            return None
        if isinstance(value, str | Path):
            raise ValueError(
                "files are not read from paths on the server; upload the file (the "
                "experiment form, or POST /api/projects/{name}/experiment-files) and give "
                'the {"sha256", "name"} it returns, or use the CLI, which reads your local '
                "file"
            )
        return value

    @field_validator("filters", mode="before")
    @classmethod
    def _filters_from_text(cls, value: Any) -> Any:
        """Filters may come as text (``key = value; key in a | b``): stored as JSON."""
        if isinstance(value, str):
            return {key: list(values) for key, values in parse_filters(value).items()}
        return value

    @field_validator("generator", "rewrite_generator")
    @classmethod
    def _valid_generator(cls, value: dict[str, Any]) -> dict[str, Any]:
        GeneratorSettings.from_mapping(value)  # raises InvalidInput naming the field
        return value

    @model_validator(mode="after")
    def _valid_stages(self) -> PipelineSpec:
        stages = self.stages()  # raises InvalidInput naming the option
        check_stage_generators(stages, self.generator, self.rewrite_generator)
        return self

    def generator_settings(self) -> GeneratorSettings:
        return GeneratorSettings.from_mapping(self.generator)

    def stages(self) -> Stages:
        """The retrieval stages of a ``search`` pipeline: rewrite, filters, rerank, expand."""
        return Stages.parse(
            rewrite=self.rewrite, reranker=self.reranker, expand=self.expand, filters=self.filters
        )


def parse_pipeline(value: str | Mapping[str, Any]) -> PipelineSpec:
    """A pipeline from JSON-ready data, or a preset name (``keyword``, ``dense``,
    ``hybrid``: that retriever with the offline generator)."""
    if isinstance(value, str):
        if value not in PRESETS:
            raise InvalidInput(
                f"unknown pipeline preset {value!r}; presets: {', '.join(PRESETS)} "
                "(or give a JSON object)"
            )
        data: dict[str, Any] = {"name": value, **PRESETS[value]}
    else:
        data = dict(value)
    try:
        spec = PipelineSpec.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'pipeline'}: "
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in error.errors()
        )
        raise InvalidInput(f"pipeline {data.get('name', '?')!r}: {problems}") from None
    except InvalidInput as exc:
        raise InvalidInput(f"pipeline {data.get('name', '?')!r}: {exc}") from None
    where = f"pipeline {spec.name!r}"
    if spec.kind != "search" and spec.stages().active:
        raise InvalidInput(
            f"{where}: rewrite, reranker, expand and filters apply to kind 'search' only"
        )
    if spec.kind == "external" and not spec.endpoint.startswith(("http://", "https://")):
        raise InvalidInput(f"{where}: kind 'external' needs endpoint, an http(s) URL")
    if spec.kind == "file" and not (spec.run_file or spec.answers_file):
        raise InvalidInput(f"{where}: kind 'file' needs run_file and/or answers_file")
    return spec


def attach_local_files(ws: Workspace, value: Mapping[str, Any]) -> dict[str, Any]:
    """For the local user only (CLI, Python API): ``run_file`` / ``answers_file`` given as a
    :class:`pathlib.Path` are read from this machine and stored like uploads. JSON from the
    web never holds a Path, so a request can never make the server open a file."""
    data = dict(value)
    for field, kind in (("run_file", "run"), ("answers_file", "answers")):
        if isinstance(data.get(field), Path):
            data[field] = keep_local_file(ws, data[field], kind).model_dump()
    return data


def check_pipelines(specs: Sequence[PipelineSpec], mode: str) -> None:
    names = [s.name for s in specs]
    if not specs:
        raise InvalidInput("an experiment needs at least one pipeline")
    if len(set(names)) != len(names):
        raise InvalidInput(f"pipeline names must differ, got: {', '.join(names)}")
    for spec in specs:
        if spec.kind == "file" and mode != "retrieval" and not spec.answers_file:
            raise InvalidInput(f"pipeline {spec.name!r}: mode {mode!r} needs answers_file")


def check_outgoing(
    ws: Workspace, specs: Sequence[PipelineSpec], judges: Sequence[GeneratorSettings] = ()
) -> None:
    """Refuse, when an experiment is created, URLs the workspace's outgoing policy would
    refuse at run time (endpoints, generator and judge base URLs; in team mode any an admin
    did not register), so the user learns early."""
    policy = outgoing_policy(ws)
    urls = [(f"pipeline {s.name!r}: endpoint", s.endpoint) for s in specs if s.kind == "external"]
    urls += [
        (f"pipeline {s.name!r}: generator base_url", s.generator_settings().base_url)
        for s in specs
        if s.kind == "search" and s.generator_settings().kind == "openai"
    ]
    urls += [
        (f"pipeline {s.name!r}: reranker url", s.reranker.get("url", ""))
        for s in specs
        if s.reranker.get("kind", "http") == "http" and s.reranker
    ]
    for s in specs:
        for what, given in (("rewrite", s.rewrite_generator), ("reranker", s.reranker)):
            inner = given.get("generator", {}) if what == "reranker" else given
            if inner and GeneratorSettings.from_mapping(inner).kind == "openai":
                urls.append((f"pipeline {s.name!r}: {what} generator base_url", inner["base_url"]))
    urls += [("judge base_url", g.base_url) for g in judges if g.kind == "openai"]
    for where, url in urls:
        check_chosen(ws, url, where, policy=policy)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


class PipelineRunner:
    """One pipeline, prepared once, answering tasks one at a time."""

    def __init__(
        self,
        ws: Workspace,
        project: Project,
        spec: PipelineSpec,
        mode: str,
        chunking: Chunking,
        tasks: Sequence[Task] = (),
        depth: int | None = None,
        traffic: Traffic | None = None,
    ) -> None:
        """``depth`` keeps only the first ``depth`` entries of a run file's rankings;
        ``traffic`` gives the endpoint gates and response cache (default: the workspace's,
        with the project's cache)."""
        traffic = traffic if traffic is not None else workspace_traffic(ws, project.id)
        self.ws = ws
        self.depth = depth
        self.project = project
        self.spec = spec
        self.mode = mode
        self.chunking = chunking
        self.resolver = ContextResolver(ws, project, chunking)
        self.generator: Generator | None = None
        self.client: ExternalClient | None = None
        self.run: dict[str, list[tuple[str, float]]] = {}
        self.answers: dict[str, dict[str, Any]] = {}
        self.embedder: Any = None
        self.tools = make_stage_tools(Stages())
        self.stages = spec.stages()
        policy = outgoing_policy(ws)
        if spec.kind == "search" and mode != "retrieval":
            self.generator = make_generator(
                spec.generator_settings(), traffic=traffic, policy=policy
            )
        if spec.kind == "search" and mode != "generation":
            self.tools = make_stage_tools(
                self.stages,
                spec.generator,
                rewrite_generator=spec.rewrite_generator,
                traffic=traffic,
                policy=policy,
            )
        if spec.kind == "search" and spec.retriever.kind != "keyword" and mode != "generation":
            self.embedder = workspace_embedder(ws, spec.retriever.embedder)
        if spec.kind == "external":
            self.client = ExternalClient(
                spec.endpoint,
                timeout_s=spec.timeout_s,
                retries=spec.retries,
                gate=service_gate(traffic, spec.endpoint, timeout_s=spec.timeout_s),
                policy=policy,
            )
        if spec.kind == "file":
            self._read_files(tasks)

    def _read_files(self, tasks: Sequence[Task]) -> None:
        lookup = task_lookup(tasks)
        if self.spec.run_file:
            for qid, scores in load_file(self.ws, self.spec.run_file, "run").items():
                task = lookup.get(qid)
                if task is not None:
                    self.run.setdefault(task.task_id, ranking(scores)[: self.depth])
        if self.spec.answers_file:
            for key, record in load_file(self.ws, self.spec.answers_file, "answers").items():
                task = lookup.get(key)
                if task is not None:
                    self.answers.setdefault(task.task_id, record)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def answer(self, task: Task) -> Outcome:
        """Run one task; any error is caught and returned in the outcome."""
        start = time.perf_counter()
        try:
            outcome = self._answer(task)
        except AssayError as exc:
            return Outcome(timings={"total_ms": _ms(start)}, error=str(exc))
        except Exception as exc:  # a bug or a backend surprise must not end a long run
            return Outcome(
                timings={"total_ms": _ms(start)}, error=f"{exc.__class__.__name__}: {exc}"
            )
        return Outcome(
            retrieved=outcome.retrieved,
            answer=outcome.answer,
            contexts=outcome.contexts,
            timings={**outcome.timings, "total_ms": _ms(start)},
            details=outcome.details,
        )

    def _answer(self, task: Task) -> Outcome:
        if self.spec.kind == "external":
            return self._external(task)
        if self.spec.kind == "file":
            return self._file(task)
        timings: dict[str, float] = {}
        retrieved: list[dict[str, Any]] = []
        details: dict[str, Any] = {}
        if self.mode == "generation":
            passages = [(_label(e.doc_id), e.text) for e in task.relevant if e.text.strip()]
        else:
            found = self.retrieve(task)
            timings.update(found.timings)
            retrieved = found.entries()
            passages = [(_label(c.hit.doc_id), c.text) for c in found.contexts]
            details = found.details()
        answer = ""
        if self.generator is not None:
            began = time.perf_counter()
            settings = self.spec.generator_settings()
            generation = generate_answer(
                self.generator,
                task.turns[-1] if task.turns else "",
                passages,
                history=[Message(m["role"], m["content"]) for m in task.history],  # type: ignore[arg-type]
                template=settings.prompt_template,
                language=self.project.language,
            )
            timings["generate_ms"] = _ms(began)
            answer = generation.text
            if generation.usage or generation.cached:  # offline: none, no model was called
                usage = details.setdefault("usage", {})
                usage["generate"] = call_usage(generation.model, generation)
        return Outcome(
            retrieved=tuple(retrieved),
            answer=answer,
            contexts=tuple(text for _, text in passages),
            timings=timings,
            details=details,
        )

    def retrieve(self, task: Task) -> Retrieval:
        """The retrieval of a ``search`` pipeline for one task, every stage included
        (what judgment pools take from a pipeline); errors propagate."""
        return retrieve(
            self.ws,
            self.project,
            task.query(self.spec.retriever.query_from),
            k=self.spec.retriever.k,
            chunking=self.chunking,
            retriever=self.spec.retriever,
            stages=self.stages,
            tools=self.tools,
            embedder=self.embedder,
            history=task.history,
        )

    def _external(self, task: Task) -> Outcome:
        assert self.client is not None
        began = time.perf_counter()
        reply = self.client.ask(
            task, task.query(self.spec.retriever.query_from), self.spec.retriever.k
        )
        timings = {"request_ms": _ms(began)}
        retrieved = self.resolver.resolve(reply.contexts)
        return Outcome(
            retrieved=tuple(retrieved),
            answer=reply.answer,
            contexts=tuple(str(e["text"]) for e in retrieved if e["text"]),
            timings=timings,
        )

    def _file(self, task: Task) -> Outcome:
        record = self.answers.get(task.task_id)
        ranked = self.run.get(task.task_id)
        if record is None and ranked is None:
            raise InvalidInput(
                f"pipeline {self.spec.name!r}: the files have no entry for this task"
            )
        retrieved: list[dict[str, Any]] = []
        if ranked is not None:
            retrieved = self.resolver.resolve_ids(ranked)
        elif record is not None:
            retrieved = self.resolver.resolve(record["contexts"])
        contexts = [str(e["text"]) for e in retrieved if e["text"]]
        if record is not None and record["contexts"] and ranked is not None:
            contexts = [str(c.get("text") or "") for c in record["contexts"] if c.get("text")]
        return Outcome(
            retrieved=tuple(retrieved),
            answer=record["answer"] if record else "",
            contexts=tuple(contexts),
        )


def _label(doc_id: str | None) -> str:
    return doc_id or "passage"


def outcome_level(outcome: Outcome) -> Literal["chunk", "doc"]:
    """Score at the grain the system reported: chunks when any retrieved entry names a
    known chunk, else documents when any names a document."""
    if any(e.get("chunk_id") and e.get("start") is not None for e in outcome.retrieved):
        return "chunk"
    if any(e.get("doc_id") for e in outcome.retrieved):
        return "doc"
    return "chunk"
