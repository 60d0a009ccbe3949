"""The ``assay`` command line: one sub-module per stage, this one wires them together.

Building the command tree imports typer and the ``assay.cli`` modules only; each command
imports its stage modules when it runs, so ``assay --help`` starts in a tenth of a second.
"""

from __future__ import annotations

import logging
import sys

import typer

from assay.cli import (
    agreement,
    cache,
    candidates,
    comments,
    conversation,
    corpus,
    dashboard,
    endpoints,
    evaluate,
    experiments,
    items,
    judge,
    pool,
    projects,
    queue,
    remote,
    review,
    search,
    serve,
    suggest,
    synthesize,
    tokens,
    transfer,
    users,
    versions,
    worker,
)
from assay.cli.common import State


def _version(value: bool) -> None:
    if value:
        from assay import __version__

        typer.echo(f"assay {__version__}")
        raise typer.Exit()


def quiet_logs(verbose: bool) -> None:
    """Libraries' log lines (pypdf's PDF warnings, httpx's requests) reach the terminal only
    with --verbose; without it the root logger gets a handler that drops them."""
    root = logging.getLogger()
    if verbose:
        if not any(type(h) is logging.StreamHandler for h in root.handlers):
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            root.addHandler(handler)
        root.setLevel(logging.INFO)
    elif not any(isinstance(h, logging.NullHandler) for h in root.handlers):
        root.addHandler(logging.NullHandler())


def make_app() -> typer.Typer:
    app = typer.Typer(
        name="assay",
        help=(
            "Assay builds gold-standard RAG evaluation datasets from your own documents.\n\n"
            "The workspace folder comes from --home, else ASSAY_HOME, else ./assay-data; "
            "create it with `assay init`. With ASSAY_URL (or --url) and the token in "
            "ASSAY_TOKEN, import, export, eval, experiments and cache work on that team server "
            "instead (see docs/people.md)."
        ),
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _root(
        ctx: typer.Context,
        home: str = typer.Option(
            None,
            "--home",
            metavar="DIR",
            help="Workspace folder (overrides ASSAY_HOME).",
            show_default=False,
        ),
        url: str = typer.Option(
            None,
            "--url",
            metavar="URL",
            help="Work against this Assay server (overrides ASSAY_URL): import, export, eval, "
            "experiments and cache only. The API token comes from ASSAY_TOKEN, never from an "
            "option (the shell history would keep it); create one with `assay tokens create`.",
            show_default=False,
        ),
        insecure: bool = typer.Option(
            False,
            "--insecure",
            help="Allow an http:// server URL that is not on this machine (the token then "
            "travels in clear).",
        ),
        verbose: bool = typer.Option(
            False, "--verbose", "-v", help="Also show the log lines of the libraries used."
        ),
        version: bool = typer.Option(
            False,
            "--version",
            callback=_version,
            is_eager=True,
            help="Print Assay's version and exit.",
        ),
    ) -> None:
        quiet_logs(verbose)
        if url is not None:
            remote.refuse_local_only(ctx.invoked_subcommand)
        ctx.obj = State(home=home, url=url, insecure=insecure)
        ctx.call_on_close(ctx.obj.close)

    projects.register(app)
    corpus.register(app)
    search.register(app)
    pool.register(app)
    serve.register(app)
    transfer.register(app)
    items.register(app)
    queue.register(app)
    candidates.register(app)
    dashboard.register(app)
    comments.register(app)
    review.register(app)
    evaluate.register(app)
    experiments.register(app)
    conversation.register(app)
    synthesize.register(app)
    suggest.register(app)
    users.register(app)
    tokens.register(app)
    endpoints.register(app)
    versions.register(app)
    worker.register(app)
    agreement.register(app)
    judge.register(app)
    cache.register(app)
    return app


def main() -> None:
    make_app()(standalone_mode=True)
