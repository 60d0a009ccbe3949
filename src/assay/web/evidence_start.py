"""A new item started from a passage of a document: the editor opens with the question empty
and that passage marked relevant, nothing stored until the annotator saves."""

from __future__ import annotations

from typing import Any

from assay.corpus.documents import get_document
from assay.errors import InvalidInput
from assay.gold.items import editable_json
from assay.records import Evidence, Item, Project, Turn
from assay.store.workspace import Workspace


def passage_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """``start`` and ``end`` checked against ``text`` and moved inwards past white space."""
    if not 0 <= start < end <= len(text):
        raise InvalidInput(
            f"start and end must satisfy 0 <= start < end <= {len(text)} (the length of the "
            f"document's text); got start={start}, end={end}"
        )
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        raise InvalidInput(f"the passage {start}-{end} holds only white space")
    return start, end


def started_item(
    ws: Workspace, project: Project, doc_id: str, start: int, end: int, query_type: str
) -> dict[str, Any]:
    """The editor's payload (``input``, ``documents``, ``findings``) of an unsaved item whose
    one turn has the passage ``text[start:end]`` of the document as relevant evidence."""
    document = get_document(ws, project, doc_id)
    start, end = passage_bounds(document.text, start, end)
    passage = Evidence(
        doc_id=document.id,
        start=start,
        end=end,
        text=document.text[start:end],
        label="relevant",
        group=1,
        origin="selected",
        anchor="ok",
    )
    item = Item(turns=[Turn(query_type=query_type, evidence=[passage])])
    return {"input": editable_json(item), "documents": {document.id: document.name}, "findings": []}
