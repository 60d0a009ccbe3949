"""Errors raised with a catalog key: the English catalog says exactly what the code says, and
a German reader gets the German text through the web API and pages."""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import assay
from assay.errors import Conflict, NotFound
from assay.store.workspace import Workspace
from assay.web.i18n import load_catalogs, make_translators, said

SOURCE = Path(assay.__file__).parent


def keyed_raises() -> Iterator[tuple[str, str, str]]:
    """(where, key, English template) for every error call given a constant ``key=``: the
    f-string's expressions become the names of the keyword arguments that carry them."""
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            key = keywords.pop("key", None)
            if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
                continue
            where = f"{path.relative_to(SOURCE)}:{node.lineno}"
            yield where, key.value, template_of(node.args[0], keywords, where)


def template_of(message: ast.expr, params: dict[str, ast.expr], where: str) -> str:
    if isinstance(message, ast.Constant):
        return str(message.value)
    assert isinstance(message, ast.JoinedStr), f"{where}: the message is not an (f-)string"
    by_expression = {ast.dump(value): name for name, value in params.items()}
    parts = []
    for value in message.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value).replace("{", "{{").replace("}", "}}"))
            continue
        assert isinstance(value, ast.FormattedValue)
        name = by_expression.get(ast.dump(value.value))
        assert name, f"{where}: {ast.unparse(value.value)} is not passed as a parameter"
        conversion = f"!{chr(value.conversion)}" if value.conversion != -1 else ""
        spec = ""
        if value.format_spec is not None:
            spec = ":" + "".join(str(v.value) for v in value.format_spec.values)  # type: ignore[attr-defined]
        parts.append(f"{{{name}{conversion}{spec}}}")
    return "".join(parts)


RAISES = list(keyed_raises())


def test_keyed_errors_exist() -> None:
    assert len({key for _, key, _ in RAISES}) >= 15


@pytest.mark.parametrize("where, key, template", RAISES, ids=[r[0] for r in RAISES])
def test_english_catalog_is_the_raised_text(where: str, key: str, template: str) -> None:
    catalogs = load_catalogs()
    assert catalogs["en"].get(key) == template, f"{where}: en/errors.json {key}"
    assert key in catalogs["de"], f"{where}: {key} has no German text"
    german = {f for _, f, _, _ in string.Formatter().parse(catalogs["de"][key]) if f}
    english = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    assert german == english, f"{where}: {key} placeholders differ"


def test_every_error_key_is_raised_somewhere() -> None:
    raised = {key for _, key, _ in RAISES}
    listed = {key for key in load_catalogs()["en"] if key.startswith("raised.")}
    assert listed - raised == set(), "catalog texts of errors no code raises"


def test_said_falls_back_to_the_english_message() -> None:
    t = make_translators(load_catalogs())["de"]
    keyed = NotFound("project 'p' has no item 'x'", key="raised.no_item", project="p", item_id="x")
    assert said(keyed, t) == t("raised.no_item", project="p", item_id="x")
    assert said(keyed, t) != str(keyed)
    assert said(Conflict("plain English"), t) == "plain English"
    unknown = Conflict("still English", key="raised.nobody_wrote_this")
    assert said(unknown, t) == "still English"
    wrong = NotFound("missing parameter", key="raised.no_item", project="p")
    assert said(wrong, t) == "missing parameter"


def test_german_reader_gets_german_errors(ws: Workspace) -> None:
    from assay.store.projects import create_project
    from assay.web import create_app

    create_project(ws, "p")
    with TestClient(create_app(ws)) as client:
        url = "/api/projects/p/items/nothere"
        english = client.get(url)
        german = client.get(url, headers={"accept-language": "de"})
        page = client.get("/projects/p/items/nothere", headers={"accept-language": "de"})
    assert english.status_code == german.status_code == 404
    assert english.json()["detail"] == "project 'p' has no item 'nothere'"
    de = load_catalogs()["de"]["raised.no_item"].format(project="p", item_id="nothere")
    assert german.json()["detail"] == de
    assert page.status_code == 404
    assert "Projekt" in de and de.replace("'", "&#39;") in page.text


def test_a_format_spec_carries_over() -> None:
    """The dataset version clash formats its date through the template's own spec."""
    from datetime import datetime

    t = make_translators(load_catalogs())["de"]
    when = datetime(2026, 3, 4, 5, 6, tzinfo=UTC)
    clash = Conflict(
        "English",
        key="raised.dataset_version_name_taken",
        project="p",
        name="v1",
        frozen=when,
        hash="abc",
    )
    assert "04.03.2026 um 05:06 UTC" in said(clash, t)


def test_a_stale_save_answers_in_german(ws: Workspace) -> None:
    """The 409 of a stale autosave carries the stored item and the German message."""
    from assay.store.projects import create_project
    from assay.web import create_app

    create_project(ws, "p")
    with TestClient(create_app(ws)) as client:
        client.get("/")  # the CSRF cookie
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        made = client.post("/api/projects/p/items", json={"turns": [{"query": "Wann?"}]}).json()
        url = f"/api/projects/p/items/{made['item']['id']}"
        mine = made["input"]
        assert client.put(url, json={"version": 1, "item": mine}).status_code == 200
        stale = client.put(
            url, json={"version": 1, "item": mine}, headers={"accept-language": "de"}
        )
    assert stale.status_code == 409
    de = load_catalogs()["de"]["raised.item_changed_elsewhere"]
    expected = de.format(item_id=made["item"]["id"], base_version=1, version=2)
    assert stale.json()["detail"] == expected
    assert stale.json()["current"]["version"] == 2
