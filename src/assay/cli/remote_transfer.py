"""``assay import``, ``export`` and ``eval`` against a server (:mod:`assay.cli.remote`).

Import uploads the file (a folder zipped) and follows the server's import job; export starts
an export job, follows it and downloads its file (a folder format's zip unpacked at PATH);
eval downloads the gold set in Assay's own format (native), loads it into a throwaway local
workspace and scores there with the local code, so the numbers and exit codes are those of a
local ``assay eval``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.cli.common import escape, fail
from assay.cli.remote import Server, project_path

COPY_LIMIT_MB = 1024.0 * 1024
"""File limit of the local copy of a gold set: the server has accepted its files already."""

if TYPE_CHECKING:
    from assay.records import Project
    from assay.store.workspace import Workspace
    from assay.transfer.project_export import ExportOptions


def import_file(
    server: Server,
    format_name: str,
    path: Path,
    project: str | None,
    *,
    replace: bool,
    lenient: bool,
    status: str | None,
) -> dict[str, Any]:
    """Upload ``path`` into ``project`` (created when missing); the import report's JSON."""
    if not path.exists():
        fail(escape(f"{path}: no such file or folder"))
    target = server.project(project)
    if target not in server.projects():
        server.json("POST", "/api/projects", json={"name": target})
    fields = {
        "format": format_name,
        "replace": str(replace).lower(),
        "lenient": str(lenient).lower(),
        "status": status or "",
    }
    if replace:
        fields["confirm"] = "replace"
    with tempfile.TemporaryDirectory(prefix="assay-upload-") as tmp:
        upload, name = path, path.name
        if path.is_dir():  # folder formats travel as a zip of the folder
            upload = Path(shutil.make_archive(str(Path(tmp) / "upload"), "zip", path))
            name = f"{path.name or 'upload'}.zip"
        job = server.upload(project_path(target, "transfer", "imports"), upload, name, fields)
    job = server.follow_job(target, job, f"Importing {path.name}")
    result: dict[str, Any] = job["result"]
    return result


def export_file(
    server: Server, path: Path, project: str | None, options: ExportOptions
) -> dict[str, Any]:
    """Export on the server (the same options as here) and write the file (or unpack the
    folder) at ``path``."""
    format_name = options.format
    target = server.project(project)
    folder = any(
        f["name"] == format_name and f["folder"] for f in server.json("GET", "/api/formats")
    )
    if not folder and path.is_dir():
        fail(escape(f"{path} is a folder; the {format_name} format writes one file"))
    body = options.to_json()
    body["statuses"] = body["statuses"] or None
    del body["items"]
    job = server.json("POST", project_path(target, "transfer", "exports"), json=body)
    job = server.follow_job(target, job, f"Exporting {format_name}")
    with tempfile.TemporaryDirectory(prefix="assay-download-", dir=_parent(path)) as tmp:
        archive = Path(tmp) / "download"
        server.download(job["download"], archive)
        if folder:  # into PATH as a local export writes it: its files replaced, others kept
            from assay.transfer.files import unpack

            shutil.copytree(unpack(archive, Path(tmp) / "unpacked"), path, dirs_exist_ok=True)
        else:
            archive.replace(path)
    result: dict[str, Any] = job["result"]
    return result


def _parent(path: Path) -> Path:
    """The folder PATH goes into (made if missing), so the last step is a rename."""
    parent = path.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def _documents(server: Server, project: str) -> dict[str, str]:
    """The server's document ids by name, every page."""
    names: dict[str, str] = {}
    offset = 0
    while True:
        page = server.json(
            "GET", project_path(project, "documents"), params={"offset": offset, "limit": 500}
        )
        for doc in page["documents"]:
            names[str(doc["id"])] = str(doc["name"])
        offset += len(page["documents"])
        if not page["documents"] or offset >= int(page["total"]):
            return names


@contextmanager
def gold_workspace(
    server: Server, project: str | None, status: str
) -> Iterator[tuple[Workspace, Project, dict[str, str]]]:
    """The server project's items of ``status`` in a throwaway local workspace, and the
    server's document ids mapped onto the local ones (imports give documents new ids)."""
    from assay.corpus.documents import list_documents
    from assay.formats import get_format
    from assay.store.projects import get_project
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace
    from assay.transfer import import_bundle
    from assay.transfer.project_export import ExportOptions

    target = server.project(project)
    with tempfile.TemporaryDirectory(prefix="assay-gold-") as tmp:
        archive = Path(tmp) / "gold.zip"
        export_file(
            server, archive, target, ExportOptions("native", statuses=[status], allow_empty=True)
        )
        settings = Settings(home=Path(tmp) / "ws", database_url="", max_file_mb=COPY_LIMIT_MB)
        ws = Workspace.open(settings, create=True)
        try:
            import_bundle(ws, target, get_format("native").read(archive))
            local = get_project(ws, target)
            here = {d.name: d.id for d in list_documents(ws, local)}
            ids = {
                theirs: here[name]
                for theirs, name in _documents(server, target).items()
                if name in here
            }
            yield ws, local, ids
        finally:
            ws.close()


def local_id(ids: dict[str, str], value: str) -> str:
    """A server document or chunk id (``DOC#N``) as the id of the local copy."""
    doc, sep, rest = value.partition("#")
    return ids[doc] + sep + rest if doc in ids else value


def translate_run(source: Path, ids: dict[str, str], target: Path) -> Path:
    """The run file with the server's ids turned into the local copy's."""
    from assay.experiments.runfiles import ranking, read_run

    lines = []
    for qid, scores in read_run(source).items():
        for rank, (docid, score) in enumerate(ranking(scores), start=1):
            lines.append(f"{qid} Q0 {local_id(ids, docid)} {rank} {score!r} remote\n")
    target.write_text("".join(lines), encoding="utf-8")
    return target


def translate_answers(source: Path, ids: dict[str, str], target: Path) -> Path:
    """The answers file with the server's document and chunk ids turned into the local ones."""
    import json

    from assay.experiments.runfiles import read_answers

    lines = []
    for key, record in read_answers(source).items():
        contexts = [
            {k: local_id(ids, v) if k in ("doc_id", "chunk_id") and v else v for k, v in c.items()}
            for c in record["contexts"]
        ]
        line = {"task_id": key, "answer": record["answer"], "contexts": contexts}
        lines.append(json.dumps(line, ensure_ascii=False) + "\n")
    target.write_text("".join(lines), encoding="utf-8")
    return target
