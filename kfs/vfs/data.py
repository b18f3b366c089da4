"""File contents as fixed-size chunks keyed by (ino, chunk index).

Missing chunks and the gap past a short chunk read as zeros, which makes sparse files and
truncate-up free. A meta counter tracks stored bytes for the `max_bytes` quota.
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
    end = min(offset + length, inode.size)
    if offset >= end:
        return b""
    first, last = offset // CHUNK_SIZE, (end - 1) // CHUNK_SIZE
    if first == last:  # the common small read: one get, no zero-fill buffer
        chunk = txn.get("chunks", U64x2.pack(inode.ino, first)) or b""
        lo, hi = offset - first * CHUNK_SIZE, end - first * CHUNK_SIZE
        piece = chunk[lo:hi]
        return piece if len(piece) == hi - lo else piece + bytes(hi - lo - len(piece))
    out = bytearray(end - offset)
    prefix = U64.pack(inode.ino)
    for key, chunk in txn.scan("chunks", prefix, U64x2.pack(inode.ino, first)):
        index = U64x2.unpack(key)[1]
        if index > last:
            break
        base = index * CHUNK_SIZE
        lo = max(offset, base)
        hi = min(end, base + len(chunk))
        if hi > lo:
            out[lo - offset : hi - offset] = chunk[lo - base : hi - base]
    return bytes(out)


def write(txn: Txn, inode: Inode, offset: int, data: bytes | memoryview, path: str | None = None) -> None:
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
        old = txn.get("chunks", key)
        if within == 0 and (take == CHUNK_SIZE or old is None or len(old) <= take):
            new = bytes(piece)
        else:
            buf = bytearray(old or b"")
            if len(buf) < within:
                buf.extend(bytes(within - len(buf)))
            buf[within : within + take] = piece
            new = bytes(buf)
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
        prefix = U64.pack(inode.ino)
        tail = size % CHUNK_SIZE
        rows = list(txn.scan("chunks", prefix, U64x2.pack(inode.ino, max(keep - 1, 0))))
        for key, chunk in rows:  # mutate only after the cursor is done
            index = U64x2.unpack(key)[1]
            if index >= keep:
                txn.delete("chunks", key)
                delta -= len(chunk)
            elif tail and len(chunk) > tail:
                txn.put("chunks", key, chunk[:tail])
                delta -= len(chunk) - tail
        _charge(txn, delta)
    inode.size = size


def drop_data(txn: Txn, inode: Inode) -> None:
    delta = 0
    for key, chunk in list(txn.scan("chunks", U64.pack(inode.ino))):
        delta -= len(chunk)
        txn.delete("chunks", key)
    _charge(txn, delta)
