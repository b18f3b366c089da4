"""`komputer backup`: a consistent copy of a KState that other processes keep writing.

LMDB copies its own environment (`mdb_env_copyfd2`): the copy is one read transaction's
snapshot, so it holds every commit before that transaction began and nothing of any commit
after, however hard the writers work meanwhile; and it never stops them for longer than the
copy of the two meta pages. A plain `cp` of data.mdb during writes can tear (pages of
different commits side by side), which `komputer fsck` reports as damage.

A state directory holds, besides data.mdb:

* lock.mdb: LMDB's table of live readers. Not copied: it describes the processes using the
  original, and the first process to open the copy makes a fresh one.
* komputer.toml, if present: how `komputer serve` / `up` serve this state. Copied.
* client/: the key pair `komputer up` generates for the invoking user to log in with, when
  they have no ~/.ssh/id_ed25519. Not copied: it is that user's credential, not state (its
  public key is authorised inside the state, which is copied; `up` makes a new pair).

The SSH host key lives inside data.mdb (the "secrets" database), so a backup holds it and
the copy is created private (directory 0700, files 0600).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import lmdb

from kfs.kstate.env import StateError
from kfs.kstate.lmdbfile import header_problem, open_readonly, summarise, verify_file

DATA = "data.mdb"
COPIED_BESIDE = ("komputer.toml",)  # files of the state directory a backup carries along


@dataclass(frozen=True)
class Backup:
    """What `backup` wrote: the copied data file, its size, the other files copied, and
    whether the copy's structure was verified (py-lmdb 3.0 or later)."""

    data: Path
    size: int
    beside: tuple[str, ...]
    seconds: float
    verified: bool


def backup(state_dir: Path, dest: Path, *, compact: bool = False) -> Backup:
    """Copy the state at `state_dir` into the new directory `dest` (or an existing one that
    holds no data.mdb) and check the copy's structure; never overwrites anything.

    compact=True leaves free pages out and renumbers the rest (a smaller file, more CPU).
    On failure, removes what it created and raises `OSError` or `StateError`.
    """
    start = time.monotonic()
    source = state_dir / DATA
    if not source.exists():
        raise StateError(f"{state_dir}: no KState here")
    problem = header_problem(source)
    if problem:  # LMDB would read past the file or follow garbage: refuse before mapping it
        raise StateError(f"{state_dir}: the state looks damaged ({problem}); run `komputer fsck`")
    beside = tuple(name for name in COPIED_BESIDE if (state_dir / name).is_file())
    made_dir = _prepare(dest, beside)
    created: list[Path] = []
    try:
        target = dest / DATA
        fd = _create(target, created)
        try:
            _copy(state_dir, fd, compact)
            os.fsync(fd)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        for name in beside:
            _copy_file(state_dir / name, dest / name, created)
        _fsync_dir(dest)
        findings = verify_file(target)  # nobody writes the copy: no pin needed
        if findings:
            raise StateError(
                f"{target}: the copy fails LMDB's structural check, so the state itself may be "
                f"damaged (run `komputer fsck`): {summarise(findings)}"
            )
    except BaseException:
        _remove(created, dest if made_dir else None)
        raise
    return Backup(target, size, beside, time.monotonic() - start, findings is not None)


def _prepare(dest: Path, beside: tuple[str, ...]) -> bool:
    """Make sure `dest` is a directory with room for the copy; returns whether we created it."""
    if dest.is_dir():
        for name in (DATA, *beside):
            if os.path.lexists(dest / name):
                raise OSError(errno.EEXIST, f"File exists (it holds a {name}; a backup never overwrites)", str(dest))
        return False
    if os.path.lexists(dest):
        raise OSError(errno.EEXIST, "File exists (and is not a directory)", str(dest))
    parent = dest.parent
    if not parent.is_dir():
        why = "is not a directory" if os.path.lexists(parent) else "does not exist"
        raise OSError(errno.ENOENT, f"cannot create the backup directory: its parent {parent} {why}", str(dest))
    os.mkdir(dest, 0o700)
    return True


def _create(path: Path, created: list[Path]) -> int:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    created.append(path)
    return fd


def _copy(state_dir: Path, fd: int, compact: bool) -> None:
    """LMDB's copy of the environment into `fd`, from one read transaction of its own."""
    try:
        env = open_readonly(state_dir)
    except lmdb.Error as e:
        raise StateError(f"LMDB cannot open the state: {e}") from e
    try:
        for _ in range(10):
            try:
                env.copyfd(fd, compact=compact)
                return
            except lmdb.MapResizedError:  # a writer grew the map since we opened: adopt, redo
                env.set_mapsize(0)
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
        env.copyfd(fd, compact=compact)
    except lmdb.Error as e:
        raise StateError(f"{state_dir}: LMDB could not copy the state: {e}") from e
    finally:
        env.close()


def _copy_file(source: Path, target: Path, created: list[Path]) -> None:
    with open(source, "rb") as f, open(_create(target, created), "wb") as out:
        shutil.copyfileobj(f, out)
        out.flush()
        os.fsync(out.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(created: list[Path], made_dir: Path | None) -> None:
    """Undo a failed backup: only what this backup created, never anything that was there."""
    for path in reversed(created):
        with contextlib.suppress(OSError):
            path.unlink()
    if made_dir is not None:
        with contextlib.suppress(OSError):  # not empty: something else appeared there meanwhile
            made_dir.rmdir()
