"""Comments on items: general ones and ones anchored to a span of a question, an answer or an
evidence passage, in threads (replies name the thread's first comment), resolved and reopened.

Anchors are offsets plus the quoted text (:mod:`assay.review.comment_anchors`): when the text
changes, a comment is shown as moved or outdated, never lost. Who may comment is the
``comment.write`` action (the web guard and the CLI ask :mod:`assay.people.access`); only a
comment's author edits or deletes it, except where ``any_author`` (the local owner of
personal mode) says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from assay.errors import Forbidden, InvalidInput, NotFound
from assay.gold.items import get_item
from assay.people.actors import AUTHOR_NAME
from assay.records import Comment, Item, Project
from assay.review.comment_anchors import checked_anchor, checked_body, with_anchor
from assay.store.db import as_utc, read_only, reading, transaction, utcnow
from assay.store.review_schema import comments
from assay.store.schema import accounts, items
from assay.store.workspace import Workspace

_resolver = accounts.alias("resolver")
_RESOLVER_NAME = sa.case(
    (_resolver.c.display_name == "", _resolver.c.username), else_=_resolver.c.display_name
)


def add_comment(
    ws: Workspace,
    project: Project,
    item_id: str,
    body: str,
    *,
    author: int,
    target: str = "item",
    turn: int | None = None,
    evidence: int | None = None,
    start: int | None = None,
    end: int | None = None,
    quote: str | None = None,
    parent_id: int | None = None,
    conn: sa.Connection | None = None,
) -> Comment:
    """A new comment by account ``author``. With ``parent_id`` it is a reply in that
    comment's thread (a reply to a reply joins the same thread) and carries no anchor."""
    text = checked_body(body)
    with transaction(ws.engine, conn) as conn:
        item = get_item(ws, project, item_id, conn=conn)
        if parent_id is not None:
            if target != "item" or any(v is not None for v in (turn, evidence, start, end)):
                raise InvalidInput("a reply takes no anchor: it belongs to its thread's span")
            parent = _row(conn, item_id, parent_id)
            parent_id = parent.parent_id or parent.id
            anchor: tuple[Any, ...] = (None, None, None, None, "")
        else:
            anchor = checked_anchor(item, target, turn, evidence, start, end, quote)
        turn, evidence, start, end, quote = anchor
        made = Comment(
            item_id=item_id, parent_id=parent_id, body=text, target=target, turn=turn,
            evidence=evidence, start=start, end=end, quote=quote,
        )  # fmt: skip
        return _one(conn, item, insert_comment(conn, project, made, author=author))


def insert_comment(
    conn: sa.Connection,
    project: Project,
    comment: Comment,
    *,
    author: int,
    resolved_by: int | None = None,
) -> int:
    """Write one comment row as given (checked by the caller: :func:`add_comment`, or an
    import that keeps a file's anchors, times and resolution); returns its id."""
    now = utcnow()
    created = comment.created_at or now
    return int(
        conn.execute(
            comments.insert()
            .values(
                project_id=project.id,
                item_id=comment.item_id,
                parent_id=comment.parent_id,
                author_id=author,
                body=comment.body,
                target=comment.target,
                turn=comment.turn,
                evidence=comment.evidence,
                start=comment.start,
                end=comment.end,
                quote=comment.quote,
                resolved=comment.resolved,
                resolved_by=resolved_by if comment.resolved else None,
                created_at=created,
                updated_at=comment.updated_at or created,
            )
            .returning(comments.c.id)
        ).scalar_one()
    )


def list_comments(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> list[Comment]:
    """The item's comments, oldest first, each anchored against the item's current text."""
    with reading(ws.engine, conn) as conn:
        item = get_item(ws, project, item_id, conn=conn)
        rows = conn.execute(_select().where(comments.c.item_id == item_id)).all()
        return [with_anchor(_record(r), item) for r in rows]


def comment_authors(
    ws: Workspace, item_id: str, *, conn: sa.Connection | None = None
) -> dict[int, int]:
    """Comment id → its author's account id, for the item's comments (who may edit which)."""
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(comments.c.id, comments.c.author_id).where(comments.c.item_id == item_id)
        )
        return {int(i): int(a) for i, a in rows}


def edit_comment(
    ws: Workspace,
    project: Project,
    item_id: str,
    comment_id: int,
    body: str,
    *,
    actor: int,
    any_author: bool = False,
    conn: sa.Connection | None = None,
) -> Comment:
    """Change a comment's text: its author only (``any_author``: the local owner)."""
    text = checked_body(body)
    with transaction(ws.engine, conn) as conn:
        row = _own_row(conn, project, item_id, comment_id, actor, any_author, "edit")
        conn.execute(
            comments.update().where(comments.c.id == row.id).values(body=text, updated_at=utcnow())
        )
        return _one(conn, get_item(ws, project, item_id, conn=conn), row.id)


