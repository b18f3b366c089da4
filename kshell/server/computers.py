"""Many computers on one host: durable computers by key under one root, one SSH listener for all.

Each computer is a state directory `ROOT/KEY` of its own (its agents, keys, files, sessions,
quota and journal: nothing is shared between two keys). `ComputerHost` listens once and routes
each login by its user name, `AGENT+KEY`: the part after the first `+` names the computer (an
agent name never holds a `+`, and OpenSSH, sftp, scp and sshfs pass such a name unchanged). The
computer is opened on its first login and closed when idle, by the SDK's `KomputerPool`: at most
`max_warm` stay open, and one with no connection for `idle_for` seconds is closed.

Why one front end routing to one `KServer` per open computer, rather than one KServer serving
many states: a KServer is exactly one computer's session host (its worker pool bound to its
state, its leases, crons, housekeeping, recovery, audit writer), so reusing it per computer
keeps every rule of one computer unchanged and isolates two computers by construction (another
state, other workers). The front end owns only what belongs to the listener: the host key, the
MaxStartups gate and the source penalties, which the computers' servers share. After
`begin_auth` the connection is the computer's, as if it had come to that computer's own server.

An open computer holds an exclusive flock on `ROOT/.locks/KEY`: a second host process on the
same root cannot open it at once, and `komputer computers rm` refuses one that is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import re
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncssh

from kshell.sdk.computer import Komputer
from kshell.server.app import KServer
from kshell.server.auth import AgentAuth
from kshell.server.config import ServerConfig
from kshell.server.fleet import Member, connect
from kshell.server.limits import SourcePenalties, StartupGate
from kshell.server.route import RoutedComputer, fleet_key

log = logging.getLogger("kshell.server")

_KEY = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}\Z")
SEPARATOR = "+"


def check_key(key: str) -> str:
    """A computer key is a directory name: a lower-case letter or digit and up to 63 of [a-z0-9_.-]."""
    if not _KEY.match(key):
        raise ValueError(f"invalid computer key {key!r}: use a lower-case letter or digit followed "
                         "by up to 63 of [a-z0-9_.-]")
    return key


def split_user(username: str) -> tuple[str, str] | None:
    """`AGENT+KEY` -> (agent, key); None when the name has no valid key."""
    agent, sep, key = username.partition(SEPARATOR)
    if not sep or not agent or not _KEY.match(key):
        return None
    return agent, key


class ComputerOpen(OSError):
    """The computer is open in another process (a host serving it)."""


class Computers:
    """The computers under one root: `ROOT/KEY` state directories and their open-locks."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    def lock_path(self, key: str) -> Path:
        return self.root / ".locks" / check_key(key)

    def exists(self, key: str) -> bool:
        return (self.path(key) / "data.mdb").exists()

    def keys(self) -> list[str]:
        """Every computer's key, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir()
                      if _KEY.match(p.name) and (p / "data.mdb").exists())

    def create(self, key: str, *, agent: str | None = None, keys: list[str] | None = None) -> Path:
        """Make the computer's state (an empty KState; with `agent`, that agent and its
        authorized `keys` lines, as `agent add` and `keys add` would: a platform makes
        thousands of computers with one command). FileExistsError if it is there."""
        from kfs.agents import add_agent, add_key
        from kfs.kstate import KState
        from kfs.vfs import VFS

        path = self.path(key)
        if self.exists(key):
            raise FileExistsError(17, "computer exists", key)
        self.root.mkdir(parents=True, exist_ok=True)
        with KState(path, create=True) as state:
            if agent is not None:
                add_agent(VFS(state, by=f"cli:{os.getuid()}"), agent)
                for line in keys or ():
                    add_key(state, agent, line)
        return path

    def lock(self, key: str, *, wait: bool = False) -> int:
        """Take the computer's open-lock (an fd to close to let go); ComputerOpen if another
        process holds it."""
        path = self.lock_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            raise ComputerOpen(11, "computer is open in another process (a host serves it)", key) from None
        return fd

    def is_open(self, key: str) -> bool:
        try:
            os.close(self.lock(key))
        except ComputerOpen:
            return True
        return False

    def remove(self, key: str) -> None:
        """Delete the computer's state; refused while a host has it open."""
        if not self.exists(key):
            raise FileNotFoundError(2, "no such computer", key)
        fd = self.lock(key)
        try:
            shutil.rmtree(self.path(key))
        finally:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            self.lock_path(key).unlink()

    def stats(self, key: str) -> dict[str, Any]:
        """What the computer costs at rest: its state on disk, and whether a host has it open."""
        path = self.path(key)
        if not self.exists(key):
            raise FileNotFoundError(2, "no such computer", key)
        disk = sum(p.stat().st_blocks * 512 for p in path.iterdir() if p.is_file())
        return {"key": key, "path": str(path), "disk_bytes": disk, "open": self.is_open(key)}


