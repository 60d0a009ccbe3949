"""Corpus commands: ``ingest``, ``documents``, ``document``, ``chunk``, ``chunkings``."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    console,
    human_size,
    parse_params,
    print_json,
    progress_bar,
    project_of,
    project_or_created,
    run,
)

if TYPE_CHECKING:
    from assay.corpus.ingest import IngestReport, Outcome
    from assay.records import Chunk, Chunking, Project
    from assay.store.workspace import Workspace


class ChunkerHelp(TyperCommand):
    """`assay chunk --help` lists the chunkers; built when shown, not when the CLI starts."""

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        self.epilog = _chunker_help()
        super().format_epilog(ctx, formatter)


def register(app: typer.Typer) -> None:
    command(app, "ingest", ingest)
    command(app, "documents", documents)
    command(app, "document", document)
    command(app, "chunk", chunk, cls=ChunkerHelp)
    command(app, "chunkings", chunkings)


def _chunker_help() -> str:
    """The chunkers and their parameters, for the --help text of `assay chunk`."""
    from assay.corpus.chunker_registry import describe_chunkers

    blocks = ["Chunkers and their parameters (default in brackets):"]
    for method, info in describe_chunkers().items():
        lines = textwrap.wrap(f"{method}: {info.get('description', '')}", 96)
        for key, spec in info.get("params", {}).items():
            default = json.dumps(spec.get("default"))
            lines += textwrap.wrap(
                f"{key} [{default}]: {spec.get('description', '')}",
                96,
                initial_indent="  ",
                subsequent_indent="    ",
            )
        blocks.append("\b\n" + "\n".join(lines))
    return "\n\n".join(blocks)


def _ensure_chunker(ws: Workspace, project: Project, spec: str) -> None:
    """``--chunker sentences:sentences=3`` makes sure that chunking exists (named by the spec)."""
    from assay.corpus import chunkings as chunkings_api

    method, _, raw = spec.partition(":")
    params = parse_params([p for p in raw.split(",") if p]) if raw else {}
    existing = {c.name for c in chunkings_api.list_chunkings(ws, project)}
    if spec not in existing:
        chunkings_api.create_chunking(ws, project, spec, method.strip(), params)
        console().print(f"Created chunking {spec!r}")


def ingest(
    ctx: typer.Context,
    paths: list[str] = typer.Argument(
        ...,
        metavar="PATH...",
        help="Files and folders (folders are read recursively); '-' reads standard input.",
    ),
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        metavar="NAME",
        help="Project to add to; created if it does not exist. May be left out when the "
        "workspace has exactly one project.",
        show_default=False,
    ),
    language: str = typer.Option(
        "en", "--language", "-l", metavar="CODE", help="Language when the project is created here."
    ),
    chunker: str = typer.Option(
        None,
        "--chunker",
        metavar="METHOD[:NAME=VALUE,...]",
        help="Also chunk with METHOD[:name=value,...] (created as a chunking named by the "
        "spec if missing). Every chunking of the project always covers every document.",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """Add files to a project: parse, dedupe, chunk and index them.

    Text (.txt, .md, .csv, .json, .jsonl), HTML, PDF and DOCX are parsed. A file with no
    extractable text (an image, a scanned PDF, an unknown type) is refused by name unless
    the project keeps such files (`assay projects settings --keep-textless`). Bad files are
    reported by name and the rest are ingested.
    """
    from assay.corpus.ingest import ingest_paths, sources_from_paths
    from assay.search.indexes import sync_project

    def body(ws: Workspace) -> IngestReport:
        target = project_or_created(ws, project, language)
        if chunker:
            _ensure_chunker(ws, target, chunker)
        total = sum(1 for item in sources_from_paths(p for p in paths if p != "-"))
        total += paths.count("-")
        with progress_bar() as bar:
            task = bar.add_task("Ingesting", total=total)

            def advance(outcome: Outcome) -> None:
                bar.update(task, advance=1, description=f"Ingesting {outcome.source[:40]}")

            report = ingest_paths(ws, target, paths, progress=advance)
            index_task = bar.add_task("Indexing", total=None)
            sync_project(
                ws, target, progress=lambda d, t: bar.update(index_task, completed=d, total=t)
            )
        return report

    report = run(ctx, body)
    if as_json:
        print_json(report.outcomes)
    else:
        out = console()
        for outcome in report.outcomes:
            if outcome.status == "added":
                renamed = f" (stored as {outcome.name})" if outcome.name != outcome.source else ""
                out.print(f"[green]added[/]     {outcome.source}{renamed}")
                for warning in outcome.warnings:
                    out.print(f"  [yellow]warning:[/] {warning}")
            elif outcome.status == "duplicate":
                out.print(f"[blue]duplicate[/] {outcome.message}")
            else:
                out.print(f"[red]error[/]     {outcome.message}")
        out.print(
            f"{len(report.added)} added, {len(report.duplicates)} duplicate(s), "
            f"{len(report.errors)} error(s)"
        )
    if report.errors:
        raise typer.Exit(1 if not report.added and not report.duplicates else 2)


def documents(
    ctx: typer.Context,
    project: str = ProjectOption,
    name: str = typer.Option(
        "", "--name", metavar="TEXT", help="Only documents whose name contains this."
    ),
    as_json: bool = JsonOption,
) -> None:
    """List the documents of a project: doc_id, name, media type, size, characters, warnings."""
    from rich.table import Table

    from assay.corpus import documents as documents_api

    def body(ws: Workspace) -> None:
        found = documents_api.list_documents(ws, project_of(ws, project), name_contains=name)
        if as_json:
            print_json([_document_json(d) for d in found])
            return
        table = Table("doc_id", "name", "media type", "size", "chars", "warnings")
        for d in found:
            table.add_row(
                d.id, d.name, d.media_type, human_size(d.size), str(d.chars), "; ".join(d.warnings)
            )
        console().print(table)

    run(ctx, body)


def _document_json(summary: Any) -> dict[str, Any]:
    """A document summary for --json: ``doc_id`` like every other command, not ``id``."""
    from assay.records import to_json

    data: dict[str, Any] = to_json(summary)
    return {"doc_id": data.pop("id"), **data}


def document(
    ctx: typer.Context,
    doc_id: str = typer.Argument(
        ..., metavar="DOCUMENT", help="Document id, a unique prefix of it, or the document's name."
    ),
    project: str = ProjectOption,
    text: bool = typer.Option(False, "--text", help="Print the extracted text exactly."),
    original: Path = typer.Option(
        None,
        "--original",
        metavar="FILE",
        help="Write the original file's bytes to this path.",
        show_default=False,
    ),
    chunks: str = typer.Option(
        None,
        "--chunks",
        metavar="CHUNKING",
        help="List the document's chunks under this chunking.",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """Show one document: its details, its exact text, its chunks or its original file."""
    from assay.corpus import chunkings as chunkings_api
    from assay.corpus import documents as documents_api

    def body(ws: Workspace) -> None:
        proj = project_of(ws, project)
        doc = _find_document(ws, proj, doc_id)
        if text:
            sys.stdout.write(doc.text)
            sys.stdout.flush()
            return
        if original:
            original.write_bytes(documents_api.original_bytes(ws, doc))
            console().print(f"Wrote {doc.size} bytes to {original}")
            return
        if chunks is not None:
            chunking = chunkings_api.get_chunking(ws, proj, chunks or None)
            rows = chunkings_api.document_chunks(ws, chunking, doc.id)
            if as_json:
                print_json([{**_chunk_json(c), "text": doc.text[c.start : c.end]} for c in rows])
                return
            for c in rows:
                console().print(f"[bold]{c.chunk_id}[/] [{c.start}:{c.end}]")
                console().print(doc.text[c.start : c.end], markup=False)
            return
        summary = {
            "doc_id": doc.id,
            "name": doc.name,
            "media_type": doc.media_type,
            "size": doc.size,
            "sha256": doc.sha256,
            "chars": len(doc.text),
            "parser": doc.parse_info.parser,
            "pages": doc.parse_info.pages,
            "warnings": list(doc.parse_info.warnings),
            "notes": doc.notes,
            "metadata": doc.metadata,
            "created_at": doc.created_at,
        }
        if as_json:
            print_json(summary)
            return
        for key, value in summary.items():
            console().print(f"[bold]{key}:[/] {value}", markup=True)

    run(ctx, body)


def _find_document(ws: Workspace, project: Project, ref: str) -> Any:
    from assay.corpus import documents as documents_api
    from assay.errors import NotFound

    try:
        return documents_api.get_document(ws, project, ref)
    except NotFound:
        try:
            return documents_api.get_document_by_name(ws, project, ref)
        except NotFound:
            raise NotFound(
                f"project {project.name!r} has no document with id or name {ref!r} "
                "(assay documents lists them)"
            ) from None


def _chunk_json(c: Chunk) -> dict[str, object]:
    return {
        "chunk_id": c.chunk_id,
        "doc_id": c.doc_id,
        "ordinal": c.ordinal,
        "start": c.start,
        "end": c.end,
    }


def chunk(
    ctx: typer.Context,
    method: str = typer.Option(
        ..., "--method", "-m", metavar="METHOD", help="Chunker: recursive, tokens or sentences."
    ),
    name: str = typer.Option(..., "--name", "-n", metavar="NAME", help="Name of the new chunking."),
    param: list[str] = typer.Option(
        [],
        "--param",
        metavar="NAME=VALUE",
        help="Chunker parameter as name=value; repeat for several.",
    ),
    default: bool = typer.Option(False, "--default", help="Make it the project's default."),
    project: str = ProjectOption,
) -> None:
    """Create a new named chunking and chunk every document with it (existing ones stay)."""
    from assay.corpus import chunkings as chunkings_api
    from assay.search.indexes import sync_index

    def body(ws: Workspace) -> None:
        proj = project_of(ws, project)
        with progress_bar() as bar:
            task = bar.add_task("Chunking", total=None)
            created = chunkings_api.create_chunking(
                ws,
                proj,
                name,
                method,
                parse_params(param),
                make_default=default,
                progress=lambda d, t: bar.update(task, completed=d, total=t),
            )
            index_task = bar.add_task("Indexing", total=None)
            sync_index(
                ws,
                proj,
                created,
                progress=lambda d, t: bar.update(index_task, completed=d, total=t),
            )
        n = chunkings_api.count_chunks(ws, created)
        console().print(f"Created chunking {created.name!r}: {n} chunks ({method})")

    run(ctx, body)


def chunkings(
    ctx: typer.Context,
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """List the chunkings of a project."""
    from rich.table import Table

    from assay.corpus import chunkings as chunkings_api

    def body(ws: Workspace) -> None:
        found = chunkings_api.list_chunkings(ws, project_of(ws, project))
        counts = [chunkings_api.count_chunks(ws, c) for c in found]
        if as_json:
            print_json(
                [{**_chunking_json(c), "chunks": n} for c, n in zip(found, counts, strict=True)]
            )
            return
        table = Table("name", "method", "params", "chunks", "default")
        for c, n in zip(found, counts, strict=True):
            table.add_row(c.name, c.method, str(c.params), str(n), "yes" if c.is_default else "")
        console().print(table)

    run(ctx, body)


def _chunking_json(c: Chunking) -> dict[str, object]:
    return {"name": c.name, "method": c.method, "params": c.params, "default": c.is_default}
