"""Settings, read from ``ASSAY_*`` environment variables.

Every field here is documented in docs/settings.md; a test fails when one is not.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Where the workspace lives and the limits it enforces."""

    model_config = SettingsConfigDict(env_prefix="ASSAY_", extra="ignore")

    home: Path = Field(
        default=Path("assay-data"),
        description="Workspace folder: database, uploaded files (blobs) and search indexes.",
    )
    database_url: str = Field(
        default="",
        description=(
            "SQLAlchemy URL of the database. Empty means a SQLite file `assay.db` inside the "
            "workspace folder. For PostgreSQL: `postgresql+psycopg://user:pass@host/db`."
        ),
    )
    max_file_mb: float = Field(
        default=10.0,
        gt=0,
        description="Largest file accepted by ingest and upload, in megabytes (10 MB like RAGold).",
    )
    text_fallback_encoding: str = Field(
        default="",
        description=(
            "Encoding tried for text files that are not valid UTF-8 (for example `cp1252`). "
            "Empty means such files are rejected with an error."
        ),
    )
    host: str = Field(default="127.0.0.1", description="Address `assay serve` binds to.")
    port: int = Field(default=8765, ge=0, le=65535, description="Port `assay serve` listens on.")
    workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Server processes `assay serve` starts; they share its port and database.",
    )
    threads: int = Field(
        default=16,
        ge=1,
        le=256,
        description=(
            "Requests one server process handles at once (its thread pool), and so the size "
            "of its database connection pool."
        ),
    )
    worker_start_timeout: int = Field(
        default=300,
        ge=5,
        le=3600,
        description=(
            "Seconds a server process of `assay serve --workers N` may take to start (import, "
            "open the workspace) and to answer the supervisor's health check, before it is "
            "replaced. A busy machine needs more than a few seconds."
        ),
    )
    contact_info: str = Field(
        default="",
        description=(
            "Shown on the guide page as where annotators send questions or their exports "
            "(for example an e-mail address). Empty hides the note."
        ),
    )
    author: str = Field(
        default="",
        description=(
            "Who the CLI and Python API act as: the account with this user or display name "
            "(made, without sign-in, when none has it); empty: the local owner."
        ),
    )
    allowed_hosts: str = Field(
        default="",
        description=(
            "Comma-separated host names (or `host:port`) the web server answers to besides the "
            "loopback names; any other Host header gets 400 (DNS-rebinding protection)."
        ),
    )
    max_body_mb: float = Field(
        default=5.0,
        gt=0,
        description="Largest JSON (non-upload) request body the web server reads, in megabytes.",
    )
    outgoing_hosts: str = Field(
        default="",
        description=(
            "Comma-separated host names (or IP addresses) that generators, judges and "
            "external systems may reach even when they resolve to private, loopback or "
            "link-local addresses."
        ),
    )
    outgoing_allow_loopback: bool = Field(
        default=True,
        description="Whether outgoing requests may go to loopback addresses (127.0.0.0/8, ::1).",
    )
    llm_prices: str = Field(
        default="",
        description=(
            'Prices of models for the cost totals of experiments: JSON {"model": {"input": '
            'USD, "output": USD}}, per million tokens.'
        ),
    )

    server_runs_jobs: bool = Field(
        default=True,
        description=(
            "Whether `assay serve` runs background jobs (experiment runs, imports, exports) in "
            "its own process; turn off when `assay worker` processes run them instead."
        ),
    )
    job_heartbeat_seconds: float = Field(
        default=10.0,
        ge=0.2,
        description=(
            "How often a process running jobs says it is alive; a job whose process missed "
            "three of these is put back in the queue and resumed by another."
        ),
    )
    job_concurrency: int = Field(
        default=4,
        ge=1,
        description="How many jobs one server or `assay worker` process runs at once.",
    )
    session_idle_minutes: int = Field(
        default=480,
        ge=1,
        description="A web session unused this many minutes ends (team mode); sign in again.",
    )
    session_max_hours: int = Field(
        default=168,
        ge=1,
        description="A web session ends this many hours after sign-in however much it is used.",
    )
    login_max_failures: int = Field(
        default=5,
        ge=1,
        description="Wrong passwords in a row after which an account is locked for a while.",
    )
    login_lock_minutes: int = Field(
        default=15,
        ge=1,
        description="How long an account stays locked after too many wrong passwords.",
    )

    trusted_user_header: str = Field(
        default="",
        description=(
            "Team mode behind a reverse proxy that signs users in: the request header that "
            "carries the user name (for example `X-Remote-User`). Empty turns this off."
        ),
    )
    trusted_proxies: str = Field(
        default="",
        description=(
            "Comma-separated addresses or networks (`127.0.0.1`, `10.0.0.0/24`) of the reverse "
            "proxies whose user header, X-Forwarded-For and X-Forwarded-Proto are believed; "
            "from any other address they are ignored. Empty (the default) trusts no proxy, "
            "loopback included: a proxy on the same machine is named as `127.0.0.1`."
        ),
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_are_addresses(cls, value: str) -> str:
        for part in filter(None, (p.strip() for p in value.split(","))):
            try:
                ipaddress.ip_network(part, strict=False)
            except ValueError:
                raise ValueError(f"{part!r} is not an IP address or network") from None
        return value

    @property
    def trusted_networks(self) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
        parts = filter(None, (p.strip() for p in self.trusted_proxies.split(",")))
        return [ipaddress.ip_network(part, strict=False) for part in parts]

    @field_validator("home", mode="before")
    @classmethod
    def _home_not_empty(cls, value: Any) -> Any:
        """``ASSAY_HOME=""`` is a mistake, not a wish to use the current folder."""
        if isinstance(value, str) and not value.strip():
            raise ValueError("is empty; give a folder, or unset it for the default ./assay-data")
        return value

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    @property
    def max_body_bytes(self) -> int:
        return int(self.max_body_mb * 1024 * 1024)

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.home / 'assay.db').resolve()}"
