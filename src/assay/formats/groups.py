"""Shared export rules: AND/OR groups of chunk ids, and which id an item goes by."""

from __future__ import annotations

from assay.records import Item, Turn


def retrieval_groups(turn: Turn) -> tuple[list[list[str]], int]:
    """Relevant passages as AutoRAG-style groups and the number that map to no chunk.

    Passages with the same group number are alternatives (inner list, any one suffices);
    different groups are all needed (outer list). A passage without a group is a group of its
    own. A passage that spans several chunks contributes all of them as alternatives.
    Unanswerable turns have no groups.
    """
    if turn.query_type == "unanswerable":
        return [], 0
    groups: dict[object, list[str]] = {}
    unmapped = 0
    for index, ev in enumerate(turn.evidence):
        if ev.label != "relevant":
            continue
        if not ev.chunk_ids:
            unmapped += 1
            continue
        key: object = ev.group if ev.group else ("single", index)
        members = groups.setdefault(key, [])
        members.extend(c for c in ev.chunk_ids if c not in members)
    return [members for members in groups.values() if members], unmapped


def unanswerable(turn: Turn) -> bool:
    """A turn no passage answers: marked ``unanswerable``, or without relevant evidence.
    Retrieval scores leave it out (``assay eval``), and so do the qrels Assay writes."""
    marked = turn.query_type == "unanswerable"
    return marked or not any(e.label == "relevant" for e in turn.evidence)


def source_id(item: Item) -> str:
    """The id other tools know an item by: the one it came with, else its Assay id."""
    original = item.extra.get("source_id")
    return original if isinstance(original, str) and original else item.id
