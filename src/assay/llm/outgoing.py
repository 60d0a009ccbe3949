"""The one policy for outgoing HTTP: generators, LLM judges and external RAG systems.

A URL someone typed into a setting must not turn the server into a tool against its own
network. Every outgoing request goes through :meth:`OutgoingPolicy.client`, whose transport:

- allows the schemes ``http`` and ``https`` only;
- resolves the host name and refuses the request if any address it resolves to is private,
  link-local, multicast, reserved, unspecified, shared (100.64/10) or a cloud metadata
  address (and the well-known metadata host names without resolving them), or loopback
  when ``ASSAY_OUTGOING_ALLOW_LOOPBACK`` is off. A host named in ``ASSAY_OUTGOING_HOSTS``
  is admitted whatever it resolves to. IPv4 hidden in IPv6 (``::ffff:10.0.0.1``, NAT64,
  6to4) is checked as the IPv4 address it stands for;
- connects to the very address it checked: the URL's host is replaced by that address while
  the ``Host`` header and the TLS server name (SNI, certificate check) stay the original
  name. A DNS answer that changes between the check and the connection (DNS rebinding)
  therefore cannot redirect the request;
- never follows a redirect: a 3xx answer is an error naming where it pointed;
- sends an ``Authorization`` header only to the host of the configured base URL;
- in team mode (``origins``) sends nothing, key or not, but to the origin of an endpoint a
  workspace admin registered (:mod:`assay.llm.endpoints`, which builds a workspace's policy).

Proxies from ``HTTP_PROXY``/``HTTPS_PROXY`` and ``.netrc`` are not used: the policy must
know which address it connects to. The check runs on every request (DNS may change) and,
through :meth:`OutgoingPolicy.check_url`, when settings are saved, so mistakes show early.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from assay.errors import InvalidInput

if TYPE_CHECKING:
    from assay.store.settings import Settings

HOSTS_SETTING = "ASSAY_OUTGOING_HOSTS"
LOOPBACK_SETTING = "ASSAY_OUTGOING_ALLOW_LOOPBACK"
SCHEMES = ("http", "https")
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean …
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS over IPv6
        "100.100.100.200",  # Alibaba Cloud
    )
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]


class OutgoingRefused(InvalidInput):
    """An outgoing request the policy does not allow; the message names the host and the
    setting that would allow it."""


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (``socket.gaierror`` when it does not)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))


def normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _embedded_v4(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), else itself."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip in NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if ip.sixtofour is not None:
            return ip.sixtofour
    return ip


def address_problem(address: str, *, allow_loopback: bool) -> str | None:
    """Why a connection to ``address`` is refused, or None when it is allowed."""
    ip = _embedded_v4(ipaddress.ip_address(address))
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return None if allow_loopback else "a loopback address"
    for what, flag in (
        ("an unspecified address", ip.is_unspecified),
        ("a link-local address", ip.is_link_local),
        ("a multicast address", ip.is_multicast),
        ("a reserved address", ip.is_reserved),
        ("a private address", ip.is_private),
        ("not a public address", not ip.is_global),
    ):
        if flag:
            return what
    return None


@dataclass(frozen=True, slots=True)
class OutgoingPolicy:
    """Which hosts outgoing requests may reach. ``resolve`` exists for tests."""

    hosts: frozenset[str] = frozenset()
    allow_loopback: bool = True
    resolve: Resolver = system_resolver
    origins: frozenset[str] | None = None
    """Team mode: the only origins (``scheme://host:port``) requests, and so API keys, may go
    to; None: any host the other rules allow (personal mode)."""

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> OutgoingPolicy:
        """The policy of ``settings`` (by default the ``ASSAY_*`` environment)."""
        if settings is None:
            from assay.store.settings import Settings

            settings = Settings()
        names = (normal_host(h) for h in settings.outgoing_hosts.split(","))
        return cls(frozenset(n for n in names if n), settings.outgoing_allow_loopback)

    def check_url(self, url: str, *, strict: bool = True) -> list[str]:
        """The addresses a request to ``url`` may connect to, all checked; raises
        :class:`OutgoingRefused`. A host that does not resolve raises ``OSError``
        (``socket.gaierror``) when ``strict``; otherwise it passes with no addresses, so a
        setting can be saved while its host is out of reach."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError):
            raise OutgoingRefused(f"{url!r} is not a valid URL") from None
        host = normal_host(parsed.host)
        if parsed.scheme not in SCHEMES or not host:
            raise OutgoingRefused(
                f"outgoing requests need an http or https URL with a host; got {url!r}"
            )
        if host in METADATA_NAMES and host not in self.hosts:
            raise self._refused(host, f"{host} is a cloud metadata host")
        addresses = self._addresses(host, parsed.port or _default_port(parsed), strict)
        if host in self.hosts:
            return addresses
        for address in addresses:
            problem = address_problem(address, allow_loopback=self.allow_loopback)
            if problem is not None:
                what = f"{host} is {problem}"
                if address != host:
                    what = f"{host} resolves to {address}, which is {problem}"
                raise self._refused(host, what)
        return addresses

    def _addresses(self, host: str, port: int, strict: bool) -> list[str]:
        try:
            ipaddress.ip_address(host)
            return [host]
        except ValueError:
            pass
        try:
            return self.resolve(host, port)
        except OSError:
            if strict:
                raise
            return []

    def _refused(self, host: str, what: str) -> OutgoingRefused:
        fix = f"to allow it, add {host} to {HOSTS_SETTING}"
        if self.origins is not None:
            fix = (
                "in team mode a workspace admin allows it by registering the endpoint with "
                f"private addresses allowed (assay endpoints add --allow-private), or adds {host} "
                f"to {HOSTS_SETTING}"
            )
        elif what.endswith("a loopback address"):
            fix = f"set {LOOPBACK_SETTING}=true or add {host} to {HOSTS_SETTING}"
        return OutgoingRefused(f"outgoing request refused: {what}; {fix}")

    def client(
        self,
        base_url: str,
        *,
        timeout: httpx.Timeout | float,
        transport: httpx.BaseTransport | None = None,
        connections: int = 100,
    ) -> httpx.Client:
        """An httpx client whose every request obeys this policy; an API key may go to
        the host of ``base_url`` only. ``connections``: how many it keeps open at most (as
        many as requests may be in flight to the endpoint)."""
        if transport is None:
            limits = httpx.Limits(
                max_connections=max(connections, 1), max_keepalive_connections=max(connections, 1)
            )
            transport = httpx.HTTPTransport(trust_env=False, limits=limits)
        guarded = GuardedTransport(self, normal_host(httpx.URL(base_url).host), transport)
        return httpx.Client(
            transport=guarded, timeout=timeout, follow_redirects=False, trust_env=False
        )


def _default_port(url: httpx.URL) -> int:
    return 443 if url.scheme == "https" else 80


def origin(url: httpx.URL) -> str:
    """``scheme://host:port`` of ``url``, the port always written (the unit an API key may
    be sent to)."""
    host = normal_host(url.host)
    if ":" in host:
        host = f"[{host}]"
    return f"{url.scheme}://{host}:{url.port or _default_port(url)}"


class GuardedTransport(httpx.BaseTransport):
    """Checks each request, then connects to the checked address (see the module doc)."""

    def __init__(
        self,
        policy: OutgoingPolicy,
        key_host: str,
        inner: httpx.BaseTransport | None = None,
    ) -> None:
        self.policy = policy
        self.key_host = key_host
        self.inner = inner if inner is not None else httpx.HTTPTransport(trust_env=False)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host = normal_host(request.url.host)
        if "authorization" in request.headers and host != self.key_host:
            raise OutgoingRefused(
                f"outgoing request to {host} refused: the API key goes only to "
                f"{self.key_host}, the host of the configured base URL"
            )
        if self.policy.origins is not None:
            self._check_registered(request.url, self.policy.origins)
        try:
            addresses = self.policy.check_url(str(request.url))
        except OSError as exc:
            raise httpx.ConnectError(f"cannot resolve {host} ({exc})", request=request) from exc
        response = self._connect(request, addresses)
        if response.is_redirect:
            target = response.headers.get("location", "")
            response.close()
            where = normal_host(request.url.join(target).host) or host
            raise OutgoingRefused(
                f"{host} answered {response.status_code} with a redirect to {where}; "
                "redirects are not followed: give the final URL in the settings"
            )
        return response

    @staticmethod
    def _check_registered(url: httpx.URL, registered: frozenset[str]) -> None:
        if origin(url) not in registered:
            raise OutgoingRefused(
                f"outgoing request to {origin(url)} refused: in team mode requests and the API "
                "key go only to endpoints a workspace admin registered (the Endpoints page, or "
                "`assay endpoints add`)"
            )

    def _connect(self, request: httpx.Request, addresses: Iterable[str]) -> httpx.Response:
        """Send to each checked address in turn until one accepts the connection."""
        failure: httpx.ConnectError | None = None
        for address in addresses:
            extensions = dict(request.extensions)
            if request.url.scheme == "https":
                extensions.setdefault("sni_hostname", request.url.host)
            pinned = httpx.Request(
                request.method,
                request.url.copy_with(host=address),
                headers=request.headers,
                stream=request.stream,
                extensions=extensions,
            )
            try:
                return self.inner.handle_request(pinned)
            except httpx.ConnectError as exc:
                failure = exc
        if failure is None:
            raise httpx.ConnectError(f"{request.url.host} has no address", request=request)
        raise failure

    def close(self) -> None:
        self.inner.close()
