"""``assay search``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from assay.cli.common import (
    JsonOption,
    ProjectOption,
    TopKOption,
    command,
    console,
    escape,
    print_json,
    project_of,
    run,
)

if TYPE_CHECKING:
    from rich.text import Text

    from assay.records import Hit
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "search", search)


def search(
    ctx: typer.Context,
    query: str = typer.Argument(
        ..., metavar="QUERY", help="Words to look for (plain words, no query syntax)."
    ),
    k: int = TopKOption,
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

    Prints each hit's rank, document name, chunk id, score, character offsets and a snippet.
    With --json, prints a list of hits with doc_id, chunk_id, start, end, score, rank, text,
    snippet and highlights (offsets into the snippet).
    """
    from assay.corpus.documents import list_documents
    from assay.search.indexes import search as search_index

    def body(ws: Workspace) -> tuple[list[Hit], dict[str, str]]:
        target = project_of(ws, project)
        hits = search_index(ws, target, query, k, chunking)
        names = {d.id: d.name for d in list_documents(ws, target)} if hits and not as_json else {}
        return hits, names

    hits, names = run(ctx, body)
    if as_json:
        print_json(hits)
        return
    out = console()
    if not hits:
        out.print("No hits.")
    for hit in hits:
        out.print(
            f"[bold]{hit.rank}. {escape(names.get(hit.doc_id, hit.doc_id))}[/]  "
            f"[dim]{hit.chunk_id}, score {hit.score:.3f}, chars {hit.start}–{hit.end}[/]"
        )
        out.print(highlighted(hit))
        out.print()


def highlighted(hit: Hit) -> Text:
    from rich.text import Text

    text = Text(hit.snippet)
    for start, end in hit.highlights:
        text.stylize("bold yellow", start, end)
    return text
