"""The dashboard in the real Chromium: a team's three weeks of work drawn as plots, in English
and German, at 1280x720 and 1440x900.

The screenshots go to a temporary folder; ``DASHBOARD_SCREENSHOTS=build/screenshots`` keeps
them, and ``python scripts/screenshot_docs.py`` then copies the ones the docs show into
docs/screenshots/, compressed (to refresh docs/screenshots/dashboard*.png after UI changes).
"""

from __future__ import annotations

import os
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from assay.corpus.documents import list_documents
from assay.demo import open_demo
from assay.gold.items import create_item
from assay.people.accounts import create_account
from assay.records import Evidence, Item, Project, Turn
from assay.review.copies import copy_item
from assay.store.db import utcnow
from assay.store.review_schema import reviews
from assay.store.schema import events, items
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

TYPES = ("fact_single", "fact_single", "summary", "reasoning", "unanswerable")
STATUSES = ("accepted", "accepted", "accepted", "submitted", "submitted", "draft", "rejected")
PEOPLE = ("Ana Berg", "Ben Okafor", "Chris Lind", "Dana Roth")


def seed_team_work(ws: Workspace) -> Project:
    """The demo corpus with 60 items of four annotators over three weeks: submits, reviews,
    LLM drafts and six items done twice (copies)."""
    rng = random.Random(7)
    project, _ = open_demo(ws)
    docs = [d.id for d in list_documents(ws, project)][:9]  # the rest stay uncovered
    people = [
        create_account(ws, name.split()[0].lower(), "a long password 1", display_name=name).id
        for name in PEOPLE
    ]
    lead = create_account(ws, "lea", "a long password 1", display_name="Lea (lead)").id
    now = utcnow()
    made: list[tuple[str, int, str, datetime]] = []
    for n in range(60):
        author = people[n % 4]
        llm = n % 5 == 0
        evidence = [
            Evidence(doc_id=rng.choice(docs), start=0, end=30,
                     origin="llm-suggestion" if llm else "searched")
        ]  # fmt: skip
        turn = Turn(query=f"Question {n}?", query_type=rng.choice(TYPES), evidence=evidence)
        item = create_item(
            ws, project, Item(origin="llm-suggestion" if llm else "human", turns=[turn]),
            author=author,
        )  # fmt: skip
        started = now - timedelta(days=rng.randint(0, 20), hours=rng.randint(1, 9))
        made.append((item.id, author, rng.choice(STATUSES), started))
    rows: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    with ws.engine.begin() as conn:
        conn.execute(events.delete().where(events.c.project_id == project.id))
        for item_id, author, status, started in made:
            conn.execute(items.update().where(items.c.id == item_id).values(status=status))
            rows.append(_event(project, item_id, author, "create", started))
            if status == "draft":
                continue
            done = started + timedelta(minutes=rng.randint(4, 40) * (1 + people.index(author)))
            rows.append(_event(project, item_id, author, "status", done, status="submitted"))
            if status in ("accepted", "rejected"):
                at = done + timedelta(hours=rng.randint(1, 30))
                verdict = "reject" if status == "rejected" else rng.choice(
                    ("accept", "accept", "accept_edited")
                )  # fmt: skip
                verdicts.append(
                    {"project_id": project.id, "item_id": item_id, "reviewer_id": lead,
                     "verdict": verdict, "reason": "", "submitted_version": 2, "changes": [],
                     "at": min(at, now)}
                )  # fmt: skip
        conn.execute(events.insert(), rows)
        conn.execute(reviews.insert(), verdicts)
    for n, (item_id, _author, _status, started) in enumerate(made[:6]):
        for person in people[:2]:
            copy = copy_item(ws, project, item_id, person)
            with ws.engine.begin() as conn:
                conn.execute(
                    items.update().where(items.c.id == copy).values(
                        status="submitted",
                        query_type=TYPES[n % 3] if person == people[0] else TYPES[0],
                        updated_at=started + timedelta(hours=2),
                    )
                )  # fmt: skip
    return project


def _event(project: Project, item_id: str, actor: int, action: str, at: datetime,
           **after: Any) -> dict[str, Any]:  # fmt: skip
    return {"project_id": project.id, "item_id": item_id, "actor_id": actor, "action": action,
            "before": None, "after": after or {"seeded": True}, "at": at}  # fmt: skip


def test_the_dashboard_shows_the_plots(page: Page, ws: Workspace, live_server: LiveServer) -> None:
    seed_team_work(ws)
    page.goto(live_server.url + "/projects/demo")
    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_role("heading", name="Dashboard", level=1)).to_be_visible()
    for name in (
        "Status funnel",
        "Items per query type",
        "Throughput per annotator and day",
        "Median time per item",
        "Agreement over time",
        "LLM drafts",
        "Coverage",
    ):
        expect(page.get_by_role("img", name=name)).to_be_visible()  # fmt: skip
    expect(page.locator("#dash-throughput rect.heat")).to_have_count(4 * 28)
    expect(page.locator("#dash-agreement path.line")).to_have_count(2)

    table = page.locator("#dash-time-h ~ details")
    table.locator("summary").click()
    expect(table.get_by_role("cell", name="Ana Berg")).to_be_visible()

    page.get_by_role("link", name="documents with no questions").click()
    uncovered = page.locator(".dash-uncovered")
    uncovered.locator("summary").click()
    uncovered.get_by_role("link").first.click()
    expect(page.get_by_role("heading", name="Text", exact=True)).to_be_visible()


@pytest.mark.parametrize("language", ["en", "de"])
def test_screenshots_at_both_sizes(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path, language: str
) -> None:
    seed_team_work(ws)
    out = Path(os.environ.get("DASHBOARD_SCREENSHOTS") or tmp_path)
    heading = {"en": "Dashboard", "de": "Übersicht"}[language]
    for width, height in ((1280, 720), (1440, 900)):
        context = browser.new_context(viewport={"width": width, "height": height}, locale=language)
        page = context.new_page()
        page.goto(live_server.url + "/projects/demo/dashboard")
        expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible()
        expect(page.locator("svg.dash-svg")).to_have_count(7)
        suffix = ("" if language == "en" else "-de") + ("" if width == 1280 else f"-{width}")
        page.screenshot(path=str(out / f"dashboard{suffix}.png"), full_page=True)
        context.close()
