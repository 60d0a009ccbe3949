"""From judgments to evaluation (issue 15, item 5): document ratings as graded qrels, the
runs' leaderboard, agreement among judges, ``assay judge leaderboard|qrels|agreement``,
``assay eval --judged`` and the results page with its JSON twins.

The small case (two topics, two runs, three judges) is built so that every value can be
worked out by hand; the expected values below say how.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ir_measures
import krippendorff
import numpy as np
import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import InvalidInput, NotFound
from assay.gold.project_config import update_settings
from assay.judging.agreement import judging_agreement
from assay.judging.judgments import Span, Unit, save_judgment
from assay.judging.leaderboard import leaderboard, trec_leaderboard
from assay.judging.qrels import consensus, judged_qrels, rating_grades, trec_qrels
from assay.judging.reports import get_documents, get_report
from assay.judging.run_import import import_judging_inputs
from assay.people.actors import account_for
from assay.records import Project, to_json
from assay.store.projects import create_project, get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.test_web_agreement import client_for

DOCS = {
    "d1": {"id": "d1", "title": "D one", "text": "Alpha beta gamma delta epsilon zeta"},
    "d2": {"id": "d2", "title": "D two", "text": "Second document text"},
    "d3": {"id": "d3", "title": "D three", "text": "Third document text"},
}
REPORTS = {
    ("t1", "runA"): [("Alpha one.", ["d1", "d2"]), ("Alpha two.", ["d3"]), ("Alpha three.", [])],
    ("t2", "runA"): [("Beta one.", ["d1"])],
    ("t1", "runB"): [("Gamma one.", ["d2"]), ("Gamma two.", ["d3"])],
    ("t2", "runB"): [("Delta one.", ["d3"])],
}


def _inputs(folder: Path) -> tuple[Path, Path]:
    topics = folder / "topics.jsonl"
    topics.write_text(
        "".join(json.dumps({"request_id": t, "title": f"Topic {t}"}) + "\n" for t in ("t1", "t2"))
    )
    runs = folder / "runs.jsonl"
    lines = []
    for (topic, run), sentences in REPORTS.items():
        cited = sorted({d for _, docs in sentences for d in docs})
        lines.append(
            {
                "metadata": {"team_id": f"team-{run}", "run_id": run, "topic_id": topic},
                "responses": [{"text": text, "citations": docs} for text, docs in sentences],
                "documents": {d: DOCS[d] for d in cited},
            }
        )
    runs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return topics, runs


def _span(ws: Workspace, project: Project, doc_id: str, text: str) -> Span:
    body = get_documents(ws, project, [doc_id])[doc_id].text
    start = body.index(text)
    return Span(start, start + len(text), text)


def _judged(ws: Workspace, folder: Path) -> Project:
    """The small case. Grades: Perfect 3, Mostly Good 2, So-so 1, Bad 0."""
    project = create_project(ws, "judged")
    topics, runs = _inputs(folder)
    import_judging_inputs(ws, project, topics=topics, runs=[runs])
    ann, bob, cy = (account_for(ws, name) for name in ("ann", "bob", "cy"))

    def judge(unit: Unit, judge_id: int, rating: str, **more: Any) -> None:
        save_judgment(ws, project, unit, judge_id=judge_id, version=0, rating=rating, **more)

    # reports: runA t1 3 and 2 (2.5), runA t2 1, runB t1 0 and 0, runB t2 unrated
    judge(Unit.report("t1", "runA"), ann, "Perfect")
    judge(Unit.report("t1", "runA"), bob, "Mostly Good")
    judge(Unit.report("t2", "runA"), ann, "So-so")
    judge(Unit.report("t1", "runB"), ann, "Bad")
    judge(Unit.report("t1", "runB"), bob, "Bad")
    judge(Unit.report("t2", "runB"), ann, "Not rated", comment="later")
    # citations
    cite = Unit.citation
    judge(cite("t1", "runA", 0, "d1"), ann, "Mostly Good")  # 2 and 1: lower median 1, supports
    judge(cite("t1", "runA", 0, "d1"), bob, "So-so")
    same = Span(0, 9, "Alpha one")
    judge(cite("t1", "runA", 0, "d2"), ann, "Perfect", report_spans=[same])  # 3, 0: 0
    judge(cite("t1", "runA", 0, "d2"), bob, "Bad", report_spans=[same])
    judge(cite("t1", "runA", 1, "d3"), ann, "Bad")
    judge(cite("t1", "runA", 2, None), bob, "Perfect")  # no citation: settled, unsupported
    judge(cite("t2", "runA", 0, "d1"), ann, "Perfect")
    judge(cite("t1", "runB", 0, "d2"), ann, "Not rated", comment="unsure")  # not settled
    judge(cite("t1", "runB", 1, "d3"), ann, "So-so")
    judge(cite("t2", "runB", 0, "d3"), ann, "Bad")
    # documents: t1 d1 3, 2 → 2; d2 0, 0 → 0; d3 1, 3, 0 → 1; t2 d1 unrated; t2 d3 2
    judge(Unit.document("t1", "d1"), ann, "Perfect", spans=[_span(ws, project, "d1", "Alpha beta")])
    judge(
        Unit.document("t1", "d1"),
        bob,
        "Mostly Good",
        spans=[_span(ws, project, "d1", "beta gamma")],
    )
    judge(Unit.document("t1", "d2"), ann, "Bad")
    judge(Unit.document("t1", "d2"), bob, "Bad")
    judge(Unit.document("t1", "d3"), ann, "So-so")
    judge(Unit.document("t1", "d3"), bob, "Perfect")
    judge(Unit.document("t1", "d3"), cy, "Bad")
    judge(Unit.document("t2", "d1"), ann, "Not rated", comment="not read yet")
    judge(Unit.document("t2", "d3"), bob, "Mostly Good")
    return get_project(ws, project.name)


QRELS = {"t1": {"d1": 2, "d2": 0, "d3": 1}, "t2": {"d3": 2}}


# ---------------------------------------------------------------- qrels


def test_grades_follow_the_scale_best_first_and_judges_meet_at_the_lower_median(
    ws: Workspace,
) -> None:
    project = create_project(ws, "scale")
    assert rating_grades(project) == {"Perfect": 3, "Mostly Good": 2, "So-so": 1, "Bad": 0}
    project = update_settings(ws, project, {"judging_ratings": ["-", "yes", "no"]})
    assert rating_grades(project) == {"yes": 1, "no": 0}
    assert [consensus(g) for g in ([3], [3, 0], [2, 3], [0, 1, 3], [0, 1, 2, 3])] == [3, 0, 2, 1, 1]


def test_document_ratings_become_graded_qrels_that_ir_measures_reads(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project = _judged(any_ws, tmp_path)
    assert judged_qrels(any_ws, project) == QRELS
    ann = account_for(any_ws, "ann")
    assert judged_qrels(any_ws, project, judge_id=ann) == {"t1": {"d1": 3, "d2": 0, "d3": 1}}
    assert judged_qrels(any_ws, project, topic_ids=["t2"]) == {"t2": {"d3": 2}}
    text = trec_qrels(judged_qrels(any_ws, project))
    assert text == "t1 0 d1 2\nt1 0 d2 0\nt1 0 d3 1\nt2 0 d3 2\n"
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    read = [(q.query_id, q.doc_id, q.relevance) for q in ir_measures.read_trec_qrels(str(path))]
    assert read == [("t1", "d1", 2), ("t1", "d2", 0), ("t1", "d3", 1), ("t2", "d3", 2)]


def test_qrels_refuse_ids_with_white_space_and_ratings_off_the_scale(
    any_ws: Workspace, tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput, match="doc id 'a b' is empty or holds white space"):
        trec_qrels({"t1": {"a b": 1}})
    project = _judged(any_ws, tmp_path)
    scale = ["-", "good", "bad"]
    with pytest.raises(InvalidInput, match="judgments already carry"):
        update_settings(any_ws, project, {"judging_ratings": scale})  # refused today...
    from assay.store.projects import get_project
    from assay.store.schema import projects

    with any_ws.engine.begin() as conn:  # ...but a workspace may hold one from before
        conn.execute(
            projects.update()
            .where(projects.c.id == project.id)
            .values(settings={**project.settings, "judging_ratings": scale})
        )
    changed = get_project(any_ws, project.name)
    with pytest.raises(InvalidInput, match="has the rating 'Perfect', which the project's scale"):
        judged_qrels(any_ws, changed)


# ---------------------------------------------------------------- leaderboard


def test_leaderboard_values_checked_by_hand(any_ws: Workspace, tmp_path: Path) -> None:
    project = _judged(any_ws, tmp_path)
    board = leaderboard(any_ws, project)
    assert [run.run_id for run in board.runs] == ["runA", "runB"]  # by mean rating
    # runB has no mean rating on t2: judged on 1 of its 2 topics, shown as partial
    assert [(r.covered, r.complete) for r in board.runs] == [(2, True), (1, False)]
    run_a, run_b = board.runs
    a1, a2 = run_a.topics
    # runA t1: ratings 3 and 2; sentences: 0 supported (d1: lower median of 2 and 1 is 1),
    # 1 not (d3 Bad), 2 has no citation (rated: settled, unsupported) → 1 of 3; citations
    # rated: s0 d1 (supports), s0 d2 (3 and 0 → 0), s1 d3 (0) → 1 of 3
    assert (a1.mean_rating, a1.report_judges) == (2.5, 2)
    assert (a1.supported_sentences, a1.settled_sentences) == (pytest.approx(1 / 3), 3)
    assert (a1.citation_precision, a1.rated_citations) == (pytest.approx(1 / 3), 3)
    assert (a2.mean_rating, a2.supported_sentences, a2.citation_precision) == (1.0, 1.0, 1.0)
    assert run_a.all.mean_rating == 1.75
    assert (run_a.all.report_judges, run_a.all.settled_sentences, run_a.all.rated_citations) == (
        3,
        4,
        4,
    )
    assert run_a.all.supported_sentences == pytest.approx((1 / 3 + 1) / 2)
    assert run_a.all.citation_precision == pytest.approx((1 / 3 + 1) / 2)
    b1, b2 = run_b.topics
    # runB t1: s0's only citation carries a comment, no rating: not settled
    assert (b1.mean_rating, b1.supported_sentences, b1.citation_precision) == (0.0, 1.0, 1.0)
    assert b1.settled_sentences == 1
    assert (b2.mean_rating, b2.supported_sentences, b2.citation_precision) == (None, 0.0, 0.0)
    assert (run_b.all.mean_rating, run_b.all.supported_sentences) == (0.0, 0.5)
    assert run_b.all.citation_precision == 0.5
    assert run_b.team_id == "team-runB"

    by_precision = leaderboard(any_ws, project, sort="citation_precision")
    assert [run.run_id for run in by_precision.runs] == ["runA", "runB"]
    only_t2 = leaderboard(any_ws, project, topic_ids=["t2"], sort="supported_sentences")
    assert [(r.run_id, r.all.mean_rating) for r in only_t2.runs] == [("runA", 1.0), ("runB", None)]
    with pytest.raises(NotFound, match="project 'judged' has no judging topic 't9'"):
        leaderboard(any_ws, project, topic_ids=["t9"])
    with pytest.raises(NotFound, match="no judging topic 't9'"):
        judged_qrels(any_ws, project, topic_ids=["t9"])
    with pytest.raises(InvalidInput, match="cannot sort by 'ndcg'"):
        leaderboard(any_ws, project, sort="ndcg")

    assert trec_leaderboard(board).splitlines() == [
        "runA\tmean_rating\tt1\t2.5000",
        "runA\tsupported_sentences\tt1\t0.3333",
        "runA\tcitation_precision\tt1\t0.3333",
        "runA\tmean_rating\tt2\t1.0000",
        "runA\tsupported_sentences\tt2\t1.0000",
        "runA\tcitation_precision\tt2\t1.0000",
        "runB\tmean_rating\tt1\t0.0000",
        "runB\tsupported_sentences\tt1\t1.0000",
        "runB\tcitation_precision\tt1\t1.0000",
        "runB\tsupported_sentences\tt2\t0.0000",
        "runB\tcitation_precision\tt2\t0.0000",
        "runA\tmean_rating\tall\t1.7500",
        "runA\tsupported_sentences\tall\t0.6667",
        "runA\tcitation_precision\tall\t0.6667",
        "runB\tmean_rating\tall\t0.0000",
        "runB\tsupported_sentences\tall\t0.5000",
        "runB\tcitation_precision\tall\t0.5000",
    ]


def test_a_run_judged_on_some_topics_ranks_after_the_complete_ones() -> None:
    """A partial run's mean covers less: a high value on one topic of two does not put it
    ahead of a run judged on all its topics; a run without a value comes last."""
    from assay.judging.leaderboard import RunScores, Scores, ranked

    def run(run_id: str, values: list[float | None]) -> RunScores:
        topics = tuple(
            Scores(f"t{i}", v, None, None, 1, 0, 0) for i, v in enumerate(values, start=1)
        )
        known = [v for v in values if v is not None]
        mean = sum(known) / len(known) if known else None
        overall = Scores("all", mean, None, None, len(known), 0, 0)
        return RunScores(run_id, "team", overall, topics, len(known))

    runs = [run("partial", [3.0, None]), run("none", [None, None]), run("full", [1.0, 2.0])]
    order = ranked(runs, "mean_rating")
    assert [(r.run_id, r.covered, r.complete) for r in order] == [
        ("full", 2, True),
        ("partial", 1, False),
        ("none", 0, False),
    ]


# ---------------------------------------------------------------- agreement


def test_agreement_on_ratings_and_spans_checked_by_hand(any_ws: Workspace, tmp_path: Path) -> None:
    project = _judged(any_ws, tmp_path)
    modes = {m.mode: m for m in judging_agreement(any_ws, project).modes}
    document = modes["document"]
    assert document.judges == ("ann", "bob", "cy")
    overall = document.overall
    # rated by two or more: t1 d1 (3, 2), t1 d2 (0, 0), t1 d3 (1, 3, 0): 5 pairs, 1 agrees
    assert (overall.units, overall.pairs, overall.exact) == (3, 5, 0.2)
    reference = krippendorff.alpha(
        reliability_data=np.array([[3, 0, 1], [2, 0, 3], [np.nan, np.nan, 0]]),
        level_of_measurement="ordinal",
    )
    assert overall.alpha == pytest.approx(reference)
    # spans on t1 d1: "Alpha beta" and "beta gamma" share "beta": 2·4 / (10 + 10)
    assert (overall.span_pairs, overall.spans_f1) == (1, pytest.approx(0.4))
    assert overall.report_spans_f1 is None
    pairs = {(p.first, p.second): p.measures for p in document.pairs}
    assert list(pairs) == [("ann", "bob"), ("ann", "cy"), ("bob", "cy")]
    assert (pairs["ann", "bob"].units, pairs["ann", "bob"].exact) == (3, pytest.approx(1 / 3))
    assert (pairs["ann", "cy"].units, pairs["ann", "cy"].exact) == (1, 0.0)

    citation = modes["citation"].overall
    # t1 runA s0 d1 (2, 1) and s0 d2 (3, 0): no pair agrees; both judges marked the same
    # sentence span on s0 d2
    assert (citation.units, citation.pairs, citation.exact) == (2, 2, 0.0)
    assert (citation.report_span_pairs, citation.report_spans_f1) == (1, 1.0)
    assert (citation.span_pairs, citation.spans_f1) == (0, None)
    report = modes["report"].overall
    assert (report.units, report.pairs, report.exact) == (2, 2, 0.5)  # runA 3/2, runB 0/0


def test_nothing_judged_gives_empty_results(ws: Workspace, tmp_path: Path) -> None:
    project = create_project(ws, "empty")
    topics, runs = _inputs(tmp_path)
    import_judging_inputs(ws, project, topics=topics, runs=[runs])
    assert judged_qrels(ws, project) == {}
    board = leaderboard(ws, project)
    assert [r.run_id for r in board.runs] == ["runA", "runB"]
    assert trec_leaderboard(board) == ""
    assert all(
        m.overall.units == 0 and m.overall.alpha is None
        for m in judging_agreement(ws, project).modes
    )
    assert get_report(ws, project, "t1", "runA").sentences[2].citations == ()


# ---------------------------------------------------------------- the CLI


@pytest.fixture
def judged_home(tmp_path: Path) -> Path:
    home = tmp_path / "ws"
    with Workspace.open(Settings(home=home)) as ws:
        _judged(ws, tmp_path)
    return home


def _cli(home: Path, *args: str) -> Any:
    result = CliRunner().invoke(make_app(), ["--home", str(home), *args])
    return result


def test_cli_leaderboard_in_three_formats(judged_home: Path, tmp_path: Path) -> None:
    table = _cli(judged_home, "judge", "leaderboard")
    assert table.exit_code == 0, table.output
    assert "runs by mean_rating" in table.output and "Perfect 3" in table.output
    rows = [
        line.split()
        for line in table.output.splitlines()
        if line.split()[:1] in (["runA"], ["runB"])
    ]
    assert rows[0][:7] == ["runA", "team-runA", "2", "2", "1.7500", "0.6667", "0.6667"]
    # runB has a mean rating on one of its two topics: covered 1, partial
    assert rows[1][:8] == ["runB", "team-runB", "2", "1", "(partial)", "0.0000", "0.5000", "0.5000"]

    as_json = json.loads(_cli(judged_home, "judge", "leaderboard", "-f", "json").output)
    assert as_json["runs"][0]["all"]["mean_rating"] == 1.75
    assert as_json["runs"][1]["topics"][1]["topic_id"] == "t2"
    assert [run["covered"] for run in as_json["runs"]] == [2, 1]

    out = tmp_path / "leaderboard.txt"
    trec = _cli(judged_home, "judge", "leaderboard", "--format", "trec", "-o", str(out))
    assert trec.exit_code == 0, trec.output
    lines = out.read_text().splitlines()
    assert lines[-3:] == [
        "runB\tmean_rating\tall\t0.0000",
        "runB\tsupported_sentences\tall\t0.5000",
        "runB\tcitation_precision\tall\t0.5000",
    ]
    bad = _cli(judged_home, "judge", "leaderboard", "--format", "csv")
    assert bad.exit_code == 1 and "choose one of table, json, trec" in bad.output
    unsorted = _cli(judged_home, "judge", "leaderboard", "--sort", "ndcg")
    assert unsorted.exit_code == 1 and "cannot sort by 'ndcg'" in unsorted.output


def test_cli_qrels_and_eval_score_a_run_against_the_judgments(
    judged_home: Path, tmp_path: Path
) -> None:
    printed = _cli(judged_home, "judge", "qrels")
    assert printed.exit_code == 0, printed.output
    assert printed.output == "t1 0 d1 2\nt1 0 d2 0\nt1 0 d3 1\nt2 0 d3 2\n"
    only_ann = _cli(judged_home, "judge", "qrels", "--judge", "ann", "--json")
    assert json.loads(only_ann.output) == {"t1": {"d1": 3, "d2": 0, "d3": 1}}
    nobody = _cli(judged_home, "judge", "qrels", "--judge", "zed")
    assert nobody.exit_code == 1 and "zed" in nobody.output
    qrels = tmp_path / "qrels.txt"
    assert _cli(judged_home, "judge", "qrels", "-o", str(qrels)).exit_code == 0

    run = tmp_path / "run.txt"
    run.write_text(
        "t1 Q0 d3 1 3.0 sys\nt1 Q0 d2 2 2.0 sys\nt1 Q0 d1 3 1.0 sys\n"
        "t2 Q0 d1 1 2.0 sys\nt2 Q0 d3 2 1.0 sys\n"
    )
    measures = ["nDCG@10", "P@2", "R@2", "RR", "AP", "Judged@2"]
    expected = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(m) for m in measures],
        list(ir_measures.read_trec_qrels(str(qrels))),
        list(ir_measures.read_trec_run(str(run))),
    )
    metric_args = [a for m in measures for a in ("-m", m)]
    judged = _cli(judged_home, "eval", "--judged", "--run", str(run), "--json", *metric_args)
    assert judged.exit_code == 0, judged.output
    got = json.loads(judged.output)
    assert got["qrels"] == "judgments of project judged" and got["tasks"] == 2
    for measure in measures:
        assert got["metrics"][measure] == pytest.approx(
            expected[ir_measures.parse_measure(measure)]
        ), measure
    # t1: d3 (1) first, d1 (2) third; t2: d3 (2) second: RR = (1 + 1/2) / 2
    assert got["metrics"]["RR"] == 0.75
    from_file = _cli(
        judged_home, "eval", "--qrels", str(qrels), "--run", str(run), "--json", *metric_args
    )
    assert json.loads(from_file.output)["metrics"] == got["metrics"]
    both = _cli(judged_home, "eval", "--judged", "--qrels", str(qrels), "--run", str(run))
    assert both.exit_code == 1 and "not both" in both.output
    no_run = _cli(judged_home, "eval", "--judged")
    assert no_run.exit_code == 1 and "--judged needs --run" in no_run.output


def test_cli_eval_judged_refuses_a_project_without_ratings(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with Workspace.open(Settings(home=home)) as ws:
        create_project(ws, "empty")
    run = tmp_path / "run.txt"
    run.write_text("t1 Q0 d1 1 1.0 sys\n")
    result = _cli(home, "eval", "--judged", "--run", str(run))
    assert result.exit_code == 1 and "has no rated document judgments yet" in result.output


def test_cli_agreement(judged_home: Path) -> None:
    table = _cli(judged_home, "judge", "agreement")
    assert table.exit_code == 0, table.output
    assert "document mode: 3 judge(s)" in table.output
    row = next(line.split() for line in table.output.splitlines() if "ann · cy" in line)
    assert row[3:8] == ["1", "1", "0.0000", "0.0000", "0"]  # one unit, one pair, no span pair
    as_json = json.loads(_cli(judged_home, "judge", "agreement", "--json").output)
    assert [m["mode"] for m in as_json["modes"]] == ["report", "document", "citation"]
    assert as_json["modes"][1]["overall"]["exact"] == 0.2


# ---------------------------------------------------------------- the web


def test_results_page_and_its_json_twins(any_ws: Workspace, tmp_path: Path) -> None:
    project = _judged(any_ws, tmp_path)
    client = client_for(any_ws)
    api = "/api/projects/judged/judging"
    board = client.get(f"{api}/leaderboard")
    assert board.status_code == 200
    assert board.json() == json.loads(json.dumps(to_json(leaderboard(any_ws, project))))
    trec = client.get(f"{api}/leaderboard.trec", params={"topic": ["t2"]})
    assert trec.status_code == 200 and trec.text.startswith("runA\tmean_rating\tt2\t1.0000\n")
    assert "attachment" in trec.headers["content-disposition"]
    unsorted = client.get(f"{api}/leaderboard?sort=nope")
    assert unsorted.status_code == 422 and "cannot sort by 'nope'" in unsorted.json()["detail"]
    qrels = client.get(f"{api}/qrels").json()
    assert qrels["qrels"] == QRELS and qrels["grades"]["Perfect"] == 3
    assert client.get(f"{api}/qrels.trec").text == trec_qrels(QRELS)
    unknown = client.get(f"{api}/qrels", params={"topic": "t9"})
    assert unknown.status_code == 404 and "no judging topic 't9'" in unknown.json()["detail"]
    assert client.get(f"{api}/leaderboard", params={"topic": "t\x00"}).status_code == 422
    agreement = client.get(f"{api}/agreement").json()
    assert agreement["modes"][1]["overall"]["spans_f1"] == pytest.approx(0.4)

    page = client.get("/projects/judged/judging-results?sort=citation_precision")
    assert page.status_code == 200
    html = page.text
    assert html.index(">runA<") < html.index(">runB<")
    assert "1.75" in html and "Krippendorff" in html and 'id="download-qrels"' in html
    assert 'id="agreement-document"' in html and "Documents: ann · bob" in html
    german = client.get("/projects/judged/judging-results", headers={"accept-language": "de"})
    assert "Rangliste" in german.text and "Zitat-Präzision" in german.text


def test_results_page_escapes_ids_and_qrels_are_an_export(
    any_ws: Workspace, tmp_path: Path
) -> None:
    from assay.people.accounts import create_account
    from assay.people.members import set_role
    from assay.people.mode import set_team_mode
    from assay.people.sessions import create_session

    project = _judged(any_ws, tmp_path)
    runs = tmp_path / "evil.jsonl"
    runs.write_text(
        json.dumps(
            {
                "metadata": {
                    "team_id": "<b>t</b>",
                    "run_id": "<img src=x onerror=alert(1)>",
                    "topic_id": "t1",
                },
                "responses": [{"text": "x"}],
            }
        )
        + "\n"
    )
    import_judging_inputs(any_ws, project, runs=[runs])
    vic = create_account(any_ws, "vic", "a long password of vic")
    set_role(any_ws, project.id, vic.id, "viewer")
    create_account(any_ws, "root", "a long password of root", admin=True)
    set_team_mode(any_ws, True)
    viewer = client_for(any_ws, create_session(any_ws, vic.id)[0])
    page = viewer.get("/projects/judged/judging-results")
    assert page.status_code == 200
    assert "<img src=x" not in page.text and "&lt;img src=x onerror=alert(1)&gt;" in page.text
    assert 'id="download-qrels"' not in page.text  # a viewer may not export
    assert viewer.get("/api/projects/judged/judging/leaderboard").status_code == 200
    assert viewer.get("/api/projects/judged/judging/qrels").status_code == 403
    assert viewer.get("/api/projects/judged/judging/qrels.trec").status_code == 403


def test_eval_judged_reads_the_qrels_of_a_team_server(any_ws: Workspace, tmp_path: Path) -> None:
    from assay.people.accounts import create_account
    from assay.people.members import set_role
    from assay.people.mode import set_team_mode
    from assay.people.tokens import create_token
    from tests.conftest import LiveServer
    from tests.test_cli_remote import Team

    project = _judged(any_ws, tmp_path)
    create_account(any_ws, "root", "a long password of root", admin=True)
    set_team_mode(any_ws, True)
    lead = create_account(any_ws, "lena", "a long password of lena")
    set_role(any_ws, project.id, lead.id, "lead")
    token, _ = create_token(any_ws, lead.id, "ci", "read")
    run = tmp_path / "run.txt"
    run.write_text("t1 Q0 d3 1 3.0 sys\nt1 Q0 d1 2 2.0 sys\nt2 Q0 d3 1 1.0 sys\n")
    with LiveServer(any_ws) as server:
        team = Team(any_ws, server.url, token, token, token, tmp_path)
        done = team.assay("eval", "--judged", "--run", str(run), "-m", "RR", "-m", "P@1", "--json")
    assert done.code == 0, done.err
    got = json.loads(done.out)
    assert got["qrels"] == "judgments of project judged"
    assert got["metrics"] == {"RR": 1.0, "P@1": 1.0}  # d3 is relevant in both topics
