"""``assay judge leaderboard``, ``assay judge qrels``, ``assay judge agreement``: judgments
turned into evaluation (docs/judging.md, "From judgments to evaluation").

The qrels are a command of ``assay judge``, not a format of ``assay export``: export writes a
project's gold *items* in exchange formats, and its TREC qrels come from the items' evidence;
these come from the judges' document ratings, another source that must not be mixed in.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    console,
    escape,
    fail,
    print_json,
    project_of,
    run,
    user_errors,
)

if TYPE_CHECKING:
    from assay.judging.agreement import Agreement, JudgingAgreement
    from assay.judging.leaderboard import Leaderboard
    from assay.store.workspace import Workspace

FORMATS = ("table", "json", "trec")
TopicOption = typer.Option(
    [], "--topic", "-t", metavar="ID", help="Only this topic (repeatable; default: all)."
)
OutputOption = typer.Option(
    None,
    "--output",
    "-o",
    metavar="FILE",
    help="Write to FILE instead of the terminal.",
    show_default=False,
)


def register(group: typer.Typer) -> None:
    command(group, "leaderboard", leaderboard_command)
    command(group, "qrels", qrels_command)
    command(group, "agreement", agreement_command)


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(escape(f"cannot write {output}: {exc.strerror or exc}"))
    console().print(f"Wrote {escape(str(output))}")


def leaderboard_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    output_format: str = typer.Option(
        "table", "--format", "-f", metavar="FORMAT", help="table, json or trec."
    ),
    topic: list[str] = TopicOption,
    sort: str = typer.Option(
        "mean_rating",
        "--sort",
        metavar="MEASURE",
        help="Rank runs by this measure: mean_rating, supported_sentences, citation_precision.",
    ),
    output: Path = OutputOption,
) -> None:
    """Rank the project's runs by their judgments: mean rating, supported sentences, citation
    precision.

    Per run, per topic and over all topics (the mean over the topics where the run has a
    value): the mean grade of the report's ratings (report mode), the share of settled
    sentences with a supporting citation and the share of rated citations that support their
    sentence (citation mode). docs/judging.md defines each. The covered column: on how many
    of its topics a run has a value of the --sort measure; a run judged on only some
    (partial) is ranked after the complete ones. --format trec writes autojudge's
    leaderboard text: run, measure, topic, value per line, with `all` rows.
    """
    from assay.judging.leaderboard import leaderboard, trec_leaderboard

    if output_format not in FORMATS:
        fail(f"--format {escape(output_format)!r}: choose one of {', '.join(FORMATS)}")

    def body(ws: Workspace) -> tuple[Leaderboard, str]:
        board = leaderboard(ws, project_of(ws, project), topic_ids=topic, sort=sort)
        return board, trec_leaderboard(board) if output_format == "trec" else ""

    board, trec = run(ctx, body)
    if output_format == "trec":
        _write(trec, output)
    elif output_format == "json":
        import json

        from assay.records import to_json

        _write(json.dumps(to_json(board), ensure_ascii=False, indent=2) + "\n", output)
    elif output is not None:
        fail("--output writes json or trec; give --format json or --format trec")
    else:
        _print_leaderboard(board)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _print_leaderboard(board: Leaderboard) -> None:
    from rich import box
    from rich.table import Table

    scale = ", ".join(f"{rating} {grade}" for rating, grade in board.grades.items())
    table = Table(
        title=f"{board.project}: runs by {board.sort} (grades: {scale})",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    table.add_column("run", no_wrap=True)
    table.add_column("team")
    table.add_column("topics", justify="right")
    table.add_column("covered", justify="right")  # topics with a value of the sort measure
    for measure in board.measures:
        table.add_column(measure.replace("_", "\n"), justify="right")
    for entry in board.runs:
        table.add_row(
            escape(entry.run_id),
            escape(entry.team_id),
            str(len(entry.topics)),
            f"{entry.covered}" + ("" if entry.complete else " (partial)"),
            *(_number(entry.all.value(m)) for m in board.measures),
        )
    console().print(table)


def qrels_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    judge: str = typer.Option(
        None,
        "--judge",
        metavar="USER",
        help="Only this judge's ratings (default: all judges, at their lower median).",
        show_default=False,
    ),
    topic: list[str] = TopicOption,
    output: Path = OutputOption,
    as_json: bool = typer.Option(
        False, "--json", help="Print {topic: {doc_id: grade}} as JSON instead of TREC lines."
    ),
) -> None:
    """Write the document ratings as graded TREC qrels (topic 0 doc_id grade).

    A rating's grade: the scale's ratings best first, the last 0 (default: Perfect 3,
    Mostly Good 2, So-so 1, Bad 0); not rated documents are left out. Several judges: the
    lower median of their grades. Score a run against them with `assay eval --judged --run
    FILE`, or against the file written here with `assay eval --qrels FILE --run FILE`.
    """
    from assay.judging.qrels import judged_qrels, trec_qrels
    from assay.people.accounts import get_account

    def body(ws: Workspace) -> dict[str, dict[str, int]]:
        target = project_of(ws, project)
        judge_id = get_account(ws, judge).id if judge else None
        return judged_qrels(ws, target, judge_id=judge_id, topic_ids=topic)

    qrels = run(ctx, body)
    if as_json:
        if output is not None:
            fail("--json prints to the terminal; leave out --output")
        print_json(qrels)
        return
    with user_errors():
        text = trec_qrels(qrels)
    _write(text, output)


def agreement_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """How much judges agree on the units they both judged, on ratings and spans, per mode.

    Ratings: exact agreement (share of judge pairs with the same rating) and Krippendorff's
    alpha (ordinal, over the grades). Spans: character-overlap F1 between two judges' spans,
    over the pairs where at least one marked a span (citation mode: document and sentence
    spans apart). Per mode over all judges, and per judge pair.
    """
    from assay.judging.agreement import judging_agreement

    found = run(ctx, lambda ws: judging_agreement(ws, project_of(ws, project)))
    if as_json:
        print_json(found)
        return
    _print_agreement(found)


AGREEMENT_COLUMNS = (
    ("units", "units"),
    ("pairs", "pairs"),
    ("exact", "exact"),
    ("alpha", "alpha"),
    ("span_pairs", "span\npairs"),
    ("spans_f1", "spans\nF1"),
    ("report_span_pairs", "sentence\npairs"),
    ("report_spans_f1", "sentence\nF1"),
)


def _columns(mode: str) -> list[tuple[str, str]]:
    """The sentence spans belong to citation mode only."""
    return [c for c in AGREEMENT_COLUMNS if mode == "citation" or "report" not in c[0]]


def _cells(measures: Agreement, mode: str) -> list[str]:
    cells = []
    for name, _ in _columns(mode):
        value = getattr(measures, name)
        cells.append(str(value) if isinstance(value, int) else _number(value))
    return cells


def _print_agreement(found: JudgingAgreement) -> None:
    from rich import box
    from rich.table import Table

    out = console()
    for mode in found.modes:
        table = Table(
            title=f"{mode.mode} mode: {len(mode.judges)} judge(s)",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            collapse_padding=True,
            title_justify="left",
        )
        table.add_column("judges", no_wrap=True)
        for _, heading in _columns(mode.mode):
            table.add_column(heading, justify="right")
        table.add_row("all", *_cells(mode.overall, mode.mode))
        for pair in mode.pairs:
            names = escape(f"{pair.first} · {pair.second}")
            table.add_row(names, *_cells(pair.measures, mode.mode))
        out.print(table)