def resolve_comment(
    ws: Workspace,
    project: Project,
    item_id: str,
    comment_id: int,
    resolved: bool,
    *,
    actor: int,
    conn: sa.Connection | None = None,
) -> Comment:
    """Resolve (``resolved``) or reopen a thread; a reply stands for its thread."""
    with transaction(ws.engine, conn) as conn:
        item = get_item(ws, project, item_id, conn=conn)
        row = _row(conn, item_id, comment_id)
        root = row.parent_id or row.id
        conn.execute(
            comments.update()
            .where(comments.c.id == root)
            .values(resolved=resolved, resolved_by=actor if resolved else None, updated_at=utcnow())
        )
        return _one(conn, item, root)


def delete_comment(
    ws: Workspace,
    project: Project,
    item_id: str,
    comment_id: int,
    *,
    actor: int,
    any_author: bool = False,
    conn: sa.Connection | None = None,
) -> None:
    """Delete a comment (its author only, or ``any_author``); a thread's first comment takes
    its replies with it."""
    with transaction(ws.engine, conn) as conn:
        row = _own_row(conn, project, item_id, comment_id, actor, any_author, "delete")
        conn.execute(comments.delete().where(comments.c.parent_id == row.id))
        conn.execute(comments.delete().where(comments.c.id == row.id))


def open_comment_counts(
    ws: Workspace, project: Project, item_ids: Sequence[str], *, conn: sa.Connection | None = None
) -> dict[str, int]:
    """Open threads per item, for a page of the items list: one grouped query for the page.
    Items without open threads are left out."""
    if not item_ids:
        return {}
    with read_only(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(comments.c.item_id, sa.func.count())
            .where(
                comments.c.project_id == project.id,
                comments.c.item_id.in_(list(item_ids)),
                comments.c.parent_id.is_(None),
                comments.c.resolved.is_(False),
            )
            .group_by(comments.c.item_id)
        )
        return {str(item_id): int(n) for item_id, n in rows}


def iter_item_comments(
    ws: Workspace, item_ids: Iterable[str], *, conn: sa.Connection | None = None
) -> list[Comment]:
    """The stored comments of ``item_ids`` as they are (anchors not worked out): exports."""
    wanted = list(dict.fromkeys(item_ids))
    found: list[Comment] = []
    with reading(ws.engine, conn) as conn:
        for at in range(0, len(wanted), 500):
            part = wanted[at : at + 500]
            rows = conn.execute(_select().where(comments.c.item_id.in_(part))).all()
            found.extend(_record(r) for r in rows)
    order = {item_id: n for n, item_id in enumerate(wanted)}
    found.sort(key=lambda c: (order[c.item_id], c.created_at or 0, c.id))
    return found


def _select() -> sa.Select[Any]:
    author = accounts.alias("author")
    author_name = sa.case(
        (author.c.display_name == "", author.c.username), else_=author.c.display_name
    )
    return (
        sa.select(
            comments,
            author_name.label("author_name"),
            _RESOLVER_NAME.label("resolver_name"),
        )
        .join(author, author.c.id == comments.c.author_id)
        .outerjoin(_resolver, _resolver.c.id == comments.c.resolved_by)
        .order_by(comments.c.created_at, comments.c.id)
    )


def _record(r: Any) -> Comment:
    return Comment(
        id=r.id,
        item_id=r.item_id,
        parent_id=r.parent_id,
        author=r.author_name or "",
        body=r.body,
        target=r.target,
        turn=r.turn,
        evidence=r.evidence,
        start=r.start,
        end=r.end,
        quote=r.quote,
        resolved=bool(r.resolved),
        resolved_by=r.resolver_name or "",
        created_at=as_utc(r.created_at),
        updated_at=as_utc(r.updated_at),
    )


def _one(conn: sa.Connection, item: Item, comment_id: int) -> Comment:
    row = conn.execute(_select().where(comments.c.id == comment_id)).one()
    return with_anchor(_record(row), item)


def _row(conn: sa.Connection, item_id: str, comment_id: int) -> Any:
    row = conn.execute(
        sa.select(comments).where(comments.c.id == comment_id, comments.c.item_id == item_id)
    ).first()
    if row is None:
        raise NotFound(f"item {item_id} has no comment {comment_id}")
    return row


def _own_row(
    conn: sa.Connection,
    project: Project,
    item_id: str,
    comment_id: int,
    actor: int,
    any_author: bool,
    verb: str,
) -> Any:
    """The comment's row, when ``actor`` may ``verb`` it (else Forbidden, naming the author)."""
    held = conn.scalar(
        sa.select(items.c.id).where(items.c.id == item_id, items.c.project_id == project.id)
    )
    if held is None:
        raise NotFound(
            f"project {project.name!r} has no item {item_id!r}",
            key="raised.no_item",
            project=project.name,
            item_id=item_id,
        )
    row = _row(conn, item_id, comment_id)
    if row.author_id != actor and not any_author:
        name = conn.scalar(sa.select(AUTHOR_NAME).where(accounts.c.id == row.author_id))
        raise Forbidden(f"only its author ({name}) may {verb} comment {comment_id}")
    return row
