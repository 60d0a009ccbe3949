"""Sentence chunks: groups of consecutive sentences, as ``(start, end)`` spans.

Sentences come from nupunkt's pre-trained Punkt model (blank lines are hard breaks), grouped
``sentences`` per chunk with ``overlap`` sentences shared. The model is trained on English
(legal) text. For ``language="de"`` we add common German abbreviations ("z. B.", "z.B.",
"Dr.", "Nr.", "vgl.", "bzw.", "Fa.", "Art." ...), drop a few English ones that are German
words ending sentences ("an", "am", "so", "ja"), and treat a number followed by a month name
("3. Mai") or a few ordinal nouns ("19. Jahrhundert") as one sentence. What still cuts
badly: an ordinal before another noun ("Das 3. Kapitel" splits after "3."), and an
abbreviation we do not list, such as a compound street name ("Hauptstr. Nr. 5" splits after
"Hauptstr."), when the next word is capitalised, which in German is every noun. The reverse
also happens: "die Art. Dann ..." stays one sentence. Text between detected sentences that
is not whitespace becomes a sentence of its own, so nothing is lost. Sentences have no
length limit. Spans follow the rules of :mod:`assay.corpus.splitters`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from assay.corpus.chunker_params import SentenceParams, validate_params
from assay.corpus.splitters import tidy_spans, window_spans
from assay.records import Span

if TYPE_CHECKING:
    from nupunkt import PunktSentenceTokenizer

# Our own list of German abbreviations (space-separated), lower case, no final period; dotted
# forms ("z.b") cover the spelling without spaces, single letters the spaced one ("z. B.").
_GERMAN_ABBREVIATIONS = (
    "a b d h s u v z z.b d.h u.a u.ä o.ä s.o s.u v.a i.d.r u.u m.e i.a o.g abb abs "
    "abschn allg anh anm art aufl bd bsp bspw bzgl bzw ca chr dgl dr ebd einschl entspr "
    "etc evtl exkl fa ff gem ggf ggü grds hr hrsg inkl insb jh jhd kap kfm lt mio mind mrd "
    "nr pkt prof rn rz sog st str tab tel tsd u.v.m usw vgl vs zb zit ziff zt zzgl zzt"
)
# English abbreviations in the default model that end German sentences ("Er kommt an.").
_GERMAN_WORDS = "am an ja so gg"
_GERMAN_AFTER_NUMBER = (
    "januar februar märz april mai juni juli august september oktober november dezember "
    "jan feb mär apr jun jul aug sep sept okt nov dez jahrhundert jh jhd jahrestag "
    "lebensjahr auflage aufl quartal"
)


def sentence_spans(
    text: str, *, sentences: int = 1, overlap: int = 0, language: str = "en"
) -> list[Span]:
    """Chunks of ``sentences`` consecutive sentences, sharing ``overlap`` with the last."""
    params = validate_params(
        "sentences",
        SentenceParams,
        {"sentences": sentences, "overlap": overlap, "language": language},
    )
    return split_sentences(text, params)


def split_sentences(text: str, params: SentenceParams) -> list[Span]:
    """The ``sentences`` chunker with checked parameters."""
    found = _sentence_tokenizer(params.language).spans(text, paragraph_breaks=True)
    gapless: list[Span] = []
    position = 0
    for found_start, end in [*found, (len(text), len(text))]:
        start = max(found_start, position)
        if start > position:
            gapless.append((position, start))  # leftover text, if any, is kept as a sentence
        if end > start:
            gapless.append((start, end))
        position = max(position, end)
    sentence_list = tidy_spans(text, gapless)
    starts = [start for start, _ in sentence_list]
    ends = [end for _, end in sentence_list]
    return window_spans(starts, ends, params.sentences, params.sentences - params.overlap)


@lru_cache(maxsize=8)
def _sentence_tokenizer(language: str) -> PunktSentenceTokenizer:
    """Load the Punkt model once per language, on first use (not at import)."""
    from nupunkt.models import load_default_model

    tokenizer = load_default_model()  # a fresh object: changing it leaves nupunkt's alone
    if language == "de":
        tokenizer.add_abbreviations(_GERMAN_ABBREVIATIONS.split())
        for word in _GERMAN_WORDS.split():
            tokenizer.remove_abbreviation(word)
        for word in _GERMAN_AFTER_NUMBER.split():
            tokenizer.parameters.collocations.add(("##number##", word))
        tokenizer.clear_decision_cache()
    return tokenizer
