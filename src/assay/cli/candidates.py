"""``assay candidates``: production questions in, grouped, sampled and taken into gold work.

Each subcommand calls one function of :mod:`assay.candidates`; the web page
``/projects/NAME/candidates`` and ``/api/projects/NAME/candidates/...`` do the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import (
    JsonOption,
    command,
    command_group,
    console,
    fail,
    print_json,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.store.workspace import Workspace

HELP = """Production questions in: import query logs and traces as candidates (scrubbed of
personal data), see them grouped and clustered, sample what to annotate next with the reason
for each pick, and take the sample into assigned tasks.

The usual path: assay candidates import log.jsonl; assay candidates groups; assay candidates
sample -n 20; assay candidates assign -n 20 --to ada,bob; assay candidates coverage.
docs/production-to-gold.md is the guide."""

ProjectOption = typer.Option(
    None,
    "--project",
    "-p",
    metavar="PROJECT",
    help="Project name; may be left out when the workspace has exactly one project.",
    show_default=False,
)


def register(app: typer.Typer) -> None:
    group = command_group(app, "candidates", HELP)
    command(group, "import", import_command)
    command(group, "list", list_command)
    command(group, "groups", groups_command)
    command(group, "sample", sample_command)
    command(group, "assign", assign_command)
    command(group, "coverage", coverage_command)


def _names(values: list[str]) -> list[str]:
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def import_command(
    ctx: typer.Context,
    path: Path = typer.Argument(
        ..., metavar="FILE", help="The log: JSON Lines, one record a line."
    ),
    project: str = ProjectOption,
    shape: str = typer.Option(
        "jsonl",
        "--shape",
        metavar="SHAPE",
        help="jsonl (one question a line, fields by --map or their usual names), openinference "
        "(spans as Phoenix exports them) or langfuse (traces as Langfuse exports them).",
    ),
    mapping: list[str] = typer.Option(
        [],
        "--map",
        metavar="FIELD=PATH",
        help="Where a field is in each line, as a dotted path: question, session, turn, "
        "passages, answer, feedback, time (e.g. --map question=request.text). Repeat or "
        "separate with commas.",
        show_default=False,
    ),
    mask: list[str] = typer.Option(
        [],
        "--mask",
        metavar="NAME=REGEX",
        help="Mask this pattern too, as [NAME] (e.g. --mask 'CUSTOMER=K-\\d{6}'). E-mail "
        "addresses, phone numbers, IBANs and card numbers are always masked.",
        show_default=False,
    ),
    skip_bad: bool = typer.Option(
        False,
        "--skip-bad",
        help="Leave out lines that cannot be read (listed in the report) instead of stopping.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Import a query log or trace export as candidates, scrubbed, anchored and grouped.

    A line that cannot be read stops the import with an error naming the line and the
    field, and nothing of the file is stored (use --skip-bad to leave such lines out).
    Retrieved passages are anchored in the project's documents where their text is found;
    the others are kept and listed as unlocated. The report says what was masked.

    Example: assay candidates import support-log.jsonl --map question=q,answer=a
    """
    from assay.candidates.importing import import_candidates
    from assay.candidates.logs import parse_mapping
    from assay.candidates.scrubbing import Scrubber, parse_patterns
    from assay.people.actors import acting_account

    fields = parse_mapping(mapping)
    scrubber = Scrubber(patterns=parse_patterns(mask))
    if not path.is_file():
        fail(f"{path}: no such file")

    def body(ws: Workspace) -> dict[str, Any]:
        found = project_of(ws, project)
        with path.open(encoding="utf-8", errors="replace") as lines:
            report = import_candidates(
                ws, found, lines, name=path.name, shape=shape, mapping=fields,
                scrubber=scrubber, skip_bad=skip_bad, created_by=acting_account(ws),
            )  # fmt: skip
        return report.as_json()

    report = run(ctx, body)
    if as_json:
        print_json(report)
        return
    out = console()
    grouping = report["grouping"] or {}
    out.print(
        f"Imported {report['stored']} question(s) from {report['lines']} line(s) "
        f"({report['skipped']} skipped): {grouping.get('groups', 0)} group(s) in "
        f"{grouping.get('clusters', 0)} topic(s).",
        markup=False,
    )
    masks = ", ".join(f"{k} {v}" for k, v in report["masks"].items()) or "nothing"
    out.print(f"Masked: {masks}.", markup=False)
    passages = report["passages"]
    out.print(
        f"Passages: {passages['anchored']} anchored, {passages['unlocated']} in no document.",
        markup=False,
    )
    for problem in report["problems"]:
        out.print(f"  skipped {problem}", markup=False)


def list_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    group: int = typer.Option(None, "--group", metavar="ID", help="Only this group's questions."),
    limit: int = typer.Option(50, "--limit", min=1, max=1000, help="How many to show."),
    as_json: bool = JsonOption,
) -> None:
    """List imported candidates (the questions as scrubbed), oldest first."""
    from assay.candidates.listing import list_candidates

    found = run(ctx, lambda ws: list_candidates(ws, project_of(ws, project), group=group,
                                                  limit=limit))  # fmt: skip
    if as_json:
        print_json(found)
        return
    out = console()
    for c in found["candidates"]:
        feedback = {-1: " 👎", 1: " 👍"}.get(c["feedback"], "")
        out.print(f"{c['id']:>7}  group {c['group_id']}  {c['question']}{feedback}", markup=False)
    out.print(f"{len(found['candidates'])} of {found['total']} shown.", markup=False)


