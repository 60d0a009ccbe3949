"""``assay judge import-runs`` and ``assay judge progress``, and the autojudge judgments of
``assay export autojudge`` / ``assay import autojudge`` (``cli.transfer`` hands that format
here: judgments are not the Bundle of items the other formats exchange)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli import remote
from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    console,
    escape,
    fail,
    print_json,
    project_of,
    project_or_created,
    run,
)

if TYPE_CHECKING:
    from assay.formats import Issue
    from assay.store.workspace import Workspace

SHOWN = 20

ModeOption = typer.Option(
    "report", "--mode", "-m", metavar="MODE", help="report, document or citation."
)
# the options ``assay export autojudge`` adds to ``assay export`` (cli.transfer)
ModesOption = typer.Option(
    [],
    "--mode",
    metavar="MODE",
    help="autojudge: judgments of this mode only (report, document, citation); "
    "repeatable. Default: all three.",
    show_default=False,
)
DatasetOption = typer.Option(
    None,
    "--dataset",
    metavar="LABEL",
    help="autojudge: the dataset label of every line (default: the project's name).",
    show_default=False,
)
TopicsOption = typer.Option(
    [],
    "--topic",
    metavar="ID",
    help="autojudge: judgments of this topic only; repeatable.",
    show_default=False,
)
JudgeOption = typer.Option(
    None,
    "--judge",
    metavar="USERNAME",
    help="autojudge: this judge's judgments only.",
    show_default=False,
)


def register(group: typer.Typer) -> None:
    command(group, "import-runs", import_runs)
    command(group, "progress", progress)


def import_runs(
    ctx: typer.Context,
    runs: list[Path] = typer.Argument(
        None,
        metavar="RUNS",
        help="Run files or folders of them (JSON Lines reports, gzip accepted).",
        show_default=False,
    ),
    topics: Path = typer.Option(
        None,
        "--topics",
        "-t",
        metavar="FILE",
        help="Topics (JSON Lines requests) to import first; runs may only answer topics the "
        "project holds.",
        show_default=False,
    ),
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        metavar="NAME",
        help="Project to import into; created if it does not exist. May be left out when the "
        "workspace has exactly one project.",
        show_default=False,
    ),
    language: str = typer.Option(
        "en", "--language", "-l", metavar="CODE", help="Language when the project is created here."
    ),
    lenient: bool = typer.Option(
        False, "--lenient", help="Skip bad lines and report them instead of refusing all."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Import TREC RAG topics and runs to judge, in one transaction.

    Reports cite in any of the three styles (doc ids, doc id → confidence, indices into
    references); the documents runs embed become documents of the project. A bad line
    (missing title, citation past the references, a document referenced but not embedded,
    a second report for a topic and run, malformed JSON, an unknown topic) refuses the whole
    import, naming file, line and field, unless --lenient.
    """
    from assay.judging.run_import import RunImportReport, import_judging_inputs

    if topics is None and not runs:
        fail("give --topics, run files, or both")

    def body(ws: Workspace) -> RunImportReport:
        from assay.store.projects import delete_project, list_projects

        held = {p.name for p in list_projects(ws)}
        target = project_or_created(ws, project, language)
        try:
            return import_judging_inputs(
                ws, target, topics=topics, runs=runs or [], lenient=lenient
            )
        except Exception:
            if target.name not in held:  # a refused import leaves no empty project behind
                delete_project(ws, target)
            raise

    report = run(ctx, body)
    if as_json:
        print_json(report.as_json())
    else:
        out = console()
        out.print(
            f"topics: {report.topics_added} added, {report.topics_updated} updated; reports: "
            f"{report.reports_added} added, {report.reports_unchanged} already held; documents: "
            f"{report.documents_added} added, {report.documents_reused} already held",
            markup=False,
        )
        if report.missing_documents:
            out.print(
                f"{len(report.missing_documents)} cited document(s) neither embedded nor "
                f"held (judged without their text): {', '.join(report.missing_documents[:SHOWN])}",
                markup=False,
            )
        print_issues(report.issues)
    if any(i.severity == "error" for i in report.issues):
        raise typer.Exit(2)