class RoutedAuth(AgentAuth):
    """`AgentAuth` that hands the connection to the computer its user name's key names.

    Until `begin_auth` the connection is the front end's (MaxStartups, penalties); from then on
    `self.server` is the computer's KServer and every decision is that computer's (its agents'
    authorized keys, its MaxSessions, its sessions and audit)."""

    def __init__(self, host: ComputerHost) -> None:
        super().__init__(host)  # type: ignore[arg-type]  # the front end, duck-typed until routed
        self.host = host
        self.key: str | None = None  # the computer checked out here for this connection
        self.routed: str | None = None  # the computer this connection is relayed to

    async def begin_auth(self, username: str) -> bool:  # type: ignore[override]
        c = self.c
        assert c is not None
        parts = split_user(username)
        if self.key is None and parts is not None and self.host.computers.exists(parts[1]):
            owner = await self.host.route(parts[1])
            if owner is None:  # served here
                try:
                    computer = await self.host.checkout(parts[1])
                except Exception as e:  # noqa: BLE001 - refused like an unknown user, and logged
                    log.warning("could not open computer %s: %s", parts[1], e)
                else:
                    if c.closed:  # gone while the computer opened
                        self.host.checkin(parts[1])
                        return True
                    self.key = parts[1]
                    self.host.connections.pop(c.conn, None)
                    self.server = computer.server
                    self.server.connections[c.conn] = c
            elif owner:  # served by another host of the fleet: relayed there (kshell.server.route)
                self.server = RoutedComputer(self.host, parts[1], owner)  # type: ignore[assignment]
                self.routed = parts[1]
                return super().begin_auth(parts[0])
        if self.key is None or parts is None or parts[1] != self.key:
            c.username = username
            c.conn.set_authorized_keys(None)  # type: ignore[arg-type]  # no such computer: no key fits
            return True
        return super().begin_auth(parts[0])

    def _lost(self, exc: Exception | None) -> None:
        try:
            super()._lost(exc)
        finally:
            if self.key is not None:
                self.host.checkin(self.key)
                self.key = None


