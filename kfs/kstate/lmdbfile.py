"""Checks of a KState's LMDB data file that do not trust the file to the LMDB engine.

LMDB maps the file and follows page numbers without bounds checks of its own: a truncated or
garbled data.mdb (one copied with `cp` while writers ran, a torn disk) can make it read past
the end of the map (SIGBUS), fail an internal assertion (abort) or follow a page into nonsense.
These checks read the file with plain `read`s so that damage becomes a sentence instead:

* `header_problem`: both meta pages (magic, format version, page size, transaction ids, last
  page against the file's size, root pages within the committed pages): microseconds, and
  safe on a file other processes are writing.
* `structure_problems`: every page reachable from the committed meta (py-lmdb's offline
  verifier `lmdb.verify`, pure Python), with a reader slot held so that a running state's
  writers cannot reuse the pages being walked. Without `lmdb.verify` (py-lmdb before 3.0)
  it falls back to `walk_with_engine`, which reads every record through LMDB itself and so
  belongs in a child process (see kfs/child.py).
"""

from __future__ import annotations

import os
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import lmdb

from kfs.kstate.schema import DATABASES

MAGIC = 0xBEEFC0DE
NUM_METAS = 2
P_META = 0x08
NO_PAGE = (1 << 64) - 1  # P_INVALID: the root of an empty database
META_BYTES = 136  # MDB_meta on a 64-bit build, after the page header

# LMDB writes integers in the host's order and files do not move between architectures.
_E = "<" if sys.byteorder == "little" else ">"
_U16 = struct.Struct(_E + "H")
_U32 = struct.Struct(_E + "I")
_U64 = struct.Struct(_E + "Q")

# Page-header size -> the data-format version that layout carries (LMDB 0.9: 16 and 1; the
# 1.0 series: 24 and 3), as lmdb.verify tells them apart.
_LAYOUTS = {16: 1, 24: 3}

MAX_FINDINGS = 3  # structural findings named in the one-line reason; the count says the rest


@dataclass(frozen=True)
class Meta:
    """One meta page: the root of one committed transaction."""

    slot: int
    txnid: int
    last_pgno: int
    free_root: int
    main_root: int


def header_problem(data: Path, *, attempts: int = 10) -> str | None:
    """What is wrong with `data`'s meta pages, in one line; None when they are sound.

    A running state's writers rewrite the older meta page on every commit, so a read can
    catch one half-written: a finding counts only when a second read of both pages gives
    the same bytes. Real damage does not move; a commit in flight does.
    """
    for _ in range(attempts):
        first = _read_metas(data)
        problem = _judge(first)
        if problem is None:
            return None
        if _read_metas(data) == first:
            return problem
        time.sleep(0.01)
    return None  # never still: a busy, working writer; the structural check still runs


@dataclass(frozen=True)
class _Header:
    size: int
    page0: bytes
    page1: bytes


