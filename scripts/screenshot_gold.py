"""Gold for the screenshot scripts that write their own: demo items through the JSON API (as
the editor writes them) and a demo conversation asked in the browser."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import Page

from assay.corpus.documents import get_document_by_name
from assay.demo import gold_items
from assay.records import Project
from assay.store.workspace import Workspace


def gold_body(ws: Workspace, project: Project, gold: dict[str, Any]) -> dict[str, Any]:
    evidence = [
        {
            "doc_id": get_document_by_name(ws, project, ev["document"]).id,
            "text": ev["text"],
            "label": ev.get("label", "relevant"),
            "group": ev.get("group"),
            "origin": "searched",
        }
        for ev in gold.get("evidence", [])
    ]
    turn = {
        "query": gold["query"],
        "query_type": gold.get("query_type", "fact_single"),
        "answer": gold.get("answer", ""),
        "evidence": evidence,
    }
    return {"turns": [turn]}


def write_items(ws: Workspace, project: Project, base_url: str) -> str:
    """Write a dozen demo gold items through the API; returns the id of the one to show."""
    with httpx.Client(base_url=base_url) as client:
        client.get("/")
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        client.cookies.set("assay_author", "ana")
        shown = ""
        for n, gold in enumerate(gold_items()[:12]):
            response = client.post(
                f"/api/projects/{project.name}/items", json=gold_body(ws, project, gold)
            )
            response.raise_for_status()
            item = response.json()["item"]
            if gold["query_id"] == "q03":
                shown = item["id"]
            elif n % 3 == 0:
                client.post(
                    f"/api/projects/{project.name}/items/{item['id']}/status",
                    json={"version": item["version"], "status": "submitted"},
                ).raise_for_status()
    return shown


def ask_demo(page: Page, base_url: str, questions: tuple[str, ...]) -> None:
    """A new conversation on the demo project, each question asked and answered."""
    page.goto(f"{base_url}/projects/demo/conversations/new")
    for n, question in enumerate(questions):
        page.locator("#composer-q").fill(question)
        page.locator("#composer-q").press("Control+Enter")
        page.locator(f"#t{n}-answer:not([readonly])").wait_for()
        page.wait_for_function(f"document.getElementById('t{n}-answer').value.length > 0")
