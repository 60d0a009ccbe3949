"""Message catalogs for the web pages: English and German.

Catalogs are JSON files under ``web/i18n/<language>/`` (one file per page area, merged), keyed
by message id; ``{name}`` placeholders are filled with ``str.format``. A test checks that every
language has exactly the same keys and placeholders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from assay.errors import AssayError, Words

LANGUAGES = {"en": "English", "de": "Deutsch"}
DEFAULT_LANGUAGE = "en"
COOKIE = "assay_lang"


def load_catalogs() -> dict[str, dict[str, str]]:
    root = resources.files("assay.web") / "i18n"
    catalogs: dict[str, dict[str, str]] = {}
    for language in LANGUAGES:
        merged: dict[str, str] = {}
        folder = root / language
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                merged.update(json.loads(entry.read_text(encoding="utf-8")))
        catalogs[language] = merged
    return catalogs


@dataclass(frozen=True)
class Translator:
    """One language's messages (English where a key has none). Made once per language
    (:func:`make_translators`), so what :meth:`starting` picked out is kept for every page."""

    language: str
    messages: dict[str, str]
    fallback: dict[str, str]
    picked: dict[tuple[str, ...], dict[str, str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __call__(self, key: str, **params: Any) -> str:
        text = self.messages.get(key) or self.fallback.get(key) or key
        return text.format(**params) if params else text

    def starting(self, *prefixes: str) -> dict[str, str]:
        """The messages whose keys start with one of ``prefixes`` (those a page's script
        needs), in the interface language: one loop here rather than a template loop over
        the whole catalog (about 1,500 keys, a few ms of rendering per page)."""
        found = self.picked.get(prefixes)
        if found is None:
            found = {key: self(key) for key in self.fallback if key.startswith(prefixes)}
            self.picked[prefixes] = found
        return dict(found)  # the caller's own copy


def make_translators(catalogs: dict[str, dict[str, str]]) -> dict[str, Translator]:
    """A translator per language, English as every language's fallback."""
    return {lang: Translator(lang, catalogs[lang], catalogs["en"]) for lang in catalogs}


def negotiate(cookie: str | None, accept_language: str | None) -> str:
    """The cookie set by the language switch wins; then the browser's preference; then English."""
    if cookie in LANGUAGES:
        return cookie
    for part in (accept_language or "").split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGUAGES:
            return code
    return DEFAULT_LANGUAGE


def said(error: AssayError, t: Translator) -> str:
    """An error's message in the reader's language: the catalog's text when the error names a
    key the catalog holds, else the English message it was raised with."""
    if error.key is None or error.key not in t.fallback:
        return str(error)
    params = {name: _in_language(value, t) for name, value in error.params.items()}
    try:
        return t(error.key, **params)
    except (KeyError, IndexError, ValueError):  # a template and its params that disagree
        return str(error)


def _in_language(value: object, t: Translator) -> object:
    """A parameter as the reader reads it: :class:`~assay.errors.Words` in their language."""
    if isinstance(value, Words) and value.keys and all(k in t.fallback for k in value.keys):
        return ", ".join(t(k) for k in value.keys)
    return value
