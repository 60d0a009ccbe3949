"""Answer-text metrics: SQuAD-style EM/F1/recall, ROUGE-L against rouge-score, BLEU against
sacrebleu, think-block stripping, multi-reference maximum, embedding similarity."""

from __future__ import annotations

import builtins
import importlib
import os
import random
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from assay.errors import BackendUnavailable, InvalidInput
from assay.metrics.generation import (
    bleu,
    char_length,
    exact_match,
    normalize_answer,
    rouge_l,
    rouge_tokens,
    semantic_similarity,
    strip_think,
    token_f1,
    token_recall,
)


def oracle(module: str) -> ModuleType:
    """Import a reference implementation; missing is a skip locally and a failure in CI."""
    try:
        return importlib.import_module(module)
    except ImportError:
        message = f"{module} is not installed (it is in the 'oracle' extra)"
        if os.environ.get("CI") in ("1", "true"):
            pytest.fail(message)
        pytest.skip(message)


WORDS = (
    "the a an The cat Cat sat on mat. mat, résumé café naïve 42 3.5 x-ray don't É über "
    "Straße İstanbul K ok yes! (paren) 日本 semi;colon"
).split()


def random_text(rng: random.Random, most: int = 12) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(0, most)))


# --- normalisation and token metrics --------------------------------------------------------


def test_squad_normalisation() -> None:
    assert normalize_answer("The  Eiffel-Tower, in PARIS!") == "eiffeltower in paris"
    assert normalize_answer("an apple a day") == "apple day"
    assert normalize_answer("theatre") == "theatre"  # articles only as whole words


def test_exact_match() -> None:
    assert exact_match("Paris.", "paris") == 1.0
    assert exact_match("It is Paris", "Paris") == 0.0
    assert exact_match("Paris", ["Lyon", "the Paris"]) == 1.0


def test_token_f1_and_recall() -> None:
    # prediction tokens: eiffel tower is in paris (5); reference: eiffel tower (2)
    assert token_f1("The Eiffel Tower is in Paris", "Eiffel Tower") == pytest.approx(
        2 * (2 / 5) * 1.0 / (2 / 5 + 1.0)
    )
    assert token_recall("The Eiffel Tower is in Paris", "Eiffel Tower") == 1.0
    assert token_recall("Tower", "Eiffel Tower") == 0.5
    assert token_f1("cat cat", "cat") == pytest.approx(2 * 0.5 * 1 / 1.5)  # multisets
    assert token_f1("dog", "cat") == 0.0


def test_empty_sides_follow_squad_v2() -> None:
    assert token_f1("", "") == 1.0
    assert token_f1("the", "a") == 1.0  # both normalise to nothing
    assert token_f1("", "cat") == 0.0
    assert token_recall("cat", "") == 0.0


def test_best_over_references() -> None:
    refs = ["completely different", "the cat sat on the mat"]
    assert token_f1("a cat sat on a mat", refs) == 1.0
    assert rouge_l("the cat sat", refs) == pytest.approx(rouge_l("the cat sat", refs[1]))
    with pytest.raises(InvalidInput, match="no reference"):
        token_f1("x", [])


def test_think_blocks_are_stripped_by_default() -> None:
    prediction = "<think>Maybe Lyon?\nNo.</think>\n Paris"
    assert strip_think(prediction) == "Paris"
    assert strip_think("<THINKING>x</Thinking>Paris") == "Paris"
    assert strip_think("<think>unclosed Paris") == "<think>unclosed Paris"
    assert exact_match(prediction, "Paris") == 1.0
    assert exact_match(prediction, "Paris", strip_think=False) == 0.0
    assert char_length(prediction) == 5.0
    assert char_length(prediction, strip_think=False) == len(prediction)


# --- ROUGE-L against rouge-score ----------------------------------------------------------


def test_rouge_tokens() -> None:
    assert rouge_tokens("Don't stop, café-bar 42!") == ["don", "t", "stop", "caf", "bar", "42"]


def test_rouge_l_worked_example() -> None:
    # LCS of "the cat sat on the mat" and "the cat is on the mat" is 5 of 6 tokens
    assert rouge_l("the cat is on the mat", "the cat sat on the mat") == pytest.approx(5 / 6)
    assert rouge_l("", "cat") == 0.0
    assert rouge_l("!!!", "cat") == 0.0


def test_rouge_l_equals_rouge_score() -> None:
    rouge_scorer = oracle("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    rng = random.Random(8)
    for _ in range(1500):
        prediction = random_text(rng)
        refs = [random_text(rng) for _ in range(rng.randint(1, 3))]
        expected = scorer.score_multi(refs, prediction)["rougeL"].fmeasure
        assert rouge_l(prediction, refs) == pytest.approx(expected, abs=1e-12)


# --- BLEU ---------------------------------------------------------------------------------


def test_bleu_equals_sacrebleu_sentence_bleu() -> None:
    sacrebleu = oracle("sacrebleu.metrics.bleu")
    scorer = sacrebleu.BLEU(effective_order=True)
    rng = random.Random(9)
    for _ in range(200):
        prediction = random_text(rng, 15)
        refs = [random_text(rng, 15) for _ in range(rng.randint(1, 3))]
        assert bleu(prediction, refs) == pytest.approx(
            scorer.sentence_score(prediction, refs).score, abs=1e-9
        )
    assert bleu("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(100.0)
    assert bleu(
        "<think>ignored words here</think>the cat sat on the mat", "the cat sat on the mat"
    ) == pytest.approx(100.0)


def test_bleu_without_sacrebleu_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def refuse_sacrebleu(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("sacrebleu"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse_sacrebleu)
    with pytest.raises(BackendUnavailable, match=r"pip install -e '\.\[eval\]'"):
        bleu("a", "a")


# --- semantic similarity ------------------------------------------------------------------


def bag_of_letters(texts: list[str]) -> np.ndarray:
    """A tiny deterministic embedder: letter counts."""
    matrix = np.zeros((len(texts), 26))
    for row, text in enumerate(texts):
        for char in text.lower():
            if "a" <= char <= "z":
                matrix[row, ord(char) - 97] += 1
    return matrix


def test_semantic_similarity_takes_any_embedder() -> None:
    assert semantic_similarity("abc", "cba", bag_of_letters) == pytest.approx(1.0)
    assert semantic_similarity("ab", ["cd", "ab"], bag_of_letters) == pytest.approx(1.0)
    assert semantic_similarity("ab", "cd", bag_of_letters) == pytest.approx(0.0)
    assert semantic_similarity("aab", "ab", bag_of_letters) == pytest.approx(3 / (5**0.5 * 2**0.5))
    assert semantic_similarity("123", "ab", bag_of_letters) == 0.0  # zero vector


def test_semantic_similarity_checks_the_embedder_output() -> None:
    with pytest.raises(InvalidInput, match="one row per text"):
        semantic_similarity("a", "b", lambda texts: np.zeros(3))
