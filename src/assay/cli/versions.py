"""``assay versions``: frozen dataset versions of a project's gold (create, list, show, diff,
export), as :mod:`assay.review.versions` makes and reads them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    command_group,
    console,
    escape,
    print_json,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.review.version_diff import VersionDiff
    from assay.review.versions import DatasetVersion
    from assay.store.workspace import Workspace

NameArgument = typer.Argument(..., metavar="NAME", help="The version's name (unique per project).")
GROUP_PROJECT = "versions.project"
"""Where ``assay versions -p X SUBCOMMAND`` keeps X for the sub-command (``ctx.meta`` is
shared by the group's context and its sub-command's)."""


def _project(ctx: typer.Context, given: str) -> str:
    """The sub-command's ``--project``, else the one given before it (``versions -p X``);
    None (the only project) when neither was given."""
    found: str = given or ctx.meta.get(GROUP_PROJECT, given)
    return found


def register(app: typer.Typer) -> None:
    group = command_group(
        app,
        "versions",
        "Frozen dataset versions: the accepted gold as an immutable, content-hashed snapshot.\n\n"
        "Experiments can run on a version (assay experiments create --version NAME) and "
        "every export of one prints its hash, so a paper can cite exactly what it used.",
        default=list_command,
    )
    command(group, "create", create)
    command(group, "list", list_command)
    command(group, "show", show)
    command(group, "diff", diff)
    command(group, "export", export)


def create(
    ctx: typer.Context,
    name: str = NameArgument,
    status: list[str] = typer.Option(
        [],
        "--status",
        metavar="STATUS",
        help="Freeze items of this status: draft, submitted, accepted, rejected or all "
        "(repeatable or comma-separated; default: accepted only). Drafts and submitted items "
        "are not reviewed gold: include them knowingly.",
        show_default=False,
    ),
    chunking: str = typer.Option(
        None,
        "--chunking",
        "-c",
        metavar="NAME",
        help="The chunking frozen with it (default: the project's default).",
        show_default=False,
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Freeze the project's accepted gold as version NAME.

    Items (never annotators' copies, never items whose evidence needs review) with their
    evidence, the documents' files and hashes and one chunking go into a zip in the
    workspace's blob store. A name is used once; a project without accepted items is refused.
    """
    project = _project(ctx, project)
    from assay.review.versions import create_version

    statuses = [s for value in status for s in value.split(",")]
    made = run(
        ctx,
        lambda ws: create_version(
            ws, project_of(ws, project), name, statuses=statuses, chunking=chunking
        ),
    )
    if as_json:
        print_json(made)
        return
    console().print(
        f"Froze version {made.name!r}: {made.item_count} item(s), {made.evidence_count} "
        f"passage(s), chunking {made.chunking}\nsha256 {made.hash}",
        markup=False,
    )


def list_command(
    ctx: typer.Context, project: str = ProjectOption, as_json: bool = JsonOption
) -> None:
    """List the project's versions, newest first (the default sub-command)."""
    if ctx.invoked_subcommand:
        if project is not None:  # `assay versions -p X show v1`: X is the sub-command's
            ctx.meta[GROUP_PROJECT] = project
        return
    project = _project(ctx, project)
    from assay.review.versions import list_versions

    found = run(ctx, lambda ws: list_versions(ws, project_of(ws, project)))
    if as_json:
        print_json(found)
        return
    if not found:
        console().print("No versions yet: assay versions create NAME", markup=False)
        return
    from rich.table import Table

    table = Table("name", "items", "passages", "chunking", "hash", "created", "by")
    for v in found:
        table.add_row(
            escape(v.name),
            str(v.item_count),
            str(v.evidence_count),
            escape(v.chunking or ""),
            v.hash[:12],
            f"{v.created_at:%Y-%m-%d %H:%M}",
            escape(v.author),
        )
    console().print(table)


