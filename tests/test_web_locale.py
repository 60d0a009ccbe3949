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


def test_query_type_names_in_the_readers_language() -> None:
    from assay.records import Project
    from assay.web.type_names import query_type_label

    assert query_type_label("fact_single", None, "de") == "Einzelfakt"
    assert query_type_label("fact_single", None, "en") == "Single fact"
    assert query_type_label("made_up", None, "de") == "made_up"
    assert query_type_label(None, None, "de") == "–"
    own = {"id": "howto", "label": {"en": "How-to", "de": "Anleitung"}, "help": {"en": "Steps."}}
    at = datetime(2026, 11, 28)
    project = Project(1, "p", "en", {"query_types": [own]}, at, at)
    assert query_type_label("howto", project, "de") == "Anleitung"
    assert query_type_label("fact_single", project, "de") == "fact_single"  # not in its list
