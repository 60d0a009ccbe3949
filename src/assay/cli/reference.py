"""The CLI reference (docs/cli.md) built from the commands' own --help texts."""

from __future__ import annotations

import typer
from typer.main import get_command
from typer.testing import CliRunner


def command_paths(app: typer.Typer) -> list[list[str]]:
    """Every command and sub-command as argument lists: [], ["init"], ["projects", "create"]…"""
    root = get_command(app)
    paths: list[list[str]] = [[]]

    def walk(command: object, prefix: list[str]) -> None:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if getattr(sub, "hidden", False):
                continue
            paths.append([*prefix, name])
            walk(sub, [*prefix, name])

    walk(root, [])
    return paths


def render_reference(app: typer.Typer) -> str:
    runner = CliRunner()
    parts = [
        "# CLI reference\n",
        "Generated from `assay … --help` by `make docs` (scripts/gen_cli_docs.py); "
        "a test fails when this file is out of date.\n",
    ]
    for path in command_paths(app):
        result = runner.invoke(app, [*path, "--help"], terminal_width=100, env={"COLUMNS": "100"})
        title = " ".join(["assay", *path])
        parts.append(f"## `{title}`\n\n```text\n{result.output.rstrip()}\n```\n")
    return "\n".join(parts)
