"""``assay init``, ``assay projects`` and a project's generator and retriever settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    command_group,
    console,
    fail,
    print_json,
    project_of,
    run,
    state,
    user_errors,
)

if TYPE_CHECKING:
    from assay.records import Project
    from assay.store.workspace import Workspace

# The codes of assay.store.projects.LANGUAGES (a test keeps the two equal); written out here so
# that building the command tree does not import the store.
LANGUAGE_CODES = "en, de, fr, es, it, nl, pt"
GENERATOR_PRESETS: dict[str, dict[str, Any]] = {
    "offline": {"kind": "offline"},
    "local": {"kind": "local", "model": ""},
}


def register(app: typer.Typer) -> None:
    command(app, "init", init)
    group = command_group(
        app,
        "projects",
        "List, create, rename and delete projects; show and change their settings.",
        default=list_projects,
    )
    command(group, "create", create)
    command(group, "rename", rename)
    command(group, "delete", delete)
    command(group, "settings", settings)


def init(
    ctx: typer.Context,
    project: str = typer.Option(
        None,
        "--project",
        "-p",
        metavar="NAME",
        help="Also create a project with this name.",
        show_default=False,
    ),
    language: str = typer.Option(
        "en", "--language", "-l", metavar="CODE", help="Language of that project."
    ),
) -> None:
    """Create the workspace folder and database (and optionally a first project).

    The only command that creates a workspace (besides `assay demo`): the others say where
    they looked when there is none. Running it again on an existing workspace is harmless.
    """
    from assay.store import projects as projects_api

    def body(ws: Workspace) -> None:
        out = console()
        out.print(f"Workspace ready: {ws.settings.home.resolve()}", markup=False)
        if project:
            created = projects_api.create_project(ws, project, language)
            out.print(f"Created project {created.name!r} (language {created.language})")

    run(ctx, body, create=True)


def list_projects(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """List the projects of the workspace (the default when no sub-command is given)."""
    if ctx.invoked_subcommand:
        return
    from rich.table import Table

    from assay.corpus.documents import count_documents
    from assay.store import projects as projects_api

    def body(ws: Workspace) -> None:
        found = projects_api.list_projects(ws)
        rows = [(p, count_documents(ws, p)) for p in found]
        if as_json:
            print_json([{**_project_json(p), "documents": n} for p, n in rows])
            return
        if not found:
            console().print("No projects yet. Create one with: assay projects create NAME")
            return
        table = Table("name", "language", "documents", "created")
        for p, n in rows:
            table.add_row(p.name, p.language, str(n), p.created_at.strftime("%Y-%m-%d %H:%M"))
        console().print(table)

    run(ctx, body)


def _project_json(p: Project) -> dict[str, object]:
    return {
        "id": p.id,
        "name": p.name,
        "language": p.language,
        "created_at": p.created_at.isoformat(),
    }


def create(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME", help="Project name (unique in the workspace)."),
    language: str = typer.Option(
        "en",
        "--language",
        "-l",
        metavar="CODE",
        help=f"Language of the documents: {LANGUAGE_CODES}.",
    ),
) -> None:
    """Create a project."""
    from assay.store import projects as projects_api

    def body(ws: Workspace) -> None:
        created = projects_api.create_project(ws, name, language)
        console().print(f"Created project {created.name!r} (language {created.language})")

    run(ctx, body)


def rename(
    ctx: typer.Context,
    old: str = typer.Argument(..., metavar="OLD", help="Current name."),
    new: str = typer.Argument(..., metavar="NEW", help="New name."),
) -> None:
    """Rename a project."""
    from assay.store import projects as projects_api

    def body(ws: Workspace) -> None:
        renamed = projects_api.rename_project(ws, projects_api.get_project(ws, old), new)
        console().print(f"Renamed project {old!r} to {renamed.name!r}")

    run(ctx, body)


def delete(
    ctx: typer.Context,
    name: str = typer.Argument(
        ..., metavar="NAME", help="Project to delete, with all its documents."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a project and everything in it (asks first unless --yes)."""
    from assay.corpus.documents import count_documents
    from assay.store import projects as projects_api

    ws = None
    with user_errors():
        ws = state(ctx).workspace()
        project = projects_api.get_project(ws, name)
        count = count_documents(ws, project)
    if not yes:
        typer.confirm(
            f"Delete project {name!r} with {count} document(s)? This cannot be undone",
            abort=True,
        )
    with user_errors():
        projects_api.delete_project(ws, project)
    console().print(f"Deleted project {name!r}")


POOL_PRESETS: dict[str, dict[str, Any]] = {
    "keyword": {"sources": [{"name": "keyword", "kind": "keyword"}]},
    "built-in": {
        "sources": [{"name": kind, "kind": kind} for kind in ("keyword", "dense", "hybrid")]
    },
}


