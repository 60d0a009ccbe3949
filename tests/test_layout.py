"""The package layout is the pipeline: a stage imports only the stages below it.

Read from the source with ``ast`` (every import, also those inside functions and under
TYPE_CHECKING), so a new import that runs against the flow fails here before review. The
migrations are in the graph too, and import no Assay code at all: each is a frozen copy of
what it needs, so it does the same thing whatever today's code does.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "assay"

STAGES = [
    "errors records vendor",  # the shared vocabulary: no Assay imports at all
    "store",  # settings, database, schema, blobs, workspace, projects, import lock
    "people",  # accounts, sessions, tokens, roles, access
    "corpus",  # documents, parsing, chunking, ingest, anchoring
    "llm",
    "search",
    "gold",  # items, conversations, checks, taxonomy, synthesis
    "review",  # assignments and queues, reviews, comments, history, agreement, versions
    "judging",  # TREC RAG topics and runs, judgments of reports, documents and citations
    "experiments",
    "candidates",  # production questions in: scrubbed, grouped, sampled into gold work
    "transfer",
    "demo",
    "jobs",  # background jobs (experiment runs, imports, exports) in a database queue
    "web",
    "cli",
]
"""Lowest first. A module may import its own stage and the stages listed before it."""

PURE = {"parsing", "formats", "metrics"}
"""Database-free stages: they may import only the shared vocabulary and one another; every
stage above the store may use them."""

REVIEW_LINES = 400
"""Past this a module is worth a look (does it hold two concepts?): a warning, not a failure."""
MAX_LINES = 600
"""Past this a module fails: split it by concept (never by verb, never to fit the number)."""

MIGRATIONS = SRC / "store" / "migrations" / "versions"
MIGRATION_IMPORTS = {"__future__", "alembic", "sqlalchemy", "procrastinate"}
"""What a migration may import besides the standard library. procrastinate: migration 0010
installs the schema of the installed procrastinate, which that library owns."""


def _stage_ranks() -> dict[str, int]:
    return {name: rank for rank, names in enumerate(STAGES) for name in names.split()}


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        if "vendor" in path.relative_to(SRC).parts:
            continue
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(path: Path, module: str, known: set[str]) -> set[str]:
    """The Assay modules ``path`` imports, each as the most specific module that exists."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            if not name.startswith("assay"):
                continue
            while name not in known and "." in name:
                name = name.rsplit(".", 1)[0]
            if name in known and name != module:
                targets.add(name)
    return targets


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(path, name, known) for name, path in modules.items()}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_stage_has_a_place():
    ranks = _stage_ranks()
    stages = {_stage(module) for module in _modules()} - {"", "__main__"}
    assert stages - set(ranks) - PURE == set(), "add the new package to STAGES or PURE"


def _wrong_imports(graph: dict[str, set[str]]) -> list[str]:
    ranks = _stage_ranks()
    wrong = []
    for module, targets in sorted(graph.items()):
        stage = _stage(module)
        if stage in ("", "__main__"):
            continue
        for target in sorted(targets):
            other = _stage(target)
            if other in (stage, ""):  # its own stage, or the package root (``__version__``)
                continue
            if stage in PURE:
                allowed = other in PURE or ranks.get(other) == 0
            elif other in PURE:
                allowed = ranks[stage] > ranks["store"]
            else:
                allowed = ranks.get(other, 99) < ranks[stage]
            if not allowed:
                wrong.append(f"{module} imports {target}")
    return wrong


def test_no_stage_imports_a_later_one():
    assert _wrong_imports(_graph()) == []


def test_the_direction_rule_refuses_upward_imports():
    graph = {
        "assay.store.db": {"assay.gold.items"},  # the store reaching up into gold
        "assay.formats.beir": {"assay.store.schema", "assay.records"},  # a format reading the DB
        "assay.web.app": {"assay.cli.common"},  # the web importing the CLI
        "assay.gold.items": {"assay.corpus.anchoring", "assay.formats"},  # fine
    }
    assert _wrong_imports(graph) == [
        "assay.formats.beir imports assay.store.schema",
        "assay.store.db imports assay.gold.items",
        "assay.web.app imports assay.cli.common",
    ]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles():
    graph = _graph()
    # A package's __init__ that hands on names of its own modules is not a circle of concepts.
    for module, targets in graph.items():
        graph[module] = {t for t in targets if not module.startswith(t + ".")}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.filterwarnings("default::UserWarning")
@pytest.mark.parametrize("module", sorted(_modules()))
def test_module_is_not_too_long(module):
    lines = len(_modules()[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines: split it by concept"
    if lines > REVIEW_LINES:
        warnings.warn(f"{module} has {lines} lines: does it hold one concept?", stacklevel=1)


def _outside_imports(source: str) -> list[str]:
    """The imports of a migration's ``source`` outside :data:`MIGRATION_IMPORTS` and the
    standard library, as ``line: name``."""
    allowed = MIGRATION_IMPORTS | set(sys.stdlib_module_names)
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["." * node.level + (node.module or "")]
        else:
            continue
        found += [f"{node.lineno}: {n}" for n in names if n.split(".")[0] not in allowed]
    return found


@pytest.mark.parametrize("path", sorted(MIGRATIONS.glob("*.py")), ids=lambda p: p.stem)
def test_migration_imports_no_live_code(path):
    assert _outside_imports(path.read_text(encoding="utf-8")) == [], "copy what it needs in"


def test_the_migration_rule_refuses_live_code():
    source = (
        "import re\nimport sqlalchemy as sa\nfrom alembic import op\n"
        "def upgrade():\n    from assay.people.actors import account_ids\n"
        "    from .helpers import thing\n    import numpy\n"
    )
    assert _outside_imports(source) == ["5: assay.people.actors", "6: .helpers", "7: numpy"]


def _documented_stages(text: str) -> tuple[list[str], set[str]]:
    """The numbered stage list of concepts.md's "The package as a pipeline" (each entry's
    package names, before its colon, as one ``STAGES`` row) and the packages its "stand
    apart" paragraph names."""
    section = text.split("## The package as a pipeline", 1)[1].split("\n## ", 1)[0]
    rows = [
        " ".join(re.findall(r"`([a-z_]+)`", entry))
        for entry in re.findall(r"^\d+\. (.+?):", section, flags=re.MULTILINE)
    ]
    apart = next(p for p in section.split("\n\n") if "stand apart" in p)
    return rows, set(re.findall(r"`([a-z_]+)`", apart.split("stand apart", 1)[0]))


def test_concepts_lists_the_stages_in_order():
    rows, apart = _documented_stages((ROOT / "docs" / "concepts.md").read_text(encoding="utf-8"))
    assert rows == STAGES and apart == PURE, "docs/concepts.md and STAGES/PURE must agree"


def test_the_stage_list_reader_sees_a_missing_stage():
    text = (
        "## The package as a pipeline\n\nintro:\n\n1. `errors`, `records`: words.\n"
        "2. `store`: the store.\n3. `gold`: items.\n\n`parsing` and `metrics` stand apart: "
        "x.\n\n## Next\n4. `cli`: not in the section.\n"
    )
    assert _documented_stages(text) == (["errors records", "store", "gold"], {"parsing", "metrics"})
