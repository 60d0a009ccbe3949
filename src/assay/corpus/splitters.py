"""Pure chunkers: a text goes in, a list of ``(start, end)`` character spans comes out.

Chunks are views on a document's text, never copies, so every chunker returns offsets:
``text[start:end]`` is the chunk. Spans are ascending, non-empty, trimmed of surrounding
whitespace (never whitespace-only) and together cover every non-whitespace character.
Lengths are Python characters (code points), like ``len(str)``.

Three methods, each with a checked parameter model (see ``CHUNKERS``):

``recursive``
    Recursive-separator splitting as in RAGTools' ``recursive_splitter`` and LangChain's
    ``RecursiveCharacterTextSplitter(keep_separator="end")``: split on the first separator
    that occurs, keep each separator at the end of the piece it closes, greedily pack the
    pieces into chunks of at most ``max_length`` characters; a piece that is itself too long
    is split the same way with the remaining separators, and its sub-chunks are packed among
    themselves (never merged with neighbours). Where LangChain differs, on purpose:

    1. A piece longer than ``max_length`` with no separator left is cut hard every
       ``max_length`` characters; LangChain (and RAGTools) keep such a piece whole, so their
       chunks can exceed the limit. Ours never do.
    2. A piece of exactly ``max_length`` characters fits; LangChain's test is
       ``len(piece) < chunk_size``, so it splits such a piece further with the next separator.
       The sub-pieces then pack back into the same single chunk, so this shows only with
       overlap (LangChain never overlaps into or out of such a piece; we may).
    3. Chunks are trimmed and whitespace-only chunks are dropped, which equals LangChain's
       ``strip_whitespace=True`` (its default). LangChain does not strip a long piece it keeps
       whole (case 1); our hard-cut parts are trimmed like every chunk.
    4. Overlap: LangChain carries whole trailing pieces of the previous chunk (at most
       ``chunk_overlap`` characters) and gives no overlap when the last piece is longer.
       We do the same, but when no piece boundary lies inside the overlap window we start
       at the first word start in it (or exactly ``overlap`` characters back if there is no
       whitespace), so the requested overlap is honoured. A chunk that would add no new
       character after trimming is dropped.

    Hard cuts count code points, so they may separate a combining mark or an emoji
    modifier from its base character; only the hard cut can do this.

``tokens``
    Fixed windows of ``size`` word tokens (``\\w+`` or a single non-space symbol) stepping
    ``size - overlap`` tokens. A combining mark that is not a word character counts as a
    token of its own. (A cl100k variant is left out: the tokenizer embedded in
    semantic-text-splitter gives no exact token offsets.)

``sentences``
    Sentences from nupunkt's pre-trained Punkt model (blank lines are hard breaks), grouped
    ``sentences`` per chunk with ``overlap`` sentences shared. The model is trained on
    English (legal) text. For ``language="de"`` we add common German abbreviations
    ("z. B.", "z.B.", "Dr.", "Nr.", "vgl.", "bzw.", "Fa.", "Art." ...), drop a few English
    ones that are German words ending sentences ("an", "am", "so", "ja"), and treat a number
    followed by a month name ("3. Mai") or a few ordinal nouns ("19. Jahrhundert") as one
    sentence. What still cuts badly: an ordinal before another noun ("Das 3. Kapitel" splits
    after "3."), and an abbreviation we do not list, such as a compound street name
    ("Hauptstr. Nr. 5" splits after "Hauptstr."), when the next word is capitalised, which
    in German is every noun. The reverse also happens: "die Art. Dann ..." stays one
    sentence. Text between detected sentences that is not whitespace becomes a sentence of
    its own, so nothing is lost. Sentences have no length limit.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.errors import InvalidInput
from assay.records import Span

if TYPE_CHECKING:
    from nupunkt import PunktSentenceTokenizer

ParamsT = TypeVar("ParamsT", bound=BaseModel)

DEFAULT_SEPARATORS: tuple[str, ...] = ("\n\n", ". ", "\n", " ")

_NON_SPACE = re.compile(r"\S")
_SPACE = re.compile(r"\s")
_WORD_TOKEN = re.compile(r"\w+|[^\w\s]")


# --- parameter models -------------------------------------------------------------------


class RecursiveParams(BaseModel):
    """Parameters of the ``recursive`` chunker."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_length: int = Field(1000, ge=1, description="Largest chunk, in characters.")
    overlap: int = Field(
        0,
        ge=0,
        description="Characters a chunk may repeat from the end of the previous one "
        "(< max_length); aligned to a separator when one is close enough.",
    )
    separators: tuple[str, ...] = Field(
        DEFAULT_SEPARATORS,
        description="Separators tried in order; each stays at the end of the piece it closes. "
        "Pieces still too long after the last one are cut at max_length.",
    )

    @field_validator("separators")
    @classmethod
    def _no_empty_separator(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not separator for separator in value):
            raise ValueError(
                "separators must not contain an empty string "
                "(pieces with no separator left are cut at max_length anyway)"
            )
        return value

    @model_validator(mode="after")
    def _overlap_below_length(self) -> RecursiveParams:
        if self.overlap >= self.max_length:
            raise ValueError(
                f"overlap must be < max_length (got overlap={self.overlap}, "
                f"max_length={self.max_length})"
            )
        return self


