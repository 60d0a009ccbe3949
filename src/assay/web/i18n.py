"""Message catalogs for the web pages: English and German.

Catalogs are JSON files under ``web/i18n/<language>/`` (one file per page area, merged), keyed
by message id; ``{name}`` placeholders are filled with ``str.format``. A test checks that every
language has exactly the same keys and placeholders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

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
    language: str
    messages: dict[str, str]
    fallback: dict[str, str]

    def __call__(self, key: str, **params: Any) -> str:
        text = self.messages.get(key) or self.fallback.get(key) or key
        return text.format(**params) if params else text


def negotiate(cookie: str | None, accept_language: str | None) -> str:
    """The cookie set by the language switch wins; then the browser's preference; then English."""
    if cookie in LANGUAGES:
        return cookie
    for part in (accept_language or "").split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGUAGES:
            return code
    return DEFAULT_LANGUAGE
