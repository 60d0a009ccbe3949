"""The example in docs/python-api.md runs as written."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def test_python_api_example_runs(
    monkeypatch: pytest.MonkeyPatch, new_database: Callable[[], str]
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, "docs/python-api.md has no example"
    for block in blocks:
        # each example makes a workspace of its own: "" is its SQLite file, else a database
        monkeypatch.setenv("ASSAY_DATABASE_URL", new_database())
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
