"""Who an import is by: the Bundle's author names as accounts, and the ``import`` event in
the project's history that names the importing account."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from assay.formats import DocumentRecord
from assay.people.actors import account_ids, acting_account
from assay.records import Item, Project
from assay.store.db import utcnow
from assay.store.schema import events
from assay.store.workspace import Workspace
from assay.transfer.report import ImportReport


@dataclass(frozen=True)
class ImportAuthors:
    """Who the import's records are by: the file's author names as accounts, and the acting
    account for records that name nobody."""

    acting: int
    named: dict[str, int]

    def of(self, name: str | None) -> int:
        return self.named.get(name, self.acting) if name else self.acting


def bundle_authors(
    ws: Workspace, documents: Sequence[DocumentRecord], items: Sequence[Item], actor: int | None
) -> ImportAuthors:
    """Every author name of the Bundle found or made as an account, in one read of the
    accounts, before the first batch (a batch undone would forget accounts it made)."""
    names = author_names(documents, items)
    with ws.engine.begin() as conn:
        acting = actor if actor is not None else acting_account(ws, conn=conn)
        return ImportAuthors(acting, account_ids(conn, names))


def author_names(documents: Sequence[DocumentRecord], items: Sequence[Item]) -> set[str]:
    """The author names ``documents`` and ``items`` bring (of items, evidence and status
    changes)."""
    names = {d.author for d in documents} | {i.author for i in items}
    for item in items:
        names.update(c.actor for c in item.status_history)
        names.update(ev.author or "" for turn in item.turns for ev in turn.evidence)
    return names


def record_import(
    conn: sa.Connection, project: Project, actor: int, report: ImportReport, replace: bool
) -> None:
    """The project's history records who imported what (an event without an item)."""
    conn.execute(
        events.insert().values(
            project_id=project.id,
            item_id=None,
            actor_id=actor,
            action="import",
            before=None,
            after={"replace": replace, "summary": report.summary()},
            at=utcnow(),
        )
    )
