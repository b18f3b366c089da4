"""File contents as fixed-size chunks keyed by (ino, chunk index).

Missing chunks and the gap past a short chunk read as zeros, which makes sparse files and
truncate-up free. A meta counter tracks stored bytes for the `max_bytes` quota, and each
file's stored bytes are charged to its owner for the per-agent quota (kfs.kstate.quota), in the
same transaction as the write. No chunk lies
at or past the file's size (truncate drops them; fsck checks it), so a write there needs no
lookup of what was stored before.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any

from kfs.kstate import Txn, ViewTxn, quota
from kfs.kstate.schema import U64, U64x2
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import CHUNK_SIZE, Inode

DATA_BYTES = b"data_bytes"
MAX_BYTES = b"max_bytes"
MAX_FILE_SIZE = 1 << 62
_ZEROS = memoryview(bytes(CHUNK_SIZE))

Buffer = bytes | bytearray | memoryview
_pack_key = U64x2.pack


def _charge(txn: Txn, delta: int, owner: int, path: str | None = None, check: bool = True) -> None:
    """Account stored bytes: growing past the state's quota raises ENOSPC, past the owner's
    EDQUOT (unless not `check`: root's writes), and either aborts the operation. In a fork the
    layer charges the fork's owner for what it stores (kfs.kstate.layers), not the file's."""
    if delta == 0:
        return
    used = txn.incr(DATA_BYTES, delta)
    if delta > 0:
        limit = txn.counter(MAX_BYTES)
        if limit and used > limit:
            raise fs_error(errno.ENOSPC, path)
    charge_owner(txn, owner, delta, path, check)


def charge_owner(txn: Txn, owner: int, delta: int, path: str | None = None, check: bool = True,
                 kind: quota.Resource = quota.BYTES) -> None:
    """Charge `owner` for `delta` bytes it stores (file data, a symlink's target, extended
    attributes) or files (kind=FILES), EDQUOT past its quota when `check`; nothing in a fork's
    view, whose layer charges the fork's owner (kfs.kstate.layers)."""
    if delta and not getattr(txn, "chain", None):
        quota.charge(txn, owner, delta, path, check, kind)


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


def write(txn: Txn, inode: Inode, offset: int, data: Buffer, path: str | None = None, check: bool = True) -> None:
    """Write `data` at `offset`, growing the file; the caller stores the updated inode.
    `check`: hold the owner to its quota (kfs.kstate.quota; root's writes are not)."""
    inode.size = write_span(txn, inode.ino, inode.size, offset, data, path, inode.uid, check)


# A stored chunk at least this long that a write changes only inside is patched in place of
# its new version (ViewTxn.patch: one copy of the chunk, not two); below it, copying twice
# costs less than the patch's extra calls.
_PATCH_MIN = 8192


def write_span(
    txn: Txn, ino: int, size: int, offset: int, data: Buffer, path: str | None = None, owner: int = 0,
    check: bool = True,
) -> int:
    """`write` of a file known by its ino, size and owner's uid; returns the new size."""
    if offset < 0:
        raise fs_error(errno.EINVAL, path)
    length = len(data)
    end = offset + length
    if end > MAX_FILE_SIZE:
        raise fs_error(errno.EFBIG, path)
    t, chunks = txn.raw("chunks")
    patch = txn.patch if type(txn) is ViewTxn else None
    index, within = divmod(offset, CHUNK_SIZE)
    if within + length <= CHUNK_SIZE:  # inside one chunk: the common small write, no slicing
        delta = _write_chunk(t, chunks, patch, _pack_key(ino, index), index * CHUNK_SIZE < size, within, data)
    else:
        view = memoryview(data)
        pos = offset
        delta = 0
        while pos < end:
            take = min(CHUNK_SIZE - within, end - pos)
            piece = view[pos - offset : pos - offset + take]
            delta += _write_chunk(t, chunks, patch, _pack_key(ino, index), index * CHUNK_SIZE < size, within, piece)
            pos += take
            index, within = index + 1, 0
    if delta:
        _charge(txn, delta, owner, path, check)
    return end if end > size else size


def _write_chunk(
    t: Any, chunks: Any, patch: Callable[..., None] | None, key: bytes, stored: bool, within: int, piece: Buffer
) -> int:
    """Write `piece` at `within` in the chunk at `key` (`stored`: it may exist, being below the
    file's size; none lies past it); returns the change in stored bytes. `t` and `chunks` are
    `txn.raw("chunks")` (the hot path calls LMDB directly), `patch` is `ViewTxn.patch` or None."""
    take = len(piece)
    old = t.get(key, None, chunks) if stored else None  # a view in a ViewTxn: used before the put
    if old is None:
        if within:
            buf = bytearray(within)  # a hole before the data reads as zeros
            buf += piece
            t.put(key, buf, True, True, False, chunks)
            return within + take
        t.put(key, piece, True, True, False, chunks)  # LMDB copies it in: no intermediate bytes object
        return take
    length = len(old)
    if within == 0 and (take == CHUNK_SIZE or length <= take):
        t.put(key, piece, True, True, False, chunks)
        return take - length
    if within + take <= length and length >= _PATCH_MIN and patch is not None:
        patch("chunks", key, old, within, piece)  # same length: no charge
        return 0
    buf = bytearray(old)
    if length < within:
        buf.extend(bytes(within - length))
    buf[within : within + take] = piece
    t.put(key, buf, True, True, False, chunks)
    return len(buf) - length


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
        _charge(txn, delta, inode.uid)
    inode.size = size


def drop_data(txn: Txn, inode: Inode) -> None:
    delta = 0
    doomed: list[bytes] = []
    for key, chunk in txn.scan("chunks", U64.pack(inode.ino)):
        doomed.append(key)
        delta -= len(chunk)
    for key in doomed:
        txn.delete("chunks", key)
    _charge(txn, delta, inode.uid)


def stored_bytes(txn: Txn, ino: int) -> int:
    """The bytes of data a file holds (its chunks; holes hold none)."""
    return sum(len(chunk) for _, chunk in txn.scan_views("chunks", U64.pack(ino)))


def xattr_bytes(txn: Txn, ino: int) -> int:
    """What a file's extended attributes take: each name and value (as `setxattr` charges)."""
    return sum(len(key) - 8 + len(value) for key, value in txn.scan_views("xattrs", U64.pack(ino)))


def owned_bytes(txn: Txn, inode: Inode) -> int:
    """Everything charged to a file's owner for it: data, a symlink's target, extended attributes."""
    held = stored_bytes(txn, inode.ino) if inode.is_reg and inode.size else 0
    if inode.is_lnk:
        target = txn.get_view("symlinks", U64.pack(inode.ino))
        held += len(target) if target is not None else 0
    return held + xattr_bytes(txn, inode.ino)


def change_owner(txn: Txn, inode: Inode, uid: int) -> None:
    """Move the charge of `inode`'s data from its owner to `uid` (chown; the caller sets the
    field). Not refused: only root changes an owner, and Linux lets root's chown pass a quota.
    In a fork nothing moves: the fork's owner pays for what its layer holds, whoever owns it."""
    if uid == inode.uid or getattr(txn, "chain", None):
        return
    moved = owned_bytes(txn, inode)
    if moved:
        quota.charge(txn, inode.uid, -moved)
        quota.charge(txn, uid, moved, check=False)
    quota.charge(txn, inode.uid, -1, kind=quota.FILES)
    quota.charge(txn, uid, 1, check=False, kind=quota.FILES)
