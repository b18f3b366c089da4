"""Disk use per owner and per-agent quotas: what one agent may take of the state's disk.

Every byte of file data is charged to a uid, in the transaction that stores it, so the count is
never behind the data: in the state's own view to the file's owner (as Linux's user quotas
count), in a fork to the fork's owner agent, for every row the fork's layer holds (what it wrote
and the parent's old chunks kept for it). A counter per uid lives in `meta` and is shared by
every view (`usage/` is not a layered key): a fork's bytes are its owner's wherever they sit.

Files are counted the same way (`FILES`: each inode to its owner; in a fork, each inode row of
its layer to the fork's owner), as Linux's quotas count blocks and inodes: many empty files
fill a disk too, only more slowly.

A uid's limit is its own (`komputer agent set NAME --disk` / `--files`), else, for an agent's
uid (FIRST_AGENT_UID up), the state's default for agents (`komputer init --agent-disk` /
`--agent-files`), else the built-in default; 0 stored means no limit. A write that would take a
uid past its limit fails with EDQUOT ("Disk quota exceeded", what Linux gives for a user over
its hard limit) and its transaction is aborted whole, so nothing is half-written. Root's writes
are not held to it (Linux: CAP_SYS_RESOURCE), nor are uids below FIRST_AGENT_UID by default.

What an agent's files take on the image's host drives (real directories of the host) is counted
beside it (`HOST`: their apparent sizes, kfs.drives.host) and held to the same byte limit: an
agent's K files and its host-drive files together stay under its quota. The two counters stay
apart because fsck recounts K's own data, which host files are not.
"""

from __future__ import annotations

import errno
import os
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kfs.kstate.schema import U64

if TYPE_CHECKING:
    from kfs.kstate.txn import Txn

COUNTED = b"usage_counted"  # set once everything stored before these counters is counted
FIRST_AGENT_UID = 100_000  # agents' uids start here (kfs.agents.records)


@dataclass(frozen=True, slots=True)
class Resource:
    """What is counted: each uid's use under `use` + uid, its own limit under `own` + uid, the
    agents' default under `default_key` (all in `meta`), else `default`."""

    use: bytes
    own: bytes
    default_key: bytes
    default: int


# 4 GiB each: a dozen agents stay within the state's 64 GiB map, and on a host with tens of GiB
# free one agent's runaway program takes a bounded slice of it, not all of it
BYTES = Resource(b"usage/", b"quota/", b"agent_disk", 4 << 30)
# a million files: a large tree (node_modules, a kernel checkout) fits, and their records (about
# 200 bytes each with their entries) stay a fraction of the byte quota
FILES = Resource(b"fileuse/", b"filequota/", b"agent_files", 1_000_000)
# an agent's files on host drives: the byte quota's own and default keys, a counter of its own
HOST = Resource(b"hostuse/", BYTES.own, BYTES.default_key, BYTES.default)
_BESIDE = {BYTES.use: HOST, HOST.use: BYTES}  # what is held to one limit together
USAGE, QUOTA, AGENT_DISK = BYTES.use, BYTES.own, BYTES.default_key
DEFAULT_AGENT_DISK, DEFAULT_AGENT_FILES = BYTES.default, FILES.default

_U32 = struct.Struct(">I")
_unpack = U64.unpack_from


def usage_key(uid: int, kind: Resource = BYTES) -> bytes:
    return kind.use + _U32.pack(uid)


def quota_key(uid: int, kind: Resource = BYTES) -> bytes:
    return kind.own + _U32.pack(uid)


def _read(txn: Txn, key: bytes) -> int | None:
    raw = txn.get_view("meta", key)
    return None if raw is None else _unpack(raw)[0]


def usage(txn: Txn, uid: int, kind: Resource = BYTES) -> int:
    """What is charged to `uid`: bytes stored, or files (kind=FILES)."""
    return _read(txn, usage_key(uid, kind)) or 0


def total_use(txn: Txn, uid: int) -> int:
    """The bytes held to `uid`'s byte limit: its K files' and its host-drive files' (what `df`,
    `quota` and `komputer quota` show as used)."""
    return usage(txn, uid) + usage(txn, uid, HOST)


def limit(txn: Txn, uid: int, kind: Resource = BYTES) -> int | None:
    """`uid`'s limit, or None when it has none (module docstring says which)."""
    own = _read(txn, quota_key(uid, kind))
    if own is not None:
        return own or None
    if uid < FIRST_AGENT_UID:
        return None
    default = _read(txn, kind.default_key)
    return kind.default if default is None else default or None


def charge(txn: Txn, uid: int, delta: int, path: str | None = None, check: bool = True,
           kind: Resource = BYTES) -> None:
    """Add `delta` to `uid`'s use; growing it past its limit raises EDQUOT (when `check`),
    which aborts the caller's transaction and so the write that asked. K's bytes and the host
    drives' are held to the limit together."""
    key = usage_key(uid, kind)
    used = (_read(txn, key) or 0) + delta
    if used > 0:
        txn.put("meta", key, U64.pack(used))
    else:  # a refund past zero is a count made before this one: never below nothing
        txn.delete("meta", key)
    if check and delta > 0 and uid:  # root is never held to a limit: no lookup for its many writes
        bound = limit(txn, uid, kind)
        beside = _BESIDE.get(kind.use)
        if bound is not None and used + (usage(txn, uid, beside) if beside is not None else 0) > bound:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), *((path,) if path is not None else ()))


def set_limit(txn: Txn, uid: int, size: int | None, kind: Resource = BYTES) -> None:
    """Give `uid` a limit of its own (0: none); None returns it to the default."""
    if size is None:
        txn.delete("meta", quota_key(uid, kind))
    else:
        txn.put("meta", quota_key(uid, kind), U64.pack(size))


def set_agent_default(txn: Txn, size: int | None, kind: Resource = BYTES) -> None:
    """The limit of agents without one of their own (0: none); None: the built-in default."""
    if size is None:
        txn.delete("meta", kind.default_key)
    else:
        txn.put("meta", kind.default_key, U64.pack(size))


def charged(txn: Txn, kind: Resource = BYTES) -> dict[int, int]:
    """Every uid's counted use, as the counters say (for fsck and `komputer quota`)."""
    return {_U32.unpack_from(key, len(kind.use))[0]: _unpack(value)[0] for key, value in txn.scan("meta", kind.use)}


def store_host(txn: Txn, counts: dict[int, int]) -> None:
    """Replace every agent's host-drive count with `counts` (a recount: kfs.drives.host)."""
    for key in txn.scan_keys("meta", HOST.use):
        txn.delete("meta", key)
    for uid, used in counts.items():
        if used > 0:
            txn.put("meta", usage_key(uid, HOST), U64.pack(used))


def store(txn: Txn, counts: dict[int, int], files: dict[int, int]) -> None:
    """Replace every uid's counters with `counts` (bytes) and `files` (a recount: kfs.vfs.data)."""
    for kind, values in ((BYTES, counts), (FILES, files)):
        for key in txn.scan_keys("meta", kind.use):
            txn.delete("meta", key)
        for uid, used in values.items():
            if used > 0:
                txn.put("meta", usage_key(uid, kind), U64.pack(used))
    txn.put("meta", COUNTED, U64.pack(1))
