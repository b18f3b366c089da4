"""Memory drives: fast, bounded, and gone when the server stops.

A memory drive is a KState of its own (an LMDB environment), in a directory on tmpfs that the
server makes empty when it starts and removes when it stops (`MemoryDrives.begin`, `end`).
Every process of that server run opens the drive there: the server for SFTP, each session
worker for its shell. So a file written over ssh is there for SFTP and for the next session,
and the drive gets every file operation of the VFS (permissions, links, renames, open files)
with nothing written for it: its PathFS is K's own. Its `max_bytes` is that state's data quota
(`komputer init --max-bytes`), so a write past it fails with ENOSPC, as on a full tmpfs. Its
`agent_max_bytes` (default: half the drive) is that state's default quota for agents
(kfs.kstate.quota, with a file limit to match: `Drive.agent_files`), so one agent's write past
its share fails with EDQUOT, as on a tmpfs mounted with usrquota: no agent fills the drive,
which is the host's memory, for the others.

The directory is `$KOMPUTER_DRIVES_DIR` (default /dev/shm) `/komputer-drives-<state uuid>`:
one per state, so a server killed without its stop leaves nothing behind for long; the next
start of that state clears it.

Why a KState rather than a dictionary in each process: the server and every worker are
separate processes that must see one drive, and LMDB already shares one store between
processes, with transactions, a quota and every POSIX rule K has. Its memory is the tmpfs
pages of the map file, which grows as the drive fills (bounded by max_bytes and room for
LMDB's own pages). The kernel charges those pages to the memory cgroup of the process whose
write grew the file: under cgroup bounds, one session grows a drive by at most its own
`[limits] session_memory`.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
from pathlib import Path

from kfs.kstate import KState, quota
from kfs.kstate.schema import U64
from kfs.runtime.drives import Drive
from kfs.vfs import ROOT, VFS, Cred, PathFS, StatFS
from kfs.vfs.data import MAX_BYTES

ENV = "KOMPUTER_DRIVES_DIR"
DEFAULT_BASE = "/dev/shm"
ROOT_MODE = 0o1777  # every agent writes there, and removes only its own files, as in /tmp
MAP_SLACK = 32 << 20  # the map's room beyond the data quota (LMDB's pages, inodes, entries)


class MemoryDrives:
    """The memory drives of one server run, opened once per process (LMDB allows no second
    handle on an environment in one process)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._states: dict[str, KState] = {}
        self._files: dict[str, tuple[int, int]] = {}  # drive -> (st_dev, st_ino) of its map file when opened
        self._lock = threading.Lock()

    @classmethod
    def begin(cls, state: KState) -> MemoryDrives:
        """The server starts: its drives' directory, empty (what a killed run left is dropped)."""
        directory = run_directory(state)
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(mode=0o700, parents=True)
        return cls(directory)

    def end(self) -> None:
        """The server stops: the drives and everything on them are gone."""
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            states, self._states = self._states, {}
            self._files = {}
        for state in states.values():
            state.close()

    def state(self, drive: Drive) -> KState:
        """The drive's KState, created by the first process of the run that needs it (under a
        lock on the directory: two workers starting at once make it once)."""
        with self._lock:
            found = self._states.get(drive.name)
            if found is not None:
                return found
            fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                path = self.directory / drive.name
                fresh = not (path / "data.mdb").exists()
                state = KState(path, create=True, max_map_size=drive.max_bytes + MAP_SLACK)
                if fresh:
                    PathFS(VFS(state, by="drive", receipts=False), cred=ROOT).chmod("/", ROOT_MODE)
                _set_limits(state, drive)
            finally:
                os.close(fd)
            self._states[drive.name] = state
            found_file = os.stat(path / "data.mdb")
            self._files[drive.name] = (found_file.st_dev, found_file.st_ino)
            return state

    def stale(self) -> bool:
        """Whether a drive opened here is no longer the run's (a new server run replaced its
        file): what another process (the FUSE mount) holds must be opened again."""
        for name, identity in list(self._files.items()):
            try:
                found = os.stat(self.directory / name / "data.mdb")
            except OSError:
                return True
            if (found.st_dev, found.st_ino) != identity:
                return True
        return False


def run_directory(state: KState) -> Path:
    """Where the memory drives of a state's server run live (module docstring)."""
    return Path(os.environ.get(ENV) or DEFAULT_BASE) / f"komputer-drives-{state.fs_uuid}"


def _set_limits(state: KState, drive: Drive) -> None:
    """The drive's data quota and each agent's share of it, as the image in force says (a new
    version may change them)."""
    wanted = {MAX_BYTES: drive.max_bytes, quota.BYTES.default_key: drive.agent_share,
              quota.FILES.default_key: drive.agent_files}
    with state.read() as txn:
        found = {key: txn.get("meta", key) for key in wanted}
    changed = {key: U64.pack(n) for key, n in wanted.items() if found[key] is None or U64.unpack(found[key])[0] != n}
    if changed:
        state.write(lambda txn: [txn.put("meta", key, raw) for key, raw in changed.items()])


class MemoryBacking:
    """A mounted memory drive: K's own path operations on the drive's VFS."""

    def __init__(self, drive: Drive, state: KState, index: int) -> None:
        self.drive = drive
        self.index = index
        self.vfs = VFS(state, by=f"drive {drive.name}", receipts=False)  # nothing would prune them
        self._views: dict[tuple[Cred, int], PathFS] = {}

    def view(self, cred: Cred, umask: int) -> PathFS:
        """The drive's PathFS for a caller (paths of the drive: "/" is its top). The same few
        are asked for again and again: they are kept (a PathFS with cwd "/" holds no state of
        its own between calls)."""
        key = (cred, umask)
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = PathFS(self.vfs, cred=cred, umask=umask, tilde=False)
        return found

    def statfs(self) -> StatFS:
        return self.vfs.statfs()
