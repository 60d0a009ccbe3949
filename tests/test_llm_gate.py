"""Per-endpoint gates: the requests in flight to one endpoint are bounded, shared by every
generator of a process, and a 429 storm slows the endpoint down without losing a call."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.llm import GeneratorSettings, Message, make_generator
from assay.llm.fanout import in_order
from assay.llm.gate import EndpointGate, Gates, retry_after_s
from assay.llm.traffic import Traffic
from tests.fakes.openai_server import Capacity, Computed, FakeOpenAI, Latency


def echo(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return f"answer to {messages[-1]['content']}"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:  # each test scripts a round of N requests answered together
        yield server


def settings(url: str, **extra: object) -> GeneratorSettings:
    return GeneratorSettings(kind="openai", base_url=url, model="m", **extra)  # type: ignore[arg-type]


def ask(generator: object, number: int) -> str:
    return generator.generate([Message("user", f"q{number}")]).text  # type: ignore[attr-defined]


def held(until: int) -> list[Latency]:
    """Replies held until ``until`` requests are in flight (at most 10 s)."""
    return [Latency(Computed(echo), seconds=10.0, until=until)]


def test_requests_in_flight_never_pass_the_limit(fake: FakeOpenAI) -> None:
    fake.reset(held(4))
    traffic = Traffic(Gates())
    generator = make_generator(settings(fake.url, max_in_flight=4), traffic=traffic)
    answers = list(in_order(lambda n: ask(generator, n), range(16), window=16))
    assert answers == [f"answer to q{n}" for n in range(16)]  # in order, none lost
    assert fake.count == 16
    assert fake.peak_in_flight == 4  # 16 threads asked, 4 went through at once
    [state] = traffic.gates.states()
    assert state["peak"] == 4 and state["in_flight"] == 0


def test_generators_of_one_endpoint_share_its_gate(fake: FakeOpenAI) -> None:
    fake.reset(held(3))
    traffic = Traffic(Gates())
    first = make_generator(settings(fake.url, max_in_flight=3), traffic=traffic)
    second = make_generator(settings(fake.url, max_in_flight=3, max_tokens=99), traffic=traffic)
    both = [first, second] * 6
    list(in_order(lambda pair: ask(pair[1], pair[0]), enumerate(both), window=12))
    assert fake.count == 12
    assert fake.peak_in_flight == 3  # not 3 per generator
    assert len(traffic.gates.states()) == 1


def test_a_generator_without_traffic_still_has_a_gate(fake: FakeOpenAI) -> None:
    fake.reset(held(16))
    generator = make_generator(settings(fake.url))
    list(in_order(lambda n: ask(generator, n), range(32), window=24))
    assert fake.peak_in_flight == 16  # the default limit of its own gate


def test_a_429_storm_slows_the_endpoint_and_loses_no_call() -> None:
    with FakeOpenAI([Capacity(3, Computed(echo), seconds=0.05, retry_after="0.05")]) as fake:
        traffic = Traffic(Gates())
        generator = make_generator(
            settings(fake.url, max_in_flight=12, retries=10), traffic=traffic
        )
        answers = list(in_order(lambda n: ask(generator, n), range(60), window=12))
    assert answers == [f"answer to q{n}" for n in range(60)]  # 0 lost
    assert fake.limited > 0  # the storm happened
    [state] = traffic.gates.states()
    assert state["slowdowns"] >= 1
    assert state["allowed"] < 12  # fewer in flight after the 429s
    assert fake.count == 60 + fake.limited  # every 429 was asked again, nothing more


def test_one_round_of_429s_halves_once_and_successes_climb_back() -> None:
    gate = EndpointGate("e", 8)
    with gate.slot() as first, gate.slot() as second:
        gate.slow_down(first, None)
        gate.slow_down(second, None)  # the same round: no second halving
    assert gate.allowed == 4 and gate.slowdowns == 1
    with gate.slot() as third:
        gate.slow_down(third, None)  # a request of the new round: halves again
    assert gate.allowed == 2
    steps = []
    for _ in range(20):
        with gate.slot() as ticket:
            gate.succeeded(ticket)
        steps.append(gate.allowed)
    assert steps[:5] == [2, 3, 3, 3, 4]  # one more after as many successes as allowed
    assert max(steps) <= 8
    gate.set_limit(3)
    assert gate.allowed <= 3 and gate.limit == 3


def test_a_retry_after_holds_new_requests_back() -> None:
    now = [100.0]
    gate = EndpointGate("e", 4, clock=lambda: now[0])
    with gate.slot() as ticket:
        gate.slow_down(ticket, 5.0)
    assert gate.state()["paused_s"] == 5.0
    now[0] = 106.0  # the pause is over: a slot is given at once
    with gate.slot():
        assert gate.in_flight == 1


def test_retry_after_reads_seconds_and_dates() -> None:
    assert retry_after_s("2") == 2.0
    assert retry_after_s("") is None and retry_after_s("soon") is None
    value = retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT")
    assert value is not None and value < 0  # a date in the past: no wait


def test_in_order_keeps_order_and_raises_where_the_unit_failed() -> None:
    def work(n: int) -> int:
        if n == 5:
            raise ValueError("five")
        return n * n

    got = []
    with pytest.raises(ValueError, match="five"):
        for value in in_order(work, range(10), window=4):
            got.append(value)
    assert got == [0, 1, 4, 9, 16]


def test_an_external_system_answering_429_slows_its_gate() -> None:
    from assay.experiments.external import ExternalClient
    from assay.experiments.pool_sources import adhoc_task
    from tests.fakes.rag_service import FakeRag

    replies = iter([429, {"answer": "At 22:40.", "contexts": []}])
    with FakeRag(lambda body: next(replies)) as service:
        gate = EndpointGate(service.url, 8)
        client = ExternalClient(service.url, retries=2, backoff_s=0.0, gate=gate)
        try:
            reply = client.ask(adhoc_task("When?"), "When?", 5)
        finally:
            client.close()
    assert reply.answer == "At 22:40." and len(service.requests) == 2
    assert gate.slowdowns == 1 and gate.allowed == 4 and gate.in_flight == 0
