"""Numbers, percentages, dates and language names follow the reader's language."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from assay.web.locale_format import language_name, moment, number, percent


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", ["1,234,567", "1,234.568", "0.500", "42%", "42.4%", "–"]),
        ("de", ["1.234.567", "1.234,568", "0,500", "42\u00a0%", "42,4\u00a0%", "–"]),
    ],
)
def test_numbers_follow_the_language(lang: str, expected: list[str]) -> None:
    shown = [
        number(1234567, lang),
        number(1234.5678, lang),
        number(0.5, lang, 3),
        percent(0.423, lang),
        percent(0.4236, lang, 1),
        number(None, lang),
    ]
    assert shown == expected


def test_dates_follow_the_language() -> None:
    at = datetime(2026, 11, 25, 5, 3)
    assert moment(at, "de") == "25.11.2026, 05:03"
    assert moment(at, "en").startswith("Nov 25, 2026, 5:03")
    assert moment(date(2026, 1, 2), "de") == "02.01.2026"


def test_language_names_in_the_readers_language() -> None:
    assert language_name("en", "de") == "Englisch"
    assert language_name("de", "en") == "German"
    assert language_name("zz-unknown", "en") == "zz-unknown"