class ComputerHost:
    """One SSH listener for every computer under `[computers] root` (the module doc says how)."""

    def __init__(self, config: ServerConfig) -> None:
        from kshell.sdk.pool import KomputerPool

        self.config = config
        self.computers = Computers(config.computers.root)
        self.gate = StartupGate(*config.startups())
        self.penalties = SourcePenalties(config.penalties)
        self.connections: dict[asyncssh.SSHServerConnection, Any] = {}
        self._serial = 0
        self.pool = KomputerPool(self._boot, max_warm=config.computers.max_warm,
                                 idle_for=config.computers.idle_for)
        self._locks: dict[str, int] = {}
        self.host_key = self._host_key()
        self.fleet_key = fleet_key(self.computers.root) if config.fleet.etcd else None
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self.member: Member | None = None  # in a fleet ([fleet] etcd): this host's membership
        self._fencer: asyncio.Task[None] | None = None
        self.tokens: dict[str, int] = {}  # the fencing token each open computer was opened under
        self._watcher: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # let_go and claims let go, under way
        self._stopping = False  # stop(): the lease's end lets go of every claim at once

    # -- what AgentAuth asks of its server before a connection is routed --------------------------

    def prepare_connection(self, conn: asyncssh.SSHServerConnection) -> None:
        from kshell.server.app import coalesce_writes

        if self.config.coalesce_writes:
            coalesce_writes(conn)

    def next_serial(self) -> int:
        self._serial += 1
        return self._serial

    def audit_nowait(self, type_: str, **data: Any) -> None:
        """Before a connection names a computer there is no journal to write to: logged."""
        log.info("%s %s", type_, " ".join(f"{k}={v}" for k, v in data.items()))

    def authorized_lines(self, username: str) -> list[str]:
        return []

    def find_agent(self, name: str) -> None:
        return None

    # -- computers -----------------------------------------------------------------------------

    async def route(self, key: str) -> str | None:
        """Where `key` is served: None here (always, alone); in a fleet, None when it is placed
        here (placed now if it was on no live host) and this host's lease is certainly alive,
        else the owner's SSH address, or "" when no host can serve it now (this one fenced, or
        etcd without quorum for a computer not open here)."""
        member = self.member
        if member is None:
            return None
        if not member.valid():
            return ""
        try:
            placement, live = await member.locate(key)
            if placement.owner == member.name:
                return None
            return live.get(placement.owner, "")
        except Exception as e:  # noqa: BLE001 - etcd unreachable or no quorum: placement waits
            log.warning("fleet: cannot place %s: %s", key, e)
            return None if key in self.tokens and member.valid() else ""  # an open computer goes on

    async def _boot(self, key: str) -> Any:
        """Open one computer: its open-lock, its state and its KServer (started without a
        listener, as the SDK starts one), sharing the front end's gate and penalties. In a
        fleet the host first claims it on etcd (only while it is placed here: `Member.claim`),
        and the open-lock file records the owner and its fencing token; the lock itself is
        the fence on the shared disk: a stale owner still holding it keeps the new one out."""
        from kfs.kstate import KState

        fd = await self._lock(key)
        token = None
        try:
            if self.member is not None:
                token = await self.member.claim(key)
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{self.member.name} {token}\n".encode(), 0)
                self.tokens[key] = token
            state = await asyncio.to_thread(KState, self.computers.path(key), create=False)
            try:
                server = HostedServer(state, self.config, self._fleet_line())
                server.gate, server.penalties = self.gate, self.penalties
                await server.start(None)
            except BaseException:
                state.close()
                raise
        except BaseException:
            self._locks[key] = fd
            await self._unlock(key, token)
            raise
        self._locks[key] = fd
        return HostedComputer(state, server, on_close=lambda: self._unlock(key, token))

    async def _lock(self, key: str) -> int:
        """The computer's open-lock. In a fleet a host that was just moved away from it may
        still be closing it (it lets go as soon as it sees the move): waited for, up to the
        lease's TTL twice, past which its own fence has closed it, or it is frozen holding it."""
        wait = 2.0 * self.member.ttl if self.member is not None else 0.0
        deadline, delay = asyncio.get_running_loop().time() + wait, 0.005
        while True:
            try:
                return await asyncio.to_thread(self.computers.lock, key)
            except ComputerOpen:
                if asyncio.get_running_loop().time() >= deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.2)

    def _fleet_line(self) -> str | None:
        """The authorized_keys line of the fleet's key (kshell.server.route), in a fleet."""
        if self.member is None:
            return None
        return self.fleet_key.export_public_key("openssh").decode().strip()

    async def _unlock(self, key: str, token: int | None) -> None:
        """The computer is closed: let go of its open-lock, then of its claim on etcd (a
        `komputer fleet move` waits for that to say the move is done). The claim is let go in
        the background: a fenced host closing all its computers waits for no etcd call."""
        if self.tokens.get(key) == token:
            self.tokens.pop(key, None)
        fd = self._locks.pop(key, None)
        if fd is not None:
            os.close(fd)
        if self.member is not None and token is not None and not self._stopping:
            self._background(self._unclaim(key, token))

    async def _unclaim(self, key: str, token: int) -> None:
        member = self.member
        assert member is not None
        try:
            await member.unclaim(key, token)
        except Exception as e:  # noqa: BLE001 - the claim goes with the lease
            log.warning("fleet: could not record that %s closed %s: %s", member.name, key, e)

    def _background(self, coro: Any) -> None:
        """Run `coro` on its own; `stop` cancels what is left of it."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def let_go(self, key: str, why: str) -> None:
        """Stop serving `key` now: cut its connections and close it (a move took it elsewhere)."""
        computer = self.pool.peek(key)
        if computer is not None:
            self._disconnect(computer.server, why)
        await self.pool.release(key)

    async def _moved(self, key: str, owner: str | None) -> None:
        """A placement changed on etcd: a computer open here and placed elsewhere is let go."""
        member = self.member
        assert member is not None
        if key in self.tokens and owner != member.name:
            log.info("fleet: %s moved from %s to %s: closing it here", key, member.name, owner)
            self._background(self.let_go(key, f"the computer moved to {owner}"))

    async def _resync(self) -> None:
        """After a gap in the watch: each computer open here is checked against its placement."""
        member = self.member
        assert member is not None
        for key in list(self.tokens):
            placement = await member.placement(key)
            await self._moved(key, None if placement is None else placement.owner)

    async def checkout(self, key: str) -> Any:
        return await self.pool.checkout(key)

    def checkin(self, key: str) -> None:
        self.pool.checkin(key)

    def open_keys(self) -> list[str]:
        return self.pool.keys()

    def _host_key(self) -> asyncssh.SSHKey:
        """The host's key, one for every computer it serves (`ROOT/.host/ssh_host_ed25519_key`)."""
        path = self.computers.root / ".host" / "ssh_host_ed25519_key"
        if not path.exists():
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            key = asyncssh.generate_private_key("ssh-ed25519")
            tmp = path.with_suffix(".tmp")
            key.write_private_key(str(tmp))
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        return asyncssh.read_private_key(str(path))

    @property
    def fingerprint(self) -> str:
        return self.host_key.get_fingerprint("sha256")

    # -- listening -----------------------------------------------------------------------------

    async def start(self, host: str, port: int = 0) -> list[tuple[str, int]]:
        from kshell.server.app import share_line_editor_tables

        cfg = self.config
        self.computers.root.mkdir(parents=True, exist_ok=True)
        share_line_editor_tables()
        self._acceptor = await asyncssh.listen(
            host, port,
            server_factory=lambda: RoutedAuth(self),
            server_host_keys=[self.host_key],
            password_auth=False, kbdint_auth=False, gss_host=None,
            login_timeout=cfg.login_grace_time or None,
            keepalive_interval=cfg.keepalive_interval or None,
            keepalive_count_max=cfg.keepalive_count_max,
            allow_pty=True, line_editor=True, line_history=1000,
            agent_forwarding=False, x11_forwarding=False, reuse_address=True,
            encryption_algs=list(cfg.ciphers),
        )
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        addrs = [s.getsockname()[:2] for s in self._acceptor.sockets]  # type: ignore[attr-defined]
        fleet = cfg.fleet
        if fleet.etcd:
            address = f"{addrs[0][0]}:{addrs[0][1]}"
            self.member = Member(connect(fleet.etcd), fleet.name or address, address, ttl=fleet.ttl,
                                 prefix=fleet.prefix)
            await self.member.join()
            self._fencer = asyncio.get_running_loop().create_task(self._fence())
            self._watcher = asyncio.get_running_loop().create_task(
                self.member.watch_placements(self._moved, self._resync))
        return addrs

    async def _fence(self) -> None:
        """Past its lease's deadline the host serves nothing: every connection of every open
        computer is cut and the computers closed (their open-locks let go), before etcd can
        expire the lease and another host may place them; then it joins again, as new."""
        member = self.member
        assert member is not None
        while True:
            await asyncio.sleep(member.ttl / 6)
            if member.valid():
                continue
            log.warning("fleet: %s lost its lease: closing its computers", member.name)
            self._disconnect_all("fenced: this host lost its fleet lease")
            await self.pool.close()
            await member.leave()
            while True:
                try:
                    await member.join()
                    break
                except Exception as e:  # noqa: BLE001 - etcd unreachable: try again
                    log.warning("fleet: %s cannot join again: %s", member.name, e)
                    await asyncio.sleep(member.ttl / 3)

    def _disconnect_all(self, why: str) -> None:
        for computer in self.pool.warm():
            self._disconnect(computer.server, why)
        for c in list(self.connections.values()):
            c.conn.disconnect(asyncssh.DISC_BY_APPLICATION, why)

    @staticmethod
    def _disconnect(server: Any, why: str) -> None:
        for c in list(server.connections.values()):
            c.conn.disconnect(asyncssh.DISC_BY_APPLICATION, why)

    async def _sweep(self) -> None:
        """Close the computers idle for `idle_for` (the pool's sweep), a few times a period."""
        period = max(min(self.config.computers.idle_for / 4, 30.0), 0.05)
        while True:
            await asyncio.sleep(period)
            try:
                await self.pool.sweep()
            except Exception:  # noqa: BLE001 - try again next period
                log.exception("closing idle computers failed")

    async def stop(self) -> None:
        self._stopping = True
        for task in (self._sweeper, self._fencer, self._watcher, *self._tasks):
            if task is not None:
                task.cancel()
        if self._acceptor is not None:
            self._acceptor.close()
            self._disconnect_all("server shutting down")
            await self._acceptor.wait_closed()
        await self.pool.close()
        if self.member is not None:
            await self.member.leave()
            await self.member.client.close()


