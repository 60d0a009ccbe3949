"""``assay synthesize``: LLM-drafted questions and answers for humans to check."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import (
    JsonOption,
    NoCacheOption,
    ProjectOption,
    command,
    console,
    escape,
    print_json,
    progress_bar,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.gold.synthesis import SynthesisReport
    from assay.store.workspace import Workspace

# assay.gold.synthesis.DEFAULT_TYPES, written out so that --help does not load the store (a test
# keeps the two equal).
DEFAULT_TYPES = "fact_single,summary,reasoning,unanswerable"


def register(app: typer.Typer) -> None:
    command(app, "synthesize", synthesize_command)


def synthesize_command(
    ctx: typer.Context,
    project: str = ProjectOption,
    n: int = typer.Option(20, "--n", min=1, metavar="N", help="How many chunks to sample."),
    types: str = typer.Option(
        DEFAULT_TYPES,
        "--types",
        metavar="ID,...",
        help="Query types, assigned to the sampled chunks in turn.",
    ),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed of the chunk sampling."),
    chunking: str = typer.Option(
        None,
        "--chunking",
        "-c",
        metavar="NAME",
        help="Chunking to sample from (default: the project's default chunking).",
        show_default=False,
    ),
    no_cache: bool = NoCacheOption,
    as_json: bool = JsonOption,
) -> None:
    """Draft question-and-answer items from sampled chunks with the project's generator.

    Each draft is stored as a draft item marked as an LLM suggestion, with its source chunk
    as evidence, for a human to fix and accept in the editor. With the offline generator (the
    default) the drafts are extractive templates, not an LLM's. Replies that cannot be used
    are skipped and listed with the reason. The generator is the project's: see
    `assay projects settings --generator` and docs/llm.md.
    """
    from rich.table import Table

    from assay.gold.synthesis import synthesize

    def body(ws: Workspace) -> SynthesisReport:
        target = project_of(ws, project)
        with progress_bar() as bar:
            task = bar.add_task("Drafting", total=n)
            return synthesize(
                ws,
                target,
                n=n,
                types=types.split(","),
                seed=seed,
                chunking=chunking,
                cache=not no_cache,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )

    report = run(ctx, body)
    if as_json:
        print_json(report)
        return
    out = console()
    table = Table("query type", "created", "skipped")
    for query_type, counts in report.per_type.items():
        table.add_row(query_type, str(counts["created"]), str(counts["skipped"]))
    out.print(table)
    for skipped in report.skipped:
        out.print(
            f"[yellow]skipped[/] {escape(skipped.chunk_id)} ({escape(skipped.query_type)}): "
            f"{escape(skipped.reason)}"
        )
    out.print(
        f"{len(report.created)} draft(s) created from {report.sampled} chunk(s) of chunking "
        f"{report.chunking!r}, {len(report.skipped)} skipped. Review them in the items list "
        "(status draft)."
    )
