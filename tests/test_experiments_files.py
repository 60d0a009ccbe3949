"""Run and answers files of experiments: uploaded and stored by sha256, never read from a
path a request names; errors name the file and line and never repeat its content."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.experiments import (
    create_experiment,
    get_experiment,
    keep_file,
    keep_local_file,
    list_experiments,
    run_experiment,
)
from assay.experiments.runfiles import file_store
from assay.records import Project
from assay.store.file_schema import stored_files
from assay.store.schema import experiments
from assay.store.workspace import Workspace
from tests.experiments_corpus import Corpus, build_corpus

SECRET = "root:x:0:0:secret-line"


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Corpus:
    return build_corpus(ws, project)


def _stored(ws: Workspace) -> list[Path]:
    return [p for p in file_store(ws).root.glob("*/*")] if file_store(ws).root.exists() else []


@pytest.mark.parametrize("field", ["run_file", "answers_file"])
def test_a_path_in_a_pipeline_is_refused_before_anything_is_read(
    ws: Workspace, corpus: Corpus, tmp_path: Path, field: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    database = ws.settings.home / "assay.db"
    for path in (str(secret), "/etc/passwd", str(database.resolve()), "assay.db"):
        spec = {"name": "files", "kind": "file", field: path}
        with pytest.raises(InvalidInput, match="not read from paths on the server") as caught:
            create_experiment(ws, corpus.project, "attack", pipelines=[spec], mode="rag")
        assert SECRET not in str(caught.value) and "root:" not in str(caught.value)
    assert list_experiments(ws, corpus.project) == []
    assert _stored(ws) == []


def test_a_bad_upload_names_file_and_line_but_never_its_content(ws: Workspace) -> None:
    run = f"q1 Q0 d1 1 2.5 t\n{SECRET}\n".encode()
    with pytest.raises(InvalidInput) as caught:
        keep_file(ws, run, "/home/me/runs/system-a.txt", "run")
    message = str(caught.value)
    assert message.startswith("system-a.txt, line 2: a run line has 6 fields")
    assert "secret" not in message and "/home/me" not in message
    answers = f'{{"task_id": "q1", "answer": "ok"}}\n{{"{SECRET}": 1, bad\n'.encode()
    with pytest.raises(InvalidInput, match=r"^answers.jsonl, line 2: not valid JSON") as caught:
        keep_file(ws, answers, "answers.jsonl", "answers")
    assert "secret" not in str(caught.value)
    with pytest.raises(InvalidInput, match="not UTF-8"):
        keep_file(ws, b"\xff\xfe\x00binary", "x.bin", "run")
    with pytest.raises(InvalidInput, match="unknown file kind 'qrels'; kinds: run, answers"):
        keep_file(ws, b"q1 Q0 d1 1 1 t\n", "run.txt", "qrels")
    assert _stored(ws) == []  # nothing of a refused file is kept


def test_uploaded_run_file_runs_end_to_end(ws: Workspace, corpus: Corpus) -> None:
    item = corpus.items[0]
    data = f"{item.id} Q0 leave.txt 1 2 t\n".encode()
    ref, queries = keep_file(ws, data, "C:\\runs\\mine.txt", "run")
    assert ref.name == "mine.txt" and queries == 1
    assert ref.sha256 == hashlib.sha256(data).hexdigest()
    spec = {"name": "files", "kind": "file", "run_file": ref.model_dump()}
    created = create_experiment(ws, corpus.project, "uploaded", pipelines=[spec])
    assert created.pipelines[0]["run_file"] == {"sha256": ref.sha256, "name": "mine.txt"}
    done = run_experiment(ws, corpus.project, created.id)
    assert done.status == "done" and done.done_count == 1


def test_a_local_file_is_stored_not_referred_to(
    ws: Workspace, corpus: Corpus, tmp_path: Path
) -> None:
    item = corpus.items[0]
    local = tmp_path / "run.txt"
    local.write_text(f"{item.id} Q0 leave.txt 1 2 t\n")
    spec = {"name": "files", "kind": "file", "run_file": local}
    created = create_experiment(ws, corpus.project, "local", pipelines=[spec])
    local.unlink()  # the experiment holds its own copy
    assert str(tmp_path) not in str(created.pipelines)
    assert run_experiment(ws, corpus.project, created.id).done_count == 1
    with pytest.raises(InvalidInput, match="file not found"):
        keep_local_file(ws, tmp_path / "missing.txt", "run")


def test_a_stored_file_that_went_missing_fails_the_run_clearly(
    ws: Workspace, corpus: Corpus
) -> None:
    ref, _ = keep_file(ws, f"{corpus.items[0].id} Q0 d1 1 1 t\n".encode(), "gone.txt", "run")
    spec = {"name": "gone", "kind": "file", "run_file": ref.model_dump()}
    created = create_experiment(ws, corpus.project, "broken", pipelines=[spec])
    file_store(ws).path(ref.sha256).unlink()
    with ws.engine.begin() as conn:  # on PostgreSQL the database keeps a copy: gone there too
        conn.execute(stored_files.delete())
    failed = run_experiment(ws, corpus.project, created.id)
    assert failed.status == "failed"
    assert "'gone.txt' is no longer stored in this workspace; upload it again" in failed.message
    assert str(ws.settings.home) not in failed.message


def test_an_experiment_stored_with_a_path_asks_for_an_upload(
    ws: Workspace, corpus: Corpus, tmp_path: Path
) -> None:
    """Experiments created before uploads hold a path: they are kept, show no server path,
    and fail with a message that says what to do, without opening the file."""
    ref, _ = keep_file(ws, f"{corpus.items[0].id} Q0 d1 1 1 t\n".encode(), "run.txt", "run")
    spec = {"name": "old", "kind": "file", "run_file": ref.model_dump()}
    created = create_experiment(ws, corpus.project, "legacy", pipelines=[spec])
    secret = tmp_path / "private" / "run.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    stored = [{**created.pipelines[0], "run_file": str(secret)}]
    with ws.engine.begin() as conn:
        conn.execute(
            experiments.update().where(experiments.c.id == created.id).values(pipelines=stored)
        )
    shown = get_experiment(ws, corpus.project, created.id)
    assert shown.pipelines[0]["run_file"] == "run.txt"  # the folder is not shown
    failed = run_experiment(ws, corpus.project, created.id)
    assert failed.status == "failed"
    assert "pipeline 'old': run_file: files are not read from paths" in failed.message
    assert "upload the file" in failed.message
    assert str(tmp_path) not in failed.message and "secret" not in failed.message
    with ws.engine.connect() as conn:  # the stored record itself is left as it was
        kept = conn.scalar(sa.select(experiments.c.pipelines).where(experiments.c.id == created.id))
    assert kept == stored
