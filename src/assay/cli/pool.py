"""``assay pool``: what several pipelines find for a question or for a whole project."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    console,
    escape,
    fail,
    print_json,
    progress_bar,
    project_of,
    run,
)

if TYPE_CHECKING:
    from assay.experiments.pools import Pool, ProjectPool
    from assay.search.pool_settings import PoolSettings
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "pool", pool)


def pool(
    ctx: typer.Context,
    query: str = typer.Argument(
        None, metavar="QUERY", help="One question to pool (leave out to pool the project)."
    ),
    item: str = typer.Option(
        None, "--item", metavar="ITEM_ID", help="Pool one item's question, judged by its gold."
    ),
    turn: int = typer.Option(
        None, "--turn", metavar="N", help="With --item: the turn (default: the last)."
    ),
    source: list[str] = typer.Option(
        [],
        "--source",
        "-s",
        metavar="KIND",
        help="A built-in source: keyword, dense or hybrid (repeat; replaces the project's).",
    ),
    external: list[str] = typer.Option(
        [],
        "--external",
        metavar="NAME=URL",
        help="An external RAG system behind the HTTP contract of docs/evaluation.md (repeat).",
    ),
    run_file: list[Path] = typer.Option(
        [],
        "--run",
        metavar="PATH",
        help="A TREC run file on this machine; query ids as Assay's exports write them "
        "(docs/formats.md) or task ids (repeat).",
    ),
    depth: int = typer.Option(
        None,
        "--depth",
        "-k",
        metavar="K",
        help="Passages from each source (default: the settings, 10).",
    ),
    statuses: str = typer.Option(
        "all",
        "--status",
        "--statuses",
        metavar="STATUS",
        help="Project pool: items with these statuses (draft, submitted, accepted, rejected "
        "or all; comma-separated).",
    ),
    chunking: str = typer.Option(
        None, "--chunking", "-c", metavar="NAME", help="Chunking searched (default: the default)."
    ),
    out: Path = typer.Option(
        None, "--out", "-o", metavar="PATH", help="Write the pool to this file."
    ),
    out_format: str = typer.Option(
        "json", "--format", metavar="FORMAT", help="Format of --out: json or trec."
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Pool several pipelines: each one's first K passages, passages that overlap by the
    documented policy counted once, with the pipelines that found each one.

    With QUERY or --item, pools one question and lists its passages. Without, pools every
    question of the project's items and prints the coverage (pooled passages that gold
    evidence of any label judges) overall and per source, and the unanswerable items with
    strong hits. Sources come from the project's pool settings unless --source, --external
    or --run name them. --out writes the pools as JSON or as a TREC run
    (query_id Q0 passage_id rank score pool; the scores keep the pool's order and the query
    ids are those of assay export beir|trec, so assay eval --qrels reads the two together).
    """
    if out_format not in ("json", "trec"):
        fail(f"--format must be json or trec, not {out_format!r}")

    def body(
        ws: Workspace,
    ) -> tuple[list[Pool], dict[str, Any] | None, list[dict[str, Any]], dict[str, str]]:
        from assay.corpus.documents import document_names
        from assay.experiments.pools import question_pool

        target = project_of(ws, project)
        settings = _settings(ws, target.settings, source, external, run_file, depth)
        if query is not None or item is not None:
            one = question_pool(
                ws, target, settings, query=query, item_id=item, turn=turn, chunking=chunking
            )
            names = document_names(ws, target, {e.doc_id for e in one.entries})
            return [one], None, _warnings([one], settings), names
        with progress_bar(not as_json) as bar:
            task = bar.add_task("pooling", total=None)
            whole = _project(ws, target, settings, statuses, chunking, bar, task)
        return whole.pools, whole.summary(), _warnings(whole.pools, settings), {}

    pools, summary, warnings, names = run(ctx, body)
    if out is not None:
        _write(out, out_format, pools, summary)
    if as_json:
        if summary is None:
            print_json({**pools[0].to_json(), "strong_hits": warnings})
        else:
            print_json({"summary": summary, "unanswerable_with_strong_hits": warnings})
        return
    if summary is None:
        _print_pool(pools[0], names)
    else:
        _print_summary(summary)
    for warning in warnings:
        console().print(
            f"[yellow]warning[/] {escape(warning['task_id'])}: marked unanswerable, "
            f"{warning['count']} strong hit(s), best {warning['coverage']:.0%}: "
            f"{escape(warning['text'][:90])}"
        )
    if out is not None:
        console().print(f"wrote {escape(str(out))}")