def _spec(option: str, value: str, presets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A preset name, a JSON object, or @FILE holding one."""
    text = value
    if value.startswith("@"):
        path = Path(value[1:])
        if not path.is_file():
            fail(f"{option} {value!r}: no such file")
        text = path.read_text(encoding="utf-8")
    if not text.lstrip().startswith("{"):
        if text.strip() in presets:
            return dict(presets[text.strip()])
        fail(
            f"{option} {value!r}: give {''.join(f'{p}, ' for p in presets)}a JSON object or @FILE "
            "(see docs/llm.md)"
        )
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        fail(f"{option} {value[:60]!r}: not valid JSON ({exc})")
    if not isinstance(parsed, dict):
        fail(f"{option} {value[:60]!r}: give a JSON object")
    return parsed


def settings(
    ctx: typer.Context,
    project: str = ProjectOption,
    generator: str = typer.Option(
        None,
        "--generator",
        metavar="SPEC",
        help="Set the generator: offline, local (SmolLM2), or a JSON object such as "
        '\'{"kind": "openai", "base_url": "http://127.0.0.1:8080/v1", "model": "qwen"}\' '
        "or @FILE; the fields given replace the stored ones. The API key is never a "
        "setting: it comes from ASSAY_LLM_API_KEY (or OPENAI_API_KEY).",
        show_default=False,
    ),
    retriever: str = typer.Option(
        None,
        "--retriever",
        metavar="SPEC",
        help='Set the retriever: keyword, dense, hybrid, or a JSON object ({"kind": '
        '"hybrid", "k": 5}) or @FILE; the fields given replace the stored ones.',
        show_default=False,
    ),
    pool: str = typer.Option(
        None,
        "--pool",
        metavar="SPEC",
        help="Set the pool (assay pool, the pool view, the unanswerable check, the chat's "
        "source): keyword, built-in (keyword, dense and hybrid), a JSON object "
        '({"depth": 20, "chat": "pool"}) or @FILE; the fields given replace the stored '
        "ones (docs/evaluation.md).",
        show_default=False,
    ),
    reranker: str = typer.Option(
        None,
        "--reranker",
        metavar="SPEC",
        help="Set the reranker of the editor's search panel: a JSON object such as "
        '\'{"kind": "http", "url": "http://127.0.0.1:8080/v1/rerank"}\' or @FILE (replaces '
        "the stored one; --reset reranker removes it). A key comes from ASSAY_RERANK_API_KEY.",
        show_default=False,
    ),
    see_all: bool = typer.Option(
        None,
        "--annotators-see-all/--annotators-own-only",
        help="Whether annotators read every item of the project or only their own (the "
        "default: only their own).",
        show_default=False,
    ),
    keep_textless: bool = typer.Option(
        None,
        "--keep-textless/--refuse-textless",
        help="Whether uploads and `assay ingest` keep a file with no extractable text (an "
        "image, a scanned PDF), marked with a warning, or refuse it (the default).",
        show_default=False,
    ),
    mtrag_collection: str = typer.Option(
        None,
        "--mtrag-collection",
        metavar="NAME",
        help="The `collection` of MTRAG tasks exported for conversations made in Assay "
        "(default: the project's name; MTRAG refuses an empty one).",
        show_default=False,
    ),
    judging_ratings: str = typer.Option(
        None,
        "--judging-ratings",
        metavar="LABEL,...",
        help="The rating scale of judging mode, comma-separated, the first label meaning "
        '"not rated" (default: Not rated,Perfect,Mostly Good,So-so,Bad). Labels that '
        "judgments already carry must stay.",
        show_default=False,
    ),
    reset: list[str] = typer.Option(
        [],
        "--reset",
        metavar="PART",
        help="Restore the default of generator, retriever, reranker, enrichments, "
        "query_types, pool, annotators_see_all, keep_textless_documents, mtrag_collection "
        "or judging_ratings.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Show or change a project's generator and retriever settings, whether its
    annotators see every item, whether files without text are kept, and the judging
    rating scale.

    `assay chat`, `assay generate`, `assay synthesize` and the web workbench use the
    project's generator (offline by default: extractive, no LLM) and retriever. See
    docs/llm.md for OpenAI-compatible endpoints and the local SmolLM2.
    """
    import dataclasses

    from assay.gold.project_config import (
        generator_settings,
        retriever_settings,
        settings_view,
        update_settings,
    )

    changes: dict[str, Any] = dict.fromkeys(reset)
    retriever_presets = {kind: {"kind": kind} for kind in ("keyword", "dense", "hybrid")}

    def body(ws: Workspace) -> dict[str, Any]:
        target = project_of(ws, project)
        if generator is not None:
            stored = dataclasses.asdict(generator_settings(target))
            changes["generator"] = {**stored, **_spec("--generator", generator, GENERATOR_PRESETS)}
        if retriever is not None:
            stored = retriever_settings(target).model_dump()
            changes["retriever"] = {**stored, **_spec("--retriever", retriever, retriever_presets)}
        if pool is not None:
            stored = target.settings.get("pool") or {}
            changes["pool"] = {**stored, **_spec("--pool", pool, POOL_PRESETS)}
        if reranker is not None:
            changes["reranker"] = _spec("--reranker", reranker, {})
        if see_all is not None:
            changes["annotators_see_all"] = see_all
        if keep_textless is not None:
            changes["keep_textless_documents"] = keep_textless
        if mtrag_collection is not None:
            changes["mtrag_collection"] = mtrag_collection
        if judging_ratings is not None:
            changes["judging_ratings"] = judging_ratings.split(",")
        if changes:
            target = update_settings(ws, target, changes)
        return {"project": target.name, **settings_view(target)}

    shown = run(ctx, body)
    if as_json:
        print_json(shown)
        return
    out = console()
    for part in ("generator", "retriever"):
        values = {k: v for k, v in shown[part].items() if k != "prompt_template"}
        out.print(f"{part}: {json.dumps(values, ensure_ascii=False)}", markup=False)
    reranking = shown.get("reranker")
    out.print(f"reranker: {json.dumps(reranking) if reranking else 'none'}", markup=False)
    seen = "every item" if shown["annotators_see_all"] else "only their own items"
    out.print(f"annotators see: {seen}", markup=False)
    kept = "kept with a warning" if shown["keep_textless_documents"] else "refused"
    out.print(f"files without text: {kept}", markup=False)
    out.print(f"MTRAG collection: {shown['mtrag_collection']}", markup=False)
    out.print(f"judging ratings: {', '.join(shown['judging_ratings'])}", markup=False)
    if changes:
        out.print(f"Saved the settings of project {shown['project']!r}.", markup=False)
