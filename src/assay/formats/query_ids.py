"""The query id every file Assay writes gives a question: qrels, runs, pools, BEIR, TREC,
AutoRAG.

One rule, so that any two of our files line up in ``assay eval --qrels … --run …`` and in
ir_measures, pytrec_eval or BEIR:

- a single-turn item is its item key: the id it was imported with, else its Assay id;
- each turn of a conversation is ``<item key><::><turn>``, turns counted from 1, even when
  the conversation has one turn so far (its id stays when turns are added). ``<::>`` is the
  separator MTRAG's BEIR-style retrieval files use, so our conversation qrels line up with
  theirs.

Files of older Assay versions wrote ``<item id>::<turn>`` (pools, single-turn items
included) and a bare key for a one-turn conversation; :func:`older_forms` names those, and
readers accept them.
"""

from __future__ import annotations

import re

from assay.formats.groups import source_id
from assay.records import Item

SEPARATOR = "<::>"
"""Between an item key and a turn number (MTRAG's)."""
OLD_SEPARATOR = "::"
"""What Assay's task ids and older pool files use."""
_OLD_TURN = re.compile(r"^(.+)::([0-9]+)$")


def turn_query_id(key: str, turn: int, single: bool) -> str:
    """The query id of turn ``turn`` (1-based) of the item keyed ``key``; ``single`` for a
    single-turn item, which goes by its key alone."""
    return key if single else f"{key}{SEPARATOR}{turn}"


def is_single(item: Item) -> bool:
    """Whether the item's one question goes by its key alone (a one-turn qa item)."""
    return item.kind != "conversation" and len(item.turns) == 1


def query_id(item: Item, index: int) -> str:
    """The query id of the item's turn at 0-based ``index``."""
    return turn_query_id(source_id(item), index + 1, is_single(item))


def older_forms(keys: tuple[str, ...], turn: int, single: bool, turns: int) -> list[str]:
    """Ids older Assay files gave this turn, for each of the item's ``keys`` (the key it was
    imported with, its Assay id): ``KEY::TURN`` always, ``KEY<::>TURN`` for a single-turn
    item, the bare key for a conversation of one turn."""
    forms: list[str] = []
    for key in keys:
        forms.append(f"{key}{OLD_SEPARATOR}{turn}")
        forms.append(key if single or turns == 1 else f"{key}{SEPARATOR}{turn}")
        if single:
            forms.append(f"{key}{SEPARATOR}{turn}")
    return forms


def newer_form(old: str, known: set[str] | frozenset[str]) -> str | None:
    """The id in ``known`` that an older file's ``KEY::TURN`` stands for (``KEY<::>TURN``, or
    ``KEY`` for turn 1 of a single-turn item); None when it stands for none of them."""
    match = _OLD_TURN.match(old)
    if match is None:
        return None
    key, turn = match.groups()
    for candidate in (f"{key}{SEPARATOR}{turn}", key if turn == "1" else None):
        if candidate is not None and candidate in known:
            return candidate
    return None
