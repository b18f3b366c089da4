"""Txn-level access to inode, dirent, parent, symlink and xattr records.

Every function here runs inside a caller's transaction; none commits. Key layout keeps a
directory's entries contiguous, as JuiceFS does: parent ino + hash(name) + name. The hash is
the entry's readdir cookie (as ext4's htree offsets are): a resumed listing stays valid while
the directory changes, and no second index has to be kept in step with the entries.
"""

from __future__ import annotations

import errno
import stat as st
import struct

from kfs.kstate import Txn, quota
from kfs.kstate.layers import fork_owner, layer_bytes, layer_files, versions_bytes
from kfs.kstate.schema import U64, U64x2
from kfs.vfs.data import charge_owner, drop_data, xattr_bytes
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import NAME_MAX, ROOT_INO, Inode

_DIRENT = struct.Struct(">QB")  # child ino, file type (S_IFMT >> 12)
_DIR_KIND = st.S_IFDIR >> 12

pack_ino = U64.pack
unpack_child = _unpack_child = _DIRENT.unpack_from
_inode = Inode.unpack
_unpack_mode_size = struct.Struct(">I12xQ").unpack_from  # the head of INODE_STRUCT
try:  # hashlib's own: without importing hashlib, which loads OpenSSL (a few ms of every start)
    from _blake2 import blake2b as _blake2b
except ImportError:  # an interpreter without the builtin module
    from hashlib import blake2b as _blake2b


def get_inode(txn: Txn, ino: int, path: str | bytes | None = None) -> Inode:
    raw = txn.get("inodes", pack_ino(ino))
    if raw is None:
        raise fs_error(errno.ENOENT, path)
    return _inode(ino, raw)


def mode_and_size(txn: Txn, ino: int, path: str | bytes | None = None) -> tuple[int, int]:
    """An inode's mode and size without building the Inode (the hot path of a small read)."""
    raw = txn.get_view("inodes", pack_ino(ino))
    if raw is None:
        raise fs_error(errno.ENOENT, path)
    return _unpack_mode_size(raw)


def find_inode(txn: Txn, ino: int) -> Inode | None:
    raw = txn.get("inodes", pack_ino(ino))
    return None if raw is None else Inode.unpack(ino, raw)


def put_inode(txn: Txn, inode: Inode) -> None:
    txn.put("inodes", pack_ino(inode.ino), inode.pack())


def new_inode(
    txn: Txn, mode: int, uid: int, gid: int, now: int, rdev: int = 0, size: int = 0, check: bool = True
) -> Inode:
    """A new inode owned by `uid`, counted as one of its files (EDQUOT past its limit when `check`)."""
    charge_owner(txn, uid, 1, None, check, quota.FILES)
    ino = txn.incr(b"next_ino")
    if ino <= ROOT_INO:  # a fresh state: the root took ino 1
        ino = txn.incr(b"next_ino", ROOT_INO + 1 - ino)
    nlink = 2 if st.S_ISDIR(mode) else 1
    inode = Inode(ino, mode, uid, gid, nlink, size, now, now, now, now, 1, rdev)
    put_inode(txn, inode)
    return inode


# A byte looked for as an int: `b"/" in name` first tries to read b"/" as an int, and raises
# and clears a TypeError before it searches (several times the cost of the search).
_SLASH, _NUL = ord("/"), 0


def check_name(name: bytes, path: str | bytes | None = None) -> None:
    """Names are any bytes but NUL and '/', 1 to 255 of them, as Linux allows."""
    if len(name) > NAME_MAX:
        raise fs_error(errno.ENAMETOOLONG, path)
    if not name or _SLASH in name or _NUL in name:
        raise fs_error(errno.EINVAL, path)


def name_cookie(name: bytes) -> int:
    """A name's readdir cookie: 62 bits of BLAKE2b, never 0 (room for "." and ".." offsets)."""
    return (int.from_bytes(_blake2b(name, digest_size=8).digest(), "big") >> 2) or 1


# name -> its packed cookie followed by the name: the tail of every dirent key for that name.
# A pure function of the name, so the memo is safe across transactions and processes; one
# operation hashes a name three or four times (resolve, the EEXIST check, the insert), and
# directory names on a path recur in every operation below them.
_KEY_TAILS: dict[bytes, bytes] = {}
_KEY_TAILS_MAX = 8192


