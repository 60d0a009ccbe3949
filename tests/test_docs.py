"""Docs cannot drift: every setting is documented and the CLI reference matches --help."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.cli import make_app
from assay.cli.reference import render_reference
from assay.store.settings import Settings

DOCS = Path(__file__).resolve().parents[1] / "docs"
SRC = Path(__file__).resolve().parents[1] / "src" / "assay"
NAME = re.compile(r"\bASSAY_([A-Z][A-Z0-9_]*[A-Z0-9])\b")


def settings_in_code() -> set[str]:
    """Every ``ASSAY_*`` name the code mentions (``os.environ`` reads such as
    ``ASSAY_LLM_API_KEY`` included), plus the fields of :class:`Settings`."""
    names = {name.upper() for name in Settings.model_fields}
    for path in SRC.rglob("*.py"):
        names |= set(NAME.findall(path.read_text(encoding="utf-8")))
    return names


def test_every_setting_is_documented() -> None:
    documented = set(re.findall(r"\| `ASSAY_([A-Z0-9_]+)` \|", (DOCS / "settings.md").read_text()))
    in_code = settings_in_code()
    assert in_code - documented == set(), "undocumented settings (add them to docs/settings.md)"
    assert documented - in_code == set(), "documented but not read anywhere"


def test_the_settings_scan_sees_environment_reads() -> None:
    assert {"LLM_API_KEY", "HOME", "PORT"} <= settings_in_code()


@pytest.fixture(scope="module")
def cli_reference() -> str:
    """Rendered once for the module: it asks every command for its --help (some 10 s CPU)."""
    return render_reference(make_app())


def test_cli_reference_is_current(cli_reference: str) -> None:
    assert (DOCS / "cli.md").read_text() == cli_reference, "run `make docs` to refresh docs/cli.md"


def test_every_command_has_help(cli_reference: str) -> None:
    text = cli_reference
    for block in text.split("## `")[1:]:
        usage = block.split("```text\n", 1)[1]
        lines = [line for line in usage.splitlines() if line.strip()]
        assert len(lines) >= 3, f"command without a description: {block[:40]}"
