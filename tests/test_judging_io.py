"""Judgments out and in as autojudge-annotate's JSON Lines (assay.formats.autojudge,
assay.judging.judgment_files): the exact keys of each mode, a round trip
that imports back equal, merging by username, and bad lines refused naming file, line and
field with the project unchanged."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import InvalidInput
from assay.formats.autojudge import CITATION_KEYS, DOCUMENT_KEYS, REPORT_KEYS, read_judgments
from assay.judging.judgment_files import export_judgments, import_judgments, judgment_records
from assay.judging.judgments import Judgment, Span, Unit, list_judgments, save_judgment
from assay.judging.reports import get_documents, get_report
from assay.judging.run_import import import_judging_inputs
from assay.people.accounts import create_account
from assay.records import Project
from assay.store.projects import create_project, get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.conftest import SHARED
from tests.test_cli_remote import Team, team  # noqa: F401 (the team server fixture)

KIDDIE = SHARED / "fixtures" / "autojudge" / "kiddie"
BASE = SHARED / "fixtures" / "autojudge" / "base"


def kiddie_project(ws: Workspace, name: str = "judging") -> Project:
    project = create_project(ws, name)
    import_judging_inputs(
        ws, project, topics=KIDDIE / "topics" / "kiddie-topics.jsonl", runs=[KIDDIE / "runs"]
    )
    return project


def judge_three_modes(ws: Workspace, project: Project, judge_id: int) -> None:
    """One judgment per mode: a report with spans in two sentences, a document, a citation
    with both span kinds."""
    report = get_report(ws, project, "leaf", "run1")
    first = report.sentences[0].text
    start2 = len(first) + 1
    second = report.sentences[1].text
    save_judgment(
        ws, project, Unit.report("leaf", "run1"), judge_id=judge_id, version=0,
        rating="Perfect", comment="clear",
        spans=[Span(0, 6, first[:6], 0), Span(start2, start2 + 4, second[:4], 1)],
    )  # fmt: skip
    doc = get_documents(ws, project, ["Chlorophyll"])["Chlorophyll"]
    at = doc.text.index("green pigment")
    save_judgment(
        ws, project, Unit.document("leaf", "Chlorophyll"), judge_id=judge_id, version=0,
        rating="Mostly Good", spans=[Span(at, at + 13, "green pigment")],
    )  # fmt: skip
    save_judgment(
        ws, project, Unit.citation("leaf", "run1", 0, "Chlorophyll"), judge_id=judge_id,
        version=0, rating="So-so", spans=[Span(at, at + 13, "green pigment")],
        report_spans=[Span(0, 6, "Leaves")],
    )  # fmt: skip
    # not judged (no span, not rated, no comment): never exported
    save_judgment(ws, project, Unit.report("leaf", "run2"), judge_id=judge_id, version=0)


def marks(found: list[Judgment]) -> list[tuple[Any, ...]]:
    return sorted(
        (j.unit.key, j.judge, j.rating, j.comment, j.spans, j.report_spans) for j in found
    )


def test_export_writes_autojudge_records_with_exactly_their_keys(any_ws: Workspace) -> None:
    project = kiddie_project(any_ws)
    ada = create_account(any_ws, "ada", "a long password 1").id
    judge_three_modes(any_ws, project, ada)
    records = list(judgment_records(any_ws, project, dataset="kiddie-1"))
    assert len(records) == 3
    report, document, citation = records
    assert tuple(report) == REPORT_KEYS
    assert tuple(document) == DOCUMENT_KEYS
    assert tuple(citation) == CITATION_KEYS
    assert {r["dataset"] for r in records} == {"kiddie-1"}
    assert all(r["request_id"] == r["topic_id"] == "leaf" for r in records)
    assert all(r["username"] == "ada" for r in records)

    assert (report["run_id"], report["team_id"], report["rating"]) == ("run1", "teamA", "Perfect")
    assert [s["sentence_idx"] for s in report["spans"]] == [0, 1]
    shown = report["report"]
    assert list(shown) == ["team_id", "run_id", "topic_id", "sentences", "documents"]
    assert shown["sentences"][0]["citations"] == ["Chlorophyll"]
    assert all("citations" not in s for s in shown["sentences"] if not s.get("citations"))
    chlorophyll = shown["documents"]["Chlorophyll"]
    assert list(chlorophyll) == ["id", "text", "title", "url"]
    assert chlorophyll["text"].startswith("Chlorophyll is a green pigment")  # the run's own text

    assert document["docid"] == "Chlorophyll" and document["document"] == chlorophyll
    # document spans point into title + blank line + text
    span = document["spans"][0]
    assert f"{chlorophyll['title']}\n\n{chlorophyll['text']}"[span["start"] : span["end"]] == (
        "green pigment"
    )
    assert "sentence_idx" not in span

    assert citation["report_spans"] == [{"start": 0, "end": 6, "text": "Leaves"}]
    cited = citation["citation"]
    assert list(cited) == ["report", "sentence_idx", "sentence", "docid", "document"]
    assert (cited["sentence_idx"], cited["docid"]) == (0, "Chlorophyll")
    assert cited["sentence"]["citations"] == ["Chlorophyll"] and cited["report"] == shown

    # filters: a mode, a topic, a judge
    assert len(list(judgment_records(any_ws, project, modes=["document"]))) == 1
    assert list(judgment_records(any_ws, project, topic_ids=["cloud"])) == []
    with pytest.raises(InvalidInput, match="unknown judging mode 'reports'"):
        list(judgment_records(any_ws, project, modes=["reports"]))


def test_exported_judgments_import_back_equal(any_ws: Workspace, tmp_path: Path) -> None:
    project = kiddie_project(any_ws)
    ada = create_account(any_ws, "ada", "a long password 1").id
    judge_three_modes(any_ws, project, ada)
    out = tmp_path / "judgments.jsonl"
    assert export_judgments(any_ws, project, out) == 3

    other = kiddie_project(any_ws, "elsewhere")
    result = import_judgments(any_ws, other, out)
    assert (result.added, result.updated, result.unchanged) == (3, 0, 0)
    assert result.judges == ["ada"] and result.datasets == ["judging"]
    judged = [j for j in list_judgments(any_ws, project) if j.judged()]
    assert marks(list_judgments(any_ws, other)) == marks(judged)
    again = tmp_path / "again.jsonl"
    export_judgments(any_ws, other, again)
    assert again.read_text() == out.read_text().replace('"judging"', '"elsewhere"')

    # the same file again changes nothing
    assert import_judgments(any_ws, other, out).unchanged == 3


def base_project(ws: Workspace, name: str) -> Project:
    project = create_project(ws, name)
    import_judging_inputs(
        ws, project, topics=BASE / "example-rag-topics.jsonl",
        runs=[BASE / "my_best_run_01.jsonl", BASE / "my_best_run_02.jsonl"],
    )  # fmt: skip
    return project


def test_citations_without_a_document_go_out_and_back(any_ws: Workspace, tmp_path: Path) -> None:
    """Base runs embed no documents: a cited document is named but null, and a sentence
    without citations is judged with docid null."""
    project = base_project(any_ws, "base")
    ada = create_account(any_ws, "ada", "a long password 1").id
    report = get_report(any_ws, project, "28", "my_best_run_02")
    assert [s.citations for s in report.sentences] == [(), ("279",), ()]
    save_judgment(
        any_ws, project, Unit.citation("28", "my_best_run_02", 0, None), judge_id=ada,
        version=0, comment="no support given",
    )  # fmt: skip
    word = report.sentences[1].text.split()[0]
    save_judgment(
        any_ws, project, Unit.citation("28", "my_best_run_02", 1, "279"), judge_id=ada,
        version=0, rating="Bad", report_spans=[Span(0, len(word), word)],
    )  # fmt: skip
    uncited, cited = judgment_records(any_ws, project)
    assert tuple(uncited) == tuple(cited) == CITATION_KEYS
    assert (uncited["citation"]["docid"], uncited["citation"]["document"]) == (None, None)
    assert uncited["citation"]["sentence"]["citations"] == []
    assert (cited["citation"]["docid"], cited["citation"]["document"]) == ("279", None)
    assert cited["citation"]["report"]["documents"] == {}

    out = tmp_path / "base.jsonl"
    export_judgments(any_ws, project, out)
    other = base_project(any_ws, "other")
    assert import_judgments(any_ws, other, out).added == 2
    assert marks(list_judgments(any_ws, other)) == marks(list_judgments(any_ws, project))


def test_import_merges_by_username(any_ws: Workspace, tmp_path: Path) -> None:
    project = kiddie_project(any_ws)
    ada = create_account(any_ws, "ada", "a long password 1").id
    judge_three_modes(any_ws, project, ada)
    out = tmp_path / "judgments.jsonl"
    export_judgments(any_ws, project, out, modes=["report"])
    line = json.loads(out.read_text())
    lines = [
        {**line, "rating": "Bad", "spans": []},  # ada's, changed elsewhere: replaces hers
        {**line, "username": "Grace Hopper", "comment": "fine"},  # a judge new to the project
    ]
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = import_judgments(any_ws, project, changed)
    assert (result.added, result.updated) == (1, 1)
    found = {j.judge: j for j in list_judgments(any_ws, project, mode="report", run_id="run1")}
    assert (found["ada"].rating, found["ada"].spans, found["ada"].version) == ("Bad", (), 2)
    assert found["Grace Hopper"].comment == "fine"  # an imported account, its name as given
    # gzip is read too, and a line without a username is the importing account's
    zipped = tmp_path / "nameless.jsonl.gz"
    zipped.write_bytes(gzip.compress(json.dumps({**line, "username": ""}).encode()))
    assert import_judgments(any_ws, project, zipped, author=ada).unchanged == 0
    assert import_judgments(any_ws, project, zipped, author=ada).unchanged == 1


def _line(tmp_path: Path, record: object, name: str = "offline.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(record if isinstance(record, str) else json.dumps(record) + "\n")
    return path


def _report_line(**changes: Any) -> dict[str, Any]:
    return {
        "dataset": "kiddie", "request_id": "leaf", "run_id": "run1", "team_id": "teamA",
        "topic_id": "leaf", "username": "ada", "rating": "Perfect", "comment": "",
        "spans": [{"start": 0, "end": 6, "text": "Leaves", "sentence_idx": 0}], **changes,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ("{not json", "offline.jsonl line 1: malformed JSON"),
        ("[1, 2]", "offline.jsonl line 1: expected a JSON object, found a list"),
        (_report_line(topic_id="moon", request_id="moon"),
         "offline.jsonl line 1: field 'topic_id': the project has no judging topic 'moon'"),
        (_report_line(run_id="run9"),
         "offline.jsonl line 1: field 'run_id': the project has no report of run 'run9'"),
        ({**_report_line(), "run_id": None, "docid": "Mars", "spans": []},
         "offline.jsonl line 1: field 'docid': topic 'leaf' has no document 'Mars'"),
        (_report_line(spans=[{"start": 0, "end": 6, "text": "Trees", "sentence_idx": 0}]),
         "offline.jsonl line 1: field 'spans' span 1: text 'Trees' does not match"),
        (_report_line(rating="Great"),
         "offline.jsonl line 1: field 'rating': 'Great' is not on the project's scale"),
        (_report_line(spans=[{"start": "0", "end": 6, "text": "Leaves"}]),
         "offline.jsonl line 1: field 'spans[0]': start and end must be integers"),
        ({**_report_line(), "run_id": None, "report": None,
          "citation": {"report": {"run_id": "run1"}, "sentence_idx": 0, "docid": "Moon"}},
         "offline.jsonl line 1: field 'citation.docid': sentence 0 does not cite 'Moon'"),
        ({**_report_line(), "citation": {"report": {"run_id": "run1"}, "sentence_idx": 99}},
         "offline.jsonl line 1: field 'citation.sentence_idx': 99 is out of range"),
        ({"username": "ada", "topic_id": "leaf", "rating": "Bad"},
         "offline.jsonl line 1: not a judgment"),
    ],
)  # fmt: skip
def test_a_bad_line_is_refused_naming_file_line_and_field_and_nothing_changes(
    any_ws: Workspace, tmp_path: Path, record: object, expected: str
) -> None:
    project = kiddie_project(any_ws)
    good = json.dumps(_report_line(username="grace")) + "\n"
    path = _line(tmp_path, record)
    path.write_text(path.read_text().rstrip("\n") + "\n" + good)  # line 2 is fine
    with pytest.raises(InvalidInput) as refused:
        import_judgments(any_ws, project, path)
    assert expected in str(refused.value)
    assert "nothing imported: 1 problem(s)" in str(refused.value)
    assert list_judgments(any_ws, project) == []  # not even the good line

    lenient = import_judgments(any_ws, project, path, lenient=True)
    assert lenient.added == 1 and [i.where for i in lenient.issues] == ["offline.jsonl line 1"]


def test_a_judge_judging_one_unit_twice_in_a_file_is_refused(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project = kiddie_project(any_ws)
    line = json.dumps(_report_line()) + "\n"
    path = _line(tmp_path, line + line)
    with pytest.raises(InvalidInput, match=r"line 2: a second judgment .* 'ada' .* line 1"):
        import_judgments(any_ws, project, path)
    assert list_judgments(any_ws, project) == []


def test_reading_autojudge_lines_names_the_missing_field(tmp_path: Path) -> None:
    path = _line(tmp_path, {"run_id": "r", "topic_id": "t", "username": "u"})
    records, issues = read_judgments(path)
    assert records == [] and str(issues[0]) == "offline.jsonl line 1: field 'rating': required"
    path = _line(tmp_path, {**_report_line(), "citation": {"report": {}, "sentence_idx": 0}})
    assert "field 'citation.report.run_id': required" in str(read_judgments(path)[1][0])


# ---------------------------------------------------------------- the commands


def invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(make_app(), ["--home", str(home), *args])


def test_commands_import_runs_follow_progress_and_exchange_judgments(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    assert invoke(home, "projects", "create", "kiddie").exit_code == 0
    topics = str(KIDDIE / "topics" / "kiddie-topics.jsonl")
    done = invoke(home, "judge", "import-runs", "--topics", topics, str(KIDDIE / "runs"),
                  "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    counts = json.loads(done.output)
    assert (counts["topics_added"], counts["reports_added"]) == (5, 20)

    ws = Workspace.open(Settings(home=home))
    ada = create_account(ws, "ada", "a long password 1").id
    judge_three_modes(ws, get_project(ws, "kiddie"), ada)
    ws.close()
    shown = invoke(home, "judge", "progress", "--mode", "report", "--judge", "ada")
    assert shown.exit_code == 0, shown.output
    assert "1 of 20 report unit(s) judged" in shown.output
    rows = json.loads(invoke(home, "judge", "progress", "--mode", "document", "--json").output)
    assert rows["judged"] == 1 and {r["run_id"] for r in rows["rows"]} == {None}
    assert "unknown mode 'reports'" in invoke(home, "judge", "progress", "-m", "reports").output

    out = tmp_path / "judgments.jsonl"
    exported = invoke(home, "export", "autojudge", str(out), "--mode", "citation",
                      "--dataset", "kiddie-round-1", "--json")  # fmt: skip
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.output)["judgments"] == 1
    assert json.loads(out.read_text())["dataset"] == "kiddie-round-1"
    assert invoke(home, "export", "autojudge", str(out)).exit_code == 0
    assert len(out.read_text().splitlines()) == 3
    refused = invoke(home, "export", "autojudge", str(out), "--strict")
    assert refused.exit_code == 1 and "--strict do(es) not apply" in refused.output
    assert "belong to the autojudge format" in invoke(home, "export", "csv", "x.csv",
                                                      "--mode", "report").output  # fmt: skip

    # into a second project with the same runs: added, then unchanged
    assert invoke(home, "projects", "create", "copy").exit_code == 0
    assert invoke(home, "judge", "import-runs", "-p", "copy", "-t", topics,
                  str(KIDDIE / "runs")).exit_code == 0  # fmt: skip
    merged = invoke(home, "import", "autojudge", str(out), "-p", "copy", "--json")
    assert merged.exit_code == 0, merged.output
    assert json.loads(merged.output)["added"] == 3
    again = invoke(home, "import", "autojudge", str(out), "-p", "copy")
    assert "0 added, 0 replaced (the same judge's), 3 unchanged; judges: ada" in again.output

    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text().replace('"leaf"', '"moon"', 2))
    failed = invoke(home, "import", "autojudge", str(bad), "-p", "copy")
    assert failed.exit_code == 1
    assert "bad.jsonl line 1: field 'topic_id': the project has no judging topic 'moon'" in (
        " ".join(failed.output.split())
    )
    skipped = invoke(home, "import", "autojudge", str(bad), "-p", "copy", "--lenient")
    assert skipped.exit_code == 2 and "skipped bad.jsonl line 1" in skipped.output


def test_import_runs_refuses_the_invalid_topics_file_naming_line_and_field(
    tmp_path: Path,
) -> None:
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    assert invoke(home, "projects", "create", "base").exit_code == 0
    invalid = str(BASE / "example-rag-topics-invalid.jsonl")
    refused = invoke(home, "judge", "import-runs", "--topics", invalid)
    assert refused.exit_code == 1
    assert "example-rag-topics-invalid.jsonl line 2: field 'title': required" in refused.output
    lenient = invoke(home, "judge", "import-runs", "--topics", invalid, "--lenient", "--json")
    assert lenient.exit_code == 2 and json.loads(lenient.output)["topics_added"] == 1
    assert "give --topics, run files, or both" in invoke(home, "judge", "import-runs").output


def test_import_runs_takes_the_base_runs_in_every_citation_style(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    assert invoke(home, "projects", "create", "base").exit_code == 0
    runs = ["my_best_run_01.jsonl", "my_best_run_02.jsonl", "my_best_run_02_with_citations.jsonl"]
    done = invoke(home, "judge", "import-runs", "-t", str(BASE / "example-rag-topics.jsonl"),
                  *(str(BASE / r) for r in runs), "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["reports_added"] == 3
    rows = json.loads(invoke(home, "judge", "progress", "-m", "citation", "--json").output)
    assert rows["judged"] == 0 and rows["total"] >= 3


def test_spans_marked_in_another_version_of_a_document_move_to_the_projects(
    any_ws: Workspace, tmp_path: Path
) -> None:
    """run3 embeds a shorter Anthocyanin than run1 (the one the project keeps); a judge of
    autojudge-annotate marked spans in run3's."""
    project = kiddie_project(any_ws)
    held = get_documents(any_ws, project, ["Anthocyanin"])["Anthocyanin"].text
    run3 = next(
        json.loads(line)["documents"]["Anthocyanin"]
        for line in (KIDDIE / "runs" / "run3.jsonl").read_text().splitlines()
        if "Anthocyanin" in json.loads(line).get("documents", {})
    )
    seen = f"{run3['title']}\n\n{run3['text']}"
    assert seen != held

    def line(word: str) -> dict[str, Any]:
        at = seen.index(word)
        return {
            "dataset": "x", "request_id": "leaf", "docid": "Anthocyanin", "topic_id": "leaf",
            "username": "ada", "rating": "Bad", "comment": "",
            "spans": [{"start": at, "end": at + len(word), "text": word}], "document": run3,
        }  # fmt: skip

    moved = import_judgments(any_ws, project, _line(tmp_path, line("pigments")))
    assert moved.added == 1 and moved.issues[0].severity == "warning"
    assert "marked in another version of document 'Anthocyanin': moved from" in (
        moved.issues[0].message
    )
    (stored,) = list_judgments(any_ws, project)
    at = held.index("pigments")
    assert stored.spans == (Span(at, at + 8, "pigments"),)
    assert import_judgments(any_ws, project, _line(tmp_path, line("pigments"))).unchanged == 1
    for word, why in (("vacuolar", "not found"), ("red", "found more than once")):
        with pytest.raises(InvalidInput, match=f"its text is {why} in the project's"):
            import_judgments(any_ws, project, _line(tmp_path, line(word)))


