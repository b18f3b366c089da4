"""Sessions and leases: which agent session each connection (or SDK front end) runs in, and
the lease on it this server holds, renews and releases.

One role of the server (kshell.server.app wires them). A connection is one agent session (a
`kfs.agents` record with a lease). Its first session channel takes the lease, on the session its
`K_SESSION` names or on a fresh ephemeral one; every later channel of the connection (OpenSSH
ControlMaster, several exec channels on one paramiko Transport, sftp + exec) runs in the same
session, so multiplexing never locks a client out of its own session. The lease is renewed while
the connection lives (`renew`, from the server's housekeeping) and released when it is gone and
its last channel has saved; a crashed server's leases lapse (dead pid, or no renewal for
`lease_ttl`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Iterable
from typing import Any

import asyncssh

from kfs import agents
from kfs.agents import Agent, LeaseHeld, SessionRecord
from kfs.agents.sessions import holder_id
from kfs.kstate import KState
from kshell.server.auth import Connection
from kshell.server.limits import AgentStarts

log = logging.getLogger("kshell.server")

RELEASE_WAIT = 5.0  # seconds a new connection waits for a just-closed one's lease to be released


class SessionMismatch(LeaseHeld):
    """A channel names a `K_SESSION` other than the one its connection already runs in.

    A connection is one agent session: its first session channel chooses it (by `K_SESSION`, or
    an ephemeral one without), and every later channel runs in it. A channel naming another
    session is refused (not silently moved) so that a multiplexing client (OpenSSH ControlMaster)
    never runs a command in a session the user did not ask for.
    """


class SessionLeases:
    """The leases one server holds: taken by a connection's first channel or an SDK front end,
    renewed until released. `starts` paces each agent's session starts (kshell.server.limits)."""

    def __init__(self, state: KState, lease_ttl: float, starts: AgentStarts) -> None:
        self.state = state
        self.lease_ttl = lease_ttl
        self.starts = starts
        self._holders = itertools.count(1)
        self._held: dict[tuple[str, str], dict[str, Any]] = {}  # leases to renew: (agent, session) -> holder
        self._releasing: dict[tuple[str, str], asyncio.Future[None]] = {}  # closed, release under way
        self._pending_release: set[asyncio.Task[None]] = set()

    def new_holder(self) -> dict[str, Any]:
        return holder_id(next(self._holders))

    # -- a connection's session --------------------------------------------------------------

    async def join(self, c: Connection, name: str | None) -> SessionRecord:
        """The agent session a new session channel of `c` runs in.

        The connection's first session channel takes the lease (on the session its `K_SESSION`
        names, else a fresh ephemeral one); later channels share it, at once or one after
        another (ControlMaster, paramiko's several exec channels, sftp + exec). A channel naming
        another session gets `SessionMismatch`; another connection's live lease, `LeaseHeld`.
        Every successful join is paired with `leave`.
        """
        agent = c.agent
        assert agent is not None
        name = name or None
        async with self.starts.slot(agent.name), c.session_lock:  # channels opened together wait for the first's lease
            if c.closed:
                raise LeaseHeld("the connection closed before the session started")
            record = c.session
            if record is None:
                holder = self.new_holder()
                record = await self._acquire(agent, name, holder)
                c.session, c.session_holder = record, holder
                self._held[(agent.name, record.name)] = holder
            elif name is not None and name != record.name:
                raise SessionMismatch(
                    f"this connection already runs session {record.name!r}; K_SESSION={name} "
                    "needs a connection of its own (a multiplexed ssh: add -S none)"
                )
            c.session_users += 1
            return record

    async def leave(self, c: Connection, record: SessionRecord, saved: dict[str, Any] | None) -> None:
        """A channel is done with the connection's session. A named session keeps what the
        channel leaves (cwd, exported variables, functions) for the next channel and the next
        `K_SESSION` resume, saved at once so a crash loses nothing; an ephemeral one starts every
        channel afresh in the home directory, as sshd runs each multiplexed command in a new
        shell. The lease stays until the connection is gone and its last channel has left."""
        try:
            if saved is not None:
                await asyncio.to_thread(agents.keep_session, self.state, record, saved)
        finally:
            c.session_users -= 1
            if c.closed and c.session_users == 0:
                self._release(c)

    def connection_closed(self, c: Connection) -> None:
        """The connection is gone: release its session once no channel uses it any more (a
        channel still running saves its state first; `_acquire` waits for the release)."""
        if c.session is not None:
            key = (c.session.agent, c.session.name)
            if key not in self._releasing:
                self._releasing[key] = asyncio.get_running_loop().create_future()
            if c.session_users == 0:
                self._release(c)

    def _release(self, c: Connection) -> None:
        record, holder = c.session, c.session_holder
        if record is None or holder is None:
            return
        c.session = c.session_holder = None
        key = (record.agent, record.name)
        self._held.pop(key, None)
        task = asyncio.get_running_loop().create_task(
            asyncio.to_thread(agents.release_session, self.state, record, holder)
        )
        self._pending_release.add(task)

        def done(task: asyncio.Task[None]) -> None:
            self._pending_release.discard(task)
            if not task.cancelled() and task.exception() is not None:
                log.warning("could not release session %s: %s", record.name, task.exception())
            waiting = self._releasing.pop(key, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(None)

        task.add_done_callback(done)

    async def _acquire(self, agent: Agent, name: str | None, holder: dict[str, Any],
                       front: str = "ssh") -> SessionRecord:
        """Take the lease; if a connection of this server that just closed still holds it (its
        release is on the way), wait for that release instead of refusing."""
        for _ in range(2):
            try:
                return await asyncio.to_thread(
                    agents.acquire_session, self.state, agent.name, name, agent.home, holder, self.lease_ttl,
                    front,
                )
            except LeaseHeld:
                releasing = self._releasing.get((agent.name, name or ""))
                if releasing is None:
                    raise
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(releasing), RELEASE_WAIT)
        raise LeaseHeld(f"session {name!r} is in use by another connection; "
                        "it is free again when that connection ends or its lease expires")

    # -- a front end without a connection (the SDK, persistent terminals) ---------------------

    async def hold(self, agent: Agent, name: str | None) -> tuple[SessionRecord, dict[str, Any]]:
        """Take the lease on `agent`'s session `name` for a front end with no connection (the
        SDK): renewed with the connections' leases until `let_go`."""
        holder = self.new_holder()
        async with self.starts.slot(agent.name):
            record = await self._acquire(agent, name, holder, "sdk")
        self._held[(agent.name, record.name)] = holder
        return record, holder

    def holds(self, record: SessionRecord, holder: dict[str, Any]) -> bool:
        """Whether `holder` still has the lease (housekeeping drops one that was closed or taken)."""
        return self._held.get((record.agent, record.name)) is holder

    def drop(self, record: SessionRecord, holder: dict[str, Any]) -> None:
        """Stop renewing `holder`'s lease (its front end ends the session record itself)."""
        if self.holds(record, holder):
            del self._held[(record.agent, record.name)]

    async def let_go(self, record: SessionRecord, holder: dict[str, Any], saved: dict[str, Any] | None) -> None:
        """Save what the session leaves (cwd, exported variables, functions) and release its lease."""
        if saved is not None and not record.ephemeral:
            record.cwd = saved["cwd"]
            record.shell = {"exported": saved["exported"], "functions": saved["functions"]}
            await asyncio.to_thread(agents.save_session, self.state, record)
        self.drop(record, holder)
        await asyncio.to_thread(agents.release_session, self.state, record, holder, "sdk")

    # -- renewal and the end ------------------------------------------------------------------

    async def renew(self, connections: Iterable[Connection]) -> None:
        """Renew every lease held (each connection's last activity its holder's); a lease that
        was closed or taken over meanwhile is dropped and its connections are disconnected."""
        held = [(agent, name, holder) for (agent, name), holder in self._held.items()]
        if not held:
            return
        connections = list(connections)
        try:
            active = _last_active(connections, [holder for _, _, holder in held])
            kept = await asyncio.to_thread(agents.renew_leases, self.state, held, self.lease_ttl, active)
        except Exception as e:  # noqa: BLE001 - try again next period; never stop housekeeping
            log.warning("could not renew session leases: %s", e)
            return
        for (agent, name, holder), ok in zip(held, kept, strict=True):
            if not ok and self._held.get((agent, name)) is holder:  # closed, or stalled past its ttl
                log.warning("the lease on session %s/%s was closed or taken over", agent, name)
                self._held.pop((agent, name), None)
                for c in connections:
                    if c.session_holder is holder:
                        c.conn.disconnect(asyncssh.DISC_BY_APPLICATION, "Session closed")

    async def drain(self) -> None:
        """At the server's stop: wait (up to RELEASE_WAIT) for the channels being cancelled to
        save and release, then for every release under way."""
        deadline = time.monotonic() + RELEASE_WAIT
        while self._held and time.monotonic() < deadline:  # cancelled channels save, then release
            await asyncio.sleep(0.02)
        if self._pending_release:
            await asyncio.gather(*self._pending_release, return_exceptions=True)


def _last_active(connections: list[Connection], holders: list[dict[str, Any]]) -> list[int]:
    """When the connection holding each lease last saw input or output (wall clock, ns)."""
    now_wall, now = time.time_ns(), time.monotonic()
    seen: dict[int, float] = {}
    for c in connections:
        if c.session_holder is not None:
            key = id(c.session_holder)
            seen[key] = max(seen.get(key, 0.0), c.last_activity)
    return [now_wall - int((now - seen[id(h)]) * 1e9) if id(h) in seen else now_wall for h in holders]