def show(
    ctx: typer.Context,
    name: str = NameArgument,
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Show one version: its hash, counts, chunking and the ids of its items."""
    project = _project(ctx, project)
    from assay.review.versions import get_version, read_snapshot

    def body(ws: Workspace) -> tuple[DatasetVersion, list[dict[str, str]]]:
        version = get_version(ws, project_of(ws, project), name)
        listed = [
            {"id": i.id, "query": i.turns[0].query if i.turns else ""}
            for i in read_snapshot(ws, version).items
        ]
        return version, listed

    version, listed = run(ctx, body)
    if as_json:
        print_json({"version": version, "items": listed})
        return
    out = console()
    out.print(f"{version.name}  sha256 {version.hash}", markup=False)
    out.print(
        f"{version.item_count} item(s), {version.evidence_count} passage(s), "
        f"{version.summary.get('documents', 0)} document(s), chunking {version.chunking}; "
        f"frozen {version.created_at:%Y-%m-%d %H:%M} UTC by {version.author}",
        markup=False,
    )
    for entry in listed:
        out.print(f"  {entry['id']}  {entry['query'][:80]}", markup=False)


def diff(
    ctx: typer.Context,
    a: str = typer.Argument(..., metavar="A", help="The older version."),
    b: str = typer.Argument(..., metavar="B", help="The newer version."),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Show what changed from version A to version B: items added, removed and changed (with
    the fields), evidence added, removed and relabelled, documents and chunking."""
    project = _project(ctx, project)
    from assay.review.version_diff import diff_versions

    found = run(ctx, lambda ws: diff_versions(ws, project_of(ws, project), a, b))
    if as_json:
        print_json(found)
        return
    _print_diff(found)


def _print_diff(found: VersionDiff) -> None:
    out = console()
    out.print(f"{found.a.name} ({found.a.hash[:12]}) → {found.b.name} ({found.b.hash[:12]})")
    if found.same:
        out.print("Same content (the hashes are equal).")
        return
    ev = found.evidence
    out.print(
        f"{len(found.added)} added, {len(found.removed)} removed, {len(found.changed)} changed "
        f"item(s); passages: {ev['added']} added, {ev['removed']} removed, "
        f"{ev['relabelled']} relabelled",
        markup=False,
    )
    for sign, entries in (("+", found.added), ("-", found.removed)):
        for entry in entries:
            out.print(f"{sign} {entry.id}  {entry.query[:80]}", markup=False)
    for entry in found.changed:
        fields = ", ".join(dict.fromkeys(_field(c) for c in entry.changes))
        out.print(f"~ {entry.id}  {fields}", markup=False)
    for kind, names in found.documents.items():
        if names:
            out.print(f"documents {kind}: {', '.join(names)}", markup=False)
    for change in found.chunking:
        out.print(f"chunking {change.field}: {change.before} → {change.after}", markup=False)


def _field(change: Any) -> str:
    """``answer (turn 1)``, ``evidence added (turn 2)``."""
    what = change.field if change.change == "changed" else f"{change.field} {change.change}"
    return f"{what} (turn {change.turn})" if change.turn else what


def export(
    ctx: typer.Context,
    name: str = NameArgument,
    format_name: str = typer.Argument(..., metavar="FORMAT", help="Format name (assay formats)."),
    path: Path = typer.Argument(..., metavar="PATH", help="File or folder to write."),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Export version NAME in a format, from its frozen snapshot (not the live items), with
    the chunk ids of its frozen chunking. Prints the version's hash, which also goes into
    the file where the format keeps metadata (native: the manifest; RAGold: the notes; Hugging
    Face: the dataset card)."""
    project = _project(ctx, project)
    from assay.transfer.project_export import ExportOptions, plan_export, write_export

    def body(ws: Workspace) -> tuple[DatasetVersion, list[str]]:
        options = ExportOptions(format_name, version=name)
        plan = plan_export(ws, project_of(ws, project), options)
        notes = write_export(ws, plan, path).notes
        assert plan.version is not None  # a version export plans its version
        return plan.version, notes

    version, notes = run(ctx, body)
    if as_json:
        print_json(
            {"path": str(path), "version": version.name, "hash": version.hash, "notes": notes}
        )
        return
    out = console()
    for note in notes:
        out.print(f"[yellow]note:[/] {escape(note)}")
    out.print(f"Wrote version {version.name!r} to {path}\nsha256 {version.hash}", markup=False)
