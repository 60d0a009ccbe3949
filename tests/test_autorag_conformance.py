"""AutoRAG exports load with AutoRAG's own code: ``cast_qa_dataset``, ``cast_corpus_dataset``
and ``validate_qa_from_corpus_dataset`` from the ``autorag`` package (installed ``--no-deps``
by the Makefile, see the ``oracle`` extra).

Those functions need only pandas and numpy, but ``import autorag`` pulls in LLM libraries, so
the module's source file is loaded directly. Its one import from the package,
``preprocess_text`` (Unicode NFC plus emoji names, from a module that needs llama-index), is
stood in for by NFC alone: the ``emoji`` package is not installed, and none of these texts
hold emoji.
"""

from __future__ import annotations

import importlib.util
import sys
import unicodedata
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from assay.demo import gold_items, open_demo
from assay.formats import get_format
from assay.formats.autorag import read
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from tests.conftest import missing


@pytest.fixture
def autorag(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """AutoRAG's ``autorag/utils/preprocess.py``, loaded from its file."""
    spec = importlib.util.find_spec("autorag")
    if spec is None or not spec.submodule_search_locations:
        missing("autorag is not installed (pip install --no-deps autorag, as the Makefile does)")
    assert spec is not None and spec.submodule_search_locations is not None
    source = Path(next(iter(spec.submodule_search_locations))) / "utils" / "preprocess.py"
    util = ModuleType("autorag.utils.util")
    util.preprocess_text = lambda text: unicodedata.normalize("NFC", text)  # type: ignore[attr-defined]
    for name, module in (
        ("autorag", ModuleType("autorag")),
        ("autorag.utils", ModuleType("autorag.utils")),
        ("autorag.utils.util", util),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    loaded = importlib.util.spec_from_file_location("autorag_preprocess", source)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module


def load_as_autorag(autorag: ModuleType, folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What AutoRAG does with a dataset folder before it evaluates anything."""
    qa = autorag.cast_qa_dataset(pd.read_parquet(folder / "qa.parquet"))
    corpus = autorag.cast_corpus_dataset(pd.read_parquet(folder / "corpus.parquet"))
    autorag.validate_qa_from_corpus_dataset(qa, corpus)
    return qa, corpus


def test_demo_export_loads_in_autorag(ws: Workspace, tmp_path: Path, autorag: ModuleType) -> None:
    project, _ = open_demo(ws, with_items=True)
    out = tmp_path / "demo"
    notes = get_format("autorag").write(export_bundle(ws, project), out)
    qa, corpus = load_as_autorag(autorag, out)
    left_out = [n for n in notes if "left out of qa.parquet" in n]
    unanswerable = [i for i in gold_items() if i["query_type"] == "unanswerable"]
    assert len(left_out) >= len(unanswerable) > 0
    assert len(qa) + len(left_out) == len(gold_items())
    assert len(corpus) > 0
    written = pd.read_parquet(out / "corpus.parquet")["metadata"]  # dates are ours, not now()
    assert written.map(lambda m: m["last_modified_datetime"] is not None).all()
    # a dataset AutoRAG cannot load: the same export with the unanswerable questions in it
    get_format("autorag").write(
        export_bundle(ws, project), tmp_path / "all", include_unanswerable=True
    )
    with pytest.raises(IndexError):
        load_as_autorag(autorag, tmp_path / "all")


def test_imported_autorag_dataset_exports_loadable(
    ws: Workspace, tmp_path: Path, shared_fixtures: Path, autorag: ModuleType
) -> None:
    source = shared_fixtures / "autorag"
    original_qa, original_corpus = load_as_autorag(autorag, source)
    import_bundle(ws, "auto", read(source))
    out = tmp_path / "out"
    assert get_format("autorag").write(export_bundle(ws, get_project(ws, "auto")), out) == []
    qa, corpus = load_as_autorag(autorag, out)
    assert sorted(qa["qid"]) == sorted(original_qa["qid"])
    assert sorted(corpus["doc_id"]) == sorted(original_corpus["doc_id"])
