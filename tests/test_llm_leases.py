"""Endpoint slot leases in the database: the limit of an endpoint holds over several worker
processes, and the slots of a killed process come back when its leases expire."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from assay.llm.gate import EndpointGate, Gates
from assay.llm.slot_leases import Lease, SlotLeases, stored_endpoint
from assay.llm.traffic import workspace_gates
from assay.store.workspace import Workspace
from tests.fakes.openai_server import Computed, FakeOpenAI, Latency

ROOT = Path(__file__).resolve().parents[1]


def test_slots_are_bounded_and_given_back(any_ws: Workspace) -> None:
    leases = SlotLeases(any_ws.engine, holder="test:1")
    taken = [leases.try_take("http://e m", 3, 60.0) for _ in range(3)]
    assert all(taken) and sorted(lease.slot for lease in taken if lease) == [0, 1, 2]
    assert leases.try_take("http://e m", 3, 60.0) is None  # full
    assert leases.try_take("http://other m", 3, 60.0) is not None  # another endpoint
    assert leases.held("http://e m") == 3
    first = taken[0]
    assert first is not None
    leases.give_back(first)
    again = leases.try_take("http://e m", 3, 60.0)
    assert again is not None and again.slot == first.slot
    assert leases.try_take("http://e m", 2, 60.0) is None  # a lower limit counts every lease


def test_a_killed_processs_slots_come_back_when_they_expire(any_ws: Workspace) -> None:
    killed = SlotLeases(any_ws.engine, holder="killed:1")
    for _ in range(2):
        assert killed.try_take("http://e m", 2, -1.0) is not None  # never given back, expired
    other = SlotLeases(any_ws.engine, holder="alive:2")
    assert other.try_take("http://e m", 2, 60.0) is not None
    assert other.try_take("http://e m", 2, 60.0) is not None
    assert other.held("http://e m") == 2


def test_long_endpoints_are_stored_hashed() -> None:
    assert stored_endpoint("http://e m") == "http://e m"
    long = "http://e/" + "x" * 600
    assert stored_endpoint(long).startswith("sha256:") and len(stored_endpoint(long)) < 500


def test_gates_take_leases_on_postgresql_only(ws: Workspace) -> None:
    leases = workspace_gates(ws).leases
    if ws.engine.dialect.name == "sqlite":
        assert leases is None  # one process runs the jobs
    else:
        assert isinstance(leases, SlotLeases)  # workers in several processes share the limit
    assert workspace_gates(ws) is workspace_gates(ws)  # one per workspace object


WORKER = textwrap.dedent(
    """
    import pathlib, sys, time
    from assay.llm import GeneratorSettings, Message, make_generator
    from assay.llm.fanout import in_order
    from assay.llm.traffic import workspace_traffic
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace

    url, database, go, name = sys.argv[1:5]
    ws = Workspace.open(Settings(home=pathlib.Path(go).parent / name, database_url=database))
    settings = GeneratorSettings(kind="openai", base_url=url, model="m", max_in_flight=3)
    generator = make_generator(settings, traffic=workspace_traffic(ws, cache=False))
    assert workspace_traffic(ws).gates.leases is not None
    print("ready", flush=True)
    while not pathlib.Path(go).exists():
        time.sleep(0.01)
    ask = lambda n: generator.generate([Message("user", f"{name} {n}")]).text
    answers = list(in_order(ask, range(15), 8))
    print(len(answers), flush=True)
    """
)


@pytest.mark.postgres
def test_two_processes_never_pass_the_limit_together(pg_ws: Workspace, tmp_path: Path) -> None:
    database = pg_ws.engine.url.render_as_string(hide_password=False)
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with FakeOpenAI([Latency(Computed(lambda body: "ok"), seconds=10.0, until=3)]) as fake:
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, fake.url, database, str(go), f"w{n}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for n in range(2)
        ]
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline()
            assert line.strip() == "ready", worker.stderr.read() if worker.stderr else line
        go.touch()  # both start asking at once
        outputs = [worker.communicate(timeout=300) for worker in workers]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        assert out.strip() == "15"
    assert fake.count == 30
    # each process alone would keep 3 in flight: together they keep the one limit
    assert fake.peak_in_flight == 3
    assert SlotLeases(pg_ws.engine).held(f"{fake.url} m") == 0  # every lease given back


def test_a_gate_with_leases_bounds_the_threads_of_one_process(any_ws: Workspace) -> None:
    from assay.llm import GeneratorSettings, Message, make_generator
    from assay.llm.fanout import in_order
    from assay.llm.traffic import Traffic

    gates = Gates(SlotLeases(any_ws.engine))
    with FakeOpenAI([Latency(Computed(lambda body: "ok"), seconds=10.0, until=2)]) as fake:
        settings = GeneratorSettings(kind="openai", base_url=fake.url, model="m", max_in_flight=2)
        generator = make_generator(settings, traffic=Traffic(gates))
        ask = lambda n: generator.generate([Message("user", str(n))]).text  # noqa: E731
        assert list(in_order(ask, range(8), 8)) == ["ok"] * 8
    assert fake.peak_in_flight == 2
    assert SlotLeases(any_ws.engine).held(f"{fake.url} m") == 0


class CountingLeases(SlotLeases):
    """Real leases in the workspace's database, counting the takes that reach it and the
    most that were asked at once."""

    takes = 0
    asking = 0
    most_asking = 0

    def try_take(self, key: str, limit: int, hold_s: float) -> Lease | None:
        self.takes += 1
        self.asking += 1
        self.most_asking = max(self.most_asking, self.asking)
        try:
            return super().try_take(key, limit, hold_s)
        finally:
            self.asking -= 1


def test_a_finished_requests_lease_serves_the_next_request_of_the_process(
    any_ws: Workspace,
) -> None:
    leases = CountingLeases(any_ws.engine)
    gate = EndpointGate("http://e m", 2, leases=leases)
    with gate.slot():
        for _ in range(5):  # one request stays in flight: each finished lease is kept
            with gate.slot() as ticket:
                assert ticket.lease is not None
    assert leases.takes == 2  # the first request's lease and one more, used five times
    assert leases.held("http://e m") == 0  # the last request here gave every lease back


def test_a_spare_lease_goes_back_when_no_request_takes_it(any_ws: Workspace) -> None:
    leases = SlotLeases(any_ws.engine)
    gate = EndpointGate("http://e m", 3, leases=leases)
    with gate.slot():
        with gate.slot():
            pass
        assert leases.held("http://e m") == 2  # the finished one is kept a moment
        deadline = time.monotonic() + 30
        while leases.held("http://e m") > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert leases.held("http://e m") == 1  # nobody took it: back after SPARE_S
    assert leases.held("http://e m") == 0


def test_a_lease_goes_back_after_serving_its_time_so_processes_take_turns(
    any_ws: Workspace,
) -> None:
    now = [0.0]
    leases = CountingLeases(any_ws.engine)
    gate = EndpointGate("http://e m", 2, leases=leases, hold_s=8.0, clock=lambda: now[0])
    assert gate.reuse_s == 2.0  # a quarter of the lease's life, at most REUSE_S
    with gate.slot():
        with gate.slot():
            now[0] = 3.0  # this request's lease has served longer than that
        assert leases.held("http://e m") == 1  # so it went back at once
        with gate.slot():
            pass
        assert leases.takes == 3  # the next request took a slot afresh


def test_while_every_slot_is_taken_one_thread_of_a_process_asks_the_database(
    any_ws: Workspace,
) -> None:
    other = SlotLeases(any_ws.engine, holder="other:1")
    held = [other.try_take("http://e m", 4, 60.0) for _ in range(4)]
    leases = CountingLeases(any_ws.engine)
    gate = EndpointGate("http://e m", 4, leases=leases)  # four threads want the database
    done: list[int] = []

    def ask(n: int) -> None:
        with gate.slot():
            done.append(n)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while leases.takes < 3 and time.monotonic() < deadline:  # the database is full: it polls
        time.sleep(0.01)
    assert done == []
    for lease in held:
        assert lease is not None
        other.give_back(lease)
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(done) == list(range(6))
    assert leases.most_asking == 1  # the others waited for their turn, not polling too
    assert leases.held("http://e m") == 0
