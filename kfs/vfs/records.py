"""Txn-level access to inode, dirent, parent, symlink and xattr records.

Every function here runs inside a caller's transaction; none commits. Key layout keeps a
directory's entries contiguous (parent ino + name), as JuiceFS does.
"""

from __future__ import annotations

import errno
import stat as st
import struct

from kfs.kstate import Txn
from kfs.kstate.schema import U64, U64x2
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import NAME_MAX, ROOT_INO, Inode

_DIRENT = struct.Struct(">QBQ")  # child ino, file type (S_IFMT >> 12), readdir cookie

pack_ino = U64.pack


def get_inode(txn: Txn, ino: int, path: str | bytes | None = None) -> Inode:
    raw = txn.get("inodes", pack_ino(ino))
    if raw is None:
        raise fs_error(errno.ENOENT, path)
    return Inode.unpack(ino, raw)


def find_inode(txn: Txn, ino: int) -> Inode | None:
    raw = txn.get("inodes", pack_ino(ino))
    return None if raw is None else Inode.unpack(ino, raw)


def put_inode(txn: Txn, inode: Inode) -> None:
    txn.put("inodes", pack_ino(inode.ino), inode.pack())


def new_inode(txn: Txn, mode: int, uid: int, gid: int, now: int, rdev: int = 0) -> Inode:
    ino = txn.incr(b"next_ino")
    if ino <= ROOT_INO:  # a fresh state: the root took ino 1
        ino = txn.incr(b"next_ino", ROOT_INO + 1 - ino)
    nlink = 2 if st.S_ISDIR(mode) else 1
    inode = Inode(ino, mode, uid, gid, nlink, 0, now, now, now, now, 1, rdev)
    put_inode(txn, inode)
    return inode


def check_name(name: bytes, path: str | bytes | None = None) -> None:
    """Names are any bytes but NUL and '/', 1 to 255 of them, as Linux allows."""
    if len(name) > NAME_MAX:
        raise fs_error(errno.ENAMETOOLONG, path)
    if not name or b"/" in name or b"\0" in name:
        raise fs_error(errno.EINVAL, path)


def dirent_key(parent: int, name: bytes) -> bytes:
    return pack_ino(parent) + name


def lookup_entry(txn: Txn, parent: int, name: bytes) -> int | None:
    raw = txn.get("dirents", dirent_key(parent, name))
    return None if raw is None else _DIRENT.unpack(raw)[0]


def add_entry(txn: Txn, parent: int, name: bytes, child: Inode) -> None:
    cookie = txn.incr(b"next_cookie")
    txn.put("dirents", dirent_key(parent, name), _DIRENT.pack(child.ino, child.kind >> 12, cookie))
    txn.put("dirindex", U64x2.pack(parent, cookie), name)
    if child.is_dir:
        txn.put("parents", pack_ino(child.ino), pack_ino(parent) + name)


def remove_entry(txn: Txn, parent: int, name: bytes) -> None:
    key = dirent_key(parent, name)
    raw = txn.get("dirents", key)
    if raw is None:
        return
    cookie = _DIRENT.unpack(raw)[2]
    txn.delete("dirents", key)
    txn.delete("dirindex", U64x2.pack(parent, cookie))


def list_entries(
    txn: Txn, parent: int, after_cookie: int = 0, limit: int | None = None
) -> list[tuple[bytes, int, int, int]]:
    """(name, child ino, file type bits, cookie) in creation order after `after_cookie`.

    At most `limit` entries (all when None).

    Cookies are never reused, so an offset handed to a reader stays valid while the
    directory changes underneath it.
    """
    out = []
    prefix = pack_ino(parent)
    for key, name in txn.scan("dirindex", prefix, U64x2.pack(parent, after_cookie + 1)):
        raw = txn.get("dirents", prefix + name)
        if raw is None:  # cannot happen in a consistent state; fsck reports it
            continue
        child, kind, _ = _DIRENT.unpack(raw)
        out.append((name, child, kind << 12, U64x2.unpack(key)[1]))
        if limit is not None and len(out) >= limit:
            break
    return out


def has_entries(txn: Txn, parent: int) -> bool:
    for _ in txn.scan("dirents", pack_ino(parent)):
        return True
    return False


def dir_parent(txn: Txn, ino: int) -> tuple[int, bytes]:
    """The parent and name of a directory (the root is its own parent)."""
    if ino == ROOT_INO:
        return ROOT_INO, b""
    raw = txn.get("parents", pack_ino(ino))
    if raw is None:
        raise fs_error(errno.ENOENT)
    return U64.unpack_from(raw)[0], raw[8:]


def dir_path(txn: Txn, ino: int) -> bytes:
    """The absolute path of a directory, walking parent records up to the root."""
    parts: list[bytes] = []
    depth = 0
    while ino != ROOT_INO:
        raw = txn.get("parents", pack_ino(ino))
        if raw is None or depth > 4096:
            return b"/?" + b"/".join(reversed(parts))
        parts.append(raw[8:])
        ino = U64.unpack_from(raw)[0]
        depth += 1
    return b"/" + b"/".join(reversed(parts))


def child_path(txn: Txn, parent: int, name: bytes) -> str:
    base = dir_path(txn, parent)
    full = base + name if base.endswith(b"/") else base + b"/" + name
    return full.decode("utf-8", "surrogateescape")


def read_symlink(txn: Txn, ino: int) -> bytes:
    raw = txn.get("symlinks", pack_ino(ino))
    if raw is None:
        raise fs_error(errno.EINVAL)
    return raw


def drop_inode(txn: Txn, inode: Inode) -> None:
    """Delete an inode and everything stored under it (data, target, xattrs, parent record)."""
    from kfs.vfs.data import drop_data

    key = pack_ino(inode.ino)
    if inode.is_reg:
        drop_data(txn, inode)
    txn.delete("inodes", key)
    txn.delete("symlinks", key)
    txn.delete("parents", key)
    txn.delete("orphans", key)
    for xkey in txn.scan_keys("xattrs", key):
        txn.delete("xattrs", xkey)
