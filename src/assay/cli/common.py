"""What every command shares: the workspace, the project option, output and errors.

Only the standard library and typer are imported here at module level: the command tree is
built on every call (even ``assay --help``), so stage modules are imported inside the
functions that need them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from assay.records import Project
    from assay.store.workspace import Workspace

T = TypeVar("T")

NoCacheOption = typer.Option(
    False,
    "--no-cache",
    help="Ask every model again: take no reply from the response cache and keep none in it "
    "(see `assay cache`).",
)
ProjectOption = typer.Option(
    None,
    "--project",
    "-p",
    metavar="NAME",
    help="Project name; may be left out when the workspace has exactly one project.",
    show_default=False,
)
JsonOption = typer.Option(False, "--json", help="Print JSON for machines instead of a table.")
TopKOption = typer.Option(
    10, "-k", "--top-k", metavar="N", min=1, max=1000, help="How many hits to show."
)


def command(app: typer.Typer, name: str, function: Callable[..., Any], **options: Any) -> None:
    """Register ``function`` as ``name`` with its docstring's first paragraph as the summary
    in ``assay --help`` (click would cut a long one at the terminal's width)."""
    app.command(name, short_help=summary(function.__doc__), **options)(function)


def command_group(
    app: typer.Typer, name: str, help: str, *, default: Callable[..., Any] | None = None
) -> typer.Typer:
    """Add the group ``name`` to ``app``; the first paragraph of ``help`` is also its line in
    ``assay --help``.
    ``default`` runs when no subcommand is given (without it, the group's help is shown)."""
    group = typer.Typer(
        help=help, invoke_without_command=default is not None, no_args_is_help=default is None
    )
    if default is not None:
        group.callback()(default)
    app.add_typer(group, name=name, short_help=summary(help))
    return group


def summary(doc: str | None) -> str:
    first = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split())


@dataclass
class State:
    home: str | None = None
    url: str | None = None
    """``--url``: the team server to work against (else ASSAY_URL; see ``cli.remote``)."""
    insecure: bool = False
    _workspace: Workspace | None = field(default=None, repr=False)

    def workspace(self, *, create: bool = False) -> Workspace:
        """The workspace; only ``assay init`` and ``assay demo`` may create one."""
        if self._workspace is None:
            from assay.errors import NotFound
            from assay.store.workspace import Workspace, workspace_exists

            settings = self.settings()
            if not create and not workspace_exists(settings):
                raise NotFound(
                    f"no Assay workspace in {settings.home.resolve()} (from {self._source()}); "
                    "create one with `assay init`, or point --home or ASSAY_HOME at an "
                    "existing workspace"
                )
            self._workspace = Workspace.open(settings, create=create)
        return self._workspace

    def close(self) -> None:
        """Close the workspace if a command opened it (its database connections)."""
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None

    def _source(self) -> str:
        if self.home:
            return f"--home {self.home}"
        if "ASSAY_HOME" in os.environ:
            return f"ASSAY_HOME={os.environ['ASSAY_HOME']}"
        return "the default ./assay-data, as ASSAY_HOME is not set"

    def settings(self) -> Any:
        from pydantic import ValidationError

        from assay.errors import InvalidInput
        from assay.store.settings import Settings

        if self.home is not None and not self.home.strip():
            raise InvalidInput("--home is empty; give a folder")
        overrides: dict[str, Any] = {"home": Path(self.home)} if self.home else {}
        try:
            return Settings(**overrides)
        except ValidationError as exc:
            problems = "; ".join(
                f"ASSAY_{'_'.join(str(p) for p in e['loc']).upper()} "
                f"{e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors()
            )
            raise InvalidInput(f"invalid setting: {problems}") from None


def state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    assert isinstance(obj, State)
    return obj


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``message`` (rich markup allowed) as an error on stderr and exit."""
    from rich.console import Console

    Console(stderr=True, soft_wrap=True).print(f"[bold red]Error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def warn(message: str) -> None:
    """Print plain ``message`` as a warning on stderr (``--json`` output stays one document)."""
    from rich.console import Console

    Console(stderr=True, soft_wrap=True).print(f"[yellow]warning:[/] {escape(message)}")


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn Assay's errors into a one-line message and exit status 1."""
    from assay.errors import AssayError

    try:
        yield
    except AssayError as exc:
        fail(escape(str(exc)))


def escape(text: str) -> str:
    """Text shown as is by rich: ``pip install -e '.[embeddings]'`` keeps its brackets."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def run(ctx: typer.Context, body: Callable[[Workspace], T], *, create: bool = False) -> T:
    with user_errors():
        return body(state(ctx).workspace(create=create))


def project_of(ws: Workspace, name: str | None) -> Project:
    from assay.store.projects import resolve_project

    return resolve_project(ws, name)


def project_or_created(ws: Workspace, name: str | None, language: str = "en") -> Project:
    """The project named (created, and said so, when the workspace has none of that name),
    or the workspace's only project: what commands that bring data in work on."""
    from rich.console import Console

    from assay.errors import NotFound
    from assay.store.projects import create_project, get_project

    if name:
        try:
            return get_project(ws, name)
        except NotFound:
            project = create_project(ws, name, language)
            told = f"Created project {project.name!r} (language {project.language})"
            Console(stderr=True).print(told, markup=False)  # stdout may be --json
            return project
    return project_of(ws, None)


def print_json(value: Any) -> None:
    from assay.records import to_json

    sys.stdout.write(json.dumps(to_json(value), ensure_ascii=False, indent=2) + "\n")


def console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def progress_bar(enabled: bool = True) -> Progress:
    """A bar on stderr, so ``--json`` output on stdout stays clean."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not enabled or not sys.stderr.isatty(),
    )


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``["max_length=500", "overlap=50"]`` → ``{"max_length": 500, "overlap": 50}``."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            fail(f"parameter {pair!r} must look like name=value")
        try:
            params[key.strip()] = json.loads(raw)
        except ValueError:
            params[key.strip()] = raw
    return params


def human_size(size: int) -> str:
    step = 1024.0
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < step or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= step
    return f"{size} B"
