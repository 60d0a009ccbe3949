"""Masking personal data in production questions and answers before anything is stored.

No well-kept library does this offline without a language model download (Presidio needs a
spaCy model, scrubadub's maintained detectors are the same regular expressions), so Assay
keeps its own documented patterns, each with a check that keeps false alarms down:

- ``email``: ``name@domain.tld``;
- ``iban``: two letters, two check digits and 11 to 30 letters or digits (spaces allowed in
  groups of four), masked only when the ISO 13616 mod-97 check holds;
- ``card``: 13 to 19 digits (spaces or dashes between groups), masked only when the Luhn
  check holds;
- ``phone``: an optional ``+`` and country code, then 7 to 15 digits in groups (spaces, dots,
  dashes, brackets), not part of a longer run of digit groups (a card number failing its
  check stays as it is); dates (``2024-11-14``, ``2024 09 12``) and plain years are not phones;
- user-named patterns (``NAME=REGEX``), masked as ``[NAME]``.

Each match becomes ``[KIND]`` (``[EMAIL]``, ``[PHONE]``…); :class:`Scrubber` counts what it
masked per kind, which every import reports. Cards and IBANs are tried before phones, so a
card number is never half masked as a phone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from assay.errors import InvalidInput

EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
PHONE = re.compile(
    r"(?<![\w+])(?<!\d[ ./-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ ./-]?)?\d(?:[ ./-]?\d){6,14}"
    r"(?![ ./-]?\d)(?!\w)"
)
DATE_LIKE = re.compile(r"^(?:\d{4}[ ./-]\d{1,2}[ ./-]\d{1,2}|\d{1,2}[ ./-]\d{1,2}[ ./-]\d{2,4})$")

KINDS = ("email", "iban", "card", "phone")
"""The built-in kinds, in the order they are tried."""


def iban_valid(text: str) -> bool:
    """The ISO 13616 check: letters to numbers, the first four characters moved to the end,
    the whole number modulo 97 is 1."""
    compact = text.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    digits = "".join(str(int(ch, 36)) for ch in moved)
    return int(digits) % 97 == 1


def luhn_valid(text: str) -> bool:
    """The Luhn check of a card number (spaces and dashes ignored)."""
    digits = [int(ch) for ch in text if ch.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for n, digit in enumerate(reversed(digits)):
        if n % 2:
            digit *= 2
            digit -= 9 if digit > 9 else 0
        total += digit
    return total % 10 == 0


def _phone_like(text: str) -> bool:
    digits = sum(ch.isdigit() for ch in text)
    return 7 <= digits <= 15 and not DATE_LIKE.match(text.strip())


BUILT_IN: dict[str, tuple[re.Pattern[str], Callable[[str], bool]]] = {
    "email": (EMAIL, lambda _text: True),
    "iban": (IBAN, iban_valid),
    "card": (CARD, luhn_valid),
    "phone": (PHONE, _phone_like),
}


def parse_patterns(specs: Iterable[str]) -> dict[str, re.Pattern[str]]:
    """``["NAME=REGEX", ...]`` as compiled patterns; a bad one is refused, naming it."""
    found: dict[str, re.Pattern[str]] = {}
    for spec in specs:
        name, sep, regex = spec.partition("=")
        name = name.strip()
        if not sep or not re.fullmatch(r"[A-Za-z][\w-]{0,39}", name) or not regex:
            raise InvalidInput(
                f"mask pattern {spec!r}: write NAME=REGEX (a name of letters, digits, - or _)"
            )
        try:
            found[name] = re.compile(regex)
        except re.error as exc:
            raise InvalidInput(f"mask pattern {name!r}: not a regular expression ({exc})") from exc
    return found


@dataclass
class Scrubber:
    """Masks one text at a time and counts what it masked. ``kinds``: the built-in kinds to
    use (all by default); ``patterns``: user-named ones, tried first."""

    patterns: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    kinds: tuple[str, ...] = KINDS
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in BUILT_IN]
        if unknown:
            raise InvalidInput(f"unknown mask kind {unknown[0]!r}; choose from {', '.join(KINDS)}")

    def scrub(self, text: str) -> str:
        if not text:
            return text
        for name, pattern in self.patterns.items():
            text = self._mask(text, name, pattern, None)
        for kind in self.kinds:
            pattern, check = BUILT_IN[kind]
            text = self._mask(text, kind, pattern, check)
        return text

    def _mask(
        self,
        text: str,
        name: str,
        pattern: re.Pattern[str],
        check: Callable[[str], bool] | None,
    ) -> str:
        def replace(match: re.Match[str]) -> str:
            if check is not None and not check(match.group(0)):
                return match.group(0)
            self.counts[name] += 1
            return f"[{name.upper()}]"

        return pattern.sub(replace, text)
