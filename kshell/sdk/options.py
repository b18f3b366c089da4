"""What `Komputer.boot` is given besides the image: where the state lives (a directory, or a
memory state that lives as long as the process) and which remotes run the programs K does not
have (kshell.delegate)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kshell.delegate.config import DelegateConfig

__all__ = ["LocalRemote", "MemoryState", "SSHRemote", "drive_tables", "host_drive", "local_remote", "memory_drive",
           "memory_state", "ssh_remote"]

DEFAULT_MEMORY_STATE = 256 << 20


@dataclass(frozen=True, slots=True)
class MemoryState:
    """K-owned state (sessions, events, receipts, the agents' files) that lives as long as the
    computer: an LMDB environment in a private directory of /dev/shm (memory, never the disk),
    removed at `close()`. `max_bytes` bounds it: past it writes fail with ENOSPC. Distinct from
    a memory drive, which bounds one mounted tree."""

    max_bytes: int = DEFAULT_MEMORY_STATE

    def make(self) -> Path:
        """A fresh directory for one computer's state (0700: the state's files are root's)."""
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        return Path(tempfile.mkdtemp(prefix="komputer-state-", dir=base))

    @staticmethod
    def remove(path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)


def memory_state(max_bytes: int = DEFAULT_MEMORY_STATE) -> MemoryState:
    if max_bytes < 1 << 20:
        raise ValueError(f"memory_state(max_bytes={max_bytes}): expected at least 1 MiB")
    return MemoryState(max_bytes)


@dataclass(frozen=True, slots=True)
class LocalRemote:
    """Programs K does not have run on this host under bubblewrap, seeing the agent's files
    through a FUSE mount of the state (the computer mounts it at boot). `sandboxed`: whether
    bubblewrap is installed and usable here; restricted modes delegate only to a sandbox and
    otherwise fail closed."""

    sandbox: str = "bubblewrap"
    network: bool = False

    @property
    def sandboxed(self) -> bool:
        return self.sandbox == "bubblewrap" and bubblewrap_usable()

    @property
    def why_not(self) -> str:
        """Why this remote declares no hard sandbox ("" when it does)."""
        if self.sandbox != "bubblewrap":
            return f"sandbox {self.sandbox!r}: only bubblewrap is a hard sandbox"
        return "" if bubblewrap_usable() else "bubblewrap is not installed or not usable here (apt install bubblewrap)"

    def config(self) -> DelegateConfig:
        return DelegateConfig(remote="local", network=self.network)


@dataclass(frozen=True, slots=True)
class SSHRemote:
    """Programs run by the OpenSSH client on `target` (user@host), where K's root is visible at
    `root`. SSH is no sandbox attestation: restricted modes never delegate to it."""

    target: str
    root: str
    args: tuple[str, ...] = ()
    sandboxed = False

    def config(self) -> DelegateConfig:
        return DelegateConfig(remote="ssh", ssh_host=self.target, ssh_root=self.root, ssh_options=self.args)


def local_remote(sandbox: str = "bubblewrap", *, network: bool = False) -> LocalRemote:
    return LocalRemote(sandbox, network)


def ssh_remote(target: str, *, root: str, args: list[str] | tuple[str, ...] = ()) -> SSHRemote:
    if "@" not in target:
        raise ValueError(f"ssh_remote({target!r}): expected user@host")
    if not root.startswith("/"):
        raise ValueError(f"ssh_remote(root={root!r}): expected the absolute path where K's root is visible there")
    return SSHRemote(target, root, tuple(args))


_BWRAP: bool | None = None


def bubblewrap_usable() -> bool:
    """bubblewrap runs here (installed, and user namespaces allowed): tried once per process."""
    global _BWRAP
    if _BWRAP is None:
        bwrap = shutil.which("bwrap")
        try:
            _BWRAP = bwrap is not None and subprocess.run(
                [bwrap, "--ro-bind", "/", "/", "--unshare-all", "true"], capture_output=True, timeout=30,
            ).returncode == 0
        except (OSError, subprocess.SubprocessError):
            _BWRAP = False
    return _BWRAP


def memory_drive(max_bytes: int, *, readonly: bool = False, agent_max_bytes: int | None = None) -> dict[str, Any]:
    """A fresh, bounded tree for each run of the computer (the image's `kind = "memory"`):
    writes past `max_bytes` fail with ENOSPC, as on a full tmpfs, and one agent's past
    `agent_max_bytes` (default: half the drive) with EDQUOT. Not K-owned state: that is
    `memory_state`."""
    if readonly:
        raise ValueError("memory_drive(readonly=True): a memory drive starts empty; nothing could be read")
    return {"kind": "memory", "max_bytes": int(max_bytes),
            **({} if agent_max_bytes is None else {"agent_max_bytes": int(agent_max_bytes)})}


def host_drive(source: str | os.PathLike[str], *, readonly: bool = False) -> dict[str, Any]:
    """A directory of this host shown in the tree (`kind = "host"`), read-only or not."""
    return {"kind": "host", "source": os.fspath(source), "readonly": readonly}


def drive_tables(drives: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, bytes]]:
    """`boot(drives={PATH: drive})` as the image's [drives.NAME] tables and the files they need.
    A drive is `memory_drive(...)`, `host_drive(...)`, or a class with the python drive's calls
    (`mount(ctx)`, `unmount()`, `stat`, `readdir`, `read`, and `write`... for a writable one;
    docs/image.md, Drives): session workers are processes of their own, so the class's module is
    stored with the image, as an image folder's would be, and must import from that source alone."""
    import inspect
    import re
    import sys

    tables: dict[str, dict[str, Any]] = {}
    files: dict[str, bytes] = {}
    for path, drive in drives.items():
        name = re.sub(r"[^A-Za-z0-9_-]", "_", path.strip("/")) or "root"
        if isinstance(drive, type):
            module = sys.modules.get(drive.__module__)
            source = inspect.getsource(module) if module is not None else ""
            stored = "sdk_" + name if drive.__module__ == "__main__" else drive.__module__
            if "." in stored or not stored.isidentifier():
                raise ValueError(f"drive {path}: class {drive.__qualname__} lives in {drive.__module__}: "
                                 "give a class of a top-level module (or put the drive in the image)")
            files[f"{stored}.py"] = source.encode()
            table = {"kind": "python", "handler": f"{stored}:{drive.__name__}",
                     "readonly": bool(getattr(drive, "readonly", False))}
        elif isinstance(drive, dict):
            table = dict(drive)
        else:
            raise TypeError(f"drive {path}: expected memory_drive(...), host_drive(...) or a drive class, "
                            f"not {type(drive).__name__}")
        tables[name] = {"path": path, **table}
    return tables, files
