"""Open files: who holds which inode open, so unlinked files live until their last close.

Holders are recorded in KState (not only in memory) because another process may unlink a file
this one holds open. A holder is a process (pid + start time); after a crash, `recover`
frees the holders whose process is gone and reclaims the orphans nobody holds any more.
"""

from __future__ import annotations

import os
import struct

from kfs.kstate import Txn
from kfs.kstate.schema import U64, U64x2
from kfs.vfs import records

_HOLDER = struct.Struct(">QQ")  # pid, process start time (clock ticks since boot)

# This process's pid, kept current across fork: every create asks which holder it is, and
# os.getpid() is a system call.
pid = os.getpid()


def _forked() -> None:
    global pid
    pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


def process_start_time(pid: int) -> int | None:
    """Start time of `pid` from /proc, or None when no such process runs (pid reuse safe)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return int(raw[raw.rindex(b")") + 2 :].split()[19])


def register_holder(txn: Txn) -> int:
    holder = txn.incr(b"next_holder")
    txn.put("holders", U64.pack(holder), _HOLDER.pack(pid, process_start_time(pid) or 0))
    return holder


def add_open(txn: Txn, ino: int, holder: int, *, first: bool = False) -> None:
    """Count one more open of `ino` by `holder`. first=True: `ino` was made in this transaction,
    so there is no count to read yet (a create: an inode number is never used twice)."""
    key = U64x2.pack(ino, holder)
    raw = None if first else txn.get("opens", key)
    txn.put("opens", key, U64.pack((U64.unpack(raw)[0] if raw else 0) + 1))


def drop_open(txn: Txn, ino: int, holder: int) -> None:
    """Count one open of `ino` by `holder` less; the last close of an unlinked file frees it
    (whether others hold it open is asked only of an orphan, which few inodes are)."""
    key = U64x2.pack(ino, holder)
    raw = txn.get("opens", key)
    count = (U64.unpack(raw)[0] if raw else 1) - 1
    if count > 0:
        txn.put("opens", key, U64.pack(count))
    else:
        txn.delete("opens", key)
    reclaim_if_orphan(txn, ino)


def reclaim_if_orphan(txn: Txn, ino: int) -> bool:
    """Free an unlinked inode once no handle holds it; returns whether it was freed."""
    if txn.get("orphans", U64.pack(ino)) is None:
        return False
    if txn.has_prefix("opens", U64.pack(ino)):
        return False
    inode = records.find_inode(txn, ino)
    if inode is not None:
        records.drop_inode(txn, inode)
    txn.delete("orphans", U64.pack(ino))
    return True


def needs_recovery(txn: Txn) -> bool:
    return txn.last("holders") is not None or txn.last("orphans") is not None


def recover(txn: Txn) -> tuple[int, int]:
    """Forget holders whose process died, then reclaim orphans nobody holds.

    Returns (holders dropped, orphans reclaimed).
    """
    dead: set[int] = set()
    for key, value in list(txn.scan("holders")):
        pid, start = _HOLDER.unpack(value)
        if process_start_time(pid) != start:
            dead.add(U64.unpack(key)[0])
            txn.delete("holders", key)
    if dead:
        for key in txn.scan_keys("opens"):
            if U64x2.unpack(key)[1] in dead:
                txn.delete("opens", key)
    reclaimed = 0
    for key in txn.scan_keys("orphans"):
        reclaimed += reclaim_if_orphan(txn, U64.unpack(key)[0])
    return len(dead), reclaimed
