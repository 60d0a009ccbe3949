"""Text metrics comparing a generated answer with one or more reference answers.

Every function takes the prediction and the references (a string or a list of strings)
and, with several references, returns the best score over them, as AutoRAG and RAGAPHENE
do. BLEU is the exception: sacrebleu scores all references together (multi-reference
BLEU), which is what AutoRAG calls.

Reasoning blocks (``<think>…</think>`` or ``<thinking>…</thinking>``, any case) are
removed from the prediction first unless ``strip_think=False``, as AutoRAG does.

- ``exact_match``, ``token_f1``, ``token_recall``: SQuAD normalisation (lowercase, drop
  ASCII punctuation, drop the articles a/an/the, collapse whitespace), then compare token
  multisets. When either side has no token left, F1 and recall are 1.0 if both are empty
  and 0.0 otherwise (SQuAD v2's rule).
- ``rouge_l``: ROUGE-L F-measure from the longest common subsequence of tokens; tokens as
  in ``rouge_score`` without stemming (lowercase, every run of characters outside
  ``[a-z0-9]`` is a separator, so accented letters split words).
- ``bleu``: sacrebleu sentence BLEU (0–100, ``effective_order=True``), from the ``eval``
  extra, imported only when called.
- ``char_length``: length of the (think-stripped) prediction in characters.
- ``semantic_similarity``: cosine of embeddings from any ``embed(texts) -> array``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from assay.errors import BackendUnavailable, InvalidInput, install_extra

References = str | Sequence[str]
Embed = Callable[[list[str]], npt.ArrayLike]

_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>\s*", re.IGNORECASE | re.DOTALL)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ROUGE_SEPARATORS = re.compile(r"[^a-z0-9]+")


def strip_think(text: str) -> str:
    """Remove complete reasoning blocks (and the whitespace after them)."""
    return _THINK_BLOCK.sub("", text)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lowercase, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _references(references: References) -> list[str]:
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise InvalidInput("no reference answer given; a text metric needs at least one")
    return refs


def _prepare(prediction: str, strip: bool) -> str:
    return strip_think(prediction) if strip else prediction


def _overlap(prediction_tokens: list[str], reference_tokens: list[str]) -> int:
    return sum((Counter(prediction_tokens) & Counter(reference_tokens)).values())


def _f1(matched: int, prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    """Harmonic mean of precision and recall of ``matched`` tokens (both sides not empty)."""
    if matched == 0:
        return 0.0
    precision = matched / len(prediction_tokens)
    recall = matched / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, references: References, strip_think: bool = True) -> float:
    """1.0 if the normalised prediction equals a normalised reference, else 0.0."""
    normalized = normalize_answer(_prepare(prediction, strip_think))
    return max(float(normalized == normalize_answer(ref)) for ref in _references(references))


def _token_f1(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    if not prediction_tokens or not reference_tokens:
        return float(prediction_tokens == reference_tokens)
    return _f1(_overlap(prediction_tokens, reference_tokens), prediction_tokens, reference_tokens)


def token_f1(prediction: str, references: References, strip_think: bool = True) -> float:
    """SQuAD token F1, best over references."""
    tokens = normalize_answer(_prepare(prediction, strip_think)).split()
    return max(_token_f1(tokens, normalize_answer(ref).split()) for ref in _references(references))


def token_f1_of(prediction_tokens: Sequence[str], reference_tokens: Sequence[str]) -> float:
    """:func:`token_f1` of texts already tokenised (``normalize_answer(text).split()``), for
    callers that compare one text with many."""
    return _token_f1(list(prediction_tokens), list(reference_tokens))


def _token_recall(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    if not prediction_tokens or not reference_tokens:
        return float(prediction_tokens == reference_tokens)
    return _overlap(prediction_tokens, reference_tokens) / len(reference_tokens)


def token_recall(prediction: str, references: References, strip_think: bool = True) -> float:
    """Share of the reference's tokens found in the prediction, best over references."""
    tokens = normalize_answer(_prepare(prediction, strip_think)).split()
    return max(
        _token_recall(tokens, normalize_answer(ref).split()) for ref in _references(references)
    )


def rouge_tokens(text: str) -> list[str]:
    """Tokens as rouge_score's default tokenizer without stemming makes them."""
    return _ROUGE_SEPARATORS.sub(" ", text.lower()).split()


def _lcs_length(first: list[str], second: list[str]) -> int:
    if len(second) > len(first):
        first, second = second, first
    previous = [0] * (len(second) + 1)
    for token in first:
        current = [0]
        for index, other in enumerate(second):
            if token == other:
                current.append(previous[index] + 1)
            else:
                current.append(max(previous[index + 1], current[index]))
        previous = current
    return previous[-1]


def _rouge_l(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    if not prediction_tokens or not reference_tokens:
        return 0.0
    lcs = _lcs_length(reference_tokens, prediction_tokens)
    return _f1(lcs, prediction_tokens, reference_tokens)


def rouge_l_of(prediction_tokens: Sequence[str], reference_tokens: Sequence[str]) -> float:
    """:func:`rouge_l` of texts already tokenised with :func:`rouge_tokens`."""
    return _rouge_l(list(prediction_tokens), list(reference_tokens))


def rouge_l(prediction: str, references: References, strip_think: bool = True) -> float:
    """ROUGE-L F-measure (LCS of tokens), best over references; 0.0 if a side is empty."""
    tokens = rouge_tokens(_prepare(prediction, strip_think))
    return max(_rouge_l(tokens, rouge_tokens(ref)) for ref in _references(references))


def bleu(prediction: str, references: References, strip_think: bool = True) -> float:
    """sacrebleu sentence BLEU on a 0–100 scale, all references at once."""
    try:
        from sacrebleu.metrics.bleu import BLEU
    except ImportError as error:
        raise BackendUnavailable(
            f"BLEU needs sacrebleu, which is not installed: {install_extra('eval')}"
        ) from error
    scorer = BLEU(effective_order=True)
    return float(
        scorer.sentence_score(_prepare(prediction, strip_think), _references(references)).score
    )


def char_length(prediction: str, references: References = (), strip_think: bool = True) -> float:
    """Number of characters of the prediction (references are ignored)."""
    return float(len(_prepare(prediction, strip_think)))


def semantic_similarity(
    prediction: str, references: References, embed: Embed, strip_think: bool = True
) -> float:
    """Cosine similarity of the embeddings, best over references.

    ``embed`` receives ``[prediction, *references]`` in one call and must return one row per
    text. A zero vector has similarity 0.
    """
    refs = _references(references)
    matrix = np.asarray(embed([_prepare(prediction, strip_think), *refs]), dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != len(refs) + 1:
        raise InvalidInput(
            f"embed returned an array of shape {matrix.shape} for {len(refs) + 1} texts; "
            "it must return one row per text"
        )
    norms = np.linalg.norm(matrix, axis=1)
    if norms[0] == 0:
        return 0.0
    cosines = [
        float(matrix[0] @ matrix[row] / (norms[0] * norms[row])) if norms[row] > 0 else 0.0
        for row in range(1, len(refs) + 1)
    ]
    return max(cosines)
