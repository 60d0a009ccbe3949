"""Judging mode: human judgments of what real RAG systems answered (TREC RAG reports, the
documents they cite, and each citation), stored per judge, exported in autojudge-annotate's
JSONL shape, and turned into qrels and leaderboards.

Data flows one way: topics and runs are imported (:mod:`assay.judging.run_import`), read
(:mod:`assay.judging.reports`), judged (:mod:`assay.judging.judgments`) unit by unit
(:mod:`assay.judging.units`).
"""
