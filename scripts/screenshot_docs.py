"""The screenshots the docs show: picked from what the screenshot scripts wrote, compressed,
and copied into docs/screenshots/ (the only pictures the repository keeps).

Run: python scripts/screenshot_docs.py [FOLDER]   (FOLDER: build/screenshots/ by default)

Every screenshot script writes all its pictures into the untracked ``build/screenshots/``
and then calls :func:`publish`, so a page change re-commits only the pictures a page of the
docs shows. A picture is shown when README.md or docs/*.md names ``screenshots/NAME.png``.
Compression: 256 colours without dithering, then PNG's own optimisation (Pillow, in the dev
extra); text stays sharp and a picture shrinks to about 40 %. tests/test_screenshots.py
holds the size budget.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "build" / "screenshots"
DOCS = ROOT / "docs" / "screenshots"
SHOWN = re.compile(r"screenshots/([A-Za-z0-9_.-]+\.png)")


def shown_in_docs() -> set[str]:
    """The file names of docs/screenshots/ that README.md or a page of docs/ shows."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return {name for page in pages for name in SHOWN.findall(page.read_text(encoding="utf-8"))}


def compress(source: Path, target: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        sys.exit("Pillow is missing: pip install -e '.[dev]' (it is in the dev extra)")
    with Image.open(source) as picture:
        fewer = picture.convert("RGB").quantize(
            colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
    fewer.save(target, "PNG", optimize=True)


def publish(folder: Path = OUT_DIR) -> list[Path]:
    """Copy the pictures of ``folder`` that the docs show into docs/screenshots/, compressed;
    like make, only those newer than the docs' copy (a picture from an earlier run of another
    script does not overwrite a fresher one)."""
    written = []
    for name in sorted(shown_in_docs()):
        source, target = folder / name, DOCS / name
        if source.is_file() and (
            not target.is_file() or source.stat().st_mtime > target.stat().st_mtime
        ):
            compress(source, target)
            written.append(target)
    for path in written:
        print(f"docs: {path.relative_to(ROOT)}")
    return written


if __name__ == "__main__":
    publish(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT_DIR)
