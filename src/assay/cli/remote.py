"""The CLI against a team server: ``ASSAY_URL`` (or ``--url``) and the token in ``ASSAY_TOKEN``.

:func:`server` is the one place where a command learns whether it works on the local
workspace or on a server: ``import``, ``export``, ``eval``, ``experiments`` and ``cache``
call it first and, given a :class:`Server`, go through the server's JSON API
(``cli.remote_transfer``, ``cli.remote_experiments``, ``cli.cache``). This module only
speaks HTTP: the base URL, the token header, errors turned into messages, job polling,
uploads and downloads. What an import, an export or an experiment does is decided by the
server, never here.

httpx is imported inside the functions, so building the command tree stays light.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import quote, urlsplit

import typer

from assay.cli.common import escape, fail, progress_bar, state

if TYPE_CHECKING:
    import httpx

REMOTE_COMMANDS = ("import", "export", "eval", "experiments", "cache")
"""The commands that can work against a server; the others always use the local workspace."""
TOKEN_HELP = (
    "create one on the server with `assay tokens create --user NAME --name cli --scope write` "
    "and put it in the environment: export ASSAY_TOKEN=assay_… (never on the command line, "
    "where the shell history would keep it)"
)
POLL_S = 0.25
TIMEOUT_S = 60.0


def refuse_local_only(command: str | None) -> None:
    """``--url`` given to a command that only works on the local workspace."""
    if command is not None and command not in REMOTE_COMMANDS:
        fail(
            f"--url works with {', '.join(REMOTE_COMMANDS)}; `assay {command}` works on the "
            "local workspace only"
        )


def server(ctx: typer.Context) -> Server | None:
    """The server to work against (``--url``, else ``ASSAY_URL``), or None for local work."""
    chosen = state(ctx)
    url = chosen.url if chosen.url is not None else os.environ.get("ASSAY_URL", "")
    if not url.strip():
        return None
    source = "--url" if chosen.url is not None else "ASSAY_URL"
    return Server.connect(url.strip(), source=source, insecure=chosen.insecure)


def project_path(project: str, *parts: str) -> str:
    """``/api/projects/NAME/...`` with every part quoted."""
    return "/".join(["/api/projects", quote(project, safe=""), *(quote(p, safe="") for p in parts)])


@dataclass
class Server:
    url: str
    token: str
    _client: httpx.Client | None = field(default=None, repr=False)

    @classmethod
    def connect(cls, url: str, *, source: str = "ASSAY_URL", insecure: bool = False) -> Server:
        from assay.people.mode import is_loopback

        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            fail(
                f"{source} {escape(url)!r} is not a server address; give one like "
                "https://assay.example.org"
            )
        if parts.scheme == "http" and not insecure and not is_loopback(parts.hostname):
            fail(
                f"refusing {escape(url)} from {source}: over http the API token would travel "
                f"in clear to {escape(parts.hostname)}; use https, or give --insecure if this "
                "network is trusted"
            )
        token = os.environ.get("ASSAY_TOKEN", "").strip()
        if not token:
            fail(f"{source} is {escape(url)} but ASSAY_TOKEN is empty: {escape(TOKEN_HELP)}")
        return cls(url.rstrip("/"), token)

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            import httpx

            from assay import __version__

            self._client = httpx.Client(
                base_url=self.url,
                headers={
                    "Authorization": f"Bearer {self.token}",
                    "User-Agent": f"assay-cli/{__version__}",
                    "Accept": "application/json",
                },
                timeout=TIMEOUT_S,
                follow_redirects=False,
            )
        return self._client

    def close(self) -> None:
        """Close the connection pool (a command run in-process keeps no socket open)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def request(self, method: str, path: str, **options: Any) -> httpx.Response:
        """Send one request; any failure ends the command with a message saying why."""
        import httpx

        try:
            response = self.client.request(method, path, **options)
        except httpx.HTTPError as exc:
            fail(
                f"cannot reach the Assay server at {escape(self.url)}: "
                f"{escape(f'{exc.__class__.__name__}: {exc}')}"
            )
        if response.is_success:
            return response
        self._refuse(response)

    def json(self, method: str, path: str, **options: Any) -> Any:
        response = self.request(method, path, **options)
        try:
            return response.json()
        except ValueError:
            fail(
                f"{escape(self.url)}{escape(path)} did not answer with JSON (HTTP "
                f"{response.status_code}); is ASSAY_URL the Assay server?"
            )

    def _refuse(self, response: httpx.Response) -> NoReturn:
        detail = _detail(response)
        where = f"{self.url}{response.request.url.path}"
        token = f"the token in ASSAY_TOKEN ({self.token[:10]}…)"
        status = response.status_code
        if status == 401:
            fail(escape(f"the server at {self.url} did not accept {token}: {detail}; {TOKEN_HELP}"))
        if status == 403:
            hint = ""
            if "this API token may only read" in detail:
                hint = "; this token has the read scope: changes need a --scope write token"
            fail(escape(f"the server at {self.url} refused {token}: {detail}{hint}"))
        if 300 <= status < 400:
            fail(
                escape(
                    f"{where} answered with a redirect to {response.headers.get('location')}; "
                    "give ASSAY_URL as the server's final address (https://…)"
                )
            )
        fail(escape(f"{detail} (HTTP {status} from {where})"))

    def upload(self, path: str, file: Path, name: str, fields: dict[str, str]) -> Any:
        with file.open("rb") as handle:
            return self.json("POST", path, files={"file": (name, handle)}, data=fields)

    def download(self, path: str, target: Path) -> None:
        """Stream the body of ``GET path`` into ``target``."""
        import httpx

        try:
            with self.client.stream("GET", path) as response:
                if not response.is_success:
                    response.read()
                    self._refuse(response)
                with target.open("wb") as out:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
        except httpx.HTTPError as exc:
            fail(f"the download from {escape(self.url)} broke off: {escape(str(exc))}")

    def follow_job(self, project: str, job: dict[str, Any], label: str) -> dict[str, Any]:
        """Poll an import or export job until it ends, with a bar on stderr; its final JSON."""
        path = project_path(project, "transfer", "jobs", str(job["id"]))
        with progress_bar() as bar:
            task = bar.add_task(label, total=None)
            while job["state"] == "running":
                time.sleep(POLL_S)
                job = self.json("GET", path)
                bar.update(
                    task,
                    description=f"{label}: {job.get('stage') or 'waiting'}",
                    completed=job.get("done") or 0,
                    total=job.get("total"),
                )
        if job["state"] != "done":
            ended = "was cancelled" if job["state"] == "cancelled" else "failed"
            fail(escape(f"the {job['kind']} job on {self.url} {ended}: {job.get('message')}"))
        return job

    def wait(
        self, fetch: Callable[[], dict[str, Any]], running: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any]:
        """Fetch until ``running`` is false."""
        data = fetch()
        while running(data):
            time.sleep(POLL_S)
            data = fetch()
        return data

    def projects(self) -> list[str]:
        return [str(p["name"]) for p in self.json("GET", "/api/projects")]

    def project(self, name: str | None) -> str:
        """``name``, or the server's only project this token may see."""
        if name:
            return name
        found = self.projects()
        if len(found) == 1:
            return found[0]
        listed = ", ".join(found) or "none this token may see"
        fail(escape(f"name the project with --project (projects on {self.url}: {listed})"))


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    if isinstance(detail, str) and detail:
        return detail
    if detail:
        return str(detail)
    text = " ".join(response.text.split())[:200]
    return text or response.reason_phrase or "no message"
