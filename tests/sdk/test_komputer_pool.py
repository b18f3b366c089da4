"""KomputerPool over real states: one boot per key however many ask at once, a bound on warm
computers, idle sessions detached and idle computers closed by `sweep`, nothing warm with
max_warm=0."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kshell.sdk import Komputer, KomputerPool

HANG = 120.0


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, HANG))


def booter(tmp_path: Path, boots: list[str]):  # type: ignore[no-untyped-def]
    async def boot(key: str) -> Komputer:
        boots.append(key)
        computer = await Komputer.boot(state=tmp_path / key)
        await computer.add_agent("assistant")
        return computer

    return boot


def test_fifty_concurrent_logins_on_one_key_boot_once(tmp_path: Path) -> None:
    boots: list[str] = []

    async def main() -> None:
        async with KomputerPool(booter(tmp_path, boots), max_warm=4) as pool:
            sessions = await asyncio.gather(*(pool.login("tenant:a", "assistant") for _ in range(50)))
            assert boots == ["tenant:a"]
            assert len({s.id for s in sessions}) == 50
            assert pool.stats()["sessions"] == 50 and pool.stats()["warm"] == 1
            results = await asyncio.gather(*(s.exec("echo ok") for s in sessions[:5]))
            assert {r.stdout for r in results} == {b"ok\n"}

    run(main())


def test_sweep_detaches_idle_sessions_and_closes_idle_computers(tmp_path: Path) -> None:
    boots: list[str] = []

    async def main() -> None:
        pool = KomputerPool(booter(tmp_path, boots), max_warm=8, idle_for=0.0)
        agent = await pool.login("k1", "assistant", id="chat")
        await agent.exec("cd /tmp")
        computer = await pool.get("k1")
        assert await pool.sweep() == {"detached": 1, "closed": 1}
        assert computer.closed and pool.stats()["warm"] == 0
        again = await pool.login("k1", "assistant", id="chat")  # a new boot restores the session
        assert (await again.exec("pwd")).stdout == b"/tmp\n"
        assert boots == ["k1", "k1"]
        await pool.close()

    run(main())


def test_max_warm_bounds_computers_and_zero_keeps_none(tmp_path: Path) -> None:
    boots: list[str] = []

    async def main() -> None:
        pool = KomputerPool(booter(tmp_path, boots), max_warm=2)
        for key in ("a", "b", "c"):
            await pool.get(key)
        assert pool.stats()["warm"] == 2  # the least recently used went
        await pool.close()
        cold = KomputerPool(booter(tmp_path, boots), max_warm=0)
        async with cold.with_login("d", "assistant", id="x") as agent:
            assert (await agent.exec("echo in")).stdout == b"in\n"
        assert cold.stats()["warm"] == 0

    run(main())


def test_a_get_during_a_close_waits_for_it_never_two_open(tmp_path: Path) -> None:
    """A login coming while `sweep` closes its key's computer boots it again only once the old
    one is closed (two KServers on one state at once would be two owners of its leases)."""
    boots: list[str] = []
    open_now: set[int] = set()
    seen: list[int] = []

    async def boot(key: str) -> Komputer:
        computer = await booter(tmp_path, boots)(key)
        seen.append(len(open_now))
        open_now.add(id(computer))
        close = computer.close

        async def closing(**kw: bool) -> None:
            await close(**kw)
            open_now.discard(id(computer))

        computer.close = closing  # type: ignore[method-assign]
        return computer

    async def main() -> None:
        async with KomputerPool(boot, max_warm=4, idle_for=0.0) as pool:
            await pool.get("k")
            sweep = asyncio.create_task(pool.sweep())
            await asyncio.sleep(0)  # the sweep has begun closing "k"
            again = await pool.get("k")
            assert (await sweep)["closed"] == 1
            assert not again.closed and seen == [0, 0] and boots == ["k", "k"]

    run(main())


def test_checkout_holds_a_computer_against_sweep_and_max_warm(tmp_path: Path) -> None:
    """What a front end holds for a connection (kshell.server.computers) is never closed under it."""
    boots: list[str] = []

    async def main() -> None:
        async with KomputerPool(booter(tmp_path, boots), max_warm=1, idle_for=0.0) as pool:
            held = await pool.checkout("a")
            await pool.get("b")  # past max_warm: only an unused one may close
            assert (await pool.sweep())["closed"] == 1
            assert not held.closed and pool.keys() == ["a"]
            pool.checkin("a")
            assert (await pool.sweep())["closed"] == 1 and held.closed

    run(main())


def test_a_release_during_a_boot_closes_the_computer_once_booted(tmp_path: Path) -> None:
    """A fleet host lets go of a computer moved away even while it is still opening it."""

    async def main() -> None:
        started, go = asyncio.Event(), asyncio.Event()

        async def boot(key: str) -> Komputer:
            started.set()
            await go.wait()
            return await Komputer.boot(state=tmp_path / key)

        pool = KomputerPool(boot)
        getting = asyncio.ensure_future(pool.get("k"))
        await started.wait()
        releasing = asyncio.ensure_future(pool.release("k"))
        await asyncio.sleep(0)  # the release runs up to its wait for the boot
        go.set()
        computer = await getting
        await releasing
        assert computer.closed and pool.peek("k") is None and pool.stats()["warm"] == 0

    run(main())
