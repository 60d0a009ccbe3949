"""Where a passage occurs in a long document, without scanning the document for each passage.

An import locates hundreds of thousands of passages, several hundred characters each, in the
same documents; ``str.find`` reads a document from its start every time. The index keeps a
sparse set of anchors: the word starts whose next :data:`GRAM` characters hash to a multiple
of :data:`SPARSE` (about one word in eight), with their positions. Whether a position is an
anchor depends only on the text there, so every occurrence of a passage holds the passage's
own first anchor at the same offset: looking that anchor up gives every candidate start, and
the first candidate where the passage really is gives exactly what ``str.find`` would. A
passage with no anchor of its own (short, or without spaces) is found with ``str.find``.
"""

from __future__ import annotations

import re

GRAM = 24
"""Characters from a word start that make an anchor's key."""
SPARSE = 8
"""About one word start in this many is an anchor: the index holds roughly one position per
50 characters of text."""
WORD_START = re.compile(r"\s(?=\S)")
"""White space before a word: the match ends where the word starts."""


class TextIndex:
    """Anchors of one text: :meth:`find` answers as ``text.find`` does."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.anchors: dict[int, list[int]] = {}
        last = len(text) - GRAM
        for match in WORD_START.finditer(text):  # :func:`_key` inlined: the build is the cost
            start = match.end()
            key = hash(text[start : start + GRAM])
            if key % SPARSE == 0 and start <= last:
                self.anchors.setdefault(key, []).append(start)

    def find(self, needle: str) -> int:
        """The first position of ``needle`` in the text, -1 when it is not there."""
        for match in WORD_START.finditer(needle):
            offset = match.end()
            if offset + GRAM > len(needle):
                break
            key = _key(needle, offset)
            if key is None:
                continue
            for position in self.anchors.get(key, ()):  # ascending: the first hit is first
                start = position - offset
                if start >= 0 and self.text.startswith(needle, start):
                    return start
            return -1
        return self.text.find(needle)


def _key(text: str, start: int) -> int | None:
    """The anchor key of the word starting at ``start``, None when it is no anchor."""
    gram = text[start : start + GRAM]
    if len(gram) < GRAM:
        return None
    key = hash(gram)
    return key if key % SPARSE == 0 else None
