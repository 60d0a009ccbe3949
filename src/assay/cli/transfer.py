"""Exchange commands: ``formats``, ``import``, ``export``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli import judge_runs, remote
from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    console,
    fail,
    print_json,
    progress_bar,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.store.workspace import Workspace
    from assay.transfer import ImportReport
    from assay.transfer.project_export import ExportOptions

SHOWN = 20
AUTOJUDGE = "autojudge"
"""Judgments, not a Bundle of items: handed to :mod:`assay.cli.judge_runs`."""


def register(app: typer.Typer) -> None:
    command(app, "formats", list_formats)
    command(app, "import", import_command)
    command(app, "export", export_command)


def list_formats(as_json: bool = JsonOption) -> None:
    """List the exchange formats that import and export understand (see docs/formats.md)."""
    from rich.table import Table

    from assay.formats import formats

    found = formats()
    if as_json:
        print_json(
            [
                {"name": s.name, "description": s.description, "extensions": list(s.extensions)}
                for s in found.values()
            ]
        )
        return
    table = Table("format", "description")
    for spec in found.values():
        table.add_row(spec.name, spec.description)
    console().print(table)


def import_command(
    ctx: typer.Context,
    format_name: str = typer.Argument(..., metavar="FORMAT", help="Format name (assay formats)."),
    path: Path = typer.Argument(..., metavar="PATH", help="File or folder to read."),
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        metavar="NAME",
        help="Project to import into; created if missing. Defaults to the project named in "
        "the file, else the workspace's only project.",
        show_default=False,
    ),
    replace: bool = typer.Option(
        False, "--replace", help="Replace the project's whole content with the file's."
    ),
    lenient: bool = typer.Option(
        False,
        "--lenient",
        help="Skip bad records and report them instead of refusing the whole file.",
    ),
    status: str = typer.Option(
        None,
        "--status",
        metavar="STATUS",
        help="Give every imported item this review status (draft, submitted, accepted, "
        "rejected), e.g. accepted for a gold set reviewed elsewhere. By default items keep "
        "the file's status, draft where the format has none (BEIR, TREC, AutoRAG, MTRAG).",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """Import a dataset into a project, in one transaction.

    Nothing is written when any record is bad, unless --lenient is given: then every record
    is reported as imported, skipped or flagged (imported, needs a look). Nothing that exists
    is overwritten unless --replace is given.

    Format autojudge merges judgments (autojudge-annotate's JSON Lines, as the offline
    judging page downloads them) into the project's, by username; see docs/judging.md.

    With ASSAY_URL set (see `assay --help`), this runs against that team server.
    """
    if format_name == AUTOJUDGE:
        judge_runs.refuse_for_autojudge(replace=replace, status=status)
        judge_runs.import_autojudge(ctx, path, project, lenient=lenient, as_json=as_json)
        return
    from assay.formats import get_format
    from assay.records import to_json
    from assay.search.indexes import sync_project
    from assay.store.projects import get_project
    from assay.transfer import import_bundle

    def body(ws: Workspace) -> ImportReport:
        spec = get_format(format_name)
        with progress_bar() as bar:
            task = bar.add_task(f"Reading {path.name}", total=None)
            bundle = spec.stream(path)
            target = project or bundle.project.name or _only_project(ws)

            def advance(stage: str, done: int, total: int | None) -> None:
                bar.update(task, description=f"Importing {stage}", completed=done, total=total)

            report = import_bundle(
                ws,
                target,
                bundle,
                replace=replace,
                lenient=lenient,
                progress=advance,
                status=status,
            )
            index_task = bar.add_task("Indexing", total=None)
            sync_project(
                ws,
                get_project(ws, report.project),
                progress=lambda d, t: bar.update(index_task, completed=d, total=t),
            )
        return report

    server = remote.server(ctx)
    if server is not None:
        from assay.cli.remote_transfer import import_file

        result = import_file(
            server, format_name, path, project, replace=replace, lenient=lenient, status=status
        )
        target, counts, noted = result["project"], result["summary"], result["noted"]
        total = int(result["noted_total"])
    else:
        report = run(ctx, body)
        target, counts, total = report.project, report.summary(), len(report.noted())
        noted = [to_json(outcome) for outcome in report.noted()]
    if as_json:
        print_json({"project": target, "summary": counts, "records": noted})
    else:
        _print_report(target, counts, noted, total)
        if status is None and counts.get("item", {}).get("imported"):
            console().print(
                "Items keep the file's review status (draft where the format has none); "
                "export and eval use accepted items: review them, or import with "
                "--status accepted for a gold set reviewed elsewhere.",
                style="dim",
                markup=False,
            )
    if any(c.get("skipped") for c in counts.values()):
        raise typer.Exit(2)


def _only_project(ws: Workspace) -> str:
    from assay.errors import InvalidInput
    from assay.store.projects import list_projects

    found = list_projects(ws)
    if len(found) == 1:
        return found[0].name
    raise InvalidInput("name the project to import into with --project")


def _print_report(
    project: str, counts: dict[str, dict[str, int]], noted: list[dict[str, Any]], total: int
) -> None:
    from rich.table import Table

    out = console()
    table = Table("records", "imported", "flagged", "skipped")
    for kind, row in counts.items():
        table.add_row(kind, *(str(row[s]) for s in ("imported", "flagged", "skipped")))
    out.print(f"Imported into project {project!r}", markup=False)
    out.print(table)
    out.print(
        "imported: stored; flagged: stored with a warning worth a look; skipped: left out",
        style="dim",
        markup=False,
    )
    for outcome in noted[:SHOWN]:
        colour = "red" if outcome["status"] == "skipped" else "yellow"
        out.print(f"[{colour}]{outcome['status']}[/] ", end="")
        out.print(f"{outcome['kind']} {outcome['ref']}: {outcome['message']}", markup=False)
    if total > SHOWN:
        out.print(f"… and {total - SHOWN} more (use --json for all)")


def _export_here(
    ws: Workspace, project: str | None, options: ExportOptions, path: Path
) -> dict[str, Any]:
    """The export on this machine, with a progress bar: what it wrote, as JSON."""
    from assay.transfer.project_export import plan_export, write_export

    plan = plan_export(ws, project_of(ws, project), options)
    with progress_bar() as bar:
        task = bar.add_task(f"Exporting {plan.spec.name}", total=None)

        def progress(stage: str, done: int, total: int | None) -> None:
            bar.update(task, completed=done)

        return write_export(ws, plan, path, progress).to_json()


def _print_needs_review(review: list[dict[str, Any]]) -> None:
    """The items an export left out because their evidence no longer matches, per item."""
    if not review:
        return
    out = console()
    out.print(
        f"[yellow]left out {len(review)} item(s) needing review[/]: their evidence no longer "
        "matches its document (fix the passages in the editor; --strict refuses instead)"
    )
    for entry in review[:SHOWN]:
        problems = "; ".join(p["message"] for p in entry["problems"])
        out.print(f"  {entry['id']}: {problems}", markup=False)
    if len(review) > SHOWN:
        out.print(f"  … and {len(review) - SHOWN} more (use --json for all)", markup=False)


def export_command(
    ctx: typer.Context,
    format_name: str = typer.Argument(..., metavar="FORMAT", help="Format name (assay formats)."),
    path: Path = typer.Argument(..., metavar="PATH", help="File or folder to write."),
    project: str = ProjectOption,
    chunking: str = typer.Option(
        None,
        "--chunking",
        "-c",
        metavar="NAME",
        help="Chunking whose chunk ids the export uses (default: the project's default).",
        show_default=False,
    ),
    status: list[str] = typer.Option(
        [],
        "--status",
        metavar="STATUS",
        help="Export items with this status: draft, submitted, accepted, rejected or all; "
        "repeatable or comma-separated. Default: accepted (the reviewed gold, as assay eval "
        "uses).",
        show_default=False,
    ),
    allow_empty: bool = typer.Option(
        False,
        "--allow-empty",
        help="Write the export even when it holds no item (e.g. only the corpus).",
    ),
    include_unanswerable: bool = typer.Option(
        False,
        "--include-unanswerable",
        help="AutoRAG: also write questions without retrieval_gt (AutoRAG's own loader "
        "refuses them, so they are left out and listed by default).",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Refuse the export (exit 1, naming the items) when any chosen item has evidence "
        "that no longer matches its document, instead of leaving those items out.",
    ),
    modes: list[str] = judge_runs.ModesOption,
    dataset: str = judge_runs.DatasetOption,
    topics: list[str] = judge_runs.TopicsOption,
    judge: str = judge_runs.JudgeOption,
    as_json: bool = JsonOption,
) -> None:
    """Export a project's documents, chunks and gold items in a format.

    Only accepted items go out unless --status says otherwise; the command says how many it
    left out. Items whose evidence no longer matches its document (the document was replaced)
    are never exported: they are left out and listed, or refused with --strict. An export
    that would hold no item is refused (exit 1) unless --allow-empty.

    Format autojudge writes the project's judgments instead, as autojudge-annotate's JSON
    Lines (one judged unit per line; --mode, --topic, --judge and --dataset apply to it
    only); see docs/judging.md.

    With ASSAY_URL set (see `assay --help`), this runs against that team server.
    """
    if format_name == AUTOJUDGE:
        judge_runs.refuse_for_autojudge(
            chunking=chunking,
            status=status,
            allow_empty=allow_empty,
            include_unanswerable=include_unanswerable,
            strict=strict,
        )
        judge_runs.export_autojudge(
            ctx, path, project, modes=modes, dataset=dataset, topics=topics, judge=judge,
            as_json=as_json,
        )  # fmt: skip
        return
    if modes or dataset is not None or topics or judge is not None:
        fail("--mode, --dataset, --topic and --judge belong to the autojudge format")
    from assay.errors import InvalidInput
    from assay.transfer import choose_statuses
    from assay.transfer.project_export import ExportOptions

    try:
        choose_statuses(status)  # a bad --status is refused before the workspace opens
    except InvalidInput as exc:
        fail(str(exc))
    options = ExportOptions(
        format_name,
        chunking=chunking,
        statuses=status or None,
        allow_empty=allow_empty,
        strict=strict,
        include_unanswerable=include_unanswerable,
    )

    server = remote.server(ctx)
    if server is not None:
        from assay.cli.remote_transfer import export_file

        result = export_file(server, path, project, options)
    else:
        result = run(ctx, lambda ws: _export_here(ws, project, options, path))
    count, notes, left_out = result["items"], result["notes"], result["left_out"]
    review = result["needs_review"]
    if as_json:
        print_json(
            {
                "path": str(path),
                "items": count,
                "statuses": result["statuses"],
                "left_out": left_out,
                "needs_review": review,
                "notes": notes,
            }
        )
        return
    out = console()
    for note in notes[:SHOWN]:
        out.print(f"[yellow]note:[/] {note}", markup=True)
    out.print(f"Wrote {count} item(s) to {path}", markup=False)
    if any(left_out.values()):
        shown = ", ".join(f"{n} {status}" for status, n in left_out.items() if n)
        out.print(f"left out {shown} item(s); use --status to include them", markup=False)
    _print_needs_review(review)
    if count == 0:
        out.print("[yellow]warning:[/] the export holds no item (written as --allow-empty asked)")
