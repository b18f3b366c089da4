"""Authentication and connection limits: one `AgentAuth` (an asyncssh `SSHServer`) per connection.

Public-key authentication only: an agent's authorized_keys lines come from KState at the
start of authentication and asyncssh enforces them (`from=`, `cert-authority`, `principals=`).
What asyncssh lacks is built here: MaxAuthTries, MaxStartups random early drop,
PerSourcePenalties and MaxSessions (per connection and per agent).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import asyncssh

from kfs.agents import Agent, SessionRecord

if TYPE_CHECKING:
    from kshell.server.config import ServerConfig
    from kshell.server.limits import SourcePenalties, StartupGate

log = logging.getLogger("kshell.server")


class Refused(Exception):
    """Dropped before the SSH banner (MaxStartups or an active source penalty)."""


class RecordingAuthorizedKeys(asyncssh.SSHAuthorizedKeys):
    """asyncssh's authorized keys, remembering which key (or CA) let the client in."""

    matched: str | None = None

    def validate(self, key: asyncssh.SSHKey, client_host: str, client_addr: str,
                 cert_principals: Any = None, ca: bool = False) -> Any:
        options = super().validate(key, client_host, client_addr, cert_principals, ca)
        if options is not None:
            self.matched = ("ca " if ca else "") + key.get_fingerprint("sha256")
        return options


@dataclass(eq=False)
class Connection:
    """What the server knows about one client connection."""

    conn: asyncssh.SSHServerConnection
    serial: int
    peer_addr: str
    peer_port: int
    local_addr: str
    local_port: int
    started: float = field(default_factory=time.monotonic)
    username: str = ""
    agent: Agent | None = None
    failures: int = 0
    tried: bool = False  # an authentication attempt other than "none" was made
    gated: bool = False  # counted by MaxStartups until authenticated or gone
    sessions: int = 0
    last_activity: float = field(default_factory=time.monotonic)
    forced_command: str | None = None
    keys: RecordingAuthorizedKeys | None = None
    cancel_hooks: set[Callable[[], None]] = field(default_factory=set)
    closed: bool = False
    # the connection's agent session: taken by its first session channel, shared by the later
    # ones (multiplexed clients), released when the connection is gone and no channel uses it
    session: SessionRecord | None = None
    session_holder: dict[str, Any] | None = None
    session_users: int = 0
    session_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def touch(self) -> None:
        self.last_activity = time.monotonic()

    def key_mode(self) -> str:
        """The restricted mode the authorized key names (`environment="K_MODE=readonly"` in
        its options), "full" when it names none."""
        env = self.conn.get_key_option("environment") or {}
        return str(env.get("K_MODE", "full")) if isinstance(env, dict) else "full"


class Admission(Protocol):
    """What `AgentAuth` asks and tells about its connections: a computer's server
    (kshell.server.app.KServer) or, for a computer another host of the fleet serves, the
    route to it (kshell.server.route.RoutedComputer)."""

    config: ServerConfig
    gate: StartupGate
    penalties: SourcePenalties
    connections: dict[asyncssh.SSHServerConnection, Connection]

    def prepare_connection(self, conn: asyncssh.SSHServerConnection) -> None:
        """A new connection, before anything is sent on it."""

    def next_serial(self) -> int: ...

    def audit_nowait(self, type_: str, **data: Any) -> None: ...

    def authorized_lines(self, username: str) -> list[str]: ...

    def find_agent(self, name: str) -> Agent | None: ...

    def connection_closed(self, c: Connection) -> None:
        """The connection is gone: what it held (a session's lease, an upstream) is let go."""

    def open_session(self, c: Connection) -> Any:
        """A new session channel of `c` (asyncssh's session_requested answer), or False."""


