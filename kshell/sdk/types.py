"""What the SDK hands back and raises, shared by the local computer (kshell.sdk.computer) and a
remote appliance reached over SSH (kshell.sdk.remote): one surface, whichever side runs it."""

from __future__ import annotations

import stat as statmod
from dataclasses import dataclass, field
from typing import Any

from kfs.agents.sessions import LeaseHeld
from kshell.errors import AgentNotFound, SDKError

__all__ = ["AgentNotFound", "ExecResult", "FileStat", "KomputerClosed", "LeaseHeld", "SDKError", "WalkEntry"]


class KomputerClosed(SDKError):
    """The computer (or the session) was closed; nothing more runs on it."""


@dataclass(frozen=True, slots=True)
class ExecResult:
    """One command line's outcome, as an SSH exec would give it. `pid`: the K process row of the
    line (`komputer ps`); `receipt`: the last write receipt the line made (0: it wrote nothing)."""

    stdout: bytes
    stderr: bytes
    status: int
    pid: int = 0
    receipt: int = 0

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def text(self) -> str:
        """stdout as text (undecodable bytes kept as surrogates, as the K shell keeps them)."""
        return self.stdout.decode("utf-8", "surrogateescape")


@dataclass(frozen=True, slots=True)
class FileStat:
    """`stat` of a path as the agent sees it (times in nanoseconds since the epoch)."""

    mode: int
    uid: int
    gid: int
    size: int
    nlink: int
    mtime: int
    atime: int = 0
    ctime: int = 0

    @property
    def is_dir(self) -> bool:
        return statmod.S_ISDIR(self.mode)

    @property
    def is_file(self) -> bool:
        return statmod.S_ISREG(self.mode)

    @property
    def is_symlink(self) -> bool:
        return statmod.S_ISLNK(self.mode)


@dataclass(frozen=True, slots=True)
class WalkEntry:
    """One directory of `fs.walk`, as os.walk gives it."""

    path: str
    dirs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def __iter__(self) -> Any:  # unpacks as os.walk's triple
        return iter((self.path, self.dirs, self.files))
