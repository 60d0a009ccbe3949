"""Assignments: an index for the pool tasks an account holds.

An annotator's own list, queue and ownership checks look up the pool tasks the account holds
(``account_id IS NULL AND holder_id = X``); the (project, task, account, ...) index found
them only by reading every pool task of the project.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        op.f("ix_assignments_holder_id_project_id_task_account_id"),
        "assignments",
        ["holder_id", "project_id", "task", "account_id"],
    )


def downgrade() -> None:
    op.drop_index(
        op.f("ix_assignments_holder_id_project_id_task_account_id"), table_name="assignments"
    )
