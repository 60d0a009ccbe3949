"""The response cache: a deterministic request asked again is answered from the workspace.

A chat request is keyed by the sha256 of canonical JSON of everything that decides its
answer: the endpoint URL, the whole request body (model, messages, temperature, max_tokens,
response format, seed; not ``stream``) and the project it is made for. The stored value is
the endpoint's whole reply, so a cached answer is rebuilt exactly as the first one was,
with its usage (cost accounting counts it as free: no call was made).

Only deterministic requests are cached (temperature 0, or an explicit seed) unless the
generator's ``cache`` setting is ``always``; ``off`` there, or ``--no-cache`` on a run,
skips the cache both ways. The table lives in the workspace's database, so every machine of
a team shares it; ``assay cache clear`` drops it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlalchemy as sa

from assay.store.db import utcnow
from assay.store.llm_schema import llm_responses

CACHE_MODES: tuple[str, ...] = ("auto", "always", "off")


def cacheable(mode: str, temperature: float, seed: int | None) -> bool:
    """Whether a request of these settings may be answered from (and stored in) the cache."""
    if mode == "off":
        return False
    return mode == "always" or temperature == 0 or seed is not None


class ResponseCache:
    """Cached replies of one project (``project_id`` None: requests made for no project)."""

    def __init__(self, engine: sa.Engine, project_id: int | None) -> None:
        self.engine = engine
        self.project_id = project_id

    def key(self, url: str, body: dict[str, Any]) -> str:
        decisive = {k: v for k, v in body.items() if k != "stream"}
        canonical = json.dumps(
            {"project": self.project_id, "url": url, "body": decisive},
            ensure_ascii=False,
            separators=(",", ":"),
            sort_keys=True,
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            reply = conn.scalar(sa.select(llm_responses.c.reply).where(llm_responses.c.key == key))
        return reply if isinstance(reply, dict) else None

    def put(self, key: str, url: str, model: str, reply: dict[str, Any]) -> None:
        """Store a reply; when another thread or machine stored the same key first, theirs
        stays (the same request, so the same kind of answer)."""
        size = len(json.dumps(reply, ensure_ascii=False).encode("utf-8"))
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    llm_responses.insert().values(
                        key=key,
                        project_id=self.project_id,
                        endpoint=url[:500],
                        model=model[:200],
                        reply=reply,
                        size=size,
                        created_at=utcnow(),
                    )
                )
        except sa.exc.IntegrityError:
            pass


def _scope(project_id: int | None) -> Any:
    return sa.true() if project_id is None else llm_responses.c.project_id == project_id


def cache_summary(engine: sa.Engine, project_id: int | None = None) -> dict[str, Any]:
    """Entries and bytes in the cache (of one project, or all), when the oldest and newest
    reply came, and the same per endpoint and model."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(
                llm_responses.c.endpoint,
                llm_responses.c.model,
                sa.func.count(),
                sa.func.coalesce(sa.func.sum(llm_responses.c.size), 0),
                sa.func.min(llm_responses.c.created_at),
                sa.func.max(llm_responses.c.created_at),
            )
            .where(_scope(project_id))
            .group_by(llm_responses.c.endpoint, llm_responses.c.model)
            .order_by(llm_responses.c.endpoint, llm_responses.c.model)
        ).all()
    models = [
        {
            "endpoint": endpoint,
            "model": model,
            "entries": int(count),
            "bytes": int(size),
            "oldest": first.isoformat() if first else None,
            "newest": last.isoformat() if last else None,
        }
        for endpoint, model, count, size, first, last in rows
    ]
    oldest = [m["oldest"] for m in models if m["oldest"]]
    newest = [m["newest"] for m in models if m["newest"]]
    return {
        "entries": sum(m["entries"] for m in models),
        "bytes": sum(m["bytes"] for m in models),
        "oldest": min(oldest) if oldest else None,
        "newest": max(newest) if newest else None,
        "models": models,
    }


def clear_cache(engine: sa.Engine, project_id: int | None = None) -> int:
    """Drop the cached replies (of one project, or all); returns how many were dropped."""
    with engine.begin() as conn:
        return int(conn.execute(llm_responses.delete().where(_scope(project_id))).rowcount or 0)
