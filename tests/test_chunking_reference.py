"""The recursive chunker keeps its chunks when made faster: spans on varied generated texts
are compared with digests stored from the implementation before the overlap fast path
(``tests/data/recursive_spans_reference.json``; regenerate only for an intended change of
semantics: ``python tests/test_chunking_reference.py``)."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from assay.corpus.chunker_params import DEFAULT_SEPARATORS
from assay.corpus.splitters import recursive_spans

REFERENCE = Path(__file__).parent / "data" / "recursive_spans_reference.json"

PIECES = (
    "retrieval", "Größe", "über", "e\u0301", "👍🏽", "日本語", "a", "b", "-", "--", "a-a",
    "Dr.", "z. B.", ". ", ".", "\t", "\u00a0", " ", "  ", "\n", "\n\n", "\n\n\n", "\n\n\n\n\n",
    "Superlongwordwithoutanyspaceatallthatkeepsgoingandgoingonandon",
)  # fmt: skip

SETTINGS = (
    (DEFAULT_SEPARATORS, 1000, 200),
    (DEFAULT_SEPARATORS, 1000, 0),
    (DEFAULT_SEPARATORS, 200, 50),
    (DEFAULT_SEPARATORS, 60, 20),
    (DEFAULT_SEPARATORS, 40, 39),
    (DEFAULT_SEPARATORS, 25, 1),
    (("\n\n\n", "\n"), 80, 30),
    (("--", " "), 50, 20),
    (("---", "-"), 30, 12),
    (("a-a", "a"), 30, 10),
    ((". ",), 45, 15),
    ((), 20, 7),
)


def generated_text(seed: int) -> str:
    """Prose with paragraphs and lists for some seeds, a soup of awkward pieces for others."""
    rng = random.Random(seed)
    if seed % 2:
        return "".join(rng.choices(PIECES, k=rng.randint(50, 3000)))
    words = [piece for piece in PIECES if piece.strip()]
    parts = []
    for _ in range(rng.randint(5, 120)):
        sentences = [
            " ".join(rng.choices(words, k=rng.randint(1, 40))) + rng.choice([".", "!", "?"])
            for _ in range(rng.randint(1, 15))
        ]
        parts.append(rng.choice([" ", " ", "\n", "  "]).join(sentences))
        parts.append(rng.choice(["\n\n", "\n\n", "\n", "\n\n\n", " \n\n", "\n\n\n\n"]))
    return "".join(parts)


def case_digests() -> dict[str, str]:
    digests = {}
    for seed in range(40):
        text = generated_text(seed)
        for separators, max_length, overlap in SETTINGS:
            spans = recursive_spans(
                text, max_length=max_length, overlap=overlap, separators=separators
            )
            assert all(text[start:end].strip() for start, end in spans)
            name = f"seed {seed}, {max_length}/{overlap}, {separators!r}"
            digests[name] = hashlib.sha256(repr(spans).encode()).hexdigest()[:20]
    return digests


def test_recursive_spans_equal_the_stored_reference() -> None:
    stored = json.loads(REFERENCE.read_text(encoding="utf-8"))
    current = case_digests()
    assert current.keys() == stored.keys()
    changed = [name for name, digest in current.items() if stored[name] != digest]
    assert not changed, f"{len(changed)} cases give other spans, e.g. {changed[:3]}"


@pytest.mark.parametrize("seed", [0, 1])
def test_generated_texts_exercise_overlap_fallbacks(seed: int) -> None:
    """The reference texts reach the rare paths: pieces longer than a chunk, blank runs."""
    text = generated_text(seed)
    assert "\n\n\n" in text and len(text) > 1000


if __name__ == "__main__":
    REFERENCE.write_text(json.dumps(case_digests(), indent=0) + "\n", encoding="utf-8")
