"""The K SSH server: one asyncio process serving every agent connection.

`KServer` holds what the connections share (the KState and VFS, the host key, the limits,
the audit writer) and is the only piece that calls `kfs.agents`; `AgentAuth` decides who gets
in, `SessionHandler` runs exec and PTY sessions in the K shell, `VFSSFTPServer` serves SFTP
and scp. `serve()` runs it until SIGINT or SIGTERM.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncssh

from kfs import agents
from kfs.agents import Agent, SessionRecord
from kfs.agents.authorized import authorized_lines
from kfs.agents.sessions import holder_id
from kfs.kstate import KState
from kfs.vfs import VFS, Cred, PathFS
from kshell.server.auth import AgentAuth, Connection
from kshell.server.config import ServerConfig
from kshell.server.limits import AgentSessions, SourcePenalties, StartupGate
from kshell.server.session import bytes_mode, run_session
from kshell.server.sftp import VFSSFTPServer
from kshell.server.shellbridge import ShellRunner

log = logging.getLogger("kshell.server")

ShellFactory = Callable[..., Any]


def default_shell_factory() -> ShellFactory:
    """`kshell.Shell`, imported when the first session starts (the shell is its own package)."""
    import kshell

    shell = getattr(kshell, "Shell", None)
    if shell is None:
        raise RuntimeError("the K shell (kshell.Shell) is not available in this build")
    return shell


class SessionProcess(asyncssh.SSHServerProcess):
    """A session channel that counts itself against MaxSessions until it closes."""

    def __init__(self, server: KServer, c: Connection, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._k_server = server
        self._k_conn = c
        self._counted = True

    def subsystem_requested(self, subsystem: str) -> bool:
        forced = self._k_conn.forced_command
        if subsystem == "sftp" and forced is not None and forced != "internal-sftp":
            return False
        return super().subsystem_requested(subsystem)

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
        try:
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
        *,
        shell_factory: ShellFactory | None = None,
    ) -> None:
        self.state = state
        self.vfs = VFS(state, by="ssh")
        self.config = config or ServerConfig()
        self.hostname = self.config.hostname or socket.gethostname().split(".")[0]
        self.gate = StartupGate(*self.config.startups())
        self.penalties = SourcePenalties(self.config.penalties)
        self.agent_sessions = AgentSessions(self.config.max_sessions_per_agent)
        self.connections: dict[asyncssh.SSHServerConnection, Connection] = {}
        self._serials = itertools.count(1)
        self._holders = itertools.count(1)
        self._shell_factory = shell_factory
        self._audit_pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="k-audit")
        self._pending_audit: set[asyncio.Future[Any]] = set()
        self._names: dict[int, str] = {}
        self._names_at = 0.0
        self._held: dict[tuple[str, str], dict[str, Any]] = {}
        self.host_key = agents.host_key(state)
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._housekeeping: asyncio.Task[None] | None = None

    # -- plumbing for the connections --------------------------------------------------------

    def next_serial(self) -> int:
        return next(self._serials)

    def new_holder(self) -> dict[str, Any]:
        return holder_id(next(self._holders))

    def audit_nowait(self, type_: str, **data: Any) -> None:
        """Append an event from the event loop without waiting for the write (ordered)."""
        fut = asyncio.get_running_loop().run_in_executor(
            self._audit_pool, lambda: agents.record_event(self.state, type_, **data)
        )
        self._pending_audit.add(fut)
        fut.add_done_callback(self._audit_done)

    def _audit_done(self, fut: asyncio.Future[Any]) -> None:
        self._pending_audit.discard(fut)
        if not fut.cancelled() and fut.exception() is not None:
            log.warning("could not record an event: %s", fut.exception())

    async def audit(self, type_: str, **data: Any) -> None:
        await asyncio.get_running_loop().run_in_executor(
            self._audit_pool, lambda: agents.record_event(self.state, type_, **data)
        )

    def authorized_lines(self, username: str) -> list[str]:
        return authorized_lines(self.state, username)

    def find_agent(self, name: str) -> Agent | None:
        return agents.find_agent(self.state, name)

    def user_name(self, uid: int) -> str:
        """Owner names for SFTP listings: agents by uid, root, else the number."""
        if uid == 0:
            return "root"
        name = self._names.get(uid)
        if name is None and time.monotonic() - self._names_at > 1.0:
            self._names = {a.uid: a.name for a in agents.list_agents(self.state)}
            self._names_at = time.monotonic()
            name = self._names.get(uid)
        return name or str(uid)

    def agent_fs(self, agent: Agent, cwd: str | None = None) -> PathFS:
        return PathFS(self.vfs, cred=Cred(agent.uid, agent.gid), cwd=cwd or agent.home, home=agent.home)

    # -- sessions ----------------------------------------------------------------------------

    def open_session(self, c: Connection) -> SessionProcess | bool:
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
            return VFSSFTPServer(chan, self.agent_fs(c.agent), user_names=self.user_name, touch=c.touch)

        return SessionProcess(
            self, c,
            process_factory=lambda process: run_session(self, c, process),
            sftp_factory=sftp_factory,
            sftp_version=3,
            allow_scp=c.forced_command is None,
        )

    def close_session(self, c: Connection) -> None:
        c.sessions -= 1
        if c.agent is not None:
            self.agent_sessions.give(c.agent.name)

    async def acquire_session(self, agent: Agent, name: str | None, holder: dict[str, Any]) -> SessionRecord:
        record = await asyncio.to_thread(
            agents.acquire_session, self.state, agent.name, name or None, agent.home, holder, self.config.lease_ttl
        )
        self._held[(agent.name, record.name)] = holder
        return record

    def make_shell(self, agent: Agent, record: SessionRecord, env: dict[str, str],
                   loop: asyncio.AbstractEventLoop, *, tty: bool = False) -> ShellRunner:
        factory = self._shell_factory or default_shell_factory()
        cwd = record.cwd
        fs = self.agent_fs(agent)
        try:
            if fs.stat(cwd).is_dir:
                fs = self.agent_fs(agent, cwd)
        except OSError:
            pass
        saved = record.shell or {}
        env = {**saved.get("exported", {}), **env, "HOSTNAME": self.hostname}
        env.pop("PWD", None)
        shell = factory(fs, name="k", env=env)
        runner = ShellRunner(shell, loop, tty=tty)
        if saved.get("functions"):
            runner.define(saved["functions"])
        return runner

    async def end_session(self, record: SessionRecord | None, runner: ShellRunner | None,
                          holder: dict[str, Any]) -> None:
        """Save what `K_SESSION` resumes (cwd, exported variables, functions); release the lease."""
        if record is None:
            return
        if runner is not None:
            try:
                record.cwd = runner.cwd
                record.shell = {"exported": runner.exported(), "functions": runner.functions()}
            except Exception as e:  # noqa: BLE001 - never lose the logout over it
                log.warning("could not save the shell state of %s: %s", record.name, e)

        def finish() -> None:
            if not record.ephemeral:
                agents.save_session(self.state, record)
            agents.release_session(self.state, record, holder)

        self._held.pop((record.agent, record.name), None)
        await asyncio.to_thread(finish)

    # -- housekeeping ------------------------------------------------------------------------

    async def _housekeep(self) -> None:
        """Renew session leases and close connections idle past `idle_timeout`."""
        ttl = self.config.lease_ttl
        idle_check = self.config.idle_timeout / 4 if self.config.idle_timeout > 0 else 10.0
        period = max(min(ttl / 3, idle_check, 10.0), 0.25)
        while True:
            await asyncio.sleep(period)
            held = list(self._held.items())
            if held:
                await asyncio.to_thread(_renew_all, self.state, held, ttl)
            idle = self.config.idle_timeout
            if idle > 0:
                now = time.monotonic()
                for c in list(self.connections.values()):
                    if c.agent is not None and now - c.last_activity > idle:
                        self.audit_nowait("ssh.idle_timeout", agent=c.agent.name, peer=c.peer_addr)
                        c.conn.disconnect(asyncssh.DISC_BY_APPLICATION, "Idle timeout")

    # -- listening ---------------------------------------------------------------------------

    async def start(self, host: str, port: int) -> list[tuple[str, int]]:
        """Listen on host:port (port 0 picks one); returns the bound addresses."""
        cfg = self.config
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
        )
        self._housekeeping = asyncio.get_running_loop().create_task(self._housekeep())
        return [s.getsockname()[:2] for s in self._acceptor.sockets]  # type: ignore[attr-defined]

    async def stop(self) -> None:
        if self._housekeeping is not None:
            self._housekeeping.cancel()
        if self._acceptor is not None:
            self._acceptor.close()
            for c in list(self.connections.values()):
                c.conn.disconnect(asyncssh.DISC_BY_APPLICATION, "server shutting down")
            await self._acceptor.wait_closed()
        if self._pending_audit:
            await asyncio.gather(*self._pending_audit, return_exceptions=True)
        self._audit_pool.shutdown(wait=True)

    @property
    def fingerprint(self) -> str:
        return self.host_key.get_fingerprint("sha256")


def _renew_all(state: KState, held: list[tuple[tuple[str, str], dict[str, Any]]], ttl: float) -> None:
    for (agent, name), holder in held:
        agents.renew_lease(state, agent, name, holder, ttl)


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
