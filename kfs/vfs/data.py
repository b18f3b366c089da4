"""File contents as fixed-size chunks keyed by (ino, chunk index).

Missing chunks and the gap past a short chunk read as zeros, which makes sparse files and
truncate-up free. A meta counter tracks stored bytes for the `max_bytes` quota. No chunk lies
at or past the file's size (truncate drops them; fsck checks it), so a write there needs no
lookup of what was stored before.
"""

from __future__ import annotations

import errno

from kfs.kstate import Txn
from kfs.kstate.schema import U64, U64x2
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import CHUNK_SIZE, Inode

DATA_BYTES = b"data_bytes"
MAX_BYTES = b"max_bytes"
MAX_FILE_SIZE = 1 << 62
_ZEROS = memoryview(bytes(CHUNK_SIZE))

Buffer = bytes | bytearray | memoryview


def _charge(txn: Txn, delta: int, path: str | None = None) -> None:
    """Account stored bytes; growing past the quota raises ENOSPC and aborts the operation."""
    if delta == 0:
        return
    used = txn.incr(DATA_BYTES, delta)
    if delta > 0:
        limit = txn.counter(MAX_BYTES)
        if limit and used > limit:
            raise fs_error(errno.ENOSPC, path)


def read(txn: Txn, inode: Inode, offset: int, length: int) -> bytes:
    """The bytes at `offset`, short at EOF (a copy, also when `txn` is a ViewTxn)."""
    return read_span(txn, inode.ino, inode.size, offset, length)


def read_span(txn: Txn, ino: int, size: int, offset: int, length: int) -> bytes:
    """`read` of a file known by its ino and size."""
    end = min(offset + length, size)
    if offset >= end:
        return b""
    first, last = offset // CHUNK_SIZE, (end - 1) // CHUNK_SIZE
    if first == last:  # the common small read: one get, no zero-fill buffer
        chunk = txn.get_view("chunks", U64x2.pack(ino, first)) or b""
        lo, hi = offset - first * CHUNK_SIZE, end - first * CHUNK_SIZE
        piece = bytes(chunk[lo:hi])  # the only copy in a ViewTxn; for bytes, no copy at all
        return piece if len(piece) == hi - lo else piece + bytes(hi - lo - len(piece))
    out = bytearray(end - offset)
    _read_into(txn, ino, size, offset, memoryview(out))
    return bytes(out)


def read_into(txn: Txn, inode: Inode, offset: int, out: memoryview) -> int:
    """Copy the bytes at `offset` into `out` (at most its length); returns how many (0 at EOF).

    The copy goes straight from each stored chunk into `out`: no intermediate buffer, which
    matters for large reads (a fresh megabyte costs page faults and cache misses).
    """
    return _read_into(txn, inode.ino, inode.size, offset, out)


def _read_into(txn: Txn, ino: int, size: int, offset: int, out: memoryview) -> int:
    end = min(offset + len(out), size)
    if offset >= end:
        return 0
    first, last = offset // CHUNK_SIZE, (end - 1) // CHUNK_SIZE
    filled = offset  # out holds [offset, filled)
    for key, chunk in txn.scan_views("chunks", U64.pack(ino), U64x2.pack(ino, first)):
        index = U64x2.unpack(key)[1]
        if index > last:
            break
        base = index * CHUNK_SIZE
        lo = max(offset, base)
        hi = min(end, base + len(chunk))
        if hi <= lo:
            continue
        if lo > filled:
            _zero(out, filled - offset, lo - offset)
        out[lo - offset : hi - offset] = memoryview(chunk)[lo - base : hi - base]
        filled = hi
    if filled < end:
        _zero(out, filled - offset, end - offset)
    return end - offset


def _zero(out: memoryview, lo: int, hi: int) -> None:
    while lo < hi:
        n = min(hi - lo, CHUNK_SIZE)
        out[lo : lo + n] = _ZEROS[:n]
        lo += n


def write(txn: Txn, inode: Inode, offset: int, data: Buffer, path: str | None = None) -> None:
    """Write `data` at `offset`, growing the file; the caller stores the updated inode."""
    if offset < 0:
        raise fs_error(errno.EINVAL, path)
    if offset + len(data) > MAX_FILE_SIZE:
        raise fs_error(errno.EFBIG, path)
    view = memoryview(data)
    pos, end = offset, offset + len(data)
    delta = 0
    while pos < end:
        index, within = divmod(pos, CHUNK_SIZE)
        take = min(CHUNK_SIZE - within, end - pos)
        key = U64x2.pack(inode.ino, index)
        piece = view[pos - offset : pos - offset + take]
        # none lie past the size; a view in a ViewTxn, used up before the put below
        old = txn.get_view("chunks", key) if index * CHUNK_SIZE < inode.size else None
        new: Buffer
        if within == 0 and (take == CHUNK_SIZE or old is None or len(old) <= take):
            new = piece  # LMDB copies it in: no intermediate bytes object
        else:
            buf = bytearray(old or b"")
            if len(buf) < within:
                buf.extend(bytes(within - len(buf)))
            buf[within : within + take] = piece
            new = buf
        delta += len(new) - (len(old) if old is not None else 0)
        txn.put("chunks", key, new)
        pos += take
    _charge(txn, delta, path)
    if end > inode.size:
        inode.size = end


def truncate(txn: Txn, inode: Inode, size: int, path: str | None = None) -> None:
    """Set the file's length; data past it is dropped so that growing again reads zeros."""
    if size < 0:
        raise fs_error(errno.EINVAL, path)
    if size > MAX_FILE_SIZE:
        raise fs_error(errno.EFBIG, path)
    if size < inode.size:
        keep = (size + CHUNK_SIZE - 1) // CHUNK_SIZE  # chunks [0, keep) survive
        delta = 0
        tail = size % CHUNK_SIZE
        doomed: list[bytes] = []
        cut: tuple[bytes, bytes] | None = None
        for key, chunk in txn.scan("chunks", U64.pack(inode.ino), U64x2.pack(inode.ino, max(keep - 1, 0))):
            if U64x2.unpack(key)[1] >= keep:
                doomed.append(key)  # keys only: holding every chunk would cost their size in memory
                delta -= len(chunk)
            elif tail and len(chunk) > tail:
                cut = (key, chunk[:tail])
                delta -= len(chunk) - tail
        for key in doomed:  # mutate only after the cursor is done
            txn.delete("chunks", key)
        if cut is not None:
            txn.put("chunks", *cut)
        _charge(txn, delta)
    inode.size = size


def drop_data(txn: Txn, inode: Inode) -> None:
    delta = 0
    doomed: list[bytes] = []
    for key, chunk in txn.scan("chunks", U64.pack(inode.ino)):
        doomed.append(key)
        delta -= len(chunk)
    for key in doomed:
        txn.delete("chunks", key)
    _charge(txn, delta)
