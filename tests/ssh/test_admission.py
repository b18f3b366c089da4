"""Admission is fair between agents: one agent's storm of sessions never queues another
agent's logins behind it (limits.AgentStarts, workers.FairWaiters)."""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import textwrap
import time

from kserver import Bench, need

from kshell.server import ServerConfig
from kshell.server.config import Penalties
from kshell.server.limits import AgentStarts
from kshell.server.workers import FairWaiters
from tests.hang import apoll

STORM = 100  # alice's sessions at once: 10 connections x MaxSessions 10


def test_waiting_workers_are_handed_out_by_agent_in_turn() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        waiters = FairWaiters()
        made: dict[asyncio.Future[object], str] = {}
        for agent, n in (("a", 50), ("b", 2), ("c", 1)):
            for i in range(n):
                fut: asyncio.Future[object] = loop.create_future()
                made[fut] = f"{agent}{i}"
                waiters.add(agent, fut)
        gone = next(f for f, name in made.items() if name == "a1")
        waiters.discard("a", gone)  # a session that went away while it waited
        order = []
        while (fut := waiters.pop()) is not None:
            order.append(made[fut])
        assert len(waiters) == 0
        return order

    order = asyncio.run(main())
    assert order[:6] == ["a0", "b0", "c0", "a2", "b1", "a3"]  # b and c never wait behind a's 50
    assert len(order) == 52 and "a1" not in order


def test_an_agents_queued_starts_never_hold_up_another_agents() -> None:
    async def main() -> tuple[int, bool]:
        starts = AgentStarts(4)
        release = asyncio.Event()
        entered = 0

        async def a_start() -> None:
            nonlocal entered
            async with starts.slot("a"):
                entered += 1
                await release.wait()

        storm = [asyncio.create_task(a_start()) for _ in range(100)]
        await apoll(lambda: entered == 4, "a's first four never entered")
        for _ in range(10):
            await asyncio.sleep(0)
        held = entered
        async with starts.slot("b"):  # b gets a slot of its own at once, with 96 of a's queued
            b_in = starts.waiting("a") == 100
        release.set()
        await asyncio.gather(*storm)
        return held, b_in and starts.waiting("a") == 0

    held, b_in = asyncio.run(main())
    assert held == 4 and b_in


STORM_CLIENT = textwrap.dedent("""
    import asyncio, sys
    import asyncssh

    async def main(port, key, count):
        conns = [await asyncssh.connect("127.0.0.1", port, username="alice", known_hosts=None,
                                        client_keys=[key], agent_path=None) for _ in range(count // 10)]
        async def one(conn):
            try:
                result = await conn.run("sleep 2; echo done")
                return result.stdout == "done\\n"
            except asyncssh.Error:
                return False
        sessions = [asyncio.ensure_future(one(conns[i % len(conns)])) for i in range(count)]
        await asyncio.sleep(0)
        print("storming", flush=True)
        ok = sum(await asyncio.gather(*sessions))
        print(f"ok {ok}", flush=True)
        for conn in conns:
            conn.close()

    asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
""")


def test_another_agents_logins_go_on_while_one_agent_storms_sessions(make_server) -> None:  # type: ignore[no-untyped-def]
    """Alice opens 100 sessions at once; bob's logins (a new connection and `echo ok` each,
    with the OpenSSH client) all succeed meanwhile, none held up for long (a hang-catching
    bound, not a timing claim: the figures are printed)."""
    b: Bench = make_server(ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",))))
    need("ssh")
    assert b.ssh("echo warm", user="bob").returncode == 0
    storm = subprocess.Popen([sys.executable, "-c", STORM_CLIENT, str(b.port), str(b.keys["alice"]), str(STORM)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert storm.stdout is not None
        assert storm.stdout.readline().strip() == "storming"
        latencies = []
        for _ in range(8):
            t0 = time.perf_counter()
            done = b.ssh("echo ok", user="bob", timeout=120)
            latencies.append(time.perf_counter() - t0)
            assert done.returncode == 0 and done.stdout == b"ok\n", done.stderr
        ok = storm.stdout.readline().strip()
    finally:
        storm.wait(180)
    assert ok == f"ok {STORM}"  # alice's storm itself is served whole (100 is under her cap of 256)
    latencies.sort()
    print(f"bob's logins during alice's storm of {STORM}: median {statistics.median(latencies):.3f} s, "
          f"max {latencies[-1]:.3f} s")
    assert latencies[-1] < 60  # a hang, not a slow machine
