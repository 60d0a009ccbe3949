"""Trimming chunk spans: whitespace off both ends, blank chunks and chunks that add nothing
dropped. One pass over untrimmed spans that ascend in both ends; a chunker may hand them
over in batches while their text is still in the processor's cache
(:mod:`assay.corpus.recursive_packing` does, every few hundred chunks)."""

from __future__ import annotations

import re

from assay.records import Span

_NON_SPACE = re.compile(r"\S")


class SpanTidier:
    """Trimmed spans of ``text`` (:attr:`spans`), from untrimmed ones given in order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[Span] = []
        self._last_start = -1  # the start of the last span kept, if trimming moved it

    def take(self, spans: list[Span], low: int, high: int) -> int:
        """Trim ``spans[low:high]`` onto :attr:`spans`; returns ``high``.

        A span with no whitespace at either end is kept as it is, unless the previous one
        was trimmed to start where it starts."""
        text, tidy = self.text, self.spans
        append = tidy.append
        non_space = _NON_SPACE.search
        last_start = self._last_start
        for span in spans[low:high]:
            start, end = span
            if text[start].isspace() or start == last_start:
                last_end = tidy[-1][1] if tidy else 0
                match = non_space(text, start, end)
                if match is None:
                    continue
                start = match.start()
            elif not text[end - 1].isspace():
                append(span)  # the common case: nothing to trim
                continue
            else:
                last_end = tidy[-1][1] if tidy else 0
            while text[end - 1].isspace():
                end -= 1
            if end <= last_end:
                continue
            if tidy and start == tidy[-1][0]:
                tidy[-1] = (start, end)  # trimming made it start where the last one did
            else:
                append((start, end))
            last_start = start
        self._last_start = last_start
        return high