def key_tail(name: bytes) -> bytes:
    """The cookie and name that follow the parent's ino in a dirent key."""
    tail = _KEY_TAILS.get(name)
    if tail is None:
        if len(_KEY_TAILS) >= _KEY_TAILS_MAX:
            _KEY_TAILS.clear()  # crude but bounded; a hash costs well under a microsecond
        tail = _KEY_TAILS[name] = pack_ino(name_cookie(name)) + name
    return tail


def dirent_key(parent: int, name: bytes) -> bytes:
    return pack_ino(parent) + key_tail(name)


def lookup_entry(txn: Txn, parent: int, name: bytes) -> int | None:
    raw = txn.get("dirents", pack_ino(parent) + key_tail(name))
    return None if raw is None else _unpack_child(raw)[0]


def add_entry(txn: Txn, parent: int, name: bytes, child: Inode, key: bytes | None = None) -> None:
    """Enter `child` as `name` in `parent`; `key` is `dirent_key(parent, name)` if the caller has it."""
    txn.put("dirents", key or dirent_key(parent, name), _DIRENT.pack(child.ino, child.kind >> 12))
    if child.is_dir:
        put_parent(txn, child.ino, parent, name)


def put_parent(txn: Txn, ino: int, parent: int, name: bytes) -> None:
    """Record directory `ino`'s parent and name (the one way a directory gets or changes them)."""
    txn.put("parents", pack_ino(ino), pack_ino(parent) + name)
    _forget_paths(txn, ino)


def remove_entry(txn: Txn, parent: int, name: bytes) -> None:
    txn.delete("dirents", dirent_key(parent, name))


def decode_entry(key: bytes, raw: bytes) -> tuple[int, int, bytes, int, int]:
    """(parent, cookie, name, child ino, file type bits) of one dirents row."""
    parent, cookie = U64x2.unpack_from(key)
    child, kind = _DIRENT.unpack(raw)
    return parent, cookie, key[16:], child, kind << 12


def encode_entry(child: int, kind_bits: int) -> bytes:
    return _DIRENT.pack(child, kind_bits >> 12)


def list_entries(
    txn: Txn, parent: int, after_cookie: int = 0, limit: int | None = None
) -> list[tuple[bytes, int, int, int]]:
    """(name, child ino, file type bits, cookie) in cookie order after `after_cookie`.

    At most `limit` entries (all when None).
    """
    out = []
    prefix = pack_ino(parent)
    for key, raw in txn.scan("dirents", prefix, U64x2.pack(parent, after_cookie + 1)):
        child, kind = _DIRENT.unpack(raw)
        out.append((key[16:], child, kind << 12, U64x2.unpack_from(key)[1]))
        if limit is not None and len(out) >= limit:
            break
    return out


def children(txn: Txn, parent: int) -> tuple[list[bytes], list[tuple[bytes, int]]]:
    """The names of a directory's entries, and (name, ino) of those that are directories: for a
    walk of a whole tree that looks at names (kfs.vfs.policy), without unpacking every entry."""
    names: list[bytes] = []
    dirs: list[tuple[bytes, int]] = []
    for key, raw in txn.scan("dirents", pack_ino(parent)):
        name = key[16:]
        names.append(name)
        if raw[8] == _DIR_KIND:
            dirs.append((name, U64.unpack_from(raw)[0]))
    return names, dirs


def has_entries(txn: Txn, parent: int) -> bool:
    return txn.has_prefix("dirents", pack_ino(parent))


def dir_parent(txn: Txn, ino: int) -> tuple[int, bytes]:
    """The parent and name of a directory (the root is its own parent)."""
    if ino == ROOT_INO:
        return ROOT_INO, b""
    raw = txn.get("parents", pack_ino(ino))
    if raw is None:
        raise fs_error(errno.ENOENT)
    return U64.unpack_from(raw)[0], raw[8:]


# Txn.memo's name for directory paths: dir ino -> absolute path. A directory in it has its
# parent in it (a walk remembers every level it read, and the memo is only ever emptied
# whole), so a directory that is not in it has no remembered path running through it.
_DIR_PATHS = "records.dir_paths"
_DIR_PATHS_MAX = 4096


