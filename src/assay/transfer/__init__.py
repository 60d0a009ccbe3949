"""Bundles into and out of projects: the only place where formats meet the store.

``importing`` writes a Bundle into a project in short batches behind the project's import
lock (``batches``), landing whole or not at all; ``report`` counts what it did;
``exporting`` streams a project out as a Bundle.

The names below are loaded when first used: a process that needs one part (the second
process of a large import prepares items and never exports) does not load the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.corpus.evidence_mapping import chunks_for_span
    from assay.gold.statuses import DEFAULT_STATUSES
    from assay.records import STATUSES
    from assay.transfer.batches import BatchPolicy
    from assay.transfer.exporting import (
        ExportScope,
        choose_statuses,
        chosen_items,
        export_bundle,
        export_scope,
    )
    from assay.transfer.importing import import_bundle
    from assay.transfer.report import ImportReport, RecordOutcome

__all__ = [
    "DEFAULT_STATUSES",
    "STATUSES",
    "BatchPolicy",
    "ExportScope",
    "ImportReport",
    "RecordOutcome",
    "choose_statuses",
    "chosen_items",
    "chunks_for_span",
    "export_bundle",
    "export_scope",
    "import_bundle",
]

_HOMES = {
    "DEFAULT_STATUSES": "assay.gold.statuses",
    "STATUSES": "assay.records",
    "BatchPolicy": "assay.transfer.batches",
    "ExportScope": "assay.transfer.exporting",
    "ImportReport": "assay.transfer.report",
    "RecordOutcome": "assay.transfer.report",
    "choose_statuses": "assay.transfer.exporting",
    "chosen_items": "assay.transfer.exporting",
    "chunks_for_span": "assay.corpus.evidence_mapping",
    "export_bundle": "assay.transfer.exporting",
    "export_scope": "assay.transfer.exporting",
    "import_bundle": "assay.transfer.importing",
}
"""Where each name of :data:`__all__` lives."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
