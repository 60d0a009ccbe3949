"""Docs cannot drift: every setting is documented and the CLI reference matches --help."""

from __future__ import annotations

import re
from pathlib import Path

from assay.cli import make_app
from assay.cli.reference import render_reference
from assay.settings import Settings

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_setting_is_documented() -> None:
    documented = set(re.findall(r"`ASSAY_([A-Z_]+)`", (DOCS / "settings.md").read_text()))
    fields = {name.upper() for name in Settings.model_fields}
    assert fields - documented == set(), "undocumented settings"
    assert documented - fields - {"TEST_POSTGRES_URL"} == set(), "documented but not a setting"


def test_cli_reference_is_current() -> None:
    expected = render_reference(make_app())
    assert (DOCS / "cli.md").read_text() == expected, "run `make docs` to refresh docs/cli.md"


def test_every_command_has_help() -> None:
    text = render_reference(make_app())
    for block in text.split("## `")[1:]:
        usage = block.split("```text\n", 1)[1]
        lines = [line for line in usage.splitlines() if line.strip()]
        assert len(lines) >= 3, f"command without a description: {block[:40]}"
