"""What `Komputer.boot` is given besides the image: where the state lives (a directory, or a
memory state that lives as long as the process) and which remotes run the programs K does not
have (kshell.delegate)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kshell.delegate.config import DelegateConfig

__all__ = ["LocalRemote", "MemoryState", "SSHRemote", "local_remote", "memory_state", "ssh_remote"]

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
