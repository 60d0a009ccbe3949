"""Exchange formats: the Bundle every format reads and writes, and the registry of formats.

A Bundle is a plain, database-free picture of a project: documents, chunkings, gold items
(:class:`assay.records.Item`, the same record the store and the web use; in a Bundle an
evidence's ``doc_id`` is the ``ref`` of a Bundle document),
systems' results on those items (evaluations) and what a reader could not take in. Each format
module offers ``read(path) -> Bundle`` and ``write(bundle, path, **options)`` and never touches
the database; ``assay.transfer`` moves Bundles into and out of projects. Collections in a Bundle
are iterables so an export can stream a million chunks; readers hand over lists, and a
format that can also offers ``stream(path)``, whose items come as they are read (imports).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from assay.errors import InvalidInput
from assay.records import Comment, Item

T = TypeVar("T")


class Lazy(Generic[T]):
    """A re-iterable sequence built by calling ``factory`` on every iteration (streams)."""

    def __init__(self, factory: Callable[[], Iterable[T]]) -> None:
        self.factory = factory

    def __iter__(self) -> Iterator[T]:
        return iter(self.factory())


@dataclass
class ProjectInfo:
    name: str = ""
    language: str = "en"
    settings: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    author: str = ""
    created_at: str = ""
    updated_at: str = ""


@dataclass
class DocumentRecord:
    """One document. ``ref`` is how chunks and evidence of the same Bundle point at it (a
    foreign id on import, the document id on export)."""

    ref: str
    name: str
    media_type: str = ""
    data: bytes | None = None
    text: str | None = None
    """The extracted text (export), or the text a reader expects the document to have."""
    metadata: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    author: str = ""
    sha256: str = ""
    text_sha256: str = ""
    created_at: str = ""
    updated_at: str = ""
    """When the document was added and last changed (ISO; export only, "" when unknown)."""
    load: Callable[[], bytes] | None = field(default=None, repr=False)
    """Reads the original bytes on demand (exports stream them)."""

    def original(self) -> bytes:
        if self.data is not None:
            return self.data
        if self.load is not None:
            return self.load()
        return (self.text or "").encode("utf-8")


@dataclass
class ChunkRecord:
    chunk_id: str
    doc_ref: str
    start: int
    end: int
    text: str | None = None


@dataclass
class ChunkingRecord:
    """``method == "imported"`` chunkings carry their chunks; others are re-made from
    ``method`` and ``params`` on import."""

    name: str
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    is_default: bool = False
    chunks: Iterable[ChunkRecord] = field(default_factory=list)


@dataclass
class Issue:
    """A record a reader could not take in (skipped) or took in with a doubt (flagged)."""

    where: str
    message: str
    severity: str = "error"
    """``error``: the record was left out (a strict import refuses the file);
    ``omitted``: left out as the format's own tool leaves it out (an AutoRAG row without
    contents), so the file is not refused for it; ``warning``: the record was kept and is
    flagged."""

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class ModelRecord:
    """A system that answered an evaluation's tasks (InspectorRAGet's model)."""

    model_id: str
    name: str = ""
    owner: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    """Other fields of the model (description, base_model, …), kept as they came."""


@dataclass
class MetricDefinition:
    """What a metric of an evaluation measures and which values it takes."""

    name: str
    author: str = "algorithm"
    """``algorithm`` (one ``system`` value per result) or ``human`` (one per annotator)."""
    type: str = "numerical"
    """``numerical``, ``categorical`` (one of ``values``) or ``text``."""
    aggregator: str | None = None
    range: list[float] | None = None
    """``[start, end, bin_size]`` of a numerical metric, when it has one."""
    values: list[dict[str, Any]] | None = None
    """A categorical metric's ``{value, display_value, numeric_value}`` choices."""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScoreRecord:
    """One annotator's value of one metric for one result (``system`` for algorithms)."""

    annotator: str
    value: Any
    timestamp: float | None = None
    duration: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ResultRecord:
    """One model's answer to one task and its scores: ``scores[metric]`` per annotator."""

    task_id: str
    model_id: str
    answer: str = ""
    output: list[dict[str, Any]] | None = None
    """The answer messages as the file had them (None: one assistant message)."""
    contexts: list[dict[str, Any]] | None = None
    scores: dict[str, list[ScoreRecord]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class EvaluationDocument:
    """A document as an evaluation names it: its id there, the Bundle document it is, and
    its other fields (title, url, …) but not its text (the DocumentRecord holds that)."""

    document_id: str
    doc_ref: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class EvaluationTask:
    """A task of an evaluation and the Bundle item that holds it."""

    task_id: str
    item_ref: str


@dataclass
class EvaluationRecord:
    """Systems' answers to the Bundle's items and their scores (InspectorRAGet's models,
    metrics, filters and results); on import it becomes an experiment."""

    name: str = ""
    models: list[ModelRecord] = field(default_factory=list)
    metrics: list[MetricDefinition] = field(default_factory=list)
    filters: list[str] | None = None
    documents: list[EvaluationDocument] = field(default_factory=list)
    tasks: list[EvaluationTask] = field(default_factory=list)
    results: list[ResultRecord] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    """Top-level fields of the file the records above do not hold (description, …)."""


@dataclass(frozen=True)
class ItemSource:
    """Where a streamed Bundle's items can be read again from the start, by another process:
    an import prepares the items of a large file in a second process
    (:mod:`assay.transfer.item_pipeline`). ``module`` (under ``assay.formats``) has
    ``stream_items(path, issues)``, the items as ``stream(path).items`` gives them, each
    problem found while reading added to ``issues``."""

    module: str
    path: Path
    size: int
    """Bytes of item text to read (uncompressed): whether a second process would help."""

    def items(self, issues: list[Issue]) -> Iterator[Item]:
        module = importlib.import_module(f"assay.formats.{self.module}")
        found: Iterator[Item] = module.stream_items(self.path, issues)
        return found


@dataclass
class Bundle:
    project: ProjectInfo = field(default_factory=ProjectInfo)
    documents: Iterable[DocumentRecord] = field(default_factory=list)
    chunkings: list[ChunkingRecord] = field(default_factory=list)
    items: Iterable[Item] = field(default_factory=list)
    target_chunking: str | None = None
    """On export: the chunking that ``Evidence.chunk_ids`` refer to."""
    provenance: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    """Top-level keys a reader did not know, kept for the way back."""
    issues: list[Issue] = field(default_factory=list)
    evaluations: Iterable[EvaluationRecord] = field(default_factory=list)
    """Systems' results on the items, with their metrics (InspectorRAGet); on export the
    project's imported evaluations, newest first, read only when a writer asks."""
    comments: Iterable[Comment] = field(default_factory=list)
    """Comments on the items (``Comment.item_id`` names a Bundle item); on export those of
    the exported items, read only when a writer asks; on import they follow the items."""
    item_source: ItemSource | None = None
    """How to read ``items`` again in another process (streamed files of some formats)."""


Reader = Callable[[Path], Bundle]
Writer = Callable[..., None]


@dataclass(frozen=True)
class FormatSpec:
    name: str
    description: str
    extensions: tuple[str, ...]
    module: str
    label: str = ""
    """The name people know it by (pages translate it: ``format.<name>.label``)."""
    exports_only: bool = False
    """Written, never read (its module has no ``read``): imports refuse it by name."""

    def _load(self) -> Any:
        return importlib.import_module(f"assay.formats.{self.module}")

    def check_readable(self) -> None:
        """Refuse an import of an export-only format, naming the formats that import."""
        if self.exports_only:
            raise InvalidInput(
                f"format {self.name!r} is for export only; import one of: "
                + ", ".join(n for n, s in formats().items() if not s.exports_only)
            )

    def read(self, path: str | Path) -> Bundle:
        self.check_readable()
        path = Path(path)
        if not path.exists():
            raise InvalidInput(f"{path}: no such file or folder")
        bundle: Bundle = self._load().read(path)
        return bundle

    def stream(self, path: str | Path) -> Bundle:
        """:meth:`read` for an import: where the format can (``stream`` in its module), the
        items come as they are read, so the file is never held whole; a problem in an item
        is raised while the import takes it (and the import is undone)."""
        self.check_readable()
        path = Path(path)
        if not path.exists():
            raise InvalidInput(f"{path}: no such file or folder")
        module = self._load()
        bundle: Bundle = getattr(module, "stream", module.read)(path)
        return bundle

    def write(self, bundle: Bundle, path: str | Path, **options: Any) -> list[str]:
        """Write the Bundle; returns notes about what could not be expressed in the format."""
        notes = self._load().write(bundle, Path(path), **options)
        return list(notes or [])


def formats() -> dict[str, FormatSpec]:
    """The registry: format name → spec. Modules are imported only when used."""
    specs = [
        FormatSpec(
            "native",
            "Assay's own zip: documents with their bytes, chunkings, items, evidence (lossless)",
            (".zip",),
            "native",
            "Assay archive (lossless)",
        ),
        FormatSpec(
            "ragold",
            "RAGold export zip: annotations.json (schema v2; v1 read) and files/<uuid>/<name>",
            (".zip",),
            "ragold",
            "RAGold export",
        ),
        FormatSpec(
            "autorag",
            "AutoRAG folder: qa.parquet and corpus.parquet for one chunking",
            ("",),
            "autorag",
            "AutoRAG dataset",
        ),
        FormatSpec(
            "beir",
            "BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv (graded relevance)",
            ("",),
            "beir",
            "BEIR benchmark",
        ),
        FormatSpec(
            "trec",
            "TREC folder: qrels.txt, run.txt and topics.tsv (a single qrels or run file reads)",
            ("", ".txt"),
            "trec",
            "TREC qrels and runs",
        ),
        FormatSpec(
            "csv", "CSV, one row per item, for spreadsheets", (".csv",), "csv", "Spreadsheet (CSV)"
        ),
        FormatSpec(
            "hf",
            "Hugging Face dataset folder: parquet files and a README.md dataset card",
            ("",),
            "hf",
            "Hugging Face dataset",
        ),
        FormatSpec(
            "ragaphene",
            "RAGAPHENE conversation JSON (schema v2; v1 read), one conversation or a list",
            (".json",),
            "ragaphene",
            "RAGAPHENE conversations",
        ),
        FormatSpec(
            "mtrag",
            "MTRAG generation tasks (JSON Lines), one task per line",
            (".jsonl",),
            "mtrag",
            "MTRAG generation tasks",
        ),
        FormatSpec(
            "inspectorraget",
            "InspectorRAGet JSON (v2; v1 read): documents, tasks as items, results as experiment",
            (".json",),
            "inspectorraget",
            "InspectorRAGet evaluation",
        ),
        FormatSpec(
            "ragas",
            "Ragas samples (JSON Lines) for EvaluationDataset.from_jsonl, one per turn "
            "(export only)",
            (".jsonl",),
            "ragas",
            "Ragas evaluation samples",
            exports_only=True,
        ),
    ]
    return {spec.name: spec for spec in specs}


def get_format(name: str) -> FormatSpec:
    found = formats()
    if name not in found:
        raise InvalidInput(f"unknown format {name!r}; choose one of: {', '.join(found)}")
    return found[name]