def _settings(
    ws: Workspace,
    stored: dict[str, Any],
    source: list[str],
    external: list[str],
    runs: list[Path],
    depth: int | None,
) -> PoolSettings:
    from assay.experiments.runfiles import keep_local_file
    from assay.search.pool_settings import RunFile, pool_settings, with_sources

    pairs = []
    for value in external:
        name, sep, url = value.partition("=")
        if not sep or not name.strip() or not url.strip():
            fail(f"--external {value!r} must look like NAME=URL")
        pairs.append((name.strip(), url.strip()))
    kept = []
    for path in runs:
        ref = keep_local_file(ws, path, "run")
        kept.append((path.stem or "run", RunFile(sha256=ref.sha256, name=ref.name)))
    return with_sources(
        pool_settings(stored), built_in=source, external=pairs, runs=kept, depth=depth
    )


def _project(
    ws: Workspace,
    target: Any,
    settings: PoolSettings,
    statuses: str,
    chunking: str | None,
    bar: Any,
    task: Any,
) -> ProjectPool:
    from assay.experiments.pools import project_pool

    def progress(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return project_pool(
        ws, target, settings, statuses=statuses, chunking=chunking, progress=progress
    )


def _warnings(pools: list[Pool], settings: PoolSettings) -> list[dict[str, Any]]:
    from assay.experiments.pools import pool_strong_hits

    found = []
    for one in pools:
        if not one.marked_unanswerable:
            continue
        hits = pool_strong_hits(one, settings)
        if hits:
            best = hits[0]
            found.append(
                {
                    "task_id": one.task_id,
                    "count": len(hits),
                    "coverage": best.coverage,
                    "text": best.text,
                    "doc_id": best.doc_id,
                    "start": best.start,
                    "end": best.end,
                }
            )
    return found


def _write(path: Path, out_format: str, pools: list[Pool], summary: dict[str, Any] | None) -> None:
    from assay.experiments.pools import trec_lines

    if out_format == "trec":
        text = "".join(line + "\n" for line in trec_lines(pools))
    else:
        data = {"summary": summary, "pools": [p.to_json() for p in pools]}
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")


def _print_pool(one: Pool, names: dict[str, str]) -> None:
    out = console()
    for name, message in one.errors.items():
        out.print(f"[red]error[/] source {escape(name)}: {escape(message)}")
    for n, entry in enumerate(one.entries, 1):
        found = ", ".join(f"{name} #{rank}" for name, rank in entry.found_by.items())
        judged = f"  [green]{entry.judged}[/]" if entry.judged else ""
        name = escape(names.get(entry.doc_id, entry.doc_id))
        out.print(
            f"[bold]{n}.[/] {name} chars {entry.start}–{entry.end}  [dim]{escape(found)}[/]{judged}"
        )
        out.print(f"    {entry.text[:160]}", markup=False)
    coverage = "—" if one.coverage is None else f"{one.coverage:.0%}"
    out.print(f"{len(one.entries)} pooled, {one.judged} judged, coverage {coverage}")


def _print_summary(summary: dict[str, Any]) -> None:
    out = console()
    coverage = "—" if summary["coverage"] is None else f"{summary['coverage']:.1%}"
    out.print(
        f"{summary['questions']} question(s), depth {summary['depth']}: "
        f"{summary['pooled']} pooled, {summary['judged']} judged, coverage {coverage}"
    )
    for name, figures in summary["sources"].items():
        out.print(
            f"  {escape(name)}: {figures['found']} found, {figures['only']} only by it, "
            f"{figures['judged']} judged, {figures['errors']} error(s), "
            f"{figures['unplaced']} unplaced",
        )
