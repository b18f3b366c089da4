"""`Komputer`: one K computer on its state, driven from Python with the authority an SSH login has.

    async with Komputer.boot(state="/var/lib/k/alice") as computer:
        agent = await computer.login("alice", id="chat")
        result = await agent.exec("echo hi > ~/note; cat ~/note")
        await agent.detach()

The computer is the SSH server's own core (kshell.server.app.KServer: the worker pool, the
leases and their renewal, crons, housekeeping, recovery) started without a listener: a command
run through `agent.exec` takes the path an `ssh` exec takes after authentication (the same
worker model, limits, delegation, governance, receipts and events), and `agent.fs` is the same
session view (kshell.view) SFTP and the agent's mount use. Nothing is reimplemented here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Awaitable, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kfs.agents import Agent, find_agent
from kfs.agents.sessions import lease_alive, list_sessions
from kfs.kstate import KState
from kshell.sdk.options import LocalRemote, MemoryState, SSHRemote, drive_tables
from kshell.sdk.types import AgentNotFound, KomputerClosed, LeaseHeld

if TYPE_CHECKING:
    import subprocess

    from kshell.sdk.session import AgentSession
    from kshell.server.app import KServer
    from kshell.server.config import ServerConfig

__all__ = ["Booting", "Komputer"]

Remote = LocalRemote | SSHRemote


class Booting:
    """What `Komputer.boot(...)` returns: await it for the computer, or use it as an async
    context manager that closes the computer (detaching its sessions) on the way out."""

    def __init__(self, coro: Awaitable[Komputer]) -> None:
        self._coro = coro
        self._computer: Komputer | None = None

    def __await__(self) -> Generator[Any, None, Komputer]:
        return self._coro.__await__()

    async def __aenter__(self) -> Komputer:
        self._computer = await self._coro
        return self._computer

    async def __aexit__(self, *exc: object) -> None:
        if self._computer is not None:
            await self._computer.close()


class Komputer:
    """One computer: its state, its session host, and the sessions this program holds."""

    def __init__(self, state: KState, server: KServer, *, memory: MemoryState | None = None,
                 mount: subprocess.Popen[str] | None = None, hosts: dict[str, Any] | None = None,
                 remote: Remote | None = None, owned: bool = True) -> None:
        self.state = state
        self._owned = owned  # closed with the computer (not a KState the caller opened)
        self.server = server
        self.remote = remote
        self._memory = memory
        self._mount = mount
        self._hosts = hosts or {}
        self._sessions: dict[tuple[str, str], AgentSession] = {}
        self._closed = False
        self.gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()  # done at close()
        self.models: dict[str, Any] = {}  # the agent loop's models by name (kshell.agent.models)
        self.counters = {"logins": 0, "execs": 0, "forks": 0}

    # -- booting -------------------------------------------------------------------------------

    @staticmethod
    def boot(image: str | os.PathLike[str] | Any = None, *,
             state: str | os.PathLike[str] | MemoryState | KState | None = None,
             remotes: Mapping[str, Remote] | None = None, hosts: Mapping[str, Any] | None = None,
             drives: Mapping[str, Any] | None = None, config: ServerConfig | None = None,
             models: Mapping[str, Any] | None = None) -> Booting:
        """Open (or create) the computer on `state` (a directory, `memory_state(...)`, or a
        KState this program opened, which it closes itself; None: a memory state), put `image`
        in force when it differs from the one in force (a folder with komputer.toml, or a
        kfs.runtime.image.Image), and start its session host. `remotes`: where programs K does
        not have run (the first is used; none: nowhere, they are "command not found"); `hosts`:
        virtual hosts for curl and wget, as Python values (`{"api": {"/hello": "hello\\n",
        "/data.json": {"ok": True}}}`); `drives`: path -> `memory_drive(...)`, `host_drive(...)`
        or a drive class, joined to the image (so every front end, SFTP and the mount too, sees
        them); `config`: the settings komputer.toml's [ssh], [limits] and [agents] sections give
        a server; `models`: the agent loop's models by name (kshell.agent.models; their keys'
        secrets read from this state)."""
        return Booting(Komputer._boot(image, state, dict(remotes or {}), dict(hosts or {}), dict(drives or {}),
                                      config, dict(models or {})))

    @staticmethod
    async def _boot(image: Any, where: Any, remotes: dict[str, Remote], hosts: dict[str, Any],
                    drives: dict[str, Any], config: ServerConfig | None,
                    models: dict[str, Any] | None = None) -> Komputer:
        from dataclasses import replace

        from kshell.server.app import KServer
        from kshell.server.config import ServerConfig
        from kshell.tools.net.hosts import hosts_to_wire

        wire_hosts = hosts_to_wire(hosts)  # a bad value fails here, before anything starts
        drive_spec = drive_tables(drives)
        remote = next(iter(remotes.values()), None)
        config = config or ServerConfig()
        delegate = remote.config() if remote is not None else replace(config.delegate, remote="none")
        config = replace(config, delegate=delegate)
        memory = where if isinstance(where, MemoryState) else MemoryState() if where is None else None
        shared = isinstance(where, KState)  # the caller's open state: theirs to close
        path = memory.make() if memory is not None else Path(where.path) if shared else Path(where)
        if shared:
            state = where
        elif memory is not None:
            state = KState(path, create=True, max_map_size=memory.max_bytes)
        else:
            state = await asyncio.to_thread(KState, path, create=True)
        mount = None
        try:
            if image is not None or drives:
                await asyncio.to_thread(_apply_image, state, image, *drive_spec)
            if isinstance(remote, LocalRemote):
                mount = await asyncio.to_thread(_mount_state, path)
            server = KServer(state, config)
            await server.start(None)
        except BaseException:
            if mount is not None:
                from kshell.delegate.mounts import stop_admin_mount

                await asyncio.to_thread(stop_admin_mount, mount)
            if not shared:
                state.close()
            if memory is not None:
                memory.remove(path)
            raise
        computer = Komputer(state, server, memory=memory, mount=mount, hosts=wire_hosts, remote=remote,
                            owned=not shared)
        from kshell.agent.models.config import image_models

        computer.models = {**image_models(state), **{name: m.bind(state) for name, m in (models or {}).items()}}
        return computer

    @staticmethod
    async def connect(url: str, **options: Any) -> Any:
        """The same AgentSession surface on a remote appliance, over SSH alone, with the
        authority of that agent's login (kshell.sdk.remote.connect)."""
        from kshell.sdk.remote import connect

        return await connect(url, **options)

    # -- agents and sessions ---------------------------------------------------------------------

    def _check(self) -> None:
        if self._closed:
            raise KomputerClosed("the computer is closed")

    async def add_agent(self, name: str) -> Agent:
        """The agent `name`, made if it is new (its uid, home and account entries), as
        `komputer agent add` makes it."""
        from kfs.agents import ensure_agent
        from kfs.vfs import VFS

        self._check()
        agent, _ = await asyncio.to_thread(ensure_agent, VFS(self.state, by="sdk"), name)
        return agent

    def agent(self, name: str) -> Agent:
        found = find_agent(self.state, name)
        if found is None:
            raise AgentNotFound(f"no agent {name!r} (komputer agent list shows them; computer.add_agent makes one)")
        return found

    async def login(self, agent: str, id: str | None = None, *, mode: str = "full") -> AgentSession:
        """A session of `agent`, holding its durable lease (renewed while this computer runs; a
        second holder, in this process or another, gets LeaseHeld). `id` names a durable
        session: logging into it again restores its cwd, exported variables and functions
        (and its running jobs, when this computer detached it). None: a new session with a
        fresh id. `mode`: readonly, plan, limited or full (never looser than the agent's)."""
        from kfs.vfs.policy import MODES, stricter
        from kshell.sdk.session import AgentSession

        self._check()
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
        found = self.agent(agent)
        name = id if id is not None else f"sdk-{secrets.token_hex(6)}"
        fork = await asyncio.to_thread(_named_fork, self.state, agent, name)
        if fork is not None:  # `fork-N` works in fork N, as over SSH (K_SESSION=fork-N)
            mode = stricter(mode, fork["mode"])
        record, holder = await self.server.leases.hold(found, name)
        parked = self._sessions.pop((agent, record.name), None)  # detached here: its worker and jobs live on
        session = AgentSession(self, found, record, holder, mode=mode, fork=fork["id"] if fork else None,
                               runner=parked.take_runner() if parked is not None else None)
        self._sessions[(agent, record.name)] = session
        self.counters["logins"] += 1
        return session

    def _forget(self, session: AgentSession, *, keep: bool) -> None:
        """A session let go of its lease: kept (its worker and jobs) for a later login when
        `keep`, else dropped."""
        key = (session.agent, session.id)
        if self._sessions.get(key) is session and not keep:
            del self._sessions[key]

    def sessions(self) -> list[AgentSession]:
        """The sessions this computer holds now (logged in, not detached)."""
        return [s for s in self._sessions.values() if s.attached]

    async def recover_sessions(self) -> list[AgentSession]:
        """Take over every session whose holder is gone (a crashed or killed program) or whose
        lease expired: their process rows are sealed first (lost, or a plain `sleep` resumed to
        its original deadline; receipts of what cannot be known stay uncertain), then each is
        logged in here, restoring its cwd and variables. Returns the sessions taken over."""
        self._check()
        await self.server.recover()
        now = time.time_ns()
        orphans = [record for record, lease in await asyncio.to_thread(list_sessions, self.state)
                   if not record.ephemeral and (lease is None or not lease_alive(lease, now))
                   and (record.agent, record.name) not in self._sessions]
        taken = []
        for record in orphans:
            with contextlib.suppress(AgentNotFound, LeaseHeld):  # gone meanwhile, or taken by another
                taken.append(await self.login(record.agent, record.name))
        return taken

    async def detach_idle_sessions(self, idle_for: float, *, busy: bool = False) -> list[str]:
        """Detach this computer's sessions that ran nothing for `idle_for` seconds (their
        durable sessions stay, for a later login); sessions with running jobs are skipped
        unless `busy`. Returns their "agent/id" names."""
        loop = asyncio.get_running_loop()
        detached = []
        for session in self.sessions():
            if loop.time() - session.last_used >= idle_for and (busy or not session.has_jobs):
                await session.detach()
                detached.append(f"{session.agent}/{session.id}")
        return detached

    def runtime(self, name: str = "komputer", **options: Any) -> Any:
        """The runtime `name` (kshell.runtimes; docs/runtimes.md): "komputer" runs each
        orchestrated session in a persistent terminal of this computer (`agent=` names the
        agent), "tmux" and "process" on the host."""
        from kshell.runtimes import get_runtime

        if name == "komputer":
            options.setdefault("computer", self)
        return get_runtime(name, **options)

    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> list[tuple[str, int]]:
        """Listen for SSH on host:port (port 0 picks one), as `komputer serve` does: agents log
        in with their keys, and a person attaches to a persistent terminal with `ssh -tt -o
        SetEnv=K_SESSION=ID`. Returns the bound addresses."""
        self._check()
        return await self.server.listen(host, port)

    def stats(self) -> dict[str, Any]:
        """Local counters (no scan of durable history): sessions held and detached here, the
        workers and processes this computer runs, and what its image declares."""
        from kfs.runtime import image

        record = image.current(self.state)
        spec = record["spec"] if record is not None else {}
        pool = self.server.pool
        return {
            "sessions": len(self.sessions()),
            "detached": sum(1 for s in self._sessions.values() if not s.attached),
            "workers": len(pool.alive),
            "processes": sum(s.jobs for s in self._sessions.values()),
            **self.counters,
            "commands": len(spec.get("commands", {})),
            "hooks": len(spec.get("hooks", [])),
            "crons": len(spec.get("crons", [])),
            "mounts": len(spec.get("drives", {})) + (self._mount is not None),
            "hosts": len(spec.get("hosts", {})) + len(self._hosts),
            "handlers": sum(1 for h in spec.get("hooks", []) if h.get("handler")),
        }

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self, *, end_sessions: bool = False) -> None:
        """Detach every session this computer holds (or end them, `end_sessions`), stop its
        workers and crons, unmount what it mounted and close the state (a memory state is gone
        then). Process rows of background jobs stay in the state for `recover_sessions`."""
        if self._closed:
            return
        if not self.gone.done():  # commands in flight end with KomputerClosed, never a hang
            self.gone.set_result(None)
        for session in list(self._sessions.values()):
            with contextlib.suppress(Exception):
                if end_sessions and session.attached:
                    await session.close()
                else:
                    await session.detach(keep=False)
        self._closed = True
        self._sessions.clear()
        await self.server.stop()
        if self._mount is not None:
            from kshell.delegate.mounts import stop_admin_mount

            await asyncio.to_thread(stop_admin_mount, self._mount)
        path = Path(self.state.path)
        if self._owned:
            self.state.close()
        if self._memory is not None:
            self._memory.remove(path)

    async def __aenter__(self) -> Komputer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _named_fork(state: KState, agent: str, name: str) -> dict[str, Any] | None:
    """The fork a session named `fork-N` works in (a session `AgentSession.fork` made, logged
    into again after a restart or from another program): fork N's record when it exists and is
    `agent`'s, else None (a plain session of that name)."""
    from kfs import forks

    number = name[len("fork-"):] if name.startswith("fork-") else ""
    if not number.isdigit() or len(number) > 18:
        return None
    try:
        record = forks.get(state, int(number))
    except forks.ForkError:
        return None
    return record if record.get("agent") == agent else None


def _apply_image(state: KState, image: Any, drives: dict[str, dict[str, Any]], files: dict[str, bytes]) -> None:
    """Put `image` (None: the one in force) with `drives` in force, unless the one in force is
    the same (its digest): booting again with the same arguments makes no new version."""
    from kfs.runtime import image as images

    current = images.current(state)
    if image is None:
        loaded = images.of_record(state, current)
    else:
        loaded = image if isinstance(image, images.Image) else images.load(image, state_dir=state.path)
    if drives:
        loaded = images.with_drives(loaded, drives, files, state_dir=state.path)
    if current is None or current.get("digest") != loaded.digest():
        images.apply(state, loaded, by="sdk")


def _mount_state(path: Path) -> subprocess.Popen[str]:
    """The FUSE mount delegated programs see the agents' files through, beside the state."""
    from kshell.delegate.mounts import start_admin_mount

    where = Path(f"/run/komputer/sdk-{os.getpid()}-{secrets.token_hex(4)}")
    proc, why = start_admin_mount(path, where)
    if proc is None:
        raise OSError(f"local_remote(): the state's FUSE mount did not come up: {why}")
    return proc
