"""What an import did, record by record, and the counts the CLI, the web page and JSON show.

``imported`` counts every record that was stored, ``flagged`` the stored ones that come with
a warning worth a look (so flagged ≤ imported), ``skipped`` the records left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.errors import InvalidInput
from assay.formats import Issue

STATUSES = ("imported", "flagged", "skipped")


@dataclass(frozen=True, slots=True)
class RecordOutcome:
    kind: str
    """``project``, ``document``, ``chunking``, ``chunk``, ``item``, ``experiment`` (an
    imported evaluation), ``result`` or ``record`` (found by the reader)."""
    ref: str
    status: str
    """``imported`` (stored), ``flagged`` (stored, with a warning) or ``skipped`` (left out)."""
    message: str = ""
    id: str = ""


@dataclass
class ImportReport:
    project: str = ""
    outcomes: list[RecordOutcome] = field(default_factory=list)

    def add(self, kind: str, ref: str, status: str, message: str = "", id: str = "") -> None:
        self.outcomes.append(RecordOutcome(kind, ref, status, message, id))

    def take_issues(self, issues: Sequence[Issue], *, lenient: bool) -> None:
        """What the reader could not take in: refused as a whole for an error unless
        ``lenient``; errors and omitted records are skipped ones, warnings flagged ones."""
        problems = [i for i in issues if i.severity == "error"]
        if problems and not lenient:
            shown = "; ".join(str(i) for i in problems[:5])
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            raise InvalidInput(
                f"{shown}{more}; nothing was imported (--lenient skips such records)"
            )
        for issue in issues:  # omitted: left out as the format's own tool leaves it out
            status = "flagged" if issue.severity == "warning" else "skipped"
            self.add("record", issue.where, status, issue.message)

    def count(self, status: str, kind: str | None = None) -> int:
        """Records of ``kind`` that were stored (``imported``), stored with a warning
        (``flagged``) or left out (``skipped``)."""
        wanted = ("imported", "flagged") if status == "imported" else (status,)
        return sum(
            1 for o in self.outcomes if o.status in wanted and (kind is None or o.kind == kind)
        )

    def summary(self) -> dict[str, dict[str, int]]:
        """``{kind: {"imported": stored, "flagged": stored with a warning, "skipped": n}}``."""
        table: dict[str, dict[str, int]] = {}
        for o in self.outcomes:
            row = table.setdefault(o.kind, dict.fromkeys(STATUSES, 0))
            row[o.status] += 1
            if o.status == "flagged":
                row["imported"] += 1
        return table

    def noted(self) -> list[RecordOutcome]:
        """The flagged and skipped records."""
        return [o for o in self.outcomes if o.status != "imported"]
