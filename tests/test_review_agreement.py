"""Agreement read from the store (assay.review.agreement), on SQLite and PostgreSQL: values
equal scikit-learn, statsmodels and krippendorff on the same data, and hand-made passages."""

from __future__ import annotations

import json

import numpy as np
import pytest

from assay.corpus.chunkings import create_chunking
from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, get_item, save_item, set_status
from assay.people.accounts import create_account
from assay.records import Document, Evidence, Item, Project, Turn
from assay.review.agreement import agreement_report
from assay.review.copies import copy_item
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.test_metrics_agreement import oracle

SENTENCES = [
    "Hotels are refunded up to 140 euros per night.",
    "Trains are booked in second class.",
    "First class is allowed from four hours.",
    "Taxis need a receipt.",
    "Meals are paid as a daily allowance.",
]
TEXT = " ".join(SENTENCES) + "\n"


def setup(ws: Workspace, names: list[str]) -> tuple[Project, Document, dict[str, int]]:
    project = create_project(ws, "p")
    doc = ingest_bytes(ws, project, "policy.txt", TEXT.encode())
    create_chunking(ws, project, "sent", "sentences", {"sentences": 1})
    accounts = {n: create_account(ws, n, f"a long password of {n}").id for n in names}
    return project, doc, accounts


def turn(doc: Document, query_type: str, relevant: dict[int, int | None], answer: str) -> Turn:
    """``relevant`` maps a sentence number to its group (None: a group of its own)."""
    evidence = [Evidence(doc_id=doc.id, text=SENTENCES[s], group=g) for s, g in relevant.items()]
    return Turn(query="What is refunded?", query_type=query_type, answer=answer, evidence=evidence)


def hand_in(ws: Workspace, project: Project, copy_id: str, content: Turn, annotator: int) -> None:
    stored = get_item(ws, project, copy_id)
    saved = save_item(ws, project, copy_id, Item(turns=[content]), stored.version, author=annotator)
    set_status(ws, project, copy_id, "submitted", saved.version, actor=annotator)


def test_passages_spans_groups_and_answers_on_a_hand_made_item(any_ws: Workspace) -> None:
    project, doc, who = setup(any_ws, ["ada", "bob", "cy"])
    original = create_item(any_ws, project, Item(turns=[Turn(query="What is refunded?")]))
    copies = {name: copy_item(any_ws, project, original.id, who[name]) for name in who}
    # ada: sentences 0, 1, 2 all alternatives; bob: 1 and 2, each needed
    ada = turn(doc, "fact_single", {0: 1, 1: 1, 2: 1}, "Up to 140 euros.")
    bob = turn(doc, "summary", {1: None, 2: None}, "140 euros per night")
    hand_in(any_ws, project, copies["ada"], ada, who["ada"])
    hand_in(any_ws, project, copies["bob"], bob, who["bob"])
    # cy's copy stays a draft: left out, counted

    on_chunks = agreement_report(any_ws, project, chunking="sent")
    assert (on_chunks.copies, on_chunks.not_handed_in, on_chunks.annotators) == (
        2,
        1,
        ["ada", "bob"],
    )
    [pair] = on_chunks.pairs
    assert pair.name == "ada / bob"
    m = pair.measures
    assert (m.units, m.comparisons) == (1, 1)
    assert m.passages_jaccard == pytest.approx(2 / 3)  # chunks {0,1,2} vs {1,2}
    assert m.passages_f1 == pytest.approx(4 / 5)
    assert m.groups_f1 == 0.0  # shared {1,2}: ada pairs them, bob does not
    assert m.answer_token_f1 == pytest.approx(0.5)
    assert m.query_type.observed == 0.0

    lengths = [len(s) for s in SENTENCES]
    on_chars = agreement_report(any_ws, project).pairs[0].measures
    shared, ada = lengths[1] + lengths[2], lengths[0] + lengths[1] + lengths[2]
    assert on_chars.passages_f1 == pytest.approx(2 * shared / (ada + shared))
    assert on_chars.passages_jaccard == pytest.approx(shared / ada)
    assert on_chars.spans_f1 == pytest.approx(2 * shared / (ada + shared))
    assert on_chars.groups_f1 == 0.0  # exact spans as passages: the same pairs
    assert agreement_report(any_ws, project).query_types[0].name == "fact_single"  # tie: sorted


