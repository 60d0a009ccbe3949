"""The example in docs/python-api.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def test_python_api_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, "docs/python-api.md has no example"
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