class TokenParams(BaseModel):
    """Parameters of the ``tokens`` chunker."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int = Field(256, ge=1, description="Tokens per window.")
    overlap: int = Field(32, ge=0, description="Tokens shared by neighbouring windows (< size).")
    tokenizer: Literal["words"] = Field(
        "words", description="'words': runs of word characters and single other symbols."
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> TokenParams:
        if self.overlap >= self.size:
            raise ValueError(
                f"overlap must be < size (got overlap={self.overlap}, size={self.size})"
            )
        return self


class SentenceParams(BaseModel):
    """Parameters of the ``sentences`` chunker."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sentences: int = Field(1, ge=1, description="Sentences per chunk.")
    overlap: int = Field(
        0, ge=0, description="Sentences shared by neighbouring chunks (< sentences)."
    )
    language: str = Field(
        "en",
        pattern=r"^[a-z]{2,3}$",
        description="Language code; 'de' adds German abbreviations, others use the default model.",
    )

    @model_validator(mode="after")
    def _overlap_below_count(self) -> SentenceParams:
        if self.overlap >= self.sentences:
            raise ValueError(
                f"overlap must be < sentences (got overlap={self.overlap}, "
                f"sentences={self.sentences})"
            )
        return self


# --- recursive separators ---------------------------------------------------------------


def recursive_spans(
    text: str,
    *,
    max_length: int = 1000,
    overlap: int = 0,
    separators: Sequence[str] = DEFAULT_SEPARATORS,
) -> list[Span]:
    """Split ``text`` by separators, packing pieces into chunks of at most ``max_length``."""
    params = _validate(
        "recursive",
        RecursiveParams,
        {"max_length": max_length, "overlap": overlap, "separators": tuple(separators)},
    )
    return _recursive(text, params)


def _recursive(text: str, params: RecursiveParams) -> list[Span]:
    raw: list[Span] = []
    _split_region(text, 0, len(text), params.separators, params, raw)
    return _tidy(text, raw)


def _split_region(
    text: str,
    start: int,
    end: int,
    separators: tuple[str, ...],
    params: RecursiveParams,
    out: list[Span],
) -> None:
    """Append untrimmed chunk spans for ``text[start:end]`` to ``out``."""
    max_length = params.max_length
    index = next(
        (number for number, sep in enumerate(separators) if text.find(sep, start, end) != -1),
        None,
    )
    if index is None:
        # No separator left: cut hard, stepping so that parts overlap by ``overlap``.
        step = max_length - params.overlap
        for cut in range(start, end, step):
            out.append((cut, min(cut + max_length, end)))
            if cut + max_length >= end:
                break
        return

    # Pieces end just after each separator; the region's rest is the last piece.
    separator = separators[index]
    pieces: list[Span] = []
    width = len(separator)
    position = start
    found = text.find(separator, position, end)
    while found != -1:
        pieces.append((position, found + width))
        position = found + width
        found = text.find(separator, position, end)
    if position < end:
        pieces.append((position, end))

    remaining = separators[index + 1 :]
    group_start = 0
    for number, (piece_start, piece_end) in enumerate(pieces):
        if piece_end - piece_start > max_length:
            if group_start < number:
                _pack(text, pieces[group_start:number], params, out)
            _split_region(text, piece_start, piece_end, remaining, params, out)
            group_start = number + 1
    if group_start < len(pieces):
        _pack(text, pieces[group_start:], params, out)


def _pack(text: str, pieces: list[Span], params: RecursiveParams, out: list[Span]) -> None:
    """Greedily pack contiguous pieces (each <= max_length) into chunks, with overlap."""
    max_length, overlap = params.max_length, params.overlap
    chunk_start = chunk_end = pieces[0][0]
    for number, (_, piece_end) in enumerate(pieces):
        if chunk_end > chunk_start and piece_end - chunk_start > max_length:
            out.append((chunk_start, chunk_end))
            # The next chunk may begin at lowest here and still hold this piece.
            lowest = max(chunk_end - overlap, piece_end - max_length, chunk_start + 1)
            if lowest >= chunk_end:
                chunk_start = chunk_end
            else:
                at = bisect_left(pieces, lowest, 0, number, key=itemgetter(0))
                chunk_start = pieces[at][0] if at < number else _word_start(text, lowest, chunk_end)
        chunk_end = piece_end
    out.append((chunk_start, chunk_end))


def _word_start(text: str, lowest: int, end: int) -> int:
    """First offset in ``[lowest, end)`` that follows whitespace, else ``lowest``."""
    if text[lowest - 1].isspace():
        return lowest
    match = _SPACE.search(text, lowest, end)
    if match is not None and match.end() < end:
        return match.end()
    return lowest


