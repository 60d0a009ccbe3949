"""The ``assay`` command line: one sub-module per stage, this one wires them together."""

from __future__ import annotations

import sys

import typer

from assay.cli import (
    conversation,
    corpus,
    evaluate,
    projects,
    search,
    serve,
    synthesize,
    transfer,
)
from assay.cli.common import State, fail
from assay.errors import AssayError


def make_app() -> typer.Typer:
    app = typer.Typer(
        name="assay",
        help=(
            "Assay builds gold-standard RAG evaluation datasets from your own documents.\n\n"
            "The workspace folder comes from --home or ASSAY_HOME (default ./assay-data)."
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
    ) -> None:
        ctx.obj = State(home=home)

    projects.register(app)
    corpus.register(app)
    search.register(app)
    serve.register(app)
    transfer.register(app)
    evaluate.register(app)
    conversation.register(app)
    synthesize.register(app)
    return app


def main() -> None:
    app = make_app()
    try:
        app(standalone_mode=True)
    except AssayError as exc:  # pragma: no cover - typer's standalone mode exits before this
        fail(str(exc))
    sys.exit(0)
