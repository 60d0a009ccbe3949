"""``assay chat`` (a terminal conversation against a project) and ``assay generate`` (draft
answers stored as suggestions, never as gold)."""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import (
    JsonOption,
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
    from assay.llm import Generation
    from assay.records import Turn
    from assay.store.workspace import Workspace

STATUS_CHOICES = ("draft", "submitted", "accepted", "rejected", "all")


def register(app: typer.Typer) -> None:
    command(app, "chat", chat)
    command(app, "generate", generate)


def chat(
    ctx: typer.Context,
    project: str = ProjectOption,
    save: bool = typer.Option(
        False, "--save", help="Store the conversation as a draft conversation item at the end."
    ),
) -> None:
    """Chat with a project in the terminal: each line you type is a user turn.

    For every turn the chat source finds passages and the project's generator answers (the
    default generator is offline: extractive, no LLM). The chat source is the web
    workbench's: the project's retriever, or what the pool settings' `chat` names (the whole
    pool or one pool source, such as an external RAG system; docs/evaluation.md). The answer
    is printed with its citations and the passages' document names. A generator error, or a
    chat source that fails, is shown and the session goes on. End with an empty input
    (Ctrl-D). With --save the conversation becomes a draft item, stored as the web workbench
    stores one: questions, answers (also kept as the original answer), retrieved passages and
    how each answer was made (model, prompt hash, retrieval query and settings; never an API
    key), ready to regenerate, edit and export on the web. `assay projects settings
    --generator …` changes the generator (docs/llm.md).
    """
    from assay.errors import BackendUnavailable, InvalidInput
    from assay.experiments.chat_retrieval import retrieve
    from assay.gold.conversations import generator_label
    from assay.gold.items import create_item
    from assay.gold.project_config import generator_settings, retriever_settings
    from assay.gold.turn_answers import answered_turn, question_text
    from assay.llm import make_generator
    from assay.llm.endpoints import outgoing_policy
    from assay.records import Item
    from assay.search.pool_settings import CHAT_POOL, pool_settings

    def body(ws: Workspace) -> None:
        target = project_of(ws, project)
        settings = generator_settings(target)
        retriever = retriever_settings(target)
        chat = pool_settings(target.settings).chat
        source = {"": f"retriever {retriever.kind}", CHAT_POOL: "whole pool"}.get(
            chat, f"pool source {chat}"
        )
        generator = make_generator(settings, policy=outgoing_policy(ws))
        out = console()
        out.print(
            f"Chatting with project [bold]{target.name}[/] — generator: "
            f"{generator_label(settings)}; passages from the {escape(source)}, top "
            f"{retriever.k}. Type a question per line; Ctrl-D ends."
        )
        turns: list[Turn] = []
        for number, line in enumerate(sys.stdin, 1):
            if not line.strip():
                continue
            try:
                query = question_text(line, f"line {number}")
            except InvalidInput as exc:
                out.print(f"[red]Skipped:[/] {escape(str(exc))}")
                continue
            try:
                turn, generation = answered_turn(
                    ws, target, generator, settings, turns, query, retrieve
                )
            except BackendUnavailable as exc:  # the chat source failed: nothing to answer from
                out.print(f"[red]No passages:[/] {escape(str(exc))}")
                continue
            turns.append(turn)
            _print_turn(turn, generation)
        if save and turns:
            item = create_item(ws, target, Item(kind="conversation", origin="chat", turns=turns))
            out.print(f"Saved as draft conversation {item.id} ({len(turns)} turns).")
        elif save:
            out.print("Nothing to save: no questions were asked.")

    run(ctx, body)


def _print_turn(turn: Turn, generation: Generation | None) -> None:
    """The answer (or why there is none) and the passages, cited ones starred."""
    out = console()
    if generation is None:
        err = console()
        err.print(f"[bold red]The generator failed:[/] {escape(turn.generation['error'])}")
        err.print("[dim]Your question is kept without an answer; ask again to retry.[/]")
    else:
        out.print(f"[bold]Answer:[/] {escape(turn.answer)}")
    if not turn.retrieved:
        out.print("[dim]No passages found.[/]")
    cited = {c.passage for c in generation.citations} if generation else set()
    for index, context in enumerate(turn.retrieved):
        mark = "*" if index in cited else " "
        snippet = " ".join(str(context["text"]).split())[:100]
        score = context["score"]  # an external system may give none
        where = ", ".join(
            part
            for part in (context["chunk_id"], None if score is None else f"score {score:.3f}")
            if part
        )
        out.print(
            f" {mark}[{index + 1}] {escape(str(context['title']))} "
            f"[dim]({escape(where)})[/] {escape(snippet)}"
        )
    out.print()


def generate(
    ctx: typer.Context,
    project: str = ProjectOption,
    status: str = typer.Option(
        "draft",
        "--status",
        metavar="STATUS",
        help="Items to draft answers for: draft, submitted, accepted, rejected or all.",
    ),
    limit: int = typer.Option(
        None, "--limit", metavar="N", min=1, help="At most N items.", show_default=False
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace earlier suggestions (never a written answer)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Draft answers for turns that have none, with the project's generator.

    A draft is stored as a suggestion (the turn's original answer, with the model, prompt
    hash and parameters); the gold answer stays empty until a person writes or accepts it.
    Passages: the turn's relevant evidence, else what the project's retriever finds. The
    generator is the project's: `assay projects settings --generator …` (docs/llm.md).
    """
    from assay.gold.conversations import draft_answers, generator_label
    from assay.gold.project_config import generator_settings, retriever_settings
    from assay.llm import make_generator
    from assay.llm.endpoints import outgoing_policy

    if status not in STATUS_CHOICES:
        raise typer.BadParameter(
            f"{status!r}; choose one of: {', '.join(STATUS_CHOICES)}", param_hint="--status"
        )

    def body(ws: Workspace) -> dict[str, Any]:
        target = project_of(ws, project)
        settings = generator_settings(target)
        generator = make_generator(settings, policy=outgoing_policy(ws))
        with progress_bar() as bar:
            task = bar.add_task("drafting answers", total=None)
            report = draft_answers(
                ws,
                target,
                generator,
                settings,
                retriever_settings(target),
                statuses=None if status == "all" else (status,),
                limit=limit,
                overwrite=overwrite,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
        summary = dataclasses.asdict(report)
        summary["generator"] = generator_label(settings)
        return summary

    summary = run(ctx, body)
    if as_json:
        print_json(summary)
    else:
        out = console()
        out.print(
            f"Drafted {summary['drafted']} answer(s) in {summary['items']} item(s) with "
            f"{summary['generator']}; {summary['failed']} failed."
        )
        for error in summary["errors"]:
            out.print(f"[red]{escape(error)}[/]")
    if summary["failed"] and not summary["drafted"]:
        raise typer.Exit(1)
