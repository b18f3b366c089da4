"""`agent.fs`: an agent's files from Python, through the session view (kshell.view) that SFTP,
the agent's mount and the shell's worker open: the agent's uid and groups, its mode and scope,
the path rules, the image's write hooks, its fork's tree and its drives. A write the shell
would refuse raises PermissionError here, with the errno a Unix program would get.

Paths: `~` and `~/...` are the agent's home; a relative path is taken from the home, as SFTP
takes it. Text is UTF-8 (undecodable bytes kept as surrogates, as the K shell keeps them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from kfs.runtime.approvals import WAITER
from kshell.sdk.types import FileStat, WalkEntry

if TYPE_CHECKING:
    from kshell.sdk.session import AgentSession

__all__ = ["AgentFS"]

T = TypeVar("T")


def _approve(e: Any) -> bool | None:
    """WritePolicy.approve of an AgentFS view: the calling task's WAITER decides (None: nobody)."""
    waiter = WAITER.get()
    return None if waiter is None else waiter(e)


def _bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)


class AgentFS:
    """The file calls of one session (async: each runs in a thread, so the event loop never
    waits for LMDB or a drive)."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session
        self._view: Any = None

    def _open(self) -> Any:
        """The session's view, opened at the first call (and again when the session moved to
        another fork or mode: never)."""
        if self._view is None:
            from kshell.view import SessionSpec, open_view

            session = self._session
            server = session.computer.server
            spec = SessionSpec(agent=session.agent, front="sdk fs", session=session.id, mode=session.mode,
                               fork=session.fork_number, hooks=True, configured=server.config.configured(session.agent))
            self._view = open_view(session.computer.state, spec, memory_drives=server.memory_drives)
            if self._view.policy is not None:
                self._view.policy.approve = _approve
        return self._view.fs

    def grant(self, path: str) -> None:
        """Writes reaching the physical `path` are allowed for the rest of the session, as after
        an `ask` approval decided `allow` (one applied after a restart, by an agent loop)."""
        self._open()
        if self._view.policy is not None:
            self._view.policy.granted.add(path)

    def path(self, path: str) -> str:
        """The absolute path `path` names for the agent (`~` expanded, relative from home)."""
        home = self._session.home
        if path == "~" or path.startswith("~/"):
            return home + path[1:]
        if not path.startswith("/"):
            return home + "/" + path if path not in ("", ".") else home
        return path

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        self._session._check()  # noqa: SLF001 - a detached or closed session has no files
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def read_file(self, path: str) -> bytes:
        return await self._call(lambda: self._open().read_file(self.path(path)))

    async def read_text(self, path: str) -> str:
        return (await self.read_file(path)).decode("utf-8", "surrogateescape")

    async def write_file(self, path: str, data: bytes | str, *, mode: int = 0o666) -> int:
        """Create or replace the file (the umask of a session, 022, applies); bytes written."""
        return await self._call(lambda: self._open().write_file(self.path(path), _bytes(data), mode=mode))

    async def append_file(self, path: str, data: bytes | str) -> int:
        return await self._call(lambda: self._open().append_file(self.path(path), _bytes(data)))

    async def mkdir(self, path: str, *, parents: bool = False, mode: int = 0o777) -> None:
        await self._call(lambda: self._open().mkdir(self.path(path), mode, parents=parents))

    async def rename(self, src: str, dst: str) -> None:
        await self._call(lambda: self._open().rename(self.path(src), self.path(dst)))

    async def rm(self, path: str, *, recursive: bool = False, force: bool = False) -> None:
        await self._call(lambda: self._open().rm(self.path(path), recursive=recursive, force=force))

    async def walk(self, path: str = "~") -> list[WalkEntry]:
        """Every directory under `path` (top first), as os.walk lists them."""
        return await self._call(lambda: [WalkEntry(d, list(dirs), list(files))
                                         for d, dirs, files in self._open().walk(self.path(path))])

    async def stat(self, path: str, *, follow: bool = True) -> FileStat:
        def run() -> FileStat:
            fs = self._open()
            node = fs.stat(self.path(path)) if follow else fs.lstat(self.path(path))
            return FileStat(node.mode, node.uid, node.gid, node.size, node.nlink, node.mtime, node.atime, node.ctime)

        return await self._call(run)

    async def exists(self, path: str) -> bool:
        return await self._call(lambda: self._open().exists(self.path(path)))

    async def chmod(self, path: str, mode: int) -> None:
        await self._call(lambda: self._open().chmod(self.path(path), mode))

    async def symlink(self, target: str, path: str) -> None:
        """A symbolic link at `path` to `target` (stored as given, as ln -s stores it)."""
        await self._call(lambda: self._open().symlink(target, self.path(path)))

    async def readlink(self, path: str) -> str:
        return await self._call(lambda: self._open().readlink(self.path(path)))
