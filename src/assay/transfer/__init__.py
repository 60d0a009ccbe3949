"""Bundles into and out of projects: the only place where formats meet the store.

``importing`` writes a Bundle into a project in short batches behind the project's import
lock (``batches``), landing whole or not at all; ``report`` counts what it did;
``exporting`` streams a project out as a Bundle.
"""

from __future__ import annotations

from assay.corpus.evidence_mapping import chunks_for_span
from assay.records import STATUSES
from assay.transfer.batches import BatchPolicy
from assay.transfer.exporting import (
    DEFAULT_STATUSES,
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