def groups_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    cluster: int = typer.Option(None, "--cluster", metavar="N", help="Only this topic cluster."),
    open_only: bool = typer.Option(False, "--open", help="Only groups not taken into items."),
    limit: int = typer.Option(50, "--limit", min=1, max=1000, help="How many to show."),
    as_json: bool = JsonOption,
) -> None:
    """List the groups of near-duplicate questions, most asked first, and the topic clusters."""
    from assay.candidates.listing import list_clusters, list_groups

    def body(ws: Workspace) -> dict[str, Any]:
        found = project_of(ws, project)
        return {
            **list_groups(ws, found, cluster=cluster, open_only=open_only, limit=limit),
            "clusters": list_clusters(ws, found),
        }

    found = run(ctx, body)
    if as_json:
        print_json(found)
        return
    out = console()
    out.print("Topics:", markup=False)
    for c in found["clusters"]:
        out.print(f"  {c['cluster']:>3}  {c['label']}  ({c['questions']} questions)", markup=False)
    out.print("Groups (id, times asked, negative feedback, topic, question):", markup=False)
    for g in found["groups"]:
        taken = f"  -> item {g['item_id']}" if g["item_id"] else ""
        out.print(
            f"  {g['id']:>7}  {g['asked']:>5}x  {g['negative']:>3}-  #{g['cluster']}  "
            f"{g['question']}{taken}",
            markup=False,
        )
    out.print(f"{len(found['groups'])} of {found['total']} groups shown.", markup=False)


SampleSize = typer.Option(20, "-n", "--size", min=1, max=500, help="How many questions to pick.")
Difficulty = typer.Option(
    None,
    "--difficulty",
    min=0,
    max=500,
    metavar="N",
    help="Ask the project's retrievers about the N best-scored groups (default 3 x the size, "
    "at most 60; 0: not at all).",
    show_default=False,
)


def _print_sample(sample: dict[str, Any]) -> None:
    out = console()
    for n, pick in enumerate(sample["picks"], 1):
        out.print(f"{n:>3}. [{pick['group_id']}] {pick['question']}", markup=False)
        for reason in pick["reasons"]:
            out.print(f"       - {reason['text']}", markup=False)
    out.print(
        f"{len(sample['picks'])} picked of {sample['open_groups']} open group(s).", markup=False
    )


def sample_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    size: int = SampleSize,
    difficulty: int = Difficulty,
    as_json: bool = JsonOption,
) -> None:
    """Show the sample the policy would pick now, with the reasons for each pick.

    Documents without gold first (one question each), then topics without gold, then a
    share of every topic; within each, groups asked often, with negative feedback, or that
    the retrievers find hard go first. Nothing is stored: `assay candidates assign` takes it.
    """
    from assay.candidates.sampling import sample

    picked = run(ctx, lambda ws: sample(ws, project_of(ws, project), size,
                                         difficulty=difficulty).as_json())  # fmt: skip
    if as_json:
        print_json(picked)
        return
    _print_sample(picked)


def assign_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    size: int = SampleSize,
    difficulty: int = Difficulty,
    to: list[str] = typer.Option(
        [],
        "--to",
        metavar="USERS",
        help="Annotators' user names, comma separated; left out: the shared pool.",
        show_default=False,
    ),
    overlap: int = typer.Option(1, "--overlap", min=1, max=50, help="Annotators per item."),
    method: str = typer.Option(
        "round-robin", "--method", metavar="METHOD", help="round-robin or balanced."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Take the sample into the gold work: a draft item per pick, assigned in one step.

    Each item keeps the production answer as the system's answer and the retrieved
    passages; a question from a multi-turn session becomes a conversation. The reasons
    for the pick are in the item's notes.

    Example: assay candidates assign -n 20 --to ada,bob
    """
    from assay.candidates.sampling import sample
    from assay.candidates.taking import take
    from assay.people.actors import acting_account

    def body(ws: Workspace) -> dict[str, Any]:
        found = project_of(ws, project)
        picked = sample(ws, found, size, difficulty=difficulty)
        with ws.engine.begin() as conn:
            taken = take(
                ws, found, picked.picks, _names(to), assigned_by=acting_account(ws, conn=conn),
                overlap=overlap, method=method, conn=conn,
            )  # fmt: skip
        return {"sample": picked.as_json(), **taken.as_json()}

    report = run(ctx, body)
    if as_json:
        print_json(report)
        return
    _print_sample(report["sample"])
    shares = ", ".join(f"{name or 'the pool'} {count}" for name, count in report["tasks"].items())
    console().print(
        f"Made {len(report['item_ids'])} item(s) and assigned them: {shares}.", markup=False
    )


def coverage_command(
    ctx: typer.Context, project: str = ProjectOption, as_json: bool = JsonOption
) -> None:
    """What the gold covers: documents, sections and topics of real questions, and the gaps."""
    from assay.candidates.coverage import coverage

    found = run(ctx, lambda ws: coverage(ws, project_of(ws, project)))
    if as_json:
        print_json(found)
        return
    out = console()
    t = found["totals"]
    out.print(
        f"Documents with gold: {t['documents_covered']} of {t['documents']}; sections: "
        f"{t['sections_covered']} of {t['sections']}; topics: {t['clusters_covered']} of "
        f"{t['clusters']}.",
        markup=False,
    )
    out.print("Gaps, most asked first:", markup=False)
    for gap in found["gaps"]:
        what = gap["name"] if gap["kind"] == "document" else f"topic “{gap['label']}”"
        out.print(f"  {what}  ({gap['questions']} production questions)", markup=False)