def _tidy(text: str, spans: list[Span]) -> list[Span]:
    """Trim whitespace; drop chunks that are blank or add nothing to the previous one."""
    tidy: list[Span] = []
    last_end = 0
    for start, end in spans:
        match = _NON_SPACE.search(text, start, end)
        if match is None:
            continue
        start = match.start()
        while text[end - 1].isspace():
            end -= 1
        if end <= last_end:
            continue
        if tidy and tidy[-1][0] == start:
            tidy[-1] = (start, end)  # trimming made it start where the last one did: keep one
        else:
            tidy.append((start, end))
        last_end = end
    return tidy


# --- token windows ----------------------------------------------------------------------


def token_spans(
    text: str, *, size: int = 256, overlap: int = 32, tokenizer: str = "words"
) -> list[Span]:
    """Windows of ``size`` tokens, each starting ``size - overlap`` tokens after the last."""
    params = _validate(
        "tokens", TokenParams, {"size": size, "overlap": overlap, "tokenizer": tokenizer}
    )
    return _tokens(text, params)


def _tokens(text: str, params: TokenParams) -> list[Span]:
    starts: list[int] = []
    ends: list[int] = []
    for match in _WORD_TOKEN.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return _windows(starts, ends, params.size, params.size - params.overlap)


def _windows(starts: list[int], ends: list[int], size: int, step: int) -> list[Span]:
    """Group units (given by their starts and ends) ``size`` at a time, moving ``step``."""
    count = len(starts)
    spans: list[Span] = []
    for first in range(0, count, step):
        last = min(first + size, count)
        spans.append((starts[first], ends[last - 1]))
        if last == count:
            break
    return spans


# --- sentences --------------------------------------------------------------------------

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
    params = _validate(
        "sentences",
        SentenceParams,
        {"sentences": sentences, "overlap": overlap, "language": language},
    )
    return _sentences(text, params)


def _sentences(text: str, params: SentenceParams) -> list[Span]:
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
    sentence_list = _tidy(text, gapless)
    starts = [start for start, _ in sentence_list]
    ends = [end for _, end in sentence_list]
    return _windows(starts, ends, params.sentences, params.sentences - params.overlap)


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


# --- registry ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Chunker:
    """A named chunking method: its checked parameters and the function that applies them."""

    name: str
    description: str
    params: type[BaseModel]
    split: Callable[[str, Any], list[Span]]


CHUNKERS: dict[str, Chunker] = {
    "recursive": Chunker(
        "recursive",
        "Split by separators in order, packing pieces into chunks of at most max_length "
        "characters (RAGTools/LangChain recursive splitting).",
        RecursiveParams,
        _recursive,
    ),
    "sentences": Chunker(
        "sentences",
        "Groups of consecutive sentences found by nupunkt (Punkt).",
        SentenceParams,
        _sentences,
    ),
    "tokens": Chunker(
        "tokens",
        "Fixed windows of word tokens with a token overlap.",
        TokenParams,
        _tokens,
    ),
}


def chunk_text(text: str, method: str, params: Mapping[str, object]) -> list[Span]:
    """Chunk ``text`` with the chunker named ``method``; raise InvalidInput on bad input."""
    chunker = CHUNKERS.get(method)
    if chunker is None:
        raise InvalidInput(
            f"unknown chunker {method!r}; choose one of: {', '.join(sorted(CHUNKERS))}"
        )
    return chunker.split(text, _validate(method, chunker.params, params))


def describe_chunkers() -> dict[str, dict[str, Any]]:
    """Each chunker's description and parameters (type, default, bounds, description)."""
    described: dict[str, dict[str, Any]] = {}
    for name in sorted(CHUNKERS):
        chunker = CHUNKERS[name]
        schema = chunker.params.model_json_schema()
        params: dict[str, dict[str, Any]] = {}
        for field, info in schema["properties"].items():
            kept = ("type", "items", "enum", "const", "minimum", "pattern", "default")
            entry = {key: info[key] for key in kept if key in info}
            entry["description"] = info.get("description", "")
            params[field] = entry
        described[name] = {"description": chunker.description, "params": params}
    return described


def _validate(method: str, model: type[ParamsT], values: Mapping[str, object]) -> ParamsT:
    """Build ``model`` from ``values``; turn pydantic's errors into one readable message."""
    try:
        return model.model_validate(dict(values))
    except ValidationError as error:
        names = ", ".join(model.model_fields)
        problems = [_explain(detail, names) for detail in error.errors()]
        raise InvalidInput(f"chunker {method!r}: {'; '.join(problems)}") from None


def _explain(detail: Mapping[str, Any], names: str) -> str:
    field = ".".join(str(part) for part in detail["loc"])
    kind = detail["type"]
    context = detail.get("ctx", {})
    bounds = {
        "greater_than_equal": (">=", "ge"),
        "greater_than": (">", "gt"),
        "less_than_equal": ("<=", "le"),
        "less_than": ("<", "lt"),
    }
    if kind in bounds:
        operator, key = bounds[kind]
        return f"{field} must be {operator} {context[key]} (got {detail['input']!r})"
    if kind == "extra_forbidden":
        return f"unknown parameter {field!r}; known: {names}"
    if kind == "value_error":
        message = str(context.get("error", detail["msg"]))
        return f"{field}: {message}" if field else message
    return f"{field}: {detail['msg']} (got {detail['input']!r})"
