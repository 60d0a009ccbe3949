"""The outgoing-HTTP policy: which hosts generators, judges and external systems may reach.

Real HTTP goes only to fake servers on loopback (127.0.0.1 and 127.0.0.2). Requests to any
other address are refused before a connection: the transports below record that nothing
was sent at all, and host names other than ``localhost`` are resolved by a scripted
resolver, never by DNS.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator

import httpx
import pytest

from assay.errors import InvalidInput
from assay.experiments.external import ExternalClient, ExternalError
from assay.experiments.tasks import Task
from assay.llm import GeneratorError, GeneratorSettings, Message, make_generator
from assay.llm.openai_compat import OpenAICompatGenerator
from assay.llm.outgoing import OutgoingPolicy, OutgoingRefused, address_problem
from tests.fakes.openai_server import FakeOpenAI, Redirect, Reply

MESSAGES = [Message("user", "Hello?")]
KEY = "sk-test-secret"


class NeverSend(httpx.BaseTransport):
    """An inner transport that records requests instead of sending them anywhere."""

    def __init__(self) -> None:
        self.seen: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        return httpx.Response(500)


def scripted(answers: dict[str, list[str]]) -> tuple[list[str], OutgoingPolicy]:
    """A policy whose resolver answers from ``answers`` and logs every lookup."""
    lookups: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        lookups.append(host)
        if host not in answers:
            raise socket.gaierror(f"{host} is not in the script")
        return answers[host]

    return lookups, OutgoingPolicy(resolve=resolve)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def other() -> Iterator[FakeOpenAI]:
    """A second host: another loopback address."""
    with FakeOpenAI(host="127.0.0.2") as server:
        yield server


@pytest.fixture(autouse=True)
def clean(fake: FakeOpenAI, other: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.reset([Reply("hi")])
    other.reset([Reply("from the other host")])
    for name in ("ASSAY_OUTGOING_HOSTS", "ASSAY_OUTGOING_ALLOW_LOOPBACK"):
        monkeypatch.delenv(name, raising=False)


REFUSED = [
    ("http://10.0.0.1/v1", "10.0.0.1 is a private address"),
    ("http://192.168.1.10:8080/v1", "192.168.1.10 is a private address"),
    ("http://172.16.0.1/v1", "172.16.0.1 is a private address"),
    ("http://169.254.169.254/latest/meta-data", "169.254.169.254 is a cloud metadata address"),
    ("http://[fd00:ec2::254]/latest", "fd00:ec2::254 is a cloud metadata address"),
    ("http://metadata.google.internal/v1", "metadata.google.internal is a cloud metadata host"),
    ("http://100.100.100.200/latest", "is a cloud metadata address"),
    ("http://[::ffff:10.0.0.1]/v1", "::ffff:10.0.0.1 is a private address"),
    ("http://[::ffff:169.254.169.254]/v1", "is a cloud metadata address"),
    ("http://[64:ff9b::a00:1]/v1", "is a private address"),  # NAT64 for 10.0.0.1
    ("http://[2002:a00:1::]/v1", "is a private address"),  # 6to4 for 10.0.0.1
    ("http://[fe80::1]/v1", "is a link-local address"),
    ("http://169.254.10.1/v1", "is a link-local address"),
    ("http://0.0.0.0:8080/v1", "0.0.0.0 is an unspecified address"),
    ("http://[::]:8080/v1", ":: is an unspecified address"),
    ("http://224.0.0.1/v1", "is a multicast address"),
    ("http://100.64.0.1/v1", "is not a public address"),  # shared address space
    ("http://240.0.0.1/v1", "is a reserved address"),
]


@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_non_public_addresses_are_refused_before_any_connection(url: str, why: str) -> None:
    inner = NeverSend()
    generator = OpenAICompatGenerator(base_url=url, model="m", api_key=KEY, transport=inner)
    with pytest.raises(GeneratorError) as caught:
        generator.generate(MESSAGES)
    message = str(caught.value)
    assert why in message and "ASSAY_OUTGOING_HOSTS" in message
    assert caught.value.tries == 1  # a refusal is not retried
    assert inner.seen == []  # nothing left the process


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/", "http:///v1"]
)
def test_only_http_and_https_urls(url: str) -> None:
    with pytest.raises(OutgoingRefused, match=r"need an http or https URL with a host"):
        OutgoingPolicy().check_url(url)


def test_a_name_resolving_to_a_private_address_is_refused() -> None:
    lookups, policy = scripted({"intranet.example": ["10.1.2.3"]})
    inner = NeverSend()
    generator = OpenAICompatGenerator(
        base_url="https://intranet.example/v1", model="m", transport=inner, policy=policy
    )
    with pytest.raises(GeneratorError) as caught:
        generator.generate(MESSAGES)
    assert "intranet.example resolves to 10.1.2.3, which is a private address" in str(caught.value)
    assert "add intranet.example to ASSAY_OUTGOING_HOSTS" in str(caught.value)
    assert lookups == ["intranet.example"] and inner.seen == []


def test_one_bad_address_among_several_refuses_the_host() -> None:
    _, policy = scripted({"dual.example": ["93.184.216.34", "10.0.0.9"]})
    with pytest.raises(OutgoingRefused, match=r"resolves to 10.0.0.9"):
        policy.check_url("http://dual.example/v1")


def test_loopback_is_allowed_by_default_and_refused_when_switched_off(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = GeneratorSettings(kind="openai", base_url=fake.url, model="m")
    assert make_generator(settings, api_key=KEY).generate(MESSAGES).text == "hi"
    assert fake.count == 1
    monkeypatch.setenv("ASSAY_OUTGOING_ALLOW_LOOPBACK", "false")
    port = fake.port
    for url in (
        fake.url,
        f"http://localhost:{port}/v1",
        f"http://LOCALHOST.:{port}/v1",
        f"http://[::ffff:127.0.0.1]:{port}/v1",
        f"http://2130706433:{port}/v1",  # 127.0.0.1 as one number
        f"http://127.1:{port}/v1",
    ):
        generator = make_generator(dataclasses.replace(settings, base_url=url), api_key=KEY)
        with pytest.raises(GeneratorError) as caught:
            generator.generate(MESSAGES)
        assert "is a loopback address" in str(caught.value)
        assert "set ASSAY_OUTGOING_ALLOW_LOOPBACK=true or add" in str(caught.value)
    assert fake.count == 1  # none of them reached the server


def test_the_allow_list_admits_a_named_host(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_OUTGOING_ALLOW_LOOPBACK", "false")
    monkeypatch.setenv("ASSAY_OUTGOING_HOSTS", " other.example , LocalHost ")
    url = f"http://localhost:{fake.port}/v1"
    settings = GeneratorSettings(kind="openai", base_url=url, model="m")
    assert make_generator(settings, api_key=KEY).generate(MESSAGES).text == "hi"
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"
    refused = dataclasses.replace(
        settings, base_url=fake.url
    )  # 127.0.0.1 itself is not on the list
    with pytest.raises(GeneratorError, match=r"add 127.0.0.1 to ASSAY_OUTGOING_HOSTS"):
        make_generator(refused, api_key=KEY).generate(MESSAGES)


def test_the_checked_address_is_the_one_connected_to(fake: FakeOpenAI) -> None:
    """DNS rebinding: the name is resolved once per request, by the policy, and the
    connection goes to that address. httpx never resolves the name itself (the system
    could not: ``llm.internal`` exists only in the script)."""
    answers = {"llm.internal": ["127.0.0.1"]}
    lookups, policy = scripted(answers)
    generator = OpenAICompatGenerator(
        base_url=f"http://llm.internal:{fake.port}/v1", model="m", api_key=KEY, policy=policy
    )
    assert generator.generate(MESSAGES).text == "hi"
    assert fake.headers[0]["host"] == f"llm.internal:{fake.port}"  # the name, not the IP
    answers["llm.internal"] = ["10.0.0.1"]  # the name now points elsewhere
    with pytest.raises(GeneratorError, match=r"resolves to 10.0.0.1"):
        generator.generate(MESSAGES)
    assert lookups == ["llm.internal", "llm.internal"] and fake.count == 1


def test_redirects_are_not_followed_and_the_key_stays_home(
    fake: FakeOpenAI, other: FakeOpenAI
) -> None:
    fake.reset([Redirect(f"{other.url}/chat/completions", code=307)])
    generator = OpenAICompatGenerator(base_url=fake.url, model="m", api_key=KEY, retries=2)
    with pytest.raises(GeneratorError) as caught:
        generator.generate(MESSAGES)
    message = str(caught.value)
    assert "127.0.0.1 answered 307 with a redirect to 127.0.0.2" in message
    assert "redirects are not followed" in message and caught.value.tries == 1
    assert fake.count == 1 and fake.headers[0]["authorization"] == f"Bearer {KEY}"
    assert other.count == 0  # the other host never saw the request, nor the key
    fake.reset([Redirect("/elsewhere")])  # even on the same host
    with pytest.raises(GeneratorError, match=r"redirect to 127.0.0.1"):
        list(generator.stream(MESSAGES))


def test_the_api_key_goes_only_to_the_configured_host(fake: FakeOpenAI, other: FakeOpenAI) -> None:
    with OutgoingPolicy().client(fake.url, timeout=5) as client:
        headers = {"Authorization": f"Bearer {KEY}"}
        assert client.post(f"{fake.url}/chat/completions", json={}, headers=headers).is_success
        with pytest.raises(OutgoingRefused, match=r"the API key goes only to 127.0.0.1"):
            client.post(f"{other.url}/chat/completions", json={}, headers=headers)
        assert client.post(f"{other.url}/chat/completions", json={}).is_success  # no key
    assert [h.get("authorization") for h in other.headers] == [None]


def test_external_systems_follow_the_same_policy(fake: FakeOpenAI, other: FakeOpenAI) -> None:
    with pytest.raises(ExternalError, match=r"external endpoint http://10.0.0.1/rag: .*private"):
        ExternalClient("http://10.0.0.1/rag")
    with pytest.raises(ExternalError, match=r"169.254.169.254 is a cloud metadata address"):
        ExternalClient("http://169.254.169.254/latest/meta-data/iam")
    fake.reset([Redirect(f"{other.url}/chat/completions")])
    client = ExternalClient(f"{fake.url}/chat/completions", retries=0)
    task = Task("t::1", "t", 1, ("question",), "", (), "", (), "", ())
    with pytest.raises(ExternalError, match=r"t::1.*redirect to 127.0.0.2"):
        client.ask(task, "question", 3)
    client.close()
    assert other.count == 0


def test_unresolvable_hosts_pass_a_lenient_check_and_fail_to_connect() -> None:
    _, policy = scripted({})
    assert policy.check_url("http://down.example/v1", strict=False) == []
    with pytest.raises(socket.gaierror):
        policy.check_url("http://down.example/v1")
    inner = NeverSend()
    generator = OpenAICompatGenerator(
        base_url="http://down.example/v1",
        model="m",
        retries=0,
        transport=inner,
        policy=policy,
    )
    with pytest.raises(GeneratorError, match=r"cannot reach down.example"):
        generator.generate(MESSAGES)
    assert inner.seen == []


def test_address_problem_names() -> None:
    assert address_problem("8.8.8.8", allow_loopback=False) is None
    assert address_problem("2606:4700:4700::1111", allow_loopback=False) is None
    assert address_problem("::1", allow_loopback=True) is None
    assert address_problem("::1", allow_loopback=False) == "a loopback address"
    assert address_problem("127.8.9.10", allow_loopback=False) == "a loopback address"
    assert isinstance(OutgoingRefused("x"), InvalidInput)  # 422 in the web, exit 1 in the CLI
