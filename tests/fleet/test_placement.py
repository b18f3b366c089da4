"""Membership, placement and fencing tokens on a real 3-member etcd cluster (conftest.py)."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import HANG, Etcd

from kshell.server.fleet import Member, connect

MEMBER = str(Path(__file__).with_name("member.py"))


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, HANG * 2))


def prefix() -> str:
    return f"/k-{secrets.token_hex(4)}/"  # each test a fleet of its own on the shared cluster


def spawn(etcd: Etcd, name: str, pfx: str, ttl: int = 2) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, MEMBER, ",".join(etcd.endpoints), name, str(ttl), pfx],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.stdout is not None and proc.stdout.readline() == "joined\n"
    return proc


async def until_gone(member: Member, name: str) -> None:
    deadline = time.monotonic() + HANG
    while name in await member.members():
        assert time.monotonic() < deadline, f"{name} never left"
        await asyncio.sleep(0.1)


def test_three_hosts_join_and_300_keys_are_placed_once_and_balanced(etcd: Etcd) -> None:
    async def main() -> None:
        pfx = prefix()
        hosts = [Member(connect(etcd.endpoints), f"h{i}", f"127.0.0.{i + 1}:22", prefix=pfx) for i in range(3)]
        for h in hosts:
            await h.join()
        assert await hosts[0].members() == {"h0": "127.0.0.1:22", "h1": "127.0.0.2:22", "h2": "127.0.0.3:22"}
        keys = [f"c{i}" for i in range(300)]
        # every host places every key at once: each key still gets one owner, the same for all
        answers = await asyncio.gather(*(h.place_many(keys) for h in hosts))
        assert answers[0] == answers[1] == answers[2]
        owners = Counter(p.owner for p in answers[0])
        assert set(owners) == {"h0", "h1", "h2"} and min(owners.values()) >= 70, owners
        # one transaction places up to 128 keys (one revision, each key's token); what each host
        # was told is what etcd holds
        assert {p.key: p for p in await hosts[1].placements()} == {p.key: p for p in answers[0]}
        for h in hosts:
            await h.leave()
            await h.client.close()

    run(main())


def test_of_two_moves_from_one_token_one_happens(etcd: Etcd) -> None:
    async def main() -> None:
        pfx = prefix()
        hosts = [Member(connect(etcd.endpoints), f"h{i}", f"h{i}:22", prefix=pfx) for i in range(3)]
        for h in hosts:
            await h.join()
        for i in range(20):
            first = await hosts[0].place(f"m{i}")
            others = [n for n in ("h0", "h1", "h2") if n != first.owner]
            a, b = await asyncio.gather(hosts[1].place(f"m{i}", to=others[0], expect=first.token),
                                        hosts[2].place(f"m{i}", to=others[1], expect=first.token))
            assert a == b and a.owner in others and a.token > first.token
        for h in hosts:
            await h.leave()
            await h.client.close()

    run(main())


def test_a_moved_key_is_refused_to_its_old_owner_and_the_move_waits_for_it_to_let_go(etcd: Etcd) -> None:
    """`komputer fleet move`'s protocol: the placement swapped from the token read, then a wait
    for the old owner's claim (open/KEY) to go; the old owner cannot claim the key again."""

    async def main() -> None:
        pfx = prefix()
        hosts = [Member(connect(etcd.endpoints), f"h{i}", f"h{i}:22", prefix=pfx) for i in range(2)]
        for h in hosts:
            await h.join()
        operator = Member(connect(etcd.endpoints), "operator", "", prefix=pfx)
        placed = await hosts[0].place("k", to="h0")
        assert await hosts[0].claim("k") == placed.token
        assert await operator.opened() == {"k": ("h0", placed.token)}
        with pytest.raises(PermissionError):
            await hosts[1].claim("k")  # placed elsewhere: not to be opened here
        before, after, let_go = await operator.move("k", "h1", wait=0.5)  # h0 never lets go here
        assert before == placed and after.owner == "h1" and after.token > placed.token and not let_go
        with pytest.raises(PermissionError):
            await hosts[0].claim("k")  # the old owner is fenced off the key
        waiting = asyncio.ensure_future(operator.closed_before("k", after.token, wait=HANG))
        await hosts[0].unclaim("k", placed.token)  # h0 has closed it
        assert await waiting
        assert await hosts[1].claim("k") == after.token
        assert await operator.opened() == {"k": ("h1", after.token)}
        assert (await operator.move("k", "h1", wait=0))[2]  # already there: nothing to do
        with pytest.raises(LookupError):
            await operator.move("k", "nosuch", wait=0)
        for h in hosts:
            await h.leave()
            await h.client.close()
        assert await operator.opened() == {}  # a claim goes with its host's lease
        await operator.client.close()

    run(main())


