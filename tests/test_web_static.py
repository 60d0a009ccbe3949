"""The browser files: what is vendored is pinned and used, and every script a page names exists."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import assay.web

WEB = Path(assay.web.__file__).parent
STATIC = WEB / "static"
VENDOR = STATIC / "vendor"
SCRIPT = re.compile(r"url_for\('static', path='([^']+)'\)")


def referenced() -> set[str]:
    """Every static path the templates name."""
    names: set[str] = set()
    for template in (WEB / "templates").glob("*.html"):
        names.update(SCRIPT.findall(template.read_text(encoding="utf-8")))
    return names


def test_every_vendored_file_is_pinned_and_loaded_by_a_page() -> None:
    manifest = json.loads((VENDOR / "MANIFEST.json").read_text(encoding="utf-8"))
    listed = {entry["file"]: entry["sha256"] for entry in manifest["files"]}
    shipped = {p.name for p in VENDOR.iterdir() if p.suffix in (".js", ".css")}
    assert shipped == set(listed)
    for name, sha256 in listed.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == sha256, name
    # nothing is vendored that no page loads (htmx was, and is gone)
    assert {f"vendor/{name}" for name in listed} <= referenced()


def test_every_static_file_a_page_names_exists() -> None:
    names = referenced()
    assert "shell.js" in names
    for name in names:
        assert (STATIC / name).is_file(), name
