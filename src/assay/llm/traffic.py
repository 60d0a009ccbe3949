"""What every model request of a process passes through: the endpoint gates and the cache.

A :class:`Traffic` is handed to :func:`assay.llm.make_generator` (and to the HTTP clients of
external systems) by whoever makes generators for a job: the experiment runner, synthesis,
suggestions, ``assay eval``. The gates are one :class:`Gates` per workspace object (so all
jobs and threads of a process share each endpoint's limit; with database leases on
PostgreSQL); the cache is scoped to the project the requests are made for, or absent when
the run was started with ``--no-cache``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assay.llm.gate import EndpointGate, Gates
from assay.llm.response_cache import ResponseCache

if TYPE_CHECKING:
    from assay.store.workspace import Workspace

GATES_KEY = "llm-gates"
SERVICE_LIMIT = 16
"""Requests in flight to an HTTP service that has no setting of its own (an external RAG
system, a pool source, a rerank endpoint)."""


@dataclass(frozen=True, slots=True)
class Traffic:
    gates: Gates = field(default_factory=Gates)
    cache: ResponseCache | None = None


def workspace_gates(ws: Workspace) -> Gates:
    """The workspace object's gates, made on first use; leased in the database on
    PostgreSQL, where several worker processes share an endpoint."""

    def build() -> Gates:
        if ws.engine.dialect.name != "postgresql":
            return Gates()
        from assay.llm.slot_leases import SlotLeases

        return Gates(SlotLeases(ws.engine))

    gates: Gates = ws.shared(GATES_KEY, build)
    return gates


def workspace_traffic(
    ws: Workspace, project_id: int | None = None, *, cache: bool = True
) -> Traffic:
    """The traffic of requests made for ``project_id``: the shared gates, and the project's
    response cache unless ``cache`` is false (``--no-cache``)."""
    return Traffic(workspace_gates(ws), ResponseCache(ws.engine, project_id) if cache else None)


def service_gate(traffic: Traffic | None, url: str, *, timeout_s: float = 60.0) -> EndpointGate:
    """The gate of an HTTP service at ``url``: the process's, or one of its own without
    ``traffic``."""
    if traffic is None:
        return EndpointGate(url, SERVICE_LIMIT)
    return traffic.gates.gate(url, SERVICE_LIMIT, hold_s=timeout_s + 30)
