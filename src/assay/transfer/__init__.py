"""Bundles into and out of projects: the only place where formats meet the store.

``importing`` writes a Bundle into a project in one transaction; ``exporting`` streams a
project out as a Bundle.
"""

from __future__ import annotations

from assay.evidence_mapping import chunks_for_span
from assay.transfer.exporting import export_bundle
from assay.transfer.importing import ImportReport, RecordOutcome, import_bundle

__all__ = ["ImportReport", "RecordOutcome", "chunks_for_span", "export_bundle", "import_bundle"]
