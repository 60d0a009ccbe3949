"""The bundled demo project: every gold evidence is found in its document, and search finds it."""

from __future__ import annotations

from collections import Counter

from assay.corpus.documents import get_document_by_name, list_documents
from assay.demo import demo_files, gold_items, open_demo
from assay.search.indexes import search
from assay.store.workspace import Workspace


def test_demo_corpus_shape() -> None:
    names = [f.name for f in demo_files()]
    assert len(names) >= 15
    suffixes = Counter(name.rsplit(".", 1)[1] for name in names)
    assert {"md", "txt", "html", "pdf", "docx"} <= set(suffixes)
    items = gold_items()
    types = Counter(item["query_type"] for item in items)
    assert set(types) == {"fact_single", "summary", "reasoning", "unanswerable"}
    assert {item["language"] for item in items} == {"en", "de"}


def test_demo_ingests_cleanly_and_gold_evidence_is_verbatim(ws: Workspace) -> None:
    project, report = open_demo(ws)
    assert report is not None and report.errors == [] and report.duplicates == []
    assert len(list_documents(ws, project)) == len(demo_files())
    for summary in list_documents(ws, project):
        assert summary.chars > 500, summary.name
        assert summary.warnings == (), (summary.name, summary.warnings)
    for item in gold_items():
        for evidence in item["evidence"]:
            doc = get_document_by_name(ws, project, evidence["document"])
            assert evidence["text"] in doc.text, (item["query_id"], evidence["document"])
    again, second = open_demo(ws)
    assert again == project and second is None


def test_keyword_search_finds_gold_evidence(ws: Workspace) -> None:
    """Search sanity: for most answerable questions a relevant passage is in the top 10."""
    project, _ = open_demo(ws)
    answerable = [
        item for item in gold_items() if any(e["label"] == "relevant" for e in item["evidence"])
    ]
    found = 0
    for item in answerable:
        hits = search(ws, project, item["query"], k=10)
        relevant = [e for e in item["evidence"] if e["label"] == "relevant"]
        texts = {(get_document_by_name(ws, project, e["document"]).id, e["text"]) for e in relevant}
        if any(doc_id == h.doc_id and text in h.text for h in hits for doc_id, text in texts):
            found += 1
    assert found / len(answerable) >= 0.6, f"only {found} of {len(answerable)} found"


def test_demo_gold_set_becomes_accepted_items(ws: Workspace) -> None:
    from assay.gold.item_lists import list_items
    from assay.gold.items import get_item

    project, _ = open_demo(ws, with_items=True)
    total, summaries = list_items(ws, project, status="accepted", limit=200)
    assert total == len(gold_items())
    for summary in summaries:
        item = get_item(ws, project, summary.id)
        assert all(e.anchor == "ok" for e in item.turns[0].evidence)
