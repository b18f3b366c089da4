"""`komputer compact`: give the host back the disk that deleted files left in data.mdb.

LMDB reuses the pages a deletion frees, but never shrinks its file (and K reserves the file up
to the map size: kstate.env), so after a large delete the host's disk stays taken. Compacting
copies the environment with LMDB's own compacting copy (free pages left out, the rest
renumbered), checks the copy's structure and renames it over data.mdb, while no other process
has the state open.

"No other process" is LMDB's own test: every process that opens the environment holds a shared
lock on the first byte of lock.mdb, and the first one takes it exclusively to know it is alone.
Compacting takes that byte exclusively and keeps it until the new file is in place: a server,
mount or shell found holding the state refuses the compaction, and one that starts meanwhile
waits in its open for the new file (which it may grow back to the size it read before: KState
sizes its map from the file before opening; nothing is lost). Run it in a process that has not
opened the state itself: POSIX record locks do not conflict within one process. Our own copy
opens the environment without the lock file, so nothing of ours drops that lock early (POSIX
record locks go with any close of the file).
"""

from __future__ import annotations

import errno
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

import lmdb

from kfs.kstate.backup import DATA, _create, _fsync_dir, _remove
from kfs.kstate.env import STATE_FILE_MODE, StateError
from kfs.kstate.lmdbfile import header_problem, summarise, verify_file
from kfs.kstate.schema import DATABASES

LOCK = "lock.mdb"
SPARE = DATA + ".compact"  # the copy being written, beside data.mdb (the same filesystem: rename is atomic)


@dataclass(frozen=True)
class Compacted:
    """The data file's size before and after."""

    before: int
    after: int


class InUse(StateError):
    """Another process has the state open: compacting would take its file away from it."""


def compact(state_dir: Path) -> Compacted:
    """Replace `state_dir`'s data.mdb by a compacted copy; InUse while another process holds it."""
    source = state_dir / DATA
    if not source.exists():
        raise StateError(f"{state_dir}: no KState here")
    problem = header_problem(source)
    if problem:
        raise StateError(f"{state_dir}: the state looks damaged ({problem}); run `komputer fsck`")
    lock = os.open(state_dir / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, STATE_FILE_MODE)
    try:
        try:
            fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)  # LMDB's "alone" byte (module docstring)
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            raise InUse(f"{state_dir}: the state is in use (a server, a mount or a shell has it open); "
                        "stop them (`komputer down`, `fusermount3 -u`), then compact") from None
        before = source.stat().st_size
        target = state_dir / SPARE
        if target.exists():  # left by a compaction that was killed: never the state itself
            target.unlink()
        created: list[Path] = []
        try:
            fd = _create(target, created)
            try:
                _copy(state_dir, fd, before)
                os.fsync(fd)
            finally:
                os.close(fd)
            findings = verify_file(target)
            if findings:
                raise StateError(f"{target}: the compacted copy fails LMDB's structural check (run `komputer "
                                 f"fsck` on the state, which is unchanged): {summarise(findings)}")
            os.replace(target, source)
            _fsync_dir(state_dir)
        except BaseException:
            _remove(created, None)
            raise
        return Compacted(before, source.stat().st_size)
    finally:
        os.close(lock)  # lets whoever waits in its open go on, onto the new file


def _copy(state_dir: Path, fd: int, size: int) -> None:
    try:
        env = lmdb.open(str(state_dir), readonly=True, lock=False, map_size=max(size, 1 << 20),
                        max_dbs=len(DATABASES) + 4, readahead=False)
    except lmdb.Error as e:
        raise StateError(f"LMDB cannot open the state: {e}") from e
    try:
        env.copyfd(fd, compact=True)
    except lmdb.Error as e:
        raise StateError(f"{state_dir}: LMDB could not copy the state: {e}") from e
    finally:
        env.close()