def progress(
    ctx: typer.Context,
    mode: str = ModeOption,
    judge: str = typer.Option(
        None,
        "--judge",
        metavar="USERNAME",
        help="Count this judge's judgments only (default: judged by anyone).",
        show_default=False,
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """How far the judges got: "N of M judged" per topic and run (per topic in document mode).

    A unit counts as judged when it has a span, a rating other than the first of the scale,
    or a comment.
    """
    from rich.table import Table

    from assay.judging.judgments import MODES
    from assay.judging.units import Progress
    from assay.judging.units import progress as judged_progress
    from assay.people.accounts import get_account

    if mode not in MODES:
        fail(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")

    def body(ws: Workspace) -> list[Progress]:
        judge_id = get_account(ws, judge).id if judge else None
        return judged_progress(ws, project_of(ws, project), mode, judge_id=judge_id)

    rows = run(ctx, body)
    if as_json:
        print_json(
            {
                "mode": mode,
                "judge": judge,
                "rows": rows,
                "judged": sum(r.judged for r in rows),
                "total": sum(r.total for r in rows),
            }
        )
        return
    table = Table("topic", "run", "judged", "done")
    for row in rows:
        done = "✓" if row.total and row.judged == row.total else ""
        table.add_row(
            escape(row.topic_id), escape(row.run_id or "-"), f"{row.judged} of {row.total}", done
        )
    out = console()
    out.print(table)
    out.print(
        f"{sum(r.judged for r in rows)} of {sum(r.total for r in rows)} {mode} unit(s) judged",
        markup=False,
    )


def print_issues(issues: list[Issue]) -> None:
    out = console()
    for issue in issues[:SHOWN]:
        colour = "red" if issue.severity == "error" else "yellow"
        label = "skipped" if issue.severity == "error" else "warning"
        out.print(f"[{colour}]{label}[/] {escape(str(issue))}")
    if len(issues) > SHOWN:
        out.print(f"… and {len(issues) - SHOWN} more (use --json for all)", markup=False)


# ---------------------------------------------------------------- assay export/import autojudge


def refuse_for_autojudge(**options: object) -> None:
    """Judgments are not items: the options about items do not apply."""
    given = [f"--{name.replace('_', '-')}" for name, value in options.items() if value]
    if given:
        fail(f"{', '.join(given)} do(es) not apply to the autojudge format (judgments)")


def export_autojudge(
    ctx: typer.Context,
    path: Path,
    project: str | None,
    *,
    modes: list[str],
    dataset: str | None,
    topics: list[str],
    judge: str | None,
    as_json: bool,
) -> None:
    """``assay export autojudge PATH``: the project's judged units as autojudge-annotate's
    JSON Lines (all modes unless --mode); with ASSAY_URL, the server's."""
    from assay.judging.judgment_files import export_judgments
    from assay.judging.judgments import MODES
    from assay.people.accounts import get_account

    def body(ws: Workspace) -> int:
        judge_id = get_account(ws, judge).id if judge else None
        return export_judgments(
            ws,
            project_of(ws, project),
            path,
            modes=modes or MODES,
            dataset=dataset,
            topic_ids=topics,
            judge_id=judge_id,
        )

    server = remote.server(ctx)
    if server is not None:
        from urllib.parse import urlencode

        asked = [("mode", m) for m in modes] + [("topic", t) for t in topics]
        asked += [(k, v) for k, v in (("judge", judge), ("dataset", dataset)) if v is not None]
        where = remote.project_path(server.project(project), "judging", "export")
        server.download(f"{where}?{urlencode(asked)}" if asked else where, path)
        with path.open(encoding="utf-8") as written:
            count = sum(1 for _ in written)
    else:
        count = run(ctx, body)
    if as_json:
        print_json({"path": str(path), "judgments": count})
    else:
        console().print(f"Wrote {count} judgment(s) to {path}", markup=False)


def import_autojudge(
    ctx: typer.Context, path: Path, project: str | None, *, lenient: bool, as_json: bool
) -> None:
    """``assay import autojudge PATH``: merge judgments (autojudge-annotate's JSON Lines) by
    username into the project's; one bad line refuses the file unless --lenient. With
    ASSAY_URL, into the server's project (a file; a folder is for local imports)."""
    from assay.formats import Issue
    from assay.judging.judgment_files import import_judgments

    def body(ws: Workspace) -> dict[str, Any]:
        return import_judgments(ws, project_of(ws, project), path, lenient=lenient).as_json()

    server = remote.server(ctx)
    if server is not None:
        if not path.is_file():
            fail(escape(f"{path}: no such file (a server takes one file)"))
        where = remote.project_path(server.project(project), "judging", "import")
        report = server.upload(where, path, path.name, {"lenient": str(lenient).lower()})
    else:
        report = run(ctx, body)
    issues = [Issue(i["where"], i["message"], i["severity"]) for i in report["issues"]]
    if as_json:
        print_json(report)
    else:
        console().print(
            f"judgments: {report['added']} added, {report['updated']} replaced (the same "
            f"judge's), {report['unchanged']} unchanged; judges: "
            f"{', '.join(report['judges']) or '-'}",
            markup=False,
        )
        print_issues(issues)
    if any(i.severity == "error" for i in issues):
        raise typer.Exit(2)