def test_a_killed_host_leaves_and_its_keys_move_with_new_tokens(etcd: Etcd) -> None:
    pfx = prefix()
    victim = spawn(etcd, "h2", pfx)

    async def main() -> None:
        hosts = [Member(connect(etcd.endpoints), f"h{i}", f"h{i}:22", prefix=pfx) for i in range(2)]
        for h in hosts:
            await h.join()
        before = {p.key: p for p in await hosts[0].place_many([f"k{i}" for i in range(60)])}
        theirs = [p for p in before.values() if p.owner == "h2"]
        assert theirs
        victim.send_signal(signal.SIGKILL)
        victim.wait(HANG)
        await until_gone(hosts[0], "h2")
        after = {p.key: p for p in await hosts[1].place_many(list(before))}
        for p in theirs:
            assert after[p.key].owner in ("h0", "h1") and after[p.key].token > p.token
        assert all(after[k] == p for k, p in before.items() if p.owner != "h2")  # the others stay
        for h in hosts:
            await h.leave()
            await h.client.close()

    run(main())


def test_a_frozen_host_is_fenced_before_its_keys_move(etcd: Etcd) -> None:
    """SIGSTOP past its lease: etcd drops it and its keys move; continued, it finds itself
    fenced (its own deadline passed) and never says it may serve again."""
    pfx = prefix()
    frozen = spawn(etcd, "h2", pfx)
    assert frozen.stdin is not None and frozen.stdout is not None
    try:
        async def main() -> None:
            host = Member(connect(etcd.endpoints), "h0", "h0:22", prefix=pfx)
            await host.join()
            frozen.stdin.write("?\n")
            frozen.stdin.flush()
            assert frozen.stdout.readline() == "valid\n"
            owned = [p for p in await host.place_many([f"f{i}" for i in range(30)]) if p.owner == "h2"]
            frozen.send_signal(signal.SIGSTOP)
            await until_gone(host, "h2")
            moved = await host.place_many([p.key for p in owned])
            assert {p.owner for p in moved} == {"h0"}
            frozen.send_signal(signal.SIGCONT)
            for _ in range(3):
                frozen.stdin.write("?\n")
                frozen.stdin.flush()
                assert frozen.stdout.readline() == "fenced\n"
            await host.leave()
            await host.client.close()

        run(main())
    finally:
        frozen.send_signal(signal.SIGCONT)
        frozen.kill()
        frozen.wait(HANG)


def test_the_fleet_goes_on_with_one_etcd_member_killed(etcd: Etcd) -> None:
    """Last in this file: it leaves the cluster with two members (a quorum still)."""

    async def main() -> None:
        pfx = prefix()
        hosts = [Member(connect(etcd.endpoints), f"h{i}", f"h{i}:22", prefix=pfx) for i in range(2)]
        for h in hosts:
            await h.join()
        before = await hosts[0].place_many([f"e{i}" for i in range(20)])
        etcd.kill(0)
        assert await hosts[1].place_many([f"e{i}" for i in range(20)]) == before
        more = await hosts[0].place_many([f"n{i}" for i in range(20)])
        assert {p.owner for p in more} <= {"h0", "h1"}
        assert set(await hosts[1].members()) == {"h0", "h1"}
        for h in hosts:
            assert h.valid()
            await h.leave()
            await h.client.close()

    run(main())
