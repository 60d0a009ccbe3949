"""RAGAPHENE's schema version 1 in the version 2 shape, as RAGAPHENE migrates an upload.

MTRAG's conversations were made in the v1 shape. The migration renames the retriever's
``parameters`` to ``settings`` (a JSON-string ``query_syntax`` parsed, the ``project`` field
map turned into templates), lifts the generator's prompt and parameters into ``settings``,
turns ``accepted``/``rejected`` into ``reviewed`` with the opinion in ``status_history``, and
records the v1 ``editor`` as an ``edited`` entry a day before the first review.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

from assay.errors import InvalidInput
from assay.formats.contexts import is_number, sub_list
from assay.formats.jsontext import loads

SCHEMA_VERSION = 2
REVIEWS = ("accepted", "rejected")
DAY = 86400


def migrate_v1(conversation: dict[str, Any]) -> dict[str, Any]:
    """A schema-v1 conversation in the v2 shape (RAGAPHENE's own upload migration)."""
    out = copy.deepcopy(conversation)
    retriever = out.get("retriever")
    if isinstance(retriever, dict):
        connector = retriever.get("connector")
        if isinstance(connector, dict) and connector.get("name") == "ELSER":
            connector["name"] = "ElasticSearch"
        if "parameters" in retriever and "settings" not in retriever:
            params = retriever.pop("parameters")
            settings = dict(params) if isinstance(params, dict) else {}
            syntax = settings.get("query_syntax")
            if isinstance(syntax, str):
                with contextlib.suppress(InvalidInput):  # else kept as it was
                    settings["query_syntax"] = loads(syntax, "query_syntax")
            project = settings.pop("project", None)
            if project is None:
                project = retriever.pop("project", None)
            if isinstance(project, str) and "templates" not in settings:
                template = "${" + _text_field(project) + "}"
                settings["templates"] = {"projection": template, "display": template}
            retriever["settings"] = settings
    generator = out.get("generator")
    if isinstance(generator, dict):
        lifted = generator.get("settings")
        settings = dict(lifted) if isinstance(lifted, dict) else {}
        for key in ("prompt", "parameters"):
            if key in generator:
                settings.setdefault(key, generator.pop(key))
        generator["settings"] = settings
        generator.setdefault("mode", "completion")
        connector = generator.get("connector")
        if isinstance(connector, dict):
            connector.pop("provider", None)
    history = [h for h in sub_list(out, "status_history") if isinstance(h, dict)]
    last = _last_timestamp(out)
    reviewer, editor = out.pop("reviewer", None), out.pop("editor", None)
    status = out.get("status")
    if status in REVIEWS:
        if not any(h.get("status") == status for h in history):
            who = reviewer if isinstance(reviewer, str) else out.get("author", "")
            history.append({"author": who, "status": status, "timestamp": last})
        out["status"] = "reviewed"
    if isinstance(editor, str) and editor:
        reviews = [i for i, h in enumerate(history) if h.get("status") in REVIEWS]
        first: Any = history[reviews[0]].get("timestamp") if reviews else None
        when = first - DAY if is_number(first) else last
        entry = {"author": editor, "status": "edited", "timestamp": when}
        history.insert(reviews[0] if reviews else len(history), entry)
    if history or "status_history" in out:
        out["status_history"] = history
    out["schema_version"] = SCHEMA_VERSION
    return out


def _text_field(project: str) -> str:
    """The text field of v1's field map (a JSON object string, or the field name itself)."""
    try:
        mapping = json.loads(project)
    except (ValueError, RecursionError):
        return project
    if isinstance(mapping, dict):
        for key in ("text", "body", "content"):
            if isinstance(mapping.get(key), str):
                return str(mapping[key])
    return project


def _last_timestamp(conversation: dict[str, Any]) -> Any:
    messages = conversation.get("messages")
    stamps = [
        m["timestamp"]
        for m in (messages if isinstance(messages, list) else [])
        if isinstance(m, dict) and is_number(m.get("timestamp"))
    ]
    return max(stamps, default=0)
