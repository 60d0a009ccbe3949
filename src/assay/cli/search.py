"""``assay search``."""

from __future__ import annotations

import typer
from rich.text import Text

from assay.cli.common import JsonOption, ProjectOption, console, print_json, project_of, run
from assay.models import Hit
from assay.search.indexes import search as search_index
from assay.workspace import Workspace


def register(app: typer.Typer) -> None:
    app.command("search")(search)


def search(
    ctx: typer.Context,
    query: str = typer.Argument(
        ..., metavar="QUERY", help="Words to look for (plain words, no query syntax)."
    ),
    k: int = typer.Option(
        10, "-k", "--top-k", metavar="N", min=1, max=1000, help="How many hits to show."
    ),
    chunking: str = typer.Option(
        None,
        "--chunking",
        "-c",
        metavar="NAME",
        help="Chunking to search (default: the project's default).",
        show_default=False,
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Keyword search (BM25) over a project's chunks.

    With --json, prints a list of hits with doc_id, chunk_id, start, end, score, rank, text,
    snippet and highlights (offsets into the snippet).
    """

    def body(ws: Workspace) -> list[Hit]:
        return search_index(ws, project_of(ws, project), query, k, chunking)

    hits = run(ctx, body)
    if as_json:
        print_json(hits)
        return
    out = console()
    if not hits:
        out.print("No hits.")
    for hit in hits:
        out.print(
            f"[bold]{hit.rank}.[/] {hit.chunk_id}  [dim]score {hit.score:.3f}, "
            f"chars {hit.start}–{hit.end}[/]"
        )
        out.print(highlighted(hit))
        out.print()


def highlighted(hit: Hit) -> Text:
    text = Text(hit.snippet)
    for start, end in hit.highlights:
        text.stylize("bold yellow", start, end)
    return text
