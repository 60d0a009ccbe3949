"""``assay judge``: judging mode from the terminal (TREC RAG topics and runs, judgments,
the offline page, leaderboards). See docs/judging.md.

The group is made here; each part of judging mode keeps its commands in its own module:
runs and judgments in and out (``judge_runs``), topics given to judges (``judge_assign``),
the offline page (``judge_html``), qrels, leaderboards and agreement (``judge_eval``).
"""

from __future__ import annotations

import typer

from assay.cli import judge_assign, judge_eval, judge_html, judge_runs
from assay.cli.common import command_group


def register(app: typer.Typer) -> None:
    group = command_group(
        app,
        "judge",
        "Judging mode: human judgments of what real RAG systems answered.\n\n"
        "Import TREC RAG topics and runs, follow the judges' progress, write the offline "
        "judging page, and rank runs by their judgments.",
    )
    judge_runs.register(group)
    judge_assign.register(group)
    judge_html.register(group)
    judge_eval.register(group)
