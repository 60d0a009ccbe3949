"""``assay judge html``: write the offline judging page (one HTML file, no server needed).

See :mod:`assay.judging.offline_page` and docs/judging.md ("The offline page").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    console,
    escape,
    print_json,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.judging.offline_page import OfflinePage
    from assay.store.workspace import Workspace


def register(group: typer.Typer) -> None:
    command(group, "html", html_command)


def html_command(
    ctx: typer.Context,
    out: Path = typer.Argument(..., metavar="OUT.html", help="The HTML file to write."),
    project: str = ProjectOption,
    topics: list[str] = typer.Option(
        [],
        "--topic",
        metavar="ID",
        help="A topic to put on the page (repeat for more); all topics when left out.",
        show_default=False,
    ),
    mode: str = typer.Option(
        "reports",
        "--mode",
        metavar="MODE",
        help="What judges judge: reports, documents or citations.",
    ),
    dataset: str = typer.Option(
        None,
        "--dataset",
        metavar="LABEL",
        help="The label written into every downloaded line and naming the browser's storage "
        "for this work; the project's name when left out.",
        show_default=False,
    ),
    language: str = typer.Option(
        None,
        "--language",
        metavar="LANG",
        help="The page's language: en or de; the project's language when it is one of them, "
        "else en.",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """Write the offline judging page: one HTML file a judge opens from disk.

    The page needs no server and loads nothing from the network. It shows the topics' reports
    (--mode reports), the documents they cite (documents) or each citation (citations), keeps
    the judge's work in the browser's storage, and downloads it as JSONL in
    autojudge-annotate's shape, which `assay import autojudge` merges into the project.
    """
    from assay.judging.offline_page import offline_page, write_offline_page

    def body(ws: Workspace) -> OfflinePage:
        chosen = project_of(ws, project)
        label = dataset or chosen.name
        page = offline_page(
            ws, chosen, mode=mode, topic_ids=topics, dataset=label, language=language
        )
        write_offline_page(out, page)
        return page

    page = run(ctx, body)
    summary = {
        "path": str(out),
        "mode": page.mode,
        "dataset": page.dataset,
        "topics": page.topics,
        "units": page.units,
        "bytes": len(page.html.encode("utf-8")),
    }
    if as_json:
        print_json(summary)
        return
    console().print(
        f"Wrote {escape(str(out))}: {page.units} units in {page.topics} topics "
        f"({page.mode} mode, dataset {escape(repr(page.dataset))}). Open it in a browser; "
        "merge the JSONL it downloads with `assay import autojudge`."
    )
