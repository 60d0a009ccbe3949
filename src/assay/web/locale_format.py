"""Numbers and dates on pages, formatted for the reader's language with Babel.

Templates call the filters ``num``, ``pct`` and ``when``; each reads the page's ``lang`` from
the template context, so one template serves English ("1,234.5", "Nov 25, 2026, 5:03 AM") and
German ("1.234,5", "25.11.2026, 05:03") alike. ``None`` shows as an en dash.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from babel import Locale
from babel.dates import format_date, format_time
from babel.numbers import format_decimal, format_percent
from jinja2 import pass_context

DASH = "–"


def number(value: float | int | None, lang: str, digits: int | None = None) -> str:
    """Grouped digits; ``digits`` fixes the decimals (``None``: as many as the value has)."""
    if value is None:
        return DASH
    if digits is None:
        pattern = "#,##0" if float(value).is_integer() else "#,##0.###"
    else:
        pattern = "#,##0" + ("." + "0" * digits if digits else "")
    return format_decimal(value, format=pattern, locale=lang)


def percent(value: float | None, lang: str, digits: int = 0) -> str:
    """A share from 0 to 1 as a percentage ("42 %" in German, "42%" in English)."""
    if value is None:
        return DASH
    pattern = str(Locale.parse(lang).percent_formats[None].pattern)
    if digits:
        head, _, tail = pattern.rpartition("0")
        pattern = f"{head}0.{'0' * digits}{tail}"
    return format_percent(value, format=pattern, locale=lang)


def moment(value: datetime | date | str | None, lang: str) -> str:
    """A date, with the minute when it is a datetime; an ISO 8601 text (as JSON views hold
    them) is read first, and one that is not a date is shown as it is."""
    if value is None or value == "":
        return DASH
    if isinstance(value, str):
        text = value.replace("Z", "+00:00")
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError:
            return text
    day = format_date(value, "medium", locale=lang)
    if not isinstance(value, datetime):
        return day
    return f"{day}, {format_time(value, 'short', locale=lang)}"


def language_name(code: str, lang: str) -> str:
    """The language ``code`` named in the reader's language ("Englisch" for a German reader)."""
    name = Locale.parse(lang).languages.get(code)
    return name or code


@pass_context
def _num(context: Any, value: Any, digits: int | None = None) -> str:
    return number(value, context.get("lang", "en"), digits)


@pass_context
def _pct(context: Any, value: Any, digits: int = 0) -> str:
    return percent(value, context.get("lang", "en"), digits)


@pass_context
def _when(context: Any, value: Any) -> str:
    return moment(value, context.get("lang", "en"))


@pass_context
def _language_name(context: Any, code: str) -> str:
    return language_name(code, context.get("lang", "en"))


FILTERS = {"num": _num, "pct": _pct, "when": _when, "language_name": _language_name}