def _read_metas(data: Path) -> _Header:
    with open(data, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        page0 = f.read(64 + META_BYTES)
        psize = _page_size(page0)
        page1 = b""
        if psize:
            f.seek(psize)
            page1 = f.read(64 + META_BYTES)
    return _Header(size, page0, page1)


def _header_size(page: bytes) -> int | None:
    for hdrsz in _LAYOUTS:
        if len(page) >= hdrsz + 8 and _U32.unpack_from(page, hdrsz)[0] == MAGIC:
            return hdrsz
    return None


def _page_size(page0: bytes) -> int:
    """The page size meta page 0 records (the free database's md_pad), 0 when unreadable."""
    hdrsz = _header_size(page0)
    if hdrsz is None or len(page0) < hdrsz + META_BYTES:
        return 0
    psize = _U32.unpack_from(page0, hdrsz + 24)[0]
    return psize if 512 <= psize <= 65536 and psize & (psize - 1) == 0 else 0


def _judge(h: _Header) -> str | None:
    if h.size == 0:
        return "data.mdb is empty (0 bytes)"
    hdrsz = _header_size(h.page0)
    if hdrsz is None:
        return (
            f"data.mdb ({h.size} bytes) has no LMDB magic 0x{MAGIC:X} in meta page 0: "
            "not an LMDB file, or its first page was overwritten"
        )
    if len(h.page0) < hdrsz + META_BYTES:
        return f"data.mdb is {h.size} bytes: too short to hold LMDB's meta pages"
    psize = _page_size(h.page0)
    if not psize:
        return f"meta page 0 records an impossible page size {_U32.unpack_from(h.page0, hdrsz + 24)[0]}"
    if len(h.page1) < hdrsz + META_BYTES:
        return f"data.mdb is {h.size} bytes: too short to hold LMDB's second meta page (page size {psize})"
    metas = []
    for slot, page in enumerate((h.page0, h.page1)):
        problem = _judge_page(slot, page, hdrsz, psize)
        if problem:
            return problem
        metas.append(_meta(slot, page, hdrsz))
    if metas[0].txnid and metas[0].txnid == metas[1].txnid:
        return f"both meta pages claim transaction {metas[0].txnid}"
    newest = max(metas, key=lambda m: m.txnid)  # the one LMDB opens (mdb_env_pick_meta)
    for meta in sorted(metas, key=lambda m: m is not newest):
        problem = _judge_meta(meta, newest, psize, h.size)
        if problem:
            return problem
    return None


def _judge_page(slot: int, page: bytes, hdrsz: int, psize: int) -> str | None:
    magic, version = _U32.unpack_from(page, hdrsz)[0], _U32.unpack_from(page, hdrsz + 4)[0]
    if magic != MAGIC:
        return f"meta page {slot} has no LMDB magic (0x{magic:08X}, not 0x{MAGIC:X}): the page was overwritten"
    if version != _LAYOUTS[hdrsz]:
        return f"meta page {slot} is LMDB data format {version}, its layout says {_LAYOUTS[hdrsz]}"
    if not _U16.unpack_from(page, hdrsz - 6)[0] & P_META:
        return f"meta page {slot} is not marked as a meta page"
    if slot and _U32.unpack_from(page, hdrsz + 24)[0] != psize:
        return f"the meta pages disagree on the page size ({psize} and {_U32.unpack_from(page, hdrsz + 24)[0]})"
    txnid = _U64.unpack_from(page, hdrsz + 128)[0]
    if txnid and txnid & 1 != slot:  # commit N writes meta page N & 1
        return f"meta page {slot} holds transaction {txnid}, which belongs in meta page {txnid & 1}"
    return None


def _meta(slot: int, page: bytes, hdrsz: int) -> Meta:
    m = hdrsz
    return Meta(
        slot=slot,
        txnid=_U64.unpack_from(page, m + 128)[0],
        last_pgno=_U64.unpack_from(page, m + 120)[0],
        free_root=_U64.unpack_from(page, m + 24 + 40)[0],
        main_root=_U64.unpack_from(page, m + 72 + 40)[0],
    )


def _judge_meta(meta: Meta, newest: Meta, psize: int, size: int) -> str | None:
    which = f"meta page {meta.slot} (transaction {meta.txnid}{', the last commit' if meta is newest else ''})"
    if meta.last_pgno < NUM_METAS - 1:
        return f"{which} claims last page {meta.last_pgno}, before the meta pages end"
    needed = (meta.last_pgno + 1) * psize
    if needed > size:
        return f"data.mdb is truncated: {size} bytes, but {which} uses pages up to {meta.last_pgno} ({needed} bytes)"
    for name, root in (("free-page", meta.free_root), ("main", meta.main_root)):
        if root != NO_PAGE and not NUM_METAS <= root <= meta.last_pgno:
            return f"{which}: the {name} database's root page {root} lies outside its pages 2..{meta.last_pgno}"
    return None


# -- the whole tree -----------------------------------------------------------------------------


def structure_problems(state_dir: Path, *, attempts: int = 3) -> list[str]:
    """Every structural finding in the data.mdb of a state that may be running; [] when sound.

    Runs `verify_file` while a read transaction of our own pins the newest snapshot, so that
    the state's writers reuse none of the pages it walks. Its one race, a meta page read
    while a commit rewrites it, does not repeat from pass to pass: findings count only when
    each of `attempts` passes finds some. Without `lmdb.verify`, reads every record through LMDB instead
    (`walk_with_engine`, which may abort: call this in a child process then).
    """
    findings: list[str] | None = []
    for _ in range(attempts):
        env = open_readonly(state_dir)
        try:
            with _begin(env):
                findings = verify_file(state_dir / "data.mdb")
        finally:
            env.close()
        if not findings:
            break
    return walk_with_engine(state_dir) if findings is None else findings


def verify_file(data: Path) -> list[str] | None:
    """py-lmdb's offline verifier on `data`: its findings ([] when sound), or None when this
    py-lmdb has none (before 3.0). Pure Python with seek/read: it cannot crash on damage, but
    on a file being written it must be pinned (`structure_problems`)."""
    try:
        from lmdb import verify
    except ImportError:
        return None
    try:
        return verify.verify(str(data), subdir=False)
    except verify.VerifyError as e:
        return [str(e)]


def walk_with_engine(state_dir: Path) -> list[str]:
    """Read every record of every database through LMDB, in one read transaction.

    On damage LMDB answers with an error (returned as a finding) or, for some, aborts or
    faults: call this only in a process that may die (kfs/child.py).
    """
    env = open_readonly(state_dir)
    try:
        with _begin(env) as t:
            for name in (b"", *DATABASES):
                try:
                    db = env.open_db(name or None, txn=t, create=False)
                except lmdb.NotFoundError:
                    continue  # a database this state never had: nothing to read
                for _key, _value in t.cursor(db=db):
                    pass
    except (lmdb.CorruptedError, lmdb.PageNotFoundError, lmdb.InvalidError, lmdb.BadValsizeError) as e:
        return [f"LMDB: {e}"]
    finally:
        env.close()
    return []


def open_readonly(state_dir: Path) -> lmdb.Environment:
    """The environment opened for reading only (it writes no page, makes no database), with
    the settings every K process uses: the lock file's reader table is shared, and whoever
    opens it first sets its size."""
    data = state_dir / "data.mdb"
    return lmdb.open(
        str(state_dir),
        readonly=True,
        lock=True,
        map_size=max(data.stat().st_size, 1 << 20),
        max_dbs=len(DATABASES) + 4,
        max_readers=1024,
        readahead=False,
    )


def _begin(env: lmdb.Environment) -> lmdb.Transaction:
    """A read transaction, after adopting the map size if a writer grew the map since the
    environment was opened (LMDB refuses to begin until this process has)."""
    for _ in range(10):
        try:
            return env.begin()
        except lmdb.MapResizedError:
            env.set_mapsize(0)
    return env.begin()


def summarise(findings: list[str]) -> str:
    """Structural findings as one line: how many, and the first few."""
    shown = "; ".join(findings[:MAX_FINDINGS])
    more = f" (and {len(findings) - MAX_FINDINGS} more)" if len(findings) > MAX_FINDINGS else ""
    return f"{len(findings)} structural problem(s) in data.mdb: {shown}{more}"
