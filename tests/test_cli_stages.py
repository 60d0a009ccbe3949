"""The CLI side of the retrieval stages: the project reranker setting and the token and cost
lines of ``assay experiments show``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli import make_app
from assay.experiments import create_experiment, run_experiment
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus
from tests.fakes.openai_server import FakeOpenAI, Reply


def invoke(home: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(make_app(), ["--home", str(home), *args], env=env)


def test_reranker_setting_and_costs_in_show(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with Workspace.open(Settings(home=home)) as ws:
        project = create_project(ws, "p", "en")
        build_corpus(ws, project)
        with FakeOpenAI([Reply("ok")]) as server:
            generator = {"kind": "openai", "base_url": server.url, "model": "m", "retries": 0}
            made = create_experiment(
                ws,
                project,
                "e",
                mode="rag",
                pipelines=["keyword", {"name": "llm", "generator": generator}],
            )
            run_experiment(ws, project, made.id)
    url = "http://127.0.0.1:8080/v1/rerank"
    result = invoke(home, "projects", "settings", "-p", "p", "--reranker", json.dumps({"url": url}))
    assert result.exit_code == 0, result.output
    assert f'"url": "{url}"' in result.output
    shown = invoke(home, "projects", "settings", "-p", "p", "--json")
    assert json.loads(shown.output)["reranker"]["depth"] == 30
    bad = invoke(home, "projects", "settings", "-p", "p", "--reranker", '{"api_key": "x"}')
    assert bad.exit_code == 1 and "ASSAY_RERANK_API_KEY" in bad.output
    cleared = invoke(home, "projects", "settings", "-p", "p", "--reset", "reranker")
    assert "reranker: none" in cleared.output
    prices = {"ASSAY_LLM_PRICES": '{"fake-model": {"input": 2, "output": 4}}'}
    show = invoke(home, "experiments", "show", "e", "-p", "p", env=prices)
    assert show.exit_code == 0, show.output
    assert "55/25" in show.output and "Model calls: 5" in show.output
    assert f"{(55 * 2 + 25 * 4) / 1e6:.6f}" in show.output
    as_json = json.loads(
        invoke(home, "experiments", "show", "e", "-p", "p", "--json", env=prices).output
    )
    assert as_json["costs"]["pipelines"]["llm"]["output_tokens"] == 25
    unpriced = invoke(home, "experiments", "show", "e", "-p", "p", env={"ASSAY_LLM_PRICES": ""})
    assert "no price for fake-model" in unpriced.output
