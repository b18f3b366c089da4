"""The K SSH server: one asyncio process serving every agent connection.

`KServer` is the wiring place of the server's roles and holds what the connections share (the
KState and VFS, the host key, the limits, the worker pool). Each role is a module of its own
that receives what it uses and imports no `KServer`:
- `AgentAuth` (kshell.server.auth), the asyncssh callback class: who gets in, the connection
  limits, talking to the `Admission` it is given (this server, or a fleet route);
- `SessionLeases` (kshell.server.leases): which agent session each connection runs in, and the
  leases on them (taken, renewed by the housekeeping here, released);
- `AuditWriter` (kshell.server.audit): the events appended to K's journal, in order;
- `SessionHandler` (kshell.server.session) runs exec and PTY sessions in the K shell on a
  `SessionHost`; `CronRunner` (kshell.server.crons) the image's crons with the shell maker.
`VFSSFTPServer` serves SFTP and scp, `ApiChannel` the `komputer-api` subsystem
(kshell.server.api, for kshell.sdk.remote). `serve()` runs it until SIGINT or SIGTERM.

A connection is one agent session (kshell.server.leases). A channel naming a different
`K_SESSION` than its connection's is refused with a message (it would need a connection of its
own); another connection naming a held session is refused until the holder's connection ends or
its lease expires. A named session carries cwd, exported variables and functions from channel to
channel and connection to connection; an ephemeral one starts each channel afresh in the home
directory, as sshd starts each multiplexed command in a new shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncssh

from kfs import agents
from kfs.agents import Agent, SessionRecord
from kfs.agents.authorized import authorized_lines
from kfs.drives.memory import MemoryDrives
from kfs.journal import prune_events, prune_receipts
from kfs.kstate import KState
from kfs.runtime import approvals, conversations, procs
from kfs.vfs import VFS
from kfs.vfs.policy import stricter
from kshell.server.api import SUBSYSTEM as API_SUBSYSTEM
from kshell.server.api import run_api
from kshell.server.attach import AttachListener
from kshell.server.audit import AuditWriter
from kshell.server.auth import AgentAuth, Connection
from kshell.server.config import ServerConfig
from kshell.server.crons import CronRunner
from kshell.server.leases import SessionLeases
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
        self.leases = SessionLeases(state, self.config.lease_ttl, self.starts)  # kshell.server.leases
        self.pool = WorkerPool(state.path, self.config.limits)
        self.pool.on_died = lambda pid: self._track(self.recover(gone=pid))
        self._owner = procs.owner_id()
        self._tasks: set[asyncio.Task[None]] = set()
        self._timers: list[threading.Timer] = []  # resumed sleeps' deadlines
        self.audit_writer = AuditWriter(state)  # kshell.server.audit
        self.host_key = agents.host_key(state)
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._housekeeping: asyncio.Task[None] | None = None
        self.crons = CronRunner(state, self.make_shell)  # the image's crons (kshell.server.crons)
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

    def audit_nowait(self, type_: str, **data: Any) -> None:
        """Append an event from the event loop without waiting for the write (ordered)."""
        self.audit_writer.nowait(type_, **data)

    async def audit(self, type_: str, **data: Any) -> None:
        """Append an event and wait until it is written (what must be on record before it runs)."""
        await self.audit_writer.written(type_, **data)

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

    def connection_closed(self, c: Connection) -> None:
        """The connection is gone (AgentAuth): its session's lease goes once no channel uses it."""
        self.leases.connection_closed(c)


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
            await self.leases.renew(self.connections.values())
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
        await self.leases.drain()
        await self._stop_views()  # the agents' views its workers mounted
        await self.pool.close()
        if self.memory_drives is not None:  # no worker holds them now: what was on them is gone
            await asyncio.to_thread(self.memory_drives.end)
        await self.recover()  # what the workers ran is lost now, not at the next start
        for timer in self._timers:
            timer.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.to_thread(self.audit_writer.close)

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