def dir_path(txn: Txn, ino: int) -> bytes:
    """The absolute path of a directory, walking parent records up to the root.

    A write transaction remembers the paths it found for this process's next ones (`Txn.memo`):
    every receipt of the inode API names its parent directory's path, and a workload's files
    lie in a few directories. A directory that moves or goes forgets them (`_forget_paths`).
    """
    memo = txn.memo(_DIR_PATHS)
    walked: list[tuple[int, bytes]] = []  # (directory, its name), upwards from `ino`
    path = b""  # the root's, as the head of its descendants' paths
    while ino != ROOT_INO:
        if memo is not None:
            known = memo.get(ino)
            if known is not None:
                path = known
                break
        raw = txn.get("parents", pack_ino(ino))
        if raw is None or len(walked) > 4096:
            return b"/?" + b"/".join([name for _, name in reversed(walked)])
        walked.append((ino, raw[8:]))
        ino = U64.unpack_from(raw)[0]
    if not walked:
        return path or b"/"
    if memo is not None and len(memo) + len(walked) > _DIR_PATHS_MAX:
        memo.clear()  # bounded; and what this walk read is not kept, as its head went with the rest
        memo = None
    for directory, name in reversed(walked):
        path += b"/" + name
        if memo is not None:
            memo[directory] = path
    return path


def _forget_paths(txn: Txn, ino: int) -> None:
    """Directory `ino` moves or goes: no remembered path through it may stay."""
    memo = txn.memo(_DIR_PATHS)
    if memo and ino in memo:
        memo.clear()


def child_path(txn: Txn, parent: int, name: bytes) -> str:
    base = dir_path(txn, parent)
    full = base + name if base.endswith(b"/") else base + b"/" + name
    return full.decode("utf-8", "surrogateescape")


def read_symlink(txn: Txn, ino: int) -> bytes:
    raw = txn.get("symlinks", pack_ino(ino))
    if raw is None:
        raise fs_error(errno.EINVAL)
    return raw


def drop_inode(txn: Txn, inode: Inode, *, orphan: bool = True) -> None:
    """Delete an inode and everything stored under it (data, target, xattrs, parent record,
    orphan record). orphan=False: the caller knows it has no orphan record (it had a link
    until now: a file becomes an orphan when its last link goes while it is open)."""
    key = pack_ino(inode.ino)
    kind = inode.mode & 0o170000
    if kind == st.S_IFREG and inode.size:  # no chunk lies at or past the size: an empty file has none
        drop_data(txn, inode)
    txn.delete("inodes", key)
    charge_owner(txn, inode.uid, -1, kind=quota.FILES)
    if kind == st.S_IFLNK:  # only a symlink has a target, only a directory a parent record,
        target = txn.get("symlinks", key)
        txn.delete("symlinks", key)
        charge_owner(txn, inode.uid, -len(target or b""))
    elif kind == st.S_IFDIR:
        txn.delete("parents", key)
        _forget_paths(txn, inode.ino)
    elif kind == st.S_IFREG and orphan:  # only a regular file is held open, so only it is orphaned
        txn.delete("orphans", key)
    if txn.has_prefix("xattrs", key):
        charge_owner(txn, inode.uid, -xattr_bytes(txn, inode.ino))
        for xkey in txn.scan_keys("xattrs", key):
            txn.delete("xattrs", xkey)


def count_usage(txn: Txn) -> tuple[dict[int, int], dict[int, int]]:
    """Every uid's use, bytes and files, counted from what is stored (the counters' truth, for fsck and for a
    state made before them): the state's chunks to their files' owners, each fork's layer to
    the fork's owner; symlink targets and extended attributes as file data. `txn` is the
    state's own (not a fork's view)."""
    counts: dict[int, int] = {}
    files: dict[int, int] = {}
    owners: dict[int, int] = {}
    for key, raw in Txn.scan(txn, "inodes"):
        uid = owners[U64.unpack_from(key)[0]] = Inode.unpack(0, raw).uid
        files[uid] = files.get(uid, 0) + 1
    for db, extra in (("chunks", 0), ("symlinks", 0), ("xattrs", -8)):  # an xattr's name counts, not its ino
        for key, value in Txn.scan(txn, db):
            ino = U64.unpack_from(key)[0]
            uid = owners.get(ino)
            if uid is None:
                inode = find_inode(txn, ino)
                uid = owners[ino] = inode.uid if inode is not None else 0
            counts[uid] = counts.get(uid, 0) + len(value) + (len(key) + extra if extra else 0)
    for key in Txn.scan_keys(txn, "forks"):
        if len(key) == 8:
            fork = U64.unpack(key)[0]
            uid = fork_owner(txn, fork)
            counts[uid] = counts.get(uid, 0) + layer_bytes(txn, fork)
            files[uid] = files.get(uid, 0) + layer_files(txn, fork)
    for uid, (size, kept) in versions_bytes(txn).items():  # a parent's old values kept for its forks
        counts[uid] = counts.get(uid, 0) + size
        files[uid] = files.get(uid, 0) + kept
    return {u: n for u, n in counts.items() if n}, {u: n for u, n in files.items() if n}
