"""A generated production log about the demo documents, to try the candidates path on.

For each document, a few of its sentences become questions ("What does the travel policy say
about …?") with the sentence as the retrieved passage, some asked again in other words, some
with a thumbs-down, some as a follow-up in a session, and now and then a passage from no
document at all and an e-mail address to mask. Deterministic for a seed.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import PurePosixPath

from assay.corpus.documents import get_document, list_documents
from assay.records import Project
from assay.store.workspace import Workspace

SENTENCE = re.compile(r"[^.!?\n]{40,220}[.!?]")


def _topic(sentence: str) -> str:
    words = re.findall(r"[\w-]+", sentence)
    return " ".join(words[:7]).lower()


def production_log(
    ws: Workspace, project: Project, *, per_document: int = 2, seed: int = 33
) -> list[str]:
    """JSON Lines (``question``, ``answer``, ``passages``, ``feedback``, ``session_id``)."""
    rng = random.Random(seed)
    lines: list[dict[str, object]] = []
    for summary in list_documents(ws, project):
        document = get_document(ws, project, summary.id)
        sentences = [m.group(0).strip() for m in SENTENCE.finditer(document.text)]
        if not sentences:
            continue
        title = PurePosixPath(document.name).stem.replace("-", " ")
        for n, sentence in enumerate(rng.sample(sentences, min(per_document, len(sentences)))):
            question = f"What does the {title} say about {_topic(sentence)}?"
            passages = [{"doc": document.name, "text": sentence}]
            if len(lines) < 3:  # a few with an address to mask and a passage from nowhere
                question += f" Reply to user{len(lines)}@example.com"
                passages.append({"doc": "", "text": "A page the system no longer has."})
            record: dict[str, object] = {
                "question": question,
                "answer": sentence,
                "passages": passages,
                "session_id": f"{summary.id[:8]}-{n}",
            }
            if rng.random() < 0.3:
                record["feedback"] = "thumbs_down"
            lines.append(record)
            if rng.random() < 0.5:  # asked again in other words
                again = question.lower().rstrip("?") + " please"
                lines.append({**record, "question": again, "session_id": f"{summary.id[:8]}-a{n}"})
    rng.shuffle(lines)
    return [json.dumps(line, ensure_ascii=False) for line in lines]
