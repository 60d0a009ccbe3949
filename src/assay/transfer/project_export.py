"""An export as every face asks for it: the options, the checks, the writing.

``assay export``, ``assay items export-one``, ``assay versions export``, the web's export
jobs (of the live items or of a frozen version) and its one-conversation download all call
:func:`plan_export` and then :func:`write_export` (a path on this machine)
or :func:`write_export_file` (one file in a folder, folder formats zipped, for a download).
The same options mean the same everywhere, so an export cannot behave differently by the way
it was started.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.corpus.anchoring import problems_json
from assay.corpus.chunkings import get_chunking
from assay.errors import InvalidInput
from assay.formats import Bundle, FormatSpec, Lazy, get_format
from assay.records import STATUSES, Item, Project
from assay.review.version_export import export_bundle_of
from assay.review.versions import DatasetVersion, get_version, read_snapshot
from assay.store.workspace import Workspace
from assay.transfer.exporting import (
    ExportScope,
    choose_statuses,
    chosen_items,
    export_bundle,
    export_scope,
)
from assay.transfer.files import write_file

Progress = Callable[[str, int, int | None], None]
"""``(stage, done, total)``: ``documents`` at the start, then ``items`` as they are written."""


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """What an export is asked to do; the CLI's flags and the API's fields, one for one."""

    format: str
    chunking: str | None = None
    """The chunking whose chunk ids the export uses (default: the project's default)."""
    statuses: Sequence[str] | None = None
    """``--status`` values (:func:`assay.gold.statuses.parse_statuses`; none: accepted)."""
    items: Sequence[str] | None = None
    """Exactly these items, whatever their status (``statuses`` is then ignored)."""
    allow_empty: bool = False
    strict: bool = False
    """Refuse when a chosen item's evidence no longer matches its document."""
    include_unanswerable: bool = False
    """AutoRAG: also write questions without ``retrieval_gt``."""
    version: str | None = None
    """A frozen dataset version to export (its snapshot, with its frozen chunking) instead of
    the live items; ``chunking``, ``statuses``, ``items`` and ``strict`` then do not apply."""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "chunking": self.chunking,
            "statuses": None if self.statuses is None else list(self.statuses),
            "items": None if self.items is None else list(self.items),
            "allow_empty": self.allow_empty,
            "strict": self.strict,
            "include_unanswerable": self.include_unanswerable,
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExportOptions:
        """Options stored with a job. A job stores the statuses it chose spelled out
        (:meth:`ExportPlan.stored`); ``None`` there, from an older job, meant every status.
        ``allow_empty`` reads as on for a job from before it was stored (it was checked
        when the job was queued)."""
        statuses = data.get("statuses")
        return cls(
            format=str(data["format"]),
            chunking=data.get("chunking"),
            statuses=["all"] if statuses is None else statuses,
            items=data.get("items"),
            allow_empty=bool(data.get("allow_empty", True)),
            strict=bool(data.get("strict", False)),
            include_unanswerable=bool(data.get("include_unanswerable", False)),
            version=data.get("version"),
        )


@dataclass(frozen=True, slots=True)
class ExportPlan:
    """Checked options: the format, the statuses (None: every one), the items, the scope."""

    project: Project
    spec: FormatSpec
    options: ExportOptions
    statuses: list[str] | None
    items: list[str] | None
    scope: ExportScope
    version: DatasetVersion | None = None

    def stored(self) -> dict[str, Any]:
        """The options to store with a job (:meth:`ExportOptions.from_json` reads them):
        the statuses and items chosen, spelled out."""
        return {
            **self.options.to_json(),
            "format": self.spec.name,
            "statuses": list(self.statuses or STATUSES),
            "items": self.items,
        }


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What an export wrote."""

    plan: ExportPlan
    path: Path
    items: int
    notes: list[str] = field(default_factory=list)

    def to_json(self, shown: int | None = None) -> dict[str, Any]:
        """Items written, statuses, what was left out and the writer's notes (``shown``:
        at most that many problems and notes)."""
        scope = self.plan.scope
        review = problems_json(scope.needs_review)
        version = self.plan.version
        frozen = {"version": version.name, "hash": version.hash} if version else {}
        statuses = version.summary.get("statuses", []) if version else self.plan.statuses
        return {
            "items": self.items,
            "statuses": list(statuses or STATUSES),
            "left_out": scope.left_out,
            "needs_review": review[:shown],
            "needs_review_count": len(review),
            "notes": self.notes[:shown],
            **frozen,
        }


def plan_export(
    ws: Workspace,
    project: Project,
    options: ExportOptions,
    *,
    names: tuple[str, str] = ("--status", "--allow-empty"),
) -> ExportPlan:
    """Check the options against the project: the format and chunking exist, the statuses
    are known, the items are the project's; refused (InvalidInput) when strict and an item
    needs review, or when nothing would be exported and that is not allowed. ``names`` are
    the options a message tells the user to widen the statuses with or allow an empty
    export."""
    spec = get_format(options.format)
    if options.version is not None:
        version = get_version(ws, project, options.version)
        scope = ExportScope(items=version.item_count, left_out={})
        return ExportPlan(project, spec, options, None, None, scope, version)
    if options.chunking is not None:
        get_chunking(ws, project, options.chunking)  # NotFound names the chunkings there are
    if options.statuses is not None and options.items is None and not options.statuses:
        raise InvalidInput("choose at least one status to export (or 'all')")
    statuses = choose_statuses(options.statuses)
    items = chosen_items(ws, project, options.items) if options.items is not None else None
    scope = export_scope(ws, project, statuses if items is None else None, items=items)
    if options.strict and scope.needs_review:
        raise InvalidInput(scope.strict_message(project.name))
    if scope.items == 0 and not options.allow_empty:
        raise InvalidInput(scope.empty_message(project.name, *names))
    return ExportPlan(project, spec, options, statuses, items, scope)


def writer_options(bundle: Bundle, include_unanswerable: bool) -> dict[str, Any]:
    """The options a format's writer gets: the target chunking, and AutoRAG's
    ``include_unanswerable``."""
    options: dict[str, Any] = {}
    if bundle.target_chunking:
        options["chunking"] = bundle.target_chunking
    if include_unanswerable:
        options["include_unanswerable"] = True
    return options


def _bundle(ws: Workspace, plan: ExportPlan, progress: Progress | None, count: list[int]) -> Bundle:
    """The plan's Bundle, its items counted (into ``count``) and reported as written."""
    total = plan.scope.items
    if progress:
        progress("documents", 0, total)
    if plan.version is not None:
        bundle = export_bundle_of(ws, plan.project, read_snapshot(ws, plan.version))
    else:
        bundle = export_bundle(
            ws,
            plan.project,
            chunking=plan.options.chunking,
            statuses=plan.statuses,
            items=plan.items,
            needs_review=plan.scope.needs_review,
        )
    items = bundle.items

    def counting() -> Iterator[Item]:
        count[0] = 0
        if progress:
            progress("items", 0, total)
        for item in items:
            count[0] += 1
            if progress:
                progress("items", count[0], total)
            yield item

    bundle.items = Lazy(counting)
    return bundle


def write_export(
    ws: Workspace, plan: ExportPlan, path: Path, progress: Progress | None = None
) -> ExportResult:
    """Write the export at ``path`` (a file or a folder, as the format writes)."""
    count = [0]
    bundle = _bundle(ws, plan, progress, count)
    options = writer_options(bundle, plan.options.include_unanswerable)
    notes = plan.spec.write(bundle, path, **options)
    return ExportResult(plan, path, count[0], notes)


def write_export_file(
    ws: Workspace,
    plan: ExportPlan,
    folder: Path,
    stem: str,
    progress: Progress | None = None,
    zipping: Callable[[], None] = lambda: None,
) -> ExportResult:
    """Write the export as one file in ``folder`` (folder formats zipped), for a download."""
    count = [0]
    bundle = _bundle(ws, plan, progress, count)
    options = writer_options(bundle, plan.options.include_unanswerable)
    output, notes = write_file(plan.spec, bundle, folder, stem, options, zipping)
    return ExportResult(plan, output, count[0], notes)
