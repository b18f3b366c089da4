"""Server pieces that make it fast, checked for keeping behaviour: the audit writer's batches,
coalesced socket writes, the shared line-editor table, batched lease renewal."""

from __future__ import annotations

import asyncio
from typing import Any

from asyncssh import editor

from kfs.agents import acquire_session, renew_leases
from kfs.agents.sessions import holder_id, list_sessions
from kfs.journal import events_since
from kfs.kstate import KState
from kfs.vfs import VFS
from kshell.server.app import CoalescingTransport, share_line_editor_tables
from kshell.server.audit import AuditWriter


def test_audit_events_keep_their_order_across_batches(state: KState) -> None:
    writer = AuditWriter(state)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        waits = []
        for i in range(200):
            if i % 7 == 0:
                fut: asyncio.Future[None] = loop.create_future()
                writer.put("test.event", {"n": i}, fut)
                waits.append(fut)
            else:
                writer.put("test.event", {"n": i})
        await asyncio.gather(*waits)

    asyncio.run(main())
    writer.close()
    assert [e["n"] for e in events_since(state, 0) if e["type"] == "test.event"] == list(range(200))


def test_a_failing_audit_event_fails_alone(state: KState) -> None:
    writer = AuditWriter(state)

    async def main() -> list[Any]:
        loop = asyncio.get_running_loop()
        futs = [loop.create_future() for _ in range(3)]
        writer.put("test.ok", {"n": 1}, futs[0])
        writer.put("test.bad", {"n": object()}, futs[1])  # not JSON: this event cannot be written
        writer.put("test.ok", {"n": 2}, futs[2])
        return await asyncio.gather(*futs, return_exceptions=True)

    results = asyncio.run(main())
    writer.close()
    assert results[0] is None and results[2] is None and isinstance(results[1], Exception)
    assert [e["n"] for e in events_since(state, 0) if e["type"] == "test.ok"] == [1, 2]


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


def test_writes_of_one_loop_turn_go_out_together() -> None:
    async def main() -> None:
        raw = FakeTransport()
        t = CoalescingTransport(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"one ")
        t.write(b"two ")
        t.write(b"three")
        assert raw.writes == []
        await asyncio.sleep(0)
        assert raw.writes == [b"one two three"]
        t.write(b"last")
        t.close()  # close sends what is pending first
        assert raw.writes[-1] == b"last" and raw.closed
        assert t.get_extra_info("peername") == "info:peername"  # everything else is the transport's

        raw2 = FakeTransport()
        t2 = CoalescingTransport(raw2, asyncio.get_running_loop())  # type: ignore[arg-type]
        t2.write(b"dropped")
        t2.abort()
        await asyncio.sleep(0)
        assert raw2.writes == [] and raw2.aborted

    asyncio.run(main())


def test_the_shared_line_editor_table_is_the_one_asyncssh_builds() -> None:
    class Keys:
        def __init__(self, keys: list[str]) -> None:
            self._keymap = dict.fromkeys(keys)

    base = [chr(c) for c in range(32)] + ["\x7f"]
    build = editor.SSHLineEditor._build_printable
    original = getattr(build, "k_original", build)  # a server in this process may have shared it
    expected = []
    for keys in (base, [*base, "\x1a"], ["\x1b", "a"]):
        plain = Keys(keys)
        original(plain)
        expected.append(plain._printable.pattern)  # type: ignore[attr-defined]
    share_line_editor_tables()
    for keys, pattern in zip((base, [*base, "\x1a"], ["\x1b", "a"]), expected, strict=True):
        for _ in range(2):  # built once, then shared
            shared = Keys(keys)
            editor.SSHLineEditor._build_printable(shared)  # type: ignore[arg-type]
            assert shared._printable.pattern == pattern  # type: ignore[attr-defined]


def test_leases_renew_in_one_transaction(vfs: VFS) -> None:
    mine, other = holder_id(1), holder_id(2)
    acquire_session(vfs.state, "alice", "a", "/", mine, 0.0)
    acquire_session(vfs.state, "alice", "b", "/", other, 30)
    assert renew_leases(vfs.state, [("alice", "a", mine), ("alice", "b", mine), ("alice", "c", mine)], 60) == [
        True, False, False,
    ]
    leases = {r.name: lease for r, lease in list_sessions(vfs.state)}
    assert leases["a"]["serial"] == 1 and leases["b"]["serial"] == 2
