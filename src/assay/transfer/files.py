"""Format files on the server's disk: folder formats travel as zips, uploads get a safe name.

Folder formats (AutoRAG, BEIR, TREC, Hugging Face) are written as a folder and zipped for a
download; an upload of one is a zip unpacked with the same entry checks the readers use.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, FormatSpec
from assay.formats.common import SafeZip


def takes_folder(spec: FormatSpec) -> bool:
    """Formats written as a folder (AutoRAG, BEIR, TREC, Hugging Face): zipped for download."""
    return spec.extensions[:1] == ("",)


def safe_stem(name: str) -> str:
    """A file name with nothing but letters, digits, ``.``, ``_`` and ``-`` (80 at most)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")[:80] or "assay"


def write_file(
    spec: FormatSpec,
    bundle: Bundle,
    folder: Path,
    stem: str,
    options: dict[str, Any],
    zipping: Callable[[], None] = lambda: None,
) -> tuple[Path, list[str]]:
    """Write ``bundle`` into ``folder`` as one file, folder formats zipped (``zipping`` is
    called before the zip starts): the file and the writer's notes."""
    if takes_folder(spec):
        notes = spec.write(bundle, folder / stem, **options)
        zipping()
        archive = shutil.make_archive(str(folder / stem), "zip", folder, stem)
        shutil.rmtree(folder / stem)
        return Path(archive), notes
    output = folder / f"{stem}{spec.extensions[0]}"
    return output, spec.write(bundle, output, **options)


def unpack(archive: Path, target: Path) -> Path:
    """Unpack a zip of a folder format, checking every entry like the readers do (no ``..``,
    no absolute paths, size and ratio limits); a single top folder is stepped into."""
    with SafeZip(archive) as zf:
        for name in zf.entries:
            if name.startswith("__MACOSX/") or name.rsplit("/", 1)[-1] == ".DS_Store":
                continue
            dest = target / name
            if not dest.resolve().is_relative_to(target.resolve()):
                raise InvalidInput(f"{archive.name}: unsafe entry name {name!r}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(zf.read(name))
    entries = list(target.iterdir()) if target.exists() else []
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return target


def input_path(spec: FormatSpec, upload: Path, folder: Path) -> Path:
    """What the reader gets: the file itself, or the folder a zip holds for folder formats."""
    if not takes_folder(spec) or upload.suffix.lower() in spec.extensions:
        return upload
    if zipfile.is_zipfile(upload):
        return unpack(upload, folder / "data")
    raise InvalidInput(
        f"{upload.name}: the {spec.name} format is a folder; upload a zip of the folder"
    )
