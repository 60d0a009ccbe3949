"""Messages that reach the web never show absolute server paths.

Readers name the file they failed on, and for an upload that is where the server keeps it
(``/srv/assay-data/imports/812-3fa9…/data.jsonl: line 3: …``). The user knows that file by
the name they uploaded; the folder layout of the server is none of their business and a hint
to anyone probing it. So known server paths are replaced by what the user knows them as.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def hide_paths(message: str, shown: Mapping[str, str]) -> str:
    """``message`` with every path in ``shown`` replaced by its public name (longest first,
    so a file inside a folder is named before the folder is)."""
    for path in sorted(shown, key=len, reverse=True):
        message = message.replace(path, shown[path])
    return message


def workspace_paths(home: Path) -> dict[str, str]:
    """The workspace folder, as written and resolved, shown as ``ASSAY_HOME``."""
    paths = {str(home.resolve()): "ASSAY_HOME"}
    if home.is_absolute():
        paths[str(home)] = "ASSAY_HOME"
    return paths


def upload_paths(home: Path, folder: Path, stored: Path, filename: str) -> dict[str, str]:
    """An upload kept at ``stored`` in ``folder``: the file is its uploaded name, files
    unpacked next to it are named relative to the folder."""
    return {
        **workspace_paths(home),
        str(stored): filename,
        str(stored.resolve()): filename,
        f"{folder}/data/": "",
        f"{folder.resolve()}/data/": "",
        f"{folder}/": "",
        f"{folder.resolve()}/": "",
    }
