"""docs/screenshots/ keeps only the pictures the docs show, compressed, within a size budget;
the screenshot scripts write the rest into the untracked build/screenshots/ on demand."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURES = ROOT / "docs" / "screenshots"
SHOWN = re.compile(r"screenshots/([A-Za-z0-9_.-]+\.png)")
BUDGET = 3 * 1024 * 1024
"""Bytes for all of docs/screenshots/: 34 pictures took 2.1 MB when this was set (21 MB for
156 uncompressed ones before)."""
PALETTE = 3
"""PNG colour type of an indexed picture, what scripts/screenshot_docs.py writes."""


def shown() -> dict[str, list[str]]:
    """Each picture the README or a page of docs/ shows, with the pages that show it."""
    found: dict[str, list[str]] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for name in SHOWN.findall(page.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(page.name)
    return found


def test_every_picture_the_docs_show_is_there() -> None:
    missing = {name: pages for name, pages in shown().items() if not (PICTURES / name).is_file()}
    assert not missing, f"shown but not in docs/screenshots/: {missing}"


def test_only_pictures_the_docs_show_are_kept() -> None:
    kept = {path.name for path in PICTURES.iterdir()}
    unshown = sorted(kept - set(shown()))
    assert not unshown, (
        f"no page of the docs shows {unshown}: the screenshot scripts write such pictures "
        "into build/screenshots/ (untracked)"
    )


def test_the_pictures_are_compressed_and_within_the_budget() -> None:
    sizes = {path.name: path.stat().st_size for path in PICTURES.iterdir()}
    assert sum(sizes.values()) <= BUDGET, (
        f"docs/screenshots/ holds {sum(sizes.values()):,} bytes, over its budget of "
        f"{BUDGET:,}; biggest: {sorted(sizes, key=sizes.__getitem__)[-3:]}"
    )
    for path in PICTURES.iterdir():
        header = path.read_bytes()[:26]
        assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
        assert header[25] == PALETTE, (
            f"{path.name} is not compressed: run python scripts/screenshot_docs.py FOLDER "
            "on the folder it was written to"
        )
