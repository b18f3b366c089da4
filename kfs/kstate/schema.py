"""The KState key schema: named databases, counters and the schema version.

Integer keys are big-endian so that LMDB's byte order is numeric order and range scans
come out sorted.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kfs.kstate.txn import Txn

SCHEMA_VERSION = 1
# Receipt rows gained a compact binary encoding beside JSON without a version bump: readers
# take both (kfs/journal/receipts.py), so a state written before it needs no migration, and
# rewriting every receipt of a long-lived state to save nothing on reads was not worth it.
# The cost: a komputer from before it fails on `komputer receipts` of a newer state's rows.

# One named database per record family (see shared/DESIGN.md).
DATABASES: tuple[bytes, ...] = (
    b"meta",  # name -> value: schema version, fs uuid, counters, quota
    b"inodes",  # ino u64 -> packed inode attributes
    b"dirents",  # parent u64 + name hash u64 (the readdir cookie) + name -> child u64 + type u8
    b"parents",  # dir ino u64 -> parent u64 + name (directories have one name)
    b"chunks",  # ino u64 + chunk index u64 -> bytes
    b"symlinks",  # ino u64 -> target bytes
    b"xattrs",  # ino u64 + name -> value
    b"changes",  # seq u64 -> change-feed row (cache invalidation for the FUSE daemon)
    b"events",  # seq u64 -> event record (JSON)
    b"receipts",  # receipt id u64 + row u32 -> receipt state row (binary or JSON: journal/receipts.py)
    b"holders",  # holder id u64 -> pid, process start time (who may hold open files)
    b"opens",  # ino u64 + holder id u64 -> open handle count
    b"orphans",  # ino u64 -> b"" : unlinked inodes whose data lives until last close
    b"sessions",
    b"leases",
    b"procs",
    b"approvals",
    b"keys",
    b"hosts",
    b"secrets",
    b"forks",  # fork u64 -> record (JSON); layer u64 + b"c" -> the overlay forks made of it (kstate/layers.py)
    b"layers",  # fork u64 + database code u8 + key -> a fork's row for that key (kstate/layers.py)
    b"byagent",  # each agent's events, for retention by agent (journal/events.py)
)

U64 = struct.Struct(">Q")
U64x2 = struct.Struct(">QQ")

# Migrations: MIGRATIONS[v] upgrades a state at version v to v + 1, inside one write txn.
MIGRATIONS: dict[int, Callable[[Txn], None]] = {}
