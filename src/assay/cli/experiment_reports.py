"""Reports of finished experiments: ``assay experiments compare`` (two experiments,
differences sorted), ``judge-agreement`` (an LLM judge against people's labels) and
``export-inspectorraget``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from assay.cli import remote
from assay.cli.common import (
    JsonOption,
    ProjectOption,
    command,
    console,
    escape,
    fail,
    print_json,
    project_of,
    run,
)


def register(group: typer.Typer) -> None:
    command(group, "compare", compare)
    command(group, "judge-agreement", judge_agreement_command)
    command(group, "export-inspectorraget", export_inspectorraget)


def _number(value: Any, signed: bool = False) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:+.4f}" if signed else f"{value:.4f}"
    return "–" if value is None else str(value)


def compare(
    ctx: typer.Context,
    first: str = typer.Argument(..., metavar="A", help="The first experiment (name or id)."),
    second: str = typer.Argument(..., metavar="B", help="The second experiment (name or id)."),
    pipeline_a: str = typer.Option(None, "--pipeline-a", help="Pipeline of A (default: first)."),
    pipeline_b: str = typer.Option(None, "--pipeline-b", help="Pipeline of B (default: first)."),
    metric: str = typer.Option(
        None, "--metric", help="Metric of the per-task list (default: the most different)."
    ),
    tasks: int = typer.Option(10, "--tasks", min=0, help="Tasks to list (largest differences)."),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """Compare two experiments: per metric, per query type and per task, each sorted by the
    size of the difference B - A (largest first). Per metric a paired significance test
    over the tasks both scored: the randomisation test (10,000 rounds, seed 0) and the
    paired t-test, with the number of tasks; a difference with p >= 0.05 is marked
    "not significant"."""
    from assay.experiments.compare import compare_experiments

    server = remote.server(ctx)
    if server is not None:
        params = {"a": first, "b": second, "pa": pipeline_a, "pb": pipeline_b, "metric": metric}
        path = remote.project_path(server.project(project), "compare-experiments")
        data = server.json("GET", path, params={k: v for k, v in params.items() if v})
    else:
        data = run(
            ctx,
            lambda ws: compare_experiments(
                ws,
                project_of(ws, project),
                first,
                second,
                pipeline_a=pipeline_a,
                pipeline_b=pipeline_b,
                metric=metric,
            ),
        )
    if as_json:
        print_json(data)
        return
    out = console()
    a, b = data["a"], data["b"]
    out.print(f"A: {a['name']} / {a['pipeline']} ({a['scored_tasks']} scored)", markup=False)
    out.print(f"B: {b['name']} / {b['pipeline']} ({b['scored_tasks']} scored)", markup=False)
    out.print(
        "\nmetric                     A          B      B - A  paired  p (rand.)    p (t)",
        markup=False,
    )
    for row in data["metrics"]:
        test = row.get("test") or {}
        verdict = "" if test.get("significant") or test.get("n", 0) < 2 else "  not significant"
        out.print(
            f"{row['metric']:<20} {_number(row['a']):>10} {_number(row['b']):>10} "
            f"{_number(row['diff'], True):>10} {test.get('n', 0):>7} "
            f"{_number(test.get('p_randomisation')):>10} {_number(test.get('p_t')):>8}{verdict}",
            markup=False,
        )
    if "significance" in data:
        rule = data["significance"]
        out.print(
            f"paired: tasks both scored; p (rand.): paired randomisation test "
            f"({rule['rounds']} rounds, seed {rule['seed']}); p (t): paired t-test; not "
            f"significant: p (rand.) >= {rule['alpha']}",
            markup=False,
        )
    per_task = data["tasks"]
    if per_task["metric"] and tasks:
        out.print(
            f"\n{per_task['metric']} per task ({per_task['shared']} shared, "
            f"{per_task['differing']} differ):",
            markup=False,
        )
        for row in per_task["rows"][:tasks]:
            out.print(
                f"{_number(row['diff'], True):>10}  {row['task_id']}  {row['query'][:70]}",
                markup=False,
            )


def judge_agreement_command(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="EXPERIMENT", help="Experiment name or id."),
    mapping: list[str] = typer.Option(
        [], "--map", metavar="HUMAN=JUDGE", help="Read a human label as the judge's (repeat)."
    ),
    project: str = ProjectOption,
    as_json: bool = JsonOption,
) -> None:
    """How an experiment's LLM judge agrees with people's labels of the same tasks (gold
    items, judged reports, imported human scores): Cohen's kappa, confusion matrix,
    precision and recall per label, examples of disagreement."""
    from assay.errors import InvalidInput
    from assay.experiments.judge_agreement import judge_agreement, parse_mapping

    try:
        pairs = parse_mapping(mapping)
    except InvalidInput as exc:
        fail(escape(f"--{exc}"))
    server = remote.server(ctx)
    if server is not None:
        path = remote.project_path(server.project(project), "experiments", name, "judge-agreement")
        data = server.json("GET", path, params={"map": [f"{k}={v}" for k, v in pairs.items()]})
    else:
        data = run(
            ctx, lambda ws: judge_agreement(ws, project_of(ws, project), name, mapping=pairs)
        )
    if as_json:
        print_json(data)
        return
    out = console()
    if not data["judge_metrics"]:
        out.print(f"Experiment {data['name']!r} has no LLM judge metric.", markup=False)
        return
    if not data["reports"]:
        out.print("No human labels share a label with the judge's values (try --map).")
    for report in data["reports"]:
        out.print(
            f"\n{report['judge_metric']} against {report['source']}: {report['pairs']} tasks, "
            f"kappa {_number(report['kappa'])}, agreement {_number(report['accuracy'])}",
            markup=False,
        )
        labels = report["labels"]
        out.print("people \\ judge  " + "  ".join(f"{x:>8}" for x in labels), markup=False)
        for label, row in zip(labels, report["confusion"], strict=True):
            out.print(f"{label:<15} " + "  ".join(f"{n:>8}" for n in row), markup=False)
        for scores in report["per_label"]:
            out.print(
                f"  {scores['label']}: precision {_number(scores['precision'])}, recall "
                f"{_number(scores['recall'])}, F1 {_number(scores['f1'])}, support "
                f"{scores['support']}",
                markup=False,
            )
        for case in report["disagreements"][:3]:
            out.print(
                f"  judge {case['judge']!r}, people {case['human']!r}: {case['task_id']} "
                f"({case['pipeline']}) {case['query'][:60]}",
                markup=False,
            )


def export_inspectorraget(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="EXPERIMENT", help="Experiment name or id."),
    path: Path = typer.Argument(..., metavar="PATH", help="The JSON file to write."),
    project: str = ProjectOption,
) -> None:
    """Write an experiment as an InspectorRAGet file (schema version 2)."""
    from assay.transfer.experiment_file import experiment_to_inspectorraget

    server = remote.server(ctx)
    if server is not None:
        from assay.cli import remote_experiments

        data = remote_experiments.inspectorraget(server, project, name)
    else:
        data = run(ctx, lambda ws: experiment_to_inspectorraget(ws, project_of(ws, project), name))
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    console().print(
        f"Wrote {path}: {len(data['models'])} model(s), {len(data['tasks'])} task(s), "
        f"{len(data['results'])} result(s)."
    )