class AgentAuth(asyncssh.SSHServer):
    """Auth decisions and connection limits for one connection: the asyncssh callback class
    alone, each decision taken on the `Admission` it is given."""

    def __init__(self, server: Admission) -> None:
        self.server = server
        self.c: Connection | None = None

    # -- connection lifecycle ----------------------------------------------------------------

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        server = self.server
        server.prepare_connection(conn)
        peer = conn.get_extra_info("peername") or ("", 0)
        local = conn.get_extra_info("sockname") or ("", 0)
        c = Connection(conn, server.next_serial(), peer[0], peer[1], local[0], local[1])
        self.c = c
        left = server.penalties.refused(c.peer_addr)
        if left:
            server.audit_nowait("ssh.refused", peer=c.peer_addr, reason="penalty", seconds=round(left, 1))
            raise Refused(f"{c.peer_addr}: penalised for {left:.0f}s more")
        if not server.gate.admit():
            server.audit_nowait("ssh.refused", peer=c.peer_addr, reason="max_startups")
            raise Refused("MaxStartups: too many unauthenticated connections")
        c.gated = True
        server.connections[conn] = c

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            self._lost(exc)
        except Exception:  # asyncssh would swallow it silently
            log.exception("cleaning up a connection failed")

    def _lost(self, exc: Exception | None) -> None:
        c = self.c
        if c is None or c.closed:
            return
        c.closed = True
        server = self.server
        server.connections.pop(c.conn, None)
        for hook in list(c.cancel_hooks):
            hook()
        server.connection_closed(c)
        if c.gated:
            server.gate.done()
            c.gated = False
        if isinstance(exc, Refused):
            return
        if c.agent is not None:
            server.audit_nowait("ssh.logout", agent=c.agent.name, peer=c.peer_addr,
                                seconds=round(time.monotonic() - c.started, 3))
            return
        if c.failures:
            kind = "authfail"
        elif exc is not None and "Login timeout" in str(exc):
            kind = "grace_exceeded"
        elif not c.tried:
            kind = "noauth"
        else:
            kind = "authfail"
        if server.penalties.penalise(c.peer_addr, kind):
            server.audit_nowait("ssh.penalty", peer=c.peer_addr, reason=kind)

    # -- authentication ----------------------------------------------------------------------

    def begin_auth(self, username: str) -> bool:
        c = self.c
        assert c is not None
        c.username = username
        lines = self.server.authorized_lines(username)
        c.keys = None
        if lines:
            keys = RecordingAuthorizedKeys()
            try:
                keys.load("\n".join(lines))
                c.keys = keys
            except ValueError:
                c.keys = None
        c.conn.set_authorized_keys(c.keys)  # type: ignore[arg-type]
        return True

    def public_key_auth_supported(self) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        return False

    def host_based_auth_supported(self) -> bool:
        return False

    def _failed(self, what: str, key: asyncssh.SSHKey) -> bool:
        c = self.c
        assert c is not None
        c.tried = True
        c.failures += 1
        self.server.audit_nowait(
            "ssh.auth_failure", user=c.username, peer=c.peer_addr, method="publickey",
            key=what + key.get_fingerprint("sha256"), attempt=c.failures,
        )
        if c.failures >= self.server.config.max_auth_tries:
            asyncio.get_running_loop().call_soon(
                c.conn.disconnect, asyncssh.DISC_NO_MORE_AUTH_METHODS_AVAILABLE, "Too many authentication failures"
            )
        return False

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        """Reached only for a key the agent's authorized_keys did not accept."""
        return self._failed("", key)

    def validate_ca_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return self._failed("ca ", key)

    def auth_completed(self) -> None:
        c = self.c
        assert c is not None
        agent = self.server.find_agent(c.username)
        if agent is None:  # removed between key check and now
            c.conn.disconnect(asyncssh.DISC_ILLEGAL_USER_NAME, "no such agent")
            return
        c.agent = agent
        c.tried = True
        if c.gated:
            self.server.gate.done()
            c.gated = False
        # what asyncssh runs instead of the client's request: a certificate's force-command wins
        # over the key's command= (as in asyncssh's own channel code and in sshd)
        command = c.conn.get_certificate_option("force-command")
        if not isinstance(command, str):
            command = c.conn.get_key_option("command")
        c.forced_command = command if isinstance(command, str) else None
        self.server.audit_nowait(
            "ssh.login", agent=agent.name, peer=c.peer_addr, port=c.peer_port,
            key=c.keys.matched if c.keys is not None else None,
        )

    # -- sessions ----------------------------------------------------------------------------

    def session_requested(self) -> Any:
        c = self.c
        assert c is not None and c.agent is not None
        return self.server.open_session(c)
