"""Disk use per owner and per-agent quotas: what one agent may take of the state's disk.

Every byte of file data is charged to a uid, in the transaction that stores it, so the count is
never behind the data: in the state's own view to the file's owner (as Linux's user quotas
count), in a fork to the fork's owner agent, for every row the fork's layer holds (what it wrote
and the parent's old chunks kept for it). A counter per uid lives in `meta` and is shared by
every view (`usage/` is not a layered key): a fork's bytes are its owner's wherever they sit.

A uid's limit is its own (`quota/UID`, `komputer agent set NAME --disk`), else, for an agent's
uid (FIRST_AGENT_UID up), the state's default for agents (`agent_disk`, `komputer init
--agent-disk`), else DEFAULT_AGENT_DISK; 0 stored means no limit. A write that would take a
uid past its limit fails with EDQUOT ("Disk quota exceeded", what Linux gives for a user over
its hard limit) and its transaction is aborted whole, so nothing is half-written. Root's writes
are not held to it (Linux: CAP_SYS_RESOURCE), nor are uids below FIRST_AGENT_UID by default.
"""

from __future__ import annotations

import errno
import os
import struct
from typing import TYPE_CHECKING

from kfs.kstate.schema import U64

if TYPE_CHECKING:
    from kfs.kstate.txn import Txn

USAGE = b"usage/"  # + uid u32: the bytes of file data charged to it
QUOTA = b"quota/"  # + uid u32: its own limit in bytes (0: none)
AGENT_DISK = b"agent_disk"  # the limit of an agent without one of its own (0: none)
COUNTED = b"usage_counted"  # set once every byte stored before these counters is counted
FIRST_AGENT_UID = 100_000  # agents' uids start here (kfs.agents.records)
# 4 GiB each: a dozen agents stay within the state's 64 GiB map, and on a host with tens of GiB
# free one agent's runaway program takes a bounded slice of it, not all of it
DEFAULT_AGENT_DISK = 4 << 30

_U32 = struct.Struct(">I")
_unpack = U64.unpack_from


def usage_key(uid: int) -> bytes:
    return USAGE + _U32.pack(uid)


def quota_key(uid: int) -> bytes:
    return QUOTA + _U32.pack(uid)


def _read(txn: Txn, key: bytes) -> int | None:
    raw = txn.get_view("meta", key)
    return None if raw is None else _unpack(raw)[0]


def usage(txn: Txn, uid: int) -> int:
    """The bytes of file data charged to `uid`."""
    return _read(txn, usage_key(uid)) or 0


def limit(txn: Txn, uid: int) -> int | None:
    """`uid`'s limit in bytes, or None when it has none (module docstring says which)."""
    own = _read(txn, quota_key(uid))
    if own is not None:
        return own or None
    if uid < FIRST_AGENT_UID:
        return None
    default = _read(txn, AGENT_DISK)
    return DEFAULT_AGENT_DISK if default is None else default or None


def charge(txn: Txn, uid: int, delta: int, path: str | None = None, check: bool = True) -> None:
    """Add `delta` bytes to `uid`'s use; growing it past its limit raises EDQUOT (when `check`),
    which aborts the caller's transaction and so the write that asked."""
    key = usage_key(uid)
    used = (_read(txn, key) or 0) + delta
    if used > 0:
        txn.put("meta", key, U64.pack(used))
    else:  # a refund past zero is a count made before this one: never below nothing
        txn.delete("meta", key)
    if check and delta > 0:
        bound = limit(txn, uid)
        if bound is not None and used > bound:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), *((path,) if path is not None else ()))


def set_limit(txn: Txn, uid: int, size: int | None) -> None:
    """Give `uid` a limit of its own (0: none); None returns it to the default."""
    if size is None:
        txn.delete("meta", quota_key(uid))
    else:
        txn.put("meta", quota_key(uid), U64.pack(size))


def set_agent_default(txn: Txn, size: int | None) -> None:
    """The limit of agents without one of their own (0: none); None: DEFAULT_AGENT_DISK."""
    if size is None:
        txn.delete("meta", AGENT_DISK)
    else:
        txn.put("meta", AGENT_DISK, U64.pack(size))


def charged(txn: Txn) -> dict[int, int]:
    """Every uid's counted use, as the counters say (for fsck and `komputer quota`)."""
    return {_U32.unpack_from(key, len(USAGE))[0]: _unpack(value)[0]
            for key, value in txn.scan("meta", USAGE)}


def store(txn: Txn, counts: dict[int, int]) -> None:
    """Replace every uid's counter with `counts` (a recount: kfs.vfs.usage)."""
    for key in txn.scan_keys("meta", USAGE):
        txn.delete("meta", key)
    for uid, used in counts.items():
        if used > 0:
            txn.put("meta", usage_key(uid), U64.pack(used))
    txn.put("meta", COUNTED, U64.pack(1))
