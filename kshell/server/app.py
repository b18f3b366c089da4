"""The K SSH server: one asyncio process serving every agent connection.

`KServer` holds what the connections share (the KState and VFS, the host key, the limits,
the audit writer) and is the only piece that calls `kfs.agents`; `AgentAuth` decides who gets
in, `SessionHandler` runs exec and PTY sessions in the K shell, `VFSSFTPServer` serves SFTP
and scp, `ApiChannel` the `komputer-api` subsystem (kshell.server.api, for kshell.sdk.remote).
`serve()` runs it until SIGINT or SIGTERM.

A connection is one agent session (a `kfs.agents` record with a lease). Its first session
channel takes the lease, on the session its `K_SESSION` names or on a fresh ephemeral one; every
later channel of the connection (OpenSSH ControlMaster, several exec channels on one paramiko
Transport, sftp + exec) runs in the same session, so multiplexing never locks a client out of
its own session. A channel naming a different `K_SESSION` is refused with a message (it would
need a connection of its own); another connection naming a held session is refused until the
holder's connection ends or its lease expires. A named session carries cwd, exported variables
and functions from channel to channel and connection to connection; an ephemeral one starts each
channel afresh in the home directory, as sshd starts each multiplexed command in a new shell.
The lease is renewed while the connection lives and released when it is gone and its last
channel has saved; a crashed server's leases lapse (dead pid, or no renewal for `lease_ttl`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncssh

from kfs import agents
from kfs.agents import Agent, LeaseHeld, SessionRecord
from kfs.agents.authorized import authorized_lines
from kfs.agents.sessions import holder_id
from kfs.drives.memory import MemoryDrives
from kfs.journal import prune_events, prune_receipts
from kfs.kstate import KState
from kfs.runtime import approvals, conversations, procs
from kfs.vfs import VFS
from kfs.vfs.policy import stricter
from kshell.server.api import SUBSYSTEM as API_SUBSYSTEM
from kshell.server.api import run_api
from kshell.server.attach import AttachListener
from kshell.server.auth import AgentAuth, Connection
from kshell.server.config import ServerConfig
from kshell.server.crons import CronRunner
from kshell.server.limits import AgentSessions, AgentStarts, SourcePenalties, StartupGate
from kshell.server.memory import give_back
from kshell.server.prompt import share_line_editor_tables
from kshell.server.session import accepted_env, bytes_mode, fork_refusal, run_session
from kshell.server.sftp import VFSSFTPServer
from kshell.server.terminals import Terminals
from kshell.server.workers import WorkerPool, WorkerShell
from kshell.tools.system.identity import DEFAULT_HOST
from kshell.view import SessionSpec, open_view

log = logging.getLogger("kshell.server")

# what the server sets for one channel: never restored from a saved session into another channel
RELEASE_WAIT = 5.0  # seconds a new connection waits for a just-closed one's lease to be released


class CoalescingTransport:
    """The socket side of one connection, sending what one turn of the event loop writes in one
    write at the end of that turn.

    asyncssh hands every SSH packet to the transport at once, and asyncio sends each with its
    own syscall: an SFTP read reply of 255 KiB is eight packets (the client's 32 KiB maximum),
    the end of an exec (exit-status, EOF, close) three. Under load each send also wakes the
    client. Gathering them costs one join and no latency beyond the current turn. Everything
    but write/close/abort is the wrapped transport's.
    """

    __slots__ = ("_transport", "_loop", "_pending", "_scheduled")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes) -> None:
        self._pending.append(data)
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        pending = self._pending
        if not pending:
            return
        data = pending[0] if len(pending) == 1 else b"".join(pending)
        pending.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def coalesce_writes(conn: asyncssh.SSHServerConnection) -> None:
    """Put a `CoalescingTransport` under a new connection (before its version line is sent).

    asyncssh has no hook for this: its connection writes through the private `_transport`
    attribute, set just before the server's `connection_made` runs. If a later asyncssh keeps
    the transport elsewhere, this does nothing and packets go out one by one as before.
    """
    transport = getattr(conn, "_transport", None)
    if isinstance(transport, asyncio.Transport):
        conn._transport = CoalescingTransport(transport, asyncio.get_running_loop())  # type: ignore[attr-defined]  # noqa: SLF001


class SessionMismatch(LeaseHeld):
    """A channel names a `K_SESSION` other than the one its connection already runs in.

    A connection is one agent session: its first session channel chooses it (by `K_SESSION`, or
    an ephemeral one without), and every later channel runs in it. A channel naming another
    session is refused (not silently moved) so that a multiplexing client (OpenSSH ControlMaster)
    never runs a command in a session the user did not ask for.
    """


class ForcedCommandChannel(asyncssh.SSHServerChannel):  # type: ignore[type-arg]
    """A session channel under a forced command (`command=` key option or a certificate's
    force-command) that remembers what the client asked for, as sshd's SSH_ORIGINAL_COMMAND.

    asyncssh swaps the forced command in inside `_start_session`, before any session callback
    sees the request, and keeps no copy of the original; this override of that one private
    method records its arguments and leaves the rest to asyncssh. A shell request sets nothing
    (as sshd); a subsystem request records the command sshd would run for it (`internal-sftp`).
    """

    original_command: str | None = None

    def _start_session(self, command: str | None = None, subsystem: str | None = None) -> bool:
        if command is not None:
            self.original_command = command
        elif subsystem is not None:
            self.original_command = "internal-sftp" if subsystem == "sftp" else subsystem
        return super()._start_session(command, subsystem)  # type: ignore[misc]


class SessionProcess(asyncssh.SSHServerProcess):
    """A session channel that counts itself against MaxSessions until it closes."""

    def __init__(self, server: KServer, c: Connection, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._k_server = server
        self._k_conn = c
        self._counted = True

    def subsystem_requested(self, subsystem: str) -> bool:
        """sftp, and komputer-api (kshell.server.api) for a key without a forced command; any
        other name is refused, as sshd refuses a subsystem it has no `Subsystem` line for."""
        forced = self._k_conn.forced_command
        if subsystem == "sftp":
            return (forced is None or forced == "internal-sftp") and super().subsystem_requested(subsystem)
        return subsystem == API_SUBSYSTEM and forced is None and super().subsystem_requested(subsystem)

    def session_started(self) -> None:
        """Without a PTY the session is bytes-exact: switch before the first data arrives
        (the handler itself starts later, as a task)."""
        if self._chan.get_terminal_type() is None:
            bytes_mode(self)
        super().session_started()

    def break_received(self, msec: int) -> bool:
        """Ctrl-C on a terminal (the line editor turns \\x03 into a break): interrupt the running
        command at once; at the prompt it reaches the handler's read instead."""
        handler = getattr(self, "_k_handler", None)
        if handler is not None and handler.running:
            handler.cancel()
            return True
        return super().break_received(msec)

    def signal_received(self, signal: str) -> None:
        handler = getattr(self, "_k_handler", None)
        if signal == "INT" and handler is not None and handler.running:
            handler.cancel()
            return
        super().signal_received(signal)

    def exit(self, status: int) -> None:
        """Stop counting the session when it ends, not when the close handshake finishes: a client
        may open its next channel before asyncssh cleans this one up (as sshd counts it)."""
        self._release()
        super().exit(status)

    def connection_lost(self, exc: Exception | None) -> None:
        """The channel closed: a command line still running is hung up, as sshd hangs up a
        session's processes when its channel goes (a client that closes one channel of a
        connection it keeps, or a cancelled SDK exec, leaves nothing running)."""
        handler = getattr(self, "_k_handler", None)
        try:
            if handler is not None and handler.running:
                handler.cancel()
            super().connection_lost(exc)
        finally:
            self._release()

    def _release(self) -> None:
        if self._counted:
            self._counted = False
            self._k_server.close_session(self._k_conn)


class AuditWriter:
    """Audit events appended in order by one thread, all those queued meanwhile in one transaction.

    Every exec is recorded before it runs (`audit` is awaited), so the cost per event is on each
    command's path: a queue put and one wake-up of the loop per batch, rather than an executor
    future per event and a commit each; eight commands starting together share one commit.
    """

    def __init__(self, state: KState) -> None:
        self.state = state
        self._queue: queue.SimpleQueue[tuple[str, dict[str, Any], asyncio.Future[None] | None] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._main, name="k-audit", daemon=True)
        self._thread.start()

    def put(self, type_: str, data: dict[str, Any], fut: asyncio.Future[None] | None = None) -> None:
        self._queue.put((type_, data, fut))

    def _main(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            self._write(batch)
            if stop:
                return

    def _write(self, batch: list[tuple[str, dict[str, Any], asyncio.Future[None] | None]]) -> None:
        errors: list[BaseException | None]
        try:
            agents.record_events(self.state, [(t, d) for t, d, _ in batch])
            errors = [None] * len(batch)
        except Exception:  # noqa: BLE001 - one bad event must not take the others with it
            errors = []
            for t, d, _ in batch:
                try:
                    agents.record_event(self.state, t, **d)
                    errors.append(None)
                except Exception as e:  # noqa: BLE001 - reported to its caller, or logged
                    errors.append(e)
        futures = [(fut, e) for (_, _, fut), e in zip(batch, errors, strict=True)]
        loop = next((fut.get_loop() for fut, _ in futures if fut is not None), None)
        for (t, _, fut), e in zip(batch, errors, strict=True):
            if fut is None and e is not None:
                log.warning("could not record a %s event: %s", t, e)
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
                loop.call_soon_threadsafe(_settle_all, futures)

    def close(self) -> None:
        """Write everything queued so far, then stop the thread."""
        self._queue.put(None)
        self._thread.join(30)


def _settle_all(futures: list[tuple[asyncio.Future[None] | None, BaseException | None]]) -> None:
    for fut, e in futures:
        if fut is None or fut.done():
            continue
        if e is None:
            fut.set_result(None)
        else:
            fut.set_exception(e)


class KServer:
    """Everything the connections of one server process share."""

    def __init__(
        self,
        state: KState,
        config: ServerConfig | None = None,
    ) -> None:
        self.state = state
        self.vfs = VFS(state, by="ssh")
        self.config = config or ServerConfig()
        self.hostname = self.config.hostname or DEFAULT_HOST  # the appliance's, never the host's
        self.gate = StartupGate(*self.config.startups())
        self.penalties = SourcePenalties(self.config.penalties)
        self.agent_sessions = AgentSessions(self.config.max_sessions_per_agent)
        self.starts = AgentStarts(self.config.session_starts_per_agent)
        self.connections: dict[asyncssh.SSHServerConnection, Connection] = {}
        self._serials = itertools.count(1)
        self._holders = itertools.count(1)
        self.pool = WorkerPool(state.path, self.config.limits)
        self.pool.on_died = lambda pid: self._track(self.recover(gone=pid))
        self._owner = procs.owner_id()
        self._tasks: set[asyncio.Task[None]] = set()
        self._timers: list[threading.Timer] = []  # resumed sleeps' deadlines
        self._audit = AuditWriter(state)
        self._held: dict[tuple[str, str], dict[str, Any]] = {}  # leases to renew: (agent, session) -> holder
        self._releasing: dict[tuple[str, str], asyncio.Future[None]] = {}  # closed, release under way
        self._pending_release: set[asyncio.Task[None]] = set()
        self.host_key = agents.host_key(state)
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._housekeeping: asyncio.Task[None] | None = None
        self.crons = CronRunner(self)  # the image's crons (kshell.server.crons)
        self.terminals = Terminals(self)  # persistent terminals (kshell.server.terminals)
        self.attach_listener = AttachListener(self)  # komputer attach's way to them (kshell.server.attach)
        self.addresses: list[tuple[str, int]] = []  # where it listens (none for an SDK computer until serve)
        self._crons_task: asyncio.Task[None] | None = None
        self.memory_drives: MemoryDrives | None = None  # those of this run, from start to stop
        self._busy_since_trim = False  # connections came since the memory was last given back

    # -- plumbing for the connections --------------------------------------------------------

    def prepare_connection(self, conn: asyncssh.SSHServerConnection) -> None:
        """A new connection, before anything is sent on it."""
        self._busy_since_trim = True
        if self.config.coalesce_writes:
            coalesce_writes(conn)

    def next_serial(self) -> int:
        return next(self._serials)

    def new_holder(self) -> dict[str, Any]:
        return holder_id(next(self._holders))

    def audit_nowait(self, type_: str, **data: Any) -> None:
        """Append an event from the event loop without waiting for the write (ordered)."""
        self._audit.put(type_, data)

    async def audit(self, type_: str, **data: Any) -> None:
        """Append an event and wait until it is written (what must be on record before it runs)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._audit.put(type_, data, fut)
        await fut

    def authorized_lines(self, username: str) -> list[str]:
        return authorized_lines(self.state, username)

    def find_agent(self, name: str) -> Agent | None:
        return agents.find_agent(self.state, name)

    # -- sessions ----------------------------------------------------------------------------

    def open_session(self, c: Connection) -> SessionProcess | tuple[asyncssh.SSHServerChannel, SessionProcess] | bool:
        """A new session channel, or False (refused) past MaxSessions for the connection or agent."""
        assert c.agent is not None
        if c.sessions >= self.config.max_sessions:
            self.audit_nowait("ssh.refused", agent=c.agent.name, peer=c.peer_addr, reason="max_sessions")
            return False
        if not self.agent_sessions.take(c.agent.name):
            self.audit_nowait("ssh.refused", agent=c.agent.name, peer=c.peer_addr, reason="max_sessions_per_agent")
            return False
        c.sessions += 1
        c.touch()

        def sftp_factory(chan: asyncssh.SSHServerChannel) -> VFSSFTPServer:
            assert c.agent is not None
            agent = c.agent  # its receipts name the front end, the agent and where it came from
            # a fork named as for a shell (K_FORK=N, K_SESSION=fork-N): SFTP works in its tree too
            env = accepted_env({k: v for k, v in (chan.get_environment() or {}).items()
                                if isinstance(k, str) and isinstance(v, str)}, self.config.accept_env)
            refused = fork_refusal(self.state, agent.name, env)
            if refused is not None:
                log.warning("sftp for %s refused: %s", agent.name, refused)
                raise PermissionError(refused)
            mode = stricter(stricter(self.config.mode, c.key_mode()), env.get("K_MODE") or "full")
            # its write hooks judge SFTP's writes too; its python drives are not served here
            view = open_view(self.state, SessionSpec(
                agent.name, "sftp", "sftp", mode=mode, fork=int(env["K_FORK"]) if "K_FORK" in env else None,
                configured=self.config.configured(agent.name), peer=f"sftp {agent.name}@{c.peer_addr}"),
                memory_drives=self.memory_drives)
            return VFSSFTPServer(chan, view.fs, limits=self.config.limits, touch=c.touch)

        process = SessionProcess(
            self, c,
            process_factory=lambda process: (run_api if process.subsystem == API_SUBSYSTEM else run_session)(
                self, c, process),
            sftp_factory=sftp_factory,
            sftp_version=3,
            allow_scp=c.forced_command is None,
        )
        if c.forced_command is None:
            return process
        chan = c.conn.create_server_channel()  # what asyncssh makes for a bare session object
        chan.__class__ = ForcedCommandChannel  # same object, one overridden method
        return chan, process  # type: ignore[return-value]

    def close_session(self, c: Connection) -> None:
        c.sessions -= 1
        if c.agent is not None:
            self.agent_sessions.give(c.agent.name)

    async def join_session(self, c: Connection, name: str | None) -> SessionRecord:
        """The agent session a new session channel of `c` runs in.

        The connection's first session channel takes the lease (on the session its `K_SESSION`
        names, else a fresh ephemeral one); later channels share it, at once or one after
        another (ControlMaster, paramiko's several exec channels, sftp + exec). A channel naming
        another session gets `SessionMismatch`; another connection's live lease, `LeaseHeld`.
        Every successful join is paired with `leave_session`.
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

    async def _acquire(self, agent: Agent, name: str | None, holder: dict[str, Any],
                       front: str = "ssh") -> SessionRecord:
        """Take the lease; if a connection of this server that just closed still holds it (its
        release is on the way), wait for that release instead of refusing."""
        for _ in range(2):
            try:
                return await asyncio.to_thread(
                    agents.acquire_session, self.state, agent.name, name, agent.home, holder, self.config.lease_ttl,
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

    async def let_go(self, record: SessionRecord, holder: dict[str, Any], saved: dict[str, Any] | None) -> None:
        """Save what the session leaves (cwd, exported variables, functions) and release its lease."""
        if saved is not None and not record.ephemeral:
            record.cwd = saved["cwd"]
            record.shell = {"exported": saved["exported"], "functions": saved["functions"]}
            await asyncio.to_thread(agents.save_session, self.state, record)
        if self._held.get((record.agent, record.name)) is holder:
            del self._held[(record.agent, record.name)]
        await asyncio.to_thread(agents.release_session, self.state, record, holder, "sdk")

    def make_shell(self, agent: Agent, record: SessionRecord, env: dict[str, str], *, tty: bool = False,
                   front: str | None = None, hosts: dict[str, Any] | None = None) -> WorkerShell:
        """The channel's shell, run in a worker when its first command comes: the agent's
        identity and home, the session's saved cwd, exported variables and functions. `front`
        names who acts in receipts and events (default: ssh exec / ssh pty); `hosts`: virtual
        hosts in wire form (kshell.tools.net.hosts.hosts_to_wire) over the image's."""
        saved = record.shell or {}
        env = {**agents.resumed_env(record), **env, "HOSTNAME": self.hostname}
        env.pop("PWD", None)
        limits = self.config.limits
        spec = {
            "agent": agent.name, "session": record.name, "uid": agent.uid, "gid": agent.gid, "home": agent.home,
            "cwd": record.cwd,
            "env": env, "functions": saved.get("functions", ""), "tty": tty, "job_control": tty,
            "limits": {"session_memory": limits.session_memory, "session_tasks": limits.session_tasks,
                       "wall_time": limits.wall_time, "process_output": limits.process_output},
            "delegate": self.config.delegate.to_wire(),
            "configured": self.config.configured(agent.name), "ephemeral": record.ephemeral,
            "approval_timeout": self.config.approval_timeout,
            "approvals_max_pending": self.config.approvals_max_pending,
            "memory_drives": None if self.memory_drives is None else str(self.memory_drives.directory),
        }
        if front is not None:
            spec["front"] = front
        if hosts:
            spec["hosts"] = hosts
        return WorkerShell(self.pool, spec, admit=lambda: self.starts.slot(agent.name))

    async def leave_session(self, c: Connection, record: SessionRecord, saved: dict[str, Any] | None) -> None:
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

    # -- housekeeping ------------------------------------------------------------------------

    async def _housekeep(self) -> None:
        """Renew session leases, close connections idle past `idle_timeout`, expire approvals
        past `approval_timeout`, keep events, ended process rows and receipts within their
        bounds (once a minute), and give memory back once no connection is left (memory.py)."""
        ttl = self.config.lease_ttl
        idle_check = self.config.idle_timeout / 4 if self.config.idle_timeout > 0 else 10.0
        period = max(min(ttl / 3, idle_check, 10.0), 0.25)
        pruned = time.monotonic()
        while True:
            await asyncio.sleep(period)
            if time.monotonic() - pruned >= 60.0:
                pruned = time.monotonic()
                try:
                    await asyncio.to_thread(self._retain)
                except Exception as e:  # noqa: BLE001
                    log.warning("could not prune the journal: %s", e)
            if self.config.approval_timeout > 0:  # a waiting shell expires its own; these wait for a resume
                try:
                    await asyncio.to_thread(approvals.expire_due, self.state)
                except Exception as e:  # noqa: BLE001
                    log.warning("could not expire approvals: %s", e)
            held = [(agent, name, holder) for (agent, name), holder in self._held.items()]
            if held:
                try:
                    active = self._last_active([holder for _, _, holder in held])
                    kept = await asyncio.to_thread(agents.renew_leases, self.state, held, ttl, active)
                except Exception as e:  # noqa: BLE001 - try again next period; never stop housekeeping
                    log.warning("could not renew session leases: %s", e)
                else:
                    for (agent, name, holder), ok in zip(held, kept, strict=True):
                        if not ok and self._held.get((agent, name)) is holder:  # closed, or stalled past its ttl
                            log.warning("the lease on session %s/%s was closed or taken over", agent, name)
                            self._held.pop((agent, name), None)
                            for c in list(self.connections.values()):
                                if c.session_holder is holder:
                                    c.conn.disconnect(asyncssh.DISC_BY_APPLICATION, "Session closed")
            if not self.connections and self._busy_since_trim:  # idle: give back what the peak left
                self._busy_since_trim = False
                give_back((Path(self.state.path) / "data.mdb",))
            idle = self.config.idle_timeout
            if idle > 0:
                now = time.monotonic()
                for c in list(self.connections.values()):
                    if c.agent is not None and now - c.last_activity > idle:
                        self.audit_nowait("ssh.idle_timeout", agent=c.agent.name, peer=c.peer_addr)
                        c.conn.disconnect(asyncssh.DISC_BY_APPLICATION, "Idle timeout")

    def _retain(self) -> None:
        """Drop the events, ended process rows and receipts past their bounds (docs/processes.md)."""
        c = self.config

        def cut(days: float) -> int:
            return time.time_ns() - int(days * 86400e9) if days > 0 else 0

        if c.events_keep > 0 or c.events_max_days > 0 or c.events_keep_per_agent > 0:
            prune_events(self.state, c.events_keep, before=cut(c.events_max_days), per_agent=c.events_keep_per_agent)
        procs.compact(self.state, c.procs_keep_ended)
        if c.receipts_keep > 0 or c.receipts_max_days > 0:
            prune_receipts(self.state, c.receipts_keep, before=cut(c.receipts_max_days))

    def _last_active(self, holders: list[dict[str, Any]]) -> list[int]:
        """When the connection holding each lease last saw input or output (wall clock, ns)."""
        now_wall, now = time.time_ns(), time.monotonic()
        seen: dict[int, float] = {}
        for c in self.connections.values():
            if c.session_holder is not None:
                key = id(c.session_holder)
                seen[key] = max(seen.get(key, 0.0), c.last_activity)
        return [now_wall - int((now - seen[id(h)]) * 1e9) if id(h) in seen else now_wall for h in holders]

    # -- processes ---------------------------------------------------------------------------

    def _track(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def recover(self, gone: int | None = None) -> None:
        """Seal the process rows an ended owner left (every dead one, or the worker `gone`):
        lost, or a plain `sleep` resumed here to end at its original deadline (a timer thread
        of its own: a busy event loop or thread pool never makes it late); withdraw the
        approvals of unnamed sessions whose shell is gone; seal the agent loops' turns whose
        process is gone (kfs.runtime.conversations)."""
        resumed = await asyncio.to_thread(procs.recover, self.state, owner=self._owner, gone=gone)
        await asyncio.to_thread(approvals.abandon, self.state)
        await asyncio.to_thread(conversations.recover, self.state)  # agent loops whose process is gone
        self._timers = [t for t in self._timers if t.is_alive()]
        for row in resumed:
            delay = max(0.0, (row["until"] - time.time_ns()) / 1e9)
            timer = threading.Timer(delay, procs.finish_resumed, (self.state, row["pid"], self._owner))
            timer.daemon = True
            timer.start()
            self._timers.append(timer)

    # -- listening ---------------------------------------------------------------------------

    async def start(self, host: str | None, port: int = 0) -> list[tuple[str, int]]:
        """Start the computer's services and listen on host:port (port 0 picks one); returns the
        bound addresses. Without a host (the SDK, kshell.sdk) nothing listens, and the worker
        zygote loads in the background while the caller goes on."""
        await self.recover()
        self.memory_drives = await asyncio.to_thread(MemoryDrives.begin, self.state)  # empty: a new run
        await self._stop_views()  # a run that was killed left its agents' views
        loop = asyncio.get_running_loop()
        await self.attach_listener.start()
        if host is None:
            self.pool.start_soon()
            self._housekeeping = loop.create_task(self._housekeep())
            self._crons_task = loop.create_task(self.crons.run_forever())
            return []
        await self.pool.start()
        log.info("session workers bounded by %s", self.pool.describe())
        addresses = await self.listen(host, port)
        self._housekeeping = loop.create_task(self._housekeep())
        self._crons_task = loop.create_task(self.crons.run_forever())
        return addresses

    async def listen(self, host: str, port: int = 0) -> list[tuple[str, int]]:
        """Accept SSH connections on host:port (port 0 picks one): at start, or later for a
        computer the SDK booted without a listener (`Komputer.serve`, for `ssh` attaching to its
        terminals). Returns the bound addresses."""
        if self._acceptor is not None:
            raise RuntimeError("the server already listens")
        cfg = self.config
        share_line_editor_tables()
        self._acceptor = await asyncssh.listen(
            host, port,
            server_factory=lambda: AgentAuth(self),
            server_host_keys=[self.host_key],
            password_auth=False,
            kbdint_auth=False,
            gss_host=None,
            login_timeout=cfg.login_grace_time or None,
            keepalive_interval=cfg.keepalive_interval or None,
            keepalive_count_max=cfg.keepalive_count_max,
            allow_pty=True,
            line_editor=True,
            line_history=1000,
            agent_forwarding=False,
            x11_forwarding=False,
            reuse_address=True,
            encryption_algs=list(cfg.ciphers),
        )
        self.addresses = [s.getsockname()[:2] for s in self._acceptor.sockets]  # type: ignore[attr-defined]
        return self.addresses

    async def _stop_views(self) -> None:
        """Unmount the agents' views that workers mounted for delegated programs of this state
        (kshell.delegate.mounts): they are this run's, as its workers are."""
        from kshell.delegate.mounts import stop_views

        await asyncio.to_thread(stop_views, os.path.realpath(self.state.path))

    async def stop(self) -> None:
        if self._housekeeping is not None:
            self._housekeeping.cancel()
        if self._crons_task is not None:
            self._crons_task.cancel()
        await self.crons.stop()
        await self.attach_listener.stop()
        await self.terminals.close()
        if self._acceptor is not None:
            self._acceptor.close()
            for c in list(self.connections.values()):
                c.conn.disconnect(asyncssh.DISC_BY_APPLICATION, "server shutting down")
            await self._acceptor.wait_closed()
        deadline = time.monotonic() + RELEASE_WAIT
        while self._held and time.monotonic() < deadline:  # cancelled channels save, then release
            await asyncio.sleep(0.02)
        if self._pending_release:
            await asyncio.gather(*self._pending_release, return_exceptions=True)
        await self._stop_views()  # the agents' views its workers mounted
        await self.pool.close()
        if self.memory_drives is not None:  # no worker holds them now: what was on them is gone
            await asyncio.to_thread(self.memory_drives.end)
        await self.recover()  # what the workers ran is lost now, not at the next start
        for timer in self._timers:
            timer.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.to_thread(self._audit.close)

    @property
    def fingerprint(self) -> str:
        return self.host_key.get_fingerprint("sha256")


def parse_listen(listen: str) -> tuple[str, int]:
    """HOST:PORT, [V6]:PORT or PORT."""
    if listen.startswith("["):
        host, _, port = listen[1:].partition("]:")
        return host, int(port)
    host, sep, port = listen.rpartition(":")
    return (host or "0.0.0.0", int(port)) if sep else ("0.0.0.0", int(listen))


async def serve_until_stopped(
    state: KState, listen: str, config: ServerConfig, *, ready: Callable[[KServer, list[tuple[str, int]]], None],
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM (or `stop` is set), then close every connection cleanly."""
    server = KServer(state, config)
    host, port = parse_listen(listen)
    addrs = await server.start(host, port)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, RuntimeError):  # not the main thread
            loop.add_signal_handler(sig, stop.set)
    ready(server, addrs)
    try:
        await stop.wait()
    finally:
        await server.stop()


def serve(state_dir: Path, listen: str, config: ServerConfig,
          ready: Callable[[KServer, list[tuple[str, int]]], None]) -> None:
    with KState(state_dir, create=True) as state:
        asyncio.run(serve_until_stopped(state, listen, config, ready=ready))
