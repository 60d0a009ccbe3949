"""Write docs/cli.md from the CLI's --help texts."""

from pathlib import Path

from assay.cli import make_app
from assay.cli.reference import render_reference

target = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
target.write_text(render_reference(make_app()))
print(f"wrote {target}")