def test_categories_equal_the_reference_implementations(any_ws: Workspace) -> None:
    metrics = oracle("sklearn.metrics")
    inter_rater = oracle("statsmodels.stats.inter_rater")
    krippendorff = oracle("krippendorff")
    names = ["ada", "bob", "cy"]
    project, doc, who = setup(any_ws, names)
    types = ["fact_single", "summary", "reasoning", "unanswerable"]
    rng = np.random.default_rng(14)
    chosen: dict[str, list[str]] = {n: [] for n in names}
    for _ in range(12):
        original = create_item(any_ws, project, Item(turns=[Turn(query="What is refunded?")]))
        truth = types[int(rng.integers(0, 4))]
        for name in names:
            label = truth if rng.random() < 0.6 else types[int(rng.integers(0, 4))]
            chosen[name].append(label)
            copy_id = copy_item(any_ws, project, original.id, who[name])
            relevant = {} if label == "unanswerable" else {int(rng.integers(0, 5)): None}
            hand_in(any_ws, project, copy_id, turn(doc, label, relevant, "Yes."), who[name])

    report = agreement_report(any_ws, project)
    pairs = {row.name: row.measures for row in report.pairs}
    for first, second in [("ada", "bob"), ("ada", "cy"), ("bob", "cy")]:
        m = pairs[f"{first} / {second}"]
        a, b = chosen[first], chosen[second]
        assert m.query_type.kappa == pytest.approx(metrics.cohen_kappa_score(a, b), abs=1e-12)
        flags_a = [t == "unanswerable" for t in a]
        flags_b = [t == "unanswerable" for t in b]
        expected = metrics.cohen_kappa_score(flags_a, flags_b)
        assert m.unanswerable.kappa == pytest.approx(expected, abs=1e-12)
        assert m.query_type.observed == pytest.approx(np.mean(np.array(a) == np.array(b)))

    codes = {t: i for i, t in enumerate(types)}
    data = np.array([[codes[t] for t in chosen[n]] for n in names], dtype=float)
    table = np.array([np.bincount(data[:, u].astype(int), minlength=4) for u in range(12)])
    overall = report.overall
    assert overall.units == 12 and overall.comparisons == 36
    fleiss = inter_rater.fleiss_kappa(table, method="fleiss")
    assert overall.query_type.kappa == pytest.approx(fleiss, abs=1e-12)
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert overall.query_type.alpha == pytest.approx(alpha, abs=1e-12)
    assert sum(row.measures.units for row in report.query_types) == 12


def test_annotators_against_the_adjudicated_gold(any_ws: Workspace) -> None:
    metrics = oracle("sklearn.metrics")
    project, doc, who = setup(any_ws, ["ada", "bob"])
    gold_types = ["fact_single", "summary", "summary", "reasoning"]
    ada_types = ["fact_single", "summary", "reasoning", "reasoning"]
    for number, (gold_type, ada_type) in enumerate(zip(gold_types, ada_types, strict=True)):
        original = create_item(any_ws, project, Item(turns=[Turn(query="What is refunded?")]))
        for name, label in (("ada", ada_type), ("bob", gold_type)):
            copy_id = copy_item(any_ws, project, original.id, who[name])
            hand_in(any_ws, project, copy_id, turn(doc, label, {0: None}, "Yes."), who[name])
        if number < 3:  # the last one waits for adjudication: no gold yet
            gold = turn(doc, gold_type, {0: None}, "Yes.")
            save_item(any_ws, project, original.id, Item(turns=[gold]), 1, action="adjudicate")

    report = agreement_report(any_ws, project)
    assert report.adjudicated == 3
    gold = {row.name: row.measures for row in report.gold}
    assert gold["bob"].query_type.observed == 1.0
    assert gold["ada"].units == 3
    expected = metrics.cohen_kappa_score(ada_types[:3], gold_types[:3])
    assert gold["ada"].query_type.kappa == pytest.approx(expected, abs=1e-12)
    assert gold["ada"].passages_f1 == 1.0
    by_type = {row.name: row.measures.units for row in report.query_types}
    assert by_type == {"fact_single": 1, "summary": 2, "reasoning": 1}  # gold's type when there


def test_unknown_chunking_is_a_clear_error(any_ws: Workspace) -> None:
    project, _, _ = setup(any_ws, [])
    with pytest.raises(Exception, match="no chunking named 'nope'"):
        agreement_report(any_ws, project, chunking="nope")
    empty = agreement_report(any_ws, project)
    assert (empty.originals, empty.pairs, empty.overall.passages_f1) == (0, [], None)


def test_the_agreement_command(ws: Workspace) -> None:
    from typer.testing import CliRunner

    from assay.cli import make_app

    project, doc, who = setup(ws, ["ada", "bob"])
    original = create_item(ws, project, Item(turns=[Turn(query="What is refunded?")]))
    for name, label in (("ada", "fact_single"), ("bob", "summary")):
        copy_id = copy_item(ws, project, original.id, who[name])
        hand_in(ws, project, copy_id, turn(doc, label, {0: None}, "Yes."), who[name])
    home = str(ws.settings.home)

    def run(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(make_app(), ["--home", home, "agreement", *args])

    table = run("p", "--chunking", "sent")
    assert table.exit_code == 0, table.output
    assert "per annotator pair" in table.output and "ada / bob" in table.output
    assert "passages compared by chunks of sent" in table.output
    as_json = run("--json")  # the only project
    assert as_json.exit_code == 0
    report = json.loads(as_json.output)
    assert report["pairs"][0]["measures"]["query_type"]["observed"] == 0.0
    assert report["chunking"] is None
    unknown = run("p", "--chunking", "nope")
    assert unknown.exit_code != 0 and "no chunking named 'nope'" in unknown.output