def test_export_and_import_autojudge_against_a_team_server(team: Team) -> None:  # noqa: F811
    project = get_project(team.ws, "handbook")
    import_judging_inputs(
        team.ws, project, topics=KIDDIE / "topics" / "kiddie-topics.jsonl", runs=[KIDDIE / "runs"]
    )
    judge_three_modes(team.ws, project, create_account(team.ws, "ada", "a long password 1").id)
    out = team.tmp / "judgments.jsonl"
    done = team.assay("export", "autojudge", str(out), "--mode", "report", "--dataset", "r1")
    assert done.code == 0, done.err
    assert f"Wrote 1 judgment(s) to {out}" in done.out
    record = json.loads(out.read_text())
    assert (record["dataset"], record["username"], record["run_id"]) == ("r1", "ada", "run1")

    out.write_text(json.dumps({**record, "username": "grace"}) + "\n")
    merged = team.assay("import", "autojudge", str(out), "--json")
    assert merged.code == 0, merged.err
    assert (json.loads(merged.out)["added"], json.loads(merged.out)["judges"]) == (1, ["grace"])
    out.write_text(json.dumps({**record, "topic_id": "moon"}) + "\n")
    refused = team.assay("import", "autojudge", str(out))
    assert refused.code == 1
    assert "judgments.jsonl line 1: field 'topic_id': the project has no judging topic 'moon'" in (
        " ".join(refused.err.split())
    )
    read_only = team.assay("import", "autojudge", str(out), token=team.read)
    assert read_only.code == 1 and "this API token may only read" in read_only.err


def test_two_names_of_one_judge_in_a_file_are_one_judge(any_ws: Workspace, tmp_path: Path) -> None:
    """A user name and the same account's display name: the later line replaces the
    earlier one (no conflict between the two)."""
    project = kiddie_project(any_ws)
    create_account(any_ws, "ada", "a long password 1", display_name="Ada Lovelace")
    lines = [_report_line(username="ada"), _report_line(username="Ada Lovelace", rating="Bad")]
    path = _line(tmp_path, "".join(json.dumps(x) + "\n" for x in lines))
    result = import_judgments(any_ws, project, path)
    assert (result.added, result.updated) == (1, 1)
    (stored,) = list_judgments(any_ws, project)
    assert (stored.judge, stored.rating, stored.version) == ("Ada Lovelace", "Bad", 2)
