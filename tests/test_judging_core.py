"""Judging mode's core: TREC RAG topics and runs into a project (assay.judging.run_import),
reading them back, and saving judgments with their checks (assay.judging.judgments, units)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.corpus.documents import get_document
from assay.errors import Conflict, InvalidInput
from assay.judging.judgments import Span, Unit, get_judgment, save_judgment
from assay.judging.reports import get_documents, get_report, list_topics, topic_doc_ids
from assay.judging.run_import import import_judging_inputs
from assay.judging.units import progress, unit_states
from assay.people.accounts import create_account
from assay.records import Project
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.conftest import SHARED

KIDDIE = SHARED / "fixtures" / "autojudge" / "kiddie"
BASE = SHARED / "fixtures" / "autojudge" / "base"


def _kiddie(ws: Workspace) -> Project:
    project = create_project(ws, "judging")
    report = import_judging_inputs(
        ws, project, topics=KIDDIE / "topics" / "kiddie-topics.jsonl", runs=[KIDDIE / "runs"]
    )
    assert (report.topics_added, report.reports_added) == (5, 20)
    # runs embed some documents with shorter text than others: kept once, the longest
    assert {i.severity for i in report.issues} == {"warning"}
    return project


def test_kiddie_topics_and_runs_import_with_their_documents(any_ws: Workspace) -> None:
    project = _kiddie(any_ws)
    assert [t.topic_id for t in list_topics(any_ws, project)][:2] == ["leaf", "cloud"]
    report = get_report(any_ws, project, "leaf", "run1")
    assert report.team_id == "teamA"
    assert report.sentences[0].citations == ("Chlorophyll",)
    assert report.text.startswith("Leaves change color in fall because")
    docs = get_documents(any_ws, project, ["Chlorophyll"])
    chlorophyll = docs["Chlorophyll"]
    assert chlorophyll.text.startswith("Chlorophyll\n\nChlorophyll is a green pigment")
    assert chlorophyll.text.endswith("during spring and summer.")  # run1's, not run2's shorter
    assert chlorophyll.body.startswith("Chlorophyll is a green pigment")
    # a document of the project: the corpus tools see it
    stored = get_document(any_ws, project, chlorophyll.document_id)
    assert stored.name == "Chlorophyll.txt" and stored.text == chlorophyll.text
    assert "Chlorophyll" in topic_doc_ids(any_ws, project, "leaf")
    # in the order asked, whatever order the database returns them in (files depend on it)
    named = ["Evergreen", "Chlorophyll", "Missing", "Autumn_leaf_color", "Carotenoid"]
    for order in (named, named[::-1]):
        assert list(get_documents(any_ws, project, order)) == [d for d in order if d != "Missing"]

    again = import_judging_inputs(any_ws, project, runs=[KIDDIE / "runs"])
    assert (again.reports_added, again.reports_unchanged, again.documents_added) == (0, 20, 0)


def test_base_runs_in_all_citation_styles_import(any_ws: Workspace, tmp_path: Path) -> None:
    project = create_project(any_ws, "base")
    indexed = tmp_path / "indexed.jsonl"
    indexed.write_text(
        json.dumps(
            {
                "metadata": {"team_id": "t", "run_id": "by_index", "narrative_id": 28},
                "answer": [{"text": "One.", "citations": [1, 0]}],
                "references": ["224", "279"],
            }
        )
    )
    report = import_judging_inputs(
        any_ws,
        project,
        topics=BASE / "example-rag-topics.jsonl",
        runs=[
            BASE / "my_best_run_01.jsonl",
            BASE / "my_best_run_02.jsonl",
            BASE / "my_best_run_02_with_citations.jsonl",
            indexed,
        ],
    )
    assert report.reports_added == 4
    assert report.missing_documents == ["224", "279"]
    dict_style = get_report(any_ws, project, "28", "my_best_run_02")
    assert [s.citations for s in dict_style.sentences] == [(), ("279",), ()]
    assert get_report(any_ws, project, "28", "by_index").sentences[0].citations == ("279", "224")


def _bad_run(tmp_path: Path, line: object) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text(line if isinstance(line, str) else json.dumps(line))
    return path


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "bad.jsonl line 1: malformed JSON"),
        (
            {"metadata": {"team_id": "t", "run_id": "r", "topic_id": "28", "narrative_id": "29"},
             "responses": []},
            "'metadata.topic_id': '28' disagrees with metadata.narrative_id '29'",
        ),
        (
            {"metadata": {"team_id": "t", "run_id": "r", "topic_id": "28"},
             "responses": [{"text": "x", "citations": [2]}], "references": ["a"]},
            "citation index 2 is out of range (the report has 1 references)",
        ),
        (
            {"metadata": {"team_id": "t", "run_id": "r", "topic_id": "28"},
             "responses": [{"text": "x", "citations": ["a", "b"]}],
             "documents": {"a": {"id": "a", "text": "A."}}},
            "the report embeds documents but not 'b'",
        ),
        (
            {"metadata": {"team_id": "t", "run_id": "r", "topic_id": "99"}, "responses": []},
            "topic '99' of run 'r' is not a topic of the project",
        ),
    ],
)  # fmt: skip
def test_a_bad_run_is_refused_naming_file_line_and_field_and_nothing_is_stored(
    any_ws: Workspace, tmp_path: Path, line: object, expected: str
) -> None:
    project = create_project(any_ws, "base")
    with pytest.raises(InvalidInput) as refused:
        import_judging_inputs(
            any_ws,
            project,
            topics=BASE / "example-rag-topics.jsonl",
            runs=[_bad_run(tmp_path, line)],
        )
    assert expected in str(refused.value)
    assert list_topics(any_ws, project) == []  # the topics of the same call were not kept


def test_the_invalid_topics_file_is_refused_and_lenient_keeps_the_rest(any_ws: Workspace) -> None:
    project = create_project(any_ws, "base")
    invalid = BASE / "example-rag-topics-invalid.jsonl"
    with pytest.raises(InvalidInput, match=r"invalid.jsonl line 2: field 'title': required"):
        import_judging_inputs(any_ws, project, topics=invalid)
    assert list_topics(any_ws, project) == []
    report = import_judging_inputs(any_ws, project, topics=invalid, lenient=True)
    assert report.topics_added == 1 and "line 2" in report.issues[0].where


def test_duplicate_reports_for_one_topic_and_run_are_refused(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project = create_project(any_ws, "base")
    run = BASE / "my_best_run_01.jsonl"
    twice = tmp_path / "twice.jsonl"
    twice.write_text(run.read_text().strip() + "\n" + run.read_text())
    with pytest.raises(InvalidInput, match=r"twice.jsonl line 2: a second report .* line 1"):
        import_judging_inputs(
            any_ws, project, topics=BASE / "example-rag-topics.jsonl", runs=[twice]
        )


def test_judgments_of_each_mode_are_checked_and_versioned(any_ws: Workspace) -> None:
    project = _kiddie(any_ws)
    ada = create_account(any_ws, "ada", "a long password 1").id
    report = get_report(any_ws, project, "leaf", "run1")
    first = report.sentences[0].text
    start2 = len(first) + 1
    at = first.index("chlorophyll")
    # a selection from sentence 0 into sentence 1, stored as one span per sentence
    spans = [Span(at, len(first) - 1, first[at:-1], 0), Span(start2, start2 + 9, "When days", 1)]
    unit = Unit.report("leaf", "run1")
    saved = save_judgment(
        any_ws, project, unit, judge_id=ada, version=0, rating="Perfect", spans=spans
    )
    assert (saved.version, saved.judge, saved.spans[1].sentence_idx) == (1, "ada", 1)
    with pytest.raises(Conflict):
        save_judgment(any_ws, project, unit, judge_id=ada, version=0, rating="Bad")
    updated = save_judgment(any_ws, project, unit, judge_id=ada, version=1, rating="Bad")
    assert (updated.version, updated.rating, updated.spans) == (2, "Bad", ())

    # a span whose text does not match its offsets, a rating off the scale, a span marked
    # for a sentence it is not in: refused, nothing changed
    for bad, message in [
        ({"spans": [Span(0, 6, "Trees")]}, "does not match"),
        ({"rating": "Great"}, "not on the project's scale"),
        ({"spans": [Span(start2, start2 + 9, "When days", 0)]}, "lies outside sentence 0"),
        ({"spans": [Span(0, 7, "Leaves ")]}, "trimmed"),
    ]:
        with pytest.raises(InvalidInput, match=message):
            save_judgment(any_ws, project, unit, judge_id=ada, version=2, **bad)  # type: ignore[arg-type]
    assert get_judgment(any_ws, project, unit, ada).version == 2  # type: ignore[union-attr]

    doc = get_documents(any_ws, project, ["Chlorophyll"])["Chlorophyll"]
    at = doc.text.index("green pigment")
    document = save_judgment(
        any_ws, project, Unit.document("leaf", "Chlorophyll"), judge_id=ada, version=0,
        spans=[Span(at, at + 13, "green pigment")], comment="on topic",
    )  # fmt: skip
    assert document.spans[0].text == "green pigment"
    citation = save_judgment(
        any_ws, project, Unit.citation("leaf", "run1", 0, "Chlorophyll"), judge_id=ada, version=0,
        spans=[Span(at, at + 13, "green pigment")], report_spans=[Span(0, 6, "Leaves")],
        rating="Mostly Good",
    )  # fmt: skip
    assert citation.report_spans[0].text == "Leaves"
    with pytest.raises(InvalidInput, match="does not cite"):
        save_judgment(
            any_ws, project, Unit.citation("leaf", "run1", 0, "Carotenoid"), judge_id=ada, version=0
        )


def test_units_and_progress_follow_the_judgments(any_ws: Workspace) -> None:
    project = _kiddie(any_ws)
    ada = create_account(any_ws, "ada", "a long password 1").id
    states = unit_states(any_ws, project, "leaf", "report", judge_id=ada)
    assert [s.unit.run_id for s in states] == ["run1", "run2", "run3", "run4"]
    assert not any(s.judged_by_me for s in states)
    save_judgment(
        any_ws, project, Unit.report("leaf", "run1"), judge_id=ada, version=0, comment="ok"
    )
    first = unit_states(any_ws, project, "leaf", "report", judge_id=ada, unjudged_first=True)
    assert [s.unit.run_id for s in first][-1] == "run1" and first[-1].judges == 1
    rows = {
        (p.topic_id, p.run_id): (p.judged, p.total)
        for p in progress(any_ws, project, "report", judge_id=ada)
    }
    assert rows[("leaf", "run1")] == (1, 1) and rows[("leaf", "run2")] == (0, 1)
    citations = progress(any_ws, project, "citation")
    assert all(p.total >= 1 for p in citations)
    documents = progress(any_ws, project, "document")
    assert {p.run_id for p in documents} == {None} and documents[0].total > 0
