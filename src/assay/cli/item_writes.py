"""``assay items create``, ``edit`` and ``submit``: writing one item from JSON, as the JSON
API does (``POST .../items``, ``PUT .../items/ID``, ``POST .../items/ID/status``).

The JSON is the API's request body, read from a file or standard input (``-``): for
``create`` an item (``{"turns": [{"query": …, "answer": …, "evidence": […]}], …}``), for
``edit`` ``{"version": N, "item": {…}}`` (the version read; a stale one is refused, nothing
overwritten), for ``submit`` optionally ``{"version": N}``. Each answers the item as stored
with the findings of the completeness checks, as JSON, like the API.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import ProjectOption, command, fail, print_json, project_of, run

if TYPE_CHECKING:
    from assay.records import Item, Project
    from assay.store.workspace import Workspace

ItemIdArgument = typer.Argument(..., metavar="ID", help="The item's id.")


def register(group: typer.Typer) -> None:
    command(group, "create", create)
    command(group, "edit", edit)
    command(group, "submit", submit)


def _read(source: str) -> Any:
    """The JSON of ``source``: a file, or ``-`` for standard input; a clear error naming it."""
    where = "standard input" if source == "-" else source
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"{where}: cannot read it ({exc.strerror})")
    try:
        return json.loads(text)
    except ValueError as exc:
        fail(f"{where}: not valid JSON ({exc})")


def _answer(item: Item, project: Project) -> dict[str, Any]:
    from assay.gold.checks import check_item
    from assay.records import to_json

    findings = [dataclasses.asdict(f) for f in check_item(item, project)]
    return {"item": to_json(item), "findings": findings}


def _version(data: Any, where: str) -> int:
    if not isinstance(data, dict):
        fail(f"{where}: give a JSON object")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        fail(f"{where}: 'version' must be the item's version as read (a whole number from 1)")
    return version


def create(
    ctx: typer.Context,
    source: str = typer.Option(
        ...,
        "--json",
        metavar="FILE|-",
        help="The item as JSON (the API's POST body); - reads stdin.",
    ),
    project: str = ProjectOption,
) -> None:
    """Create a draft item from JSON, as ``POST /api/projects/P/items`` does; prints it with
    the findings of the completeness checks."""
    from assay.gold.items import create_item, parse_item
    from assay.people.actors import acting_account

    data = _read(source)

    def body(ws: Workspace) -> dict[str, Any]:
        target = project_of(ws, project)
        item = parse_item(data, "--json")
        made = create_item(ws, target, item, author=acting_account(ws))
        return _answer(made, target)

    print_json(run(ctx, body))


def edit(
    ctx: typer.Context,
    item_id: str = ItemIdArgument,
    source: str = typer.Option(
        ...,
        "--json",
        metavar="FILE|-",
        help='{"version": N, "item": {...}} as the API\'s PUT body; - reads stdin.',
    ),
    project: str = ProjectOption,
) -> None:
    """Replace an item's content from JSON, as ``PUT /api/projects/P/items/ID`` does: refused
    when the item changed since version N was read (nothing is overwritten)."""
    from assay.gold.items import parse_item
    from assay.people.actors import acting_account
    from assay.review.reviews import save_edit

    data = _read(source)
    version = _version(data, "--json")
    if "item" not in data:
        fail('--json: give the item\'s new content as "item" (and the version read as "version")')

    def body(ws: Workspace) -> dict[str, Any]:
        target = project_of(ws, project)
        item = parse_item(data["item"], "--json item")
        saved = save_edit(ws, target, item_id, item, version, author=acting_account(ws))
        return _answer(saved, target)

    print_json(run(ctx, body))


def submit(
    ctx: typer.Context,
    item_id: str = ItemIdArgument,
    source: str = typer.Option(
        None,
        "--json",
        metavar="FILE|-",
        help='{"version": N}: submit only if the item is still at version N (default: as it is).',
        show_default=False,
    ),
    project: str = ProjectOption,
) -> None:
    """Submit an item for review, as ``POST /api/projects/P/items/ID/status`` with
    ``submitted``: refused, naming the problems, when it fails the completeness checks."""
    from assay.gold.items import get_item, submit_item
    from assay.people.actors import acting_account

    version = _version(_read(source), "--json") if source else None

    def body(ws: Workspace) -> dict[str, Any]:
        target = project_of(ws, project)
        base = version if version is not None else get_item(ws, target, item_id).version
        done = submit_item(ws, target, item_id, base, actor=acting_account(ws))
        return _answer(done, target)

    print_json(run(ctx, body))
