"""What every command shares: the workspace, the project option, output and errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console

from assay.errors import AssayError
from assay.models import Project, to_json
from assay.projects import resolve_project
from assay.settings import Settings
from assay.workspace import Workspace

T = TypeVar("T")

ProjectOption = typer.Option(
    None,
    "--project",
    "-p",
    metavar="NAME",
    help="Project name; may be left out when the workspace has exactly one project.",
    show_default=False,
)
JsonOption = typer.Option(False, "--json", help="Print JSON for machines instead of a table.")


@dataclass
class State:
    home: str | None = None
    _workspace: Workspace | None = field(default=None, repr=False)

    def workspace(self) -> Workspace:
        if self._workspace is None:
            overrides: dict[str, Any] = {"home": Path(self.home)} if self.home else {}
            self._workspace = Workspace.open(Settings(**overrides))
        return self._workspace


def state(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    assert isinstance(obj, State)
    return obj


def fail(message: str, code: int = 1) -> NoReturn:
    Console(stderr=True, soft_wrap=True).print(f"[bold red]Error:[/] {message}", highlight=False)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn Assay's errors into a one-line message and exit status 1."""
    try:
        yield
    except AssayError as exc:
        fail(_escape(str(exc)))


def _escape(text: str) -> str:
    return text.replace("[", "\\[")


def run(ctx: typer.Context, body: Callable[[Workspace], T]) -> T:
    with user_errors():
        return body(state(ctx).workspace())


def project_of(ws: Workspace, name: str | None) -> Project:
    return resolve_project(ws, name)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(to_json(value), ensure_ascii=False, indent=2) + "\n")


def console() -> Console:
    return Console(highlight=False, soft_wrap=True)


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
