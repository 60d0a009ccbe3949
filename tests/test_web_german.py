"""Every main page in German shows no English interface words: the menu, headings, buttons,
labels, table heads, badges and hints come from the German catalog (statuses, item kinds,
query types and roles included), whatever language the project's documents are in."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.demo.showcase import Showcase, build_showcase
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.i18n import load_catalogs

CHROME = {"h1", "h2", "h3", "th", "button", "label", "legend", "summary", "option", "dt",
          "nav", "footer", "caption", "figcaption", "title", "span", "strong", "p", "li", "a",
          "dd", "td"}  # fmt: skip
"""Elements whose own text is checked (text of the demo's documents and items is English on
purpose, so the check looks at whole words of the interface, listed in ``ENGLISH``)."""

ATTRIBUTES = ("title", "aria-label", "placeholder", "alt")

ENGLISH = re.compile(
    r"\b(Search|Save|Delete|Upload|Cancel|Submit|Created|Updated|Changed|draft|submitted|"
    r"accepted|rejected|Conversations|Experiments|Settings|Language|German|Next|Previous|"
    r"Loading|Download|Results|Agreement|Documents|Guide|Question|Answer|Evidence|Reviewer|"
    r"Annotator|Owner|Viewer|Actions|Rename|Replace|Characters|Warnings|Query types?|"
    r"Single fact|Unanswerable|Reasoning|Mean|Progress|Skip|Accept|Reject|Reason|Author|"
    r"Your name|Sign in|Sign out|Projects|Chunk boundaries|Created at|Overview|Reports|"
    r"Citations|Rating|Comments|History|Restore|Compare|Running|Failed|Queued|Waiting|"
    r"Finished|Show|Hide|Close|Back|Help|Keys|unknown|Judged(?!@)|"
    r"retrieval only|every turn|relevant passages|API documentation)\b"
)
"""Interface words of the English pages that no German page may show (words the German
catalog borrows, such as Status, Export, Chunking, Pipeline or Experiment, are not listed;
nor are short words that the demo's English documents and questions are full of)."""

ALLOWED: set[str] = set()


class Chrome(HTMLParser):
    """Collects the text of interface elements and the words of their attributes; skips
    scripts, styles, the document text and what a user or a document wrote."""

    SKIP = frozenset({"script", "style", "pre", "textarea", "code", "svg"})
    USER = ("user-text", "doctext", "rendered", "snippet", "question", "answer", "passage", "hit")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []
        self.texts: list[str] = []

    def skipping(self) -> bool:
        return any(skip for _, skip in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        skip = (
            tag in self.SKIP
            or any(c.startswith(self.USER) for c in classes)
            or "data-user" in values
            or values.get("translate") == "no"
            or values.get("lang", "de") != "de"  # the switch to English names itself so
        )
        if tag not in ("br", "img", "input", "meta", "link", "hr", "source", "col", "wbr"):
            self.stack.append((tag, skip))
        if not self.skipping() and not skip:
            self.texts.extend(v for k, v in attrs if k in ATTRIBUTES and v)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            name, _ = self.stack.pop()
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.stack and not self.skipping() and self.stack[-1][0] in CHROME and data.strip():
            self.texts.append(data.strip())


def chrome_texts(html: str) -> list[str]:
    parser = Chrome()
    parser.feed(html)
    return parser.texts


def pages(show: Showcase) -> Iterator[str]:
    home = f"/projects/{show.project.name}"
    judging = f"/projects/{show.judging_project}"
    yield from (
        "/",
        home,
        f"{home}/documents",
        f"{home}/documents/{show.document_id}",
        f"{home}/items",
        f"{home}/items?status=accepted",
        f"{home}/conversations",
        f"{home}/experiments",
        f"{home}/experiments/{show.experiment_id}",
        f"{home}/transfer",
        f"{home}/review",
        f"{home}/dashboard",
        f"{home}/agreement",
        f"{home}/adjudication",
        f"{home}/versions",
        f"{home}/versions/{show.versions[0]}",
        f"{home}/version-diff?a={show.versions[0]}&b={show.versions[1]}",
        f"{home}/items/{show.item_id}/history",
        f"{home}/guide",
        f"{judging}/judging",
        f"{judging}/judging-results",
        "/guide",
        "/endpoints",
        "/api/docs",
    )


@pytest.fixture(scope="module")
def showcase(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, Showcase]]:
    from assay import open_workspace

    folder: Path = tmp_path_factory.mktemp("showcase")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ASSAY_ALLOWED_HOSTS", "testserver")  # read when the workspace opens
        ws = open_workspace(folder / "ws")
        yield ws, build_showcase(ws, folder)
        ws.close()


def test_no_english_on_german_pages(showcase: tuple[Workspace, Showcase]) -> None:
    ws, show = showcase
    english: dict[str, list[str]] = {}
    with TestClient(create_app(ws)) as client:
        client.cookies.set("assay_lang", "de")
        for path in pages(show):
            response = client.get(path)
            assert response.status_code == 200, path
            assert '<html lang="de">' in response.text, path
            found = [
                text
                for text in chrome_texts(response.text)
                for word in ENGLISH.findall(text)
                if word not in ALLOWED
            ]
            if found:
                english[path] = found
    assert english == {}


def test_statuses_on_german_pages_come_from_the_catalog(
    showcase: tuple[Workspace, Showcase],
) -> None:
    ws, show = showcase
    german = load_catalogs()["de"]
    statuses = {german[f"status.{s}"] for s in ("draft", "submitted", "accepted", "rejected")}
    with TestClient(create_app(ws)) as client:
        client.cookies.set("assay_lang", "de")
        home = f"/projects/{show.project.name}"
        english = {"draft", "submitted", "accepted", "rejected"}
        for path in (
            home,
            f"{home}/items",
            f"{home}/dashboard",
            f"{home}/items/{show.item_id}/history",
        ):
            shown = " ".join(chrome_texts(client.get(path).text))
            assert any(status in shown for status in statuses), path
            assert not english & set(re.findall(r"\w+", shown)), path


def test_every_format_is_described_in_both_languages() -> None:
    from assay.formats import formats

    catalogs = load_catalogs()
    for name in formats():
        for part in ("label", "description"):
            assert catalogs["en"].get(f"format.{name}.{part}"), (name, part)
            assert catalogs["de"].get(f"format.{name}.{part}"), (name, part)