class HostedServer(KServer):
    """A computer's KServer on a host of many: its worker zygote starts with its first command
    (a login for sftp alone, or one that was refused, starts no process), and in a fleet its
    agents' keys also let the fleet's members in (each has checked the client's own key
    first), to relay logins (kshell.server.route)."""

    def __init__(self, state: Any, config: ServerConfig, fleet_line: str | None) -> None:
        super().__init__(state, config)
        self._fleet_line = fleet_line
        self.pool.lazy = True  # its zygote at its first command: an open computer that runs none has no process

    def authorized_lines(self, username: str) -> list[str]:
        lines = super().authorized_lines(username)
        return [*lines, self._fleet_line] if lines and self._fleet_line else lines


class HostedComputer(Komputer):
    """What the pool keeps per open computer: the SDK's Komputer, also letting go of the
    open-lock once it is closed."""

    def __init__(self, state: Any, server: Any, on_close: Callable[[], Awaitable[None]]) -> None:
        super().__init__(state, server)
        self._on_close = on_close

    async def close(self, *, end_sessions: bool = False) -> None:
        try:
            await super().close(end_sessions=end_sessions)
        finally:
            await self._on_close()


async def serve_computers_until_stopped(
    config: ServerConfig, listen: str, *, ready: Callable[[ComputerHost, list[tuple[str, int]]], None],
    stop: asyncio.Event | None = None,
) -> None:
    """Serve every computer under `[computers] root` until SIGINT/SIGTERM (or `stop`)."""
    import signal

    from kshell.server.app import parse_listen

    host = ComputerHost(config)
    addrs = await host.start(*parse_listen(listen))
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    ready(host, addrs)
    try:
        await stop.wait()
    finally:
        await host.stop()
