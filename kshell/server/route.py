"""Routing a login to the computer's owner: any host of a fleet takes `ssh AGENT+KEY@host` for
any key, and a host that does not own KEY forwards the connection to the one that does.

SSH gives a relay no way to pass the client's public-key signature on (it signs this
connection's session id), and the user name that names the computer arrives encrypted, after
the key exchange: a TCP relay or a redirect cannot choose the owner, and stock clients follow
no redirect. So the member terminates the client's SSH itself: it checks the client's key
against the computer's own authorized keys, read from the computer's state (LMDB readers
beside the owner's writer, on the shared disk), then opens one SSH connection to
the owner for the client's connection, as the same `AGENT+KEY`, authenticated by the fleet's
key (`ROOT/.host/fleet_key`, root's, on the hosts' shared disk), which each owner accepts for
its agents. Every session channel of the client (exec, shell with its PTY, sftp, scp) becomes
one channel of the upstream connection and bytes are relayed both ways; a connection stays one
agent session on the owner (K_SESSION, multiplexing) as if the client had come directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncssh
from asyncssh.constants import EXTENDED_DATA_STDERR
from asyncssh.stream import SSHReader, SSHWriter

from kfs.agents import Agent, find_agent
from kfs.agents.authorized import authorized_lines
from kfs.kstate import KState

if TYPE_CHECKING:
    from kshell.server.auth import Connection
    from kshell.server.computers import ComputerHost

log = logging.getLogger("kshell.fleet")


def fleet_key(root: Path) -> asyncssh.SSHKey:
    """The key members log in to owners with (made by the first host; root's, mode 0600)."""
    import os

    path = root / ".host" / "fleet_key"
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = asyncssh.generate_private_key("ssh-ed25519", comment="komputer-fleet")
        tmp = path.with_suffix(".tmp")
        key.write_private_key(str(tmp))
        os.chmod(tmp, 0o600)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # another host may have made it meanwhile: the first one wins
        tmp.unlink()
    return asyncssh.read_private_key(str(path))


class RoutedComputer:
    """What a routed connection's `AgentAuth` talks to in place of a KServer: the computer's
    agents and keys read from its state, the front end's limits, and the relay of sessions."""

    def __init__(self, host: ComputerHost, key: str, owner: str) -> None:
        self.host = host
        self.key = key
        self.owner = owner  # the owner's SSH address, HOST:PORT
        self.config = host.config
        self.gate, self.penalties = host.gate, host.penalties
        self.connections = host.connections
        self._upstream: dict[int, asyncio.Task[asyncssh.SSHClientConnection]] = {}

    def _read(self, fn: Any, *args: Any) -> Any:
        with KState(self.host.computers.path(self.key)) as state:  # read only (readonly=True fails here)
            return fn(state, *args)

    def authorized_lines(self, username: str) -> list[str]:
        return list(self._read(authorized_lines, username))

    def find_agent(self, name: str) -> Agent | None:
        found: Agent | None = self._read(find_agent, name)
        return found

    def audit_nowait(self, type_: str, **data: Any) -> None:
        self.host.audit_nowait(type_, computer=self.key, owner=self.owner, **data)  # the owner records its own

    def connection_closed(self, c: Connection) -> None:
        task = self._upstream.pop(c.serial, None)
        if task is not None:
            task.add_done_callback(_close_upstream)

    def close_session(self, c: Connection) -> None:
        c.sessions -= 1

    def upstream(self, c: Connection) -> asyncio.Task[asyncssh.SSHClientConnection]:
        """The client connection's one connection to the owner, opened at its first channel."""
        task = self._upstream.get(c.serial)
        if task is None:
            host, _, port = self.owner.rpartition(":")
            async def connect() -> asyncssh.SSHClientConnection:
                return await asyncssh.connect(
                    host, int(port), username=f"{c.username}+{self.key}", client_keys=[self.host.fleet_key],
                    known_hosts=None, agent_path=None, config=None)

            task = asyncio.get_running_loop().create_task(connect())
            self._upstream[c.serial] = task
        return task

    def open_session(self, c: Connection) -> Any:
        if c.sessions >= self.config.max_sessions:
            return False
        c.sessions += 1
        c.touch()
        process = Relay(self, c)
        return c.conn.create_server_channel(encoding=None), process


def _close_upstream(task: asyncio.Task[asyncssh.SSHClientConnection]) -> None:
    if not task.cancelled() and task.exception() is None:
        task.result().close()


class Relay(asyncssh.SSHServerProcess):  # type: ignore[type-arg]
    """One session channel relayed to the same request on the owner."""

    def __init__(self, route: RoutedComputer, c: Connection) -> None:
        super().__init__(process_factory=self._run, sftp_factory=None, sftp_version=0, allow_scp=False)
        self._route = route
        self._k_conn = c
        self._up: asyncssh.SSHClientProcess[bytes] | None = None

    def subsystem_requested(self, subsystem: str) -> bool:
        return True  # the owner decides (sftp, komputer-api; others it refuses)

    def session_started(self) -> None:
        """Every request, sftp too, is relayed as bytes (asyncssh would serve sftp itself)."""
        stdin = SSHReader[bytes](self, self._chan)
        stdout = SSHWriter[bytes](self, self._chan)
        stderr = SSHWriter[bytes](self, self._chan, EXTENDED_DATA_STDERR)
        handler = self._session_factory(stdin, stdout, stderr)  # type: ignore[misc]
        if inspect.isawaitable(handler):
            assert self._conn is not None
            self._conn.create_task(handler, stdin.logger)

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        super().terminal_size_changed(width, height, pixwidth, pixheight)
        if self._up is not None:
            self._up.change_terminal_size(width, height, pixwidth, pixheight)

    def signal_received(self, signal: str) -> None:
        if self._up is not None:
            self._up.send_signal(signal)

    def break_received(self, msec: int) -> bool:
        if self._up is not None:
            self._up.send_break(msec)
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            super().connection_lost(exc)
        finally:
            if self._k_conn is not None:
                self._route.close_session(self._k_conn)
                self._k_conn = None  # type: ignore[assignment]
            if self._up is not None:
                self._up.close()

    async def _run(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        try:
            conn = await self._route.upstream(self._k_conn)
            term = process.get_terminal_type()  # a bytes channel has no line editor: the owner's edits
            self._up = up = await conn.create_process(
                process.command, subsystem=process.subsystem, env=process.env or (),
                term_type=term, term_size=process.get_terminal_size() if term else None,
                request_pty="force" if term else False, encoding=None)
            await process.redirect(stdin=up.stdin, stdout=up.stdout, stderr=up.stderr)
            await up.wait_closed()
            status = up.exit_status
            if status is None and up.exit_signal is not None:
                process.exit_with_signal(*up.exit_signal)
            else:
                process.exit(status or 0)
        except Exception as e:  # noqa: BLE001 - the client is told, the channel ends
            log.warning("fleet: relaying to %s failed: %r", self._route.owner, e)
            process.stderr.write(f"komputer: the computer's host cannot be reached: {e}\r\n".encode())
            process.exit(255)
