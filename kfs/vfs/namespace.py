"""Namespace operations (create, link, unlink, rmdir, rename) as bodies of one transaction.

Both faces of the VFS call these: the inode API with inodes it looked up by number, the path
API with inodes it resolved from a path. POSIX rules live here once.
"""

from __future__ import annotations

import errno
import stat as st

from kfs.journal import ChangeKind
from kfs.kstate.schema import U64
from kfs.vfs import attrs, data, records
from kfs.vfs.cred import R_OK, W_OK, X_OK, allowed, require, sticky_denies
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import DIR_SIZE, ROOT_INO, Inode
from kfs.vfs.ops import Op

LINK_MAX = 65000
PROTECTED_HARDLINKS = "/proc/sys/fs/protected_hardlinks"
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
RENAME_WHITEOUT = 4  # leave a whiteout (a 0:0 character device) at the old name: overlay file systems

_RECEIPT_FOR_KIND = {st.S_IFDIR: "vfs.mkdir", st.S_IFLNK: "vfs.symlink", st.S_IFREG: "vfs.create"}


def _path(op: Op, parent: Inode, name: bytes, path: str | None) -> str:
    return path if path is not None else records.child_path(op.txn, parent.ino, name)


def check_dir_writable(op: Op, parent: Inode, path: str | None) -> None:
    """A directory that can take a new or lose an old entry: a live directory with w and x."""
    if not parent.is_dir:
        raise fs_error(errno.ENOTDIR, path)
    if parent.nlink == 0:
        raise fs_error(errno.ENOENT, path)
    require(op.cred, parent, W_OK | X_OK, path, op.txn)


def make_node(
    op: Op,
    parent: Inode,
    name: bytes,
    mode: int,
    *,
    rdev: int = 0,
    target: bytes | None = None,
    path: str | None = None,
    receipt: bool = True,
    absent: bool = False,
) -> Inode:
    """Create a file of any type (`mode` carries the type bits) in `parent`.

    receipt=False is for callers whose own receipt covers the creation (write_file's vfs.write).
    absent=True says the caller looked `name` up in this transaction and found nothing.
    """
    txn = op.txn
    records.check_name(name, path)
    check_dir_writable(op, parent, path)
    key = records.dirent_key(parent.ino, name)  # for the check and the insert both
    if not absent and txn.get("dirents", key) is not None:
        raise fs_error(errno.EEXIST, path)
    kind = st.S_IFMT(mode) or st.S_IFREG
    if kind in (st.S_IFCHR, st.S_IFBLK) and not op.cred.is_root:
        raise fs_error(errno.EPERM, path)
    if kind not in (st.S_IFREG, st.S_IFDIR, st.S_IFLNK, st.S_IFIFO, st.S_IFSOCK, st.S_IFCHR, st.S_IFBLK):
        raise fs_error(errno.EINVAL, path)
    perm = 0o777 if kind == st.S_IFLNK else st.S_IMODE(mode)
    gid = op.cred.gid
    if parent.mode & st.S_ISGID:  # BSD group semantics for setgid directories
        gid = parent.gid
        if kind == st.S_IFDIR:
            perm |= st.S_ISGID
    stripped = perm & st.S_ISGID and perm & st.S_IXGRP  # as Linux's mode_strip_sgid
    if stripped and kind != st.S_IFDIR and not op.cred.is_root and not op.cred.in_group(gid):
        perm &= ~st.S_ISGID
    size = DIR_SIZE if kind == st.S_IFDIR else len(target) if target is not None else 0
    child = records.new_inode(txn, kind | perm, op.cred.uid, gid, op.now, rdev, size, not op.cred.is_root)
    if attrs.inherit_acl(op, parent, child):
        records.put_inode(txn, child)
    if target is not None:
        data.charge_owner(txn, child.uid, len(target), path, not op.cred.is_root)
        txn.put("symlinks", U64.pack(child.ino), target)
    records.add_entry(txn, parent.ino, name, child, key)
    if kind == st.S_IFDIR:
        parent.nlink += 1
    parent.mtime = parent.ctime = op.now
    records.put_inode(txn, parent)
    if receipt:
        op.receipt(_RECEIPT_FOR_KIND.get(kind, "vfs.mknod"), _path(op, parent, name, path))
    op.changed(ChangeKind.ENTRY_ADD, child.ino, parent.ino, name)
    return child


def link(op: Op, inode: Inode, parent: Inode, name: bytes, path: str | None = None) -> Inode:
    txn = op.txn
    records.check_name(name, path)
    if inode.is_dir:
        raise fs_error(errno.EPERM, path)
    check_dir_writable(op, parent, path)
    if records.lookup_entry(txn, parent.ino, name) is not None:
        raise fs_error(errno.EEXIST, path)
    if inode.nlink == 0:
        raise fs_error(errno.ENOENT, path)
    if inode.nlink >= LINK_MAX:
        raise fs_error(errno.EMLINK, path)
    if (not op.cred.is_root and op.cred.uid != inode.uid and not _safe_hardlink_source(op, inode)
            and protected_hardlinks()):
        raise fs_error(errno.EPERM, path)
    inode.nlink += 1
    inode.ctime = op.now
    records.put_inode(txn, inode)
    records.add_entry(txn, parent.ino, name, inode)
    parent.mtime = parent.ctime = op.now
    records.put_inode(txn, parent)
    op.receipt("vfs.link", _path(op, parent, name, path))
    op.changed(ChangeKind.ENTRY_ADD, inode.ino, parent.ino, name)
    return inode


def protected_hardlinks() -> bool:
    """The host's fs.protected_hardlinks, which the kernel applies on the mount before K sees a
    link: K's own links follow it too (on where it cannot be read, Linux's default)."""
    try:
        with open(PROTECTED_HARDLINKS, "rb") as f:
            return f.read().strip() != b"0"
    except OSError:
        return True


def _safe_hardlink_source(op: Op, inode: Inode) -> bool:
    if not inode.is_reg or inode.mode & st.S_ISUID:
        return False
    if inode.mode & st.S_ISGID and inode.mode & st.S_IXGRP:
        return False
    return allowed(op.cred, inode, R_OK | W_OK, op.txn)


def _entry(op: Op, parent: Inode, name: bytes, path: str | None) -> Inode:
    ino = records.lookup_entry(op.txn, parent.ino, name)
    if ino is None:
        raise fs_error(errno.ENOENT, path)
    return records.get_inode(op.txn, ino, path)


def release_link(op: Op, inode: Inode) -> None:
    """Drop one link; the last one frees the inode unless a handle still holds it open."""
    inode.nlink -= 1
    inode.ctime = op.now
    if inode.nlink > 0:
        records.put_inode(op.txn, inode)
    elif op.txn.has_prefix("opens", U64.pack(inode.ino)):
        records.put_inode(op.txn, inode)
        op.txn.put("orphans", U64.pack(inode.ino), b"")
    else:
        records.drop_inode(op.txn, inode, orphan=False)  # it had a link until now


def unlink(op: Op, parent: Inode, name: bytes, path: str | None = None, *, child: Inode | None = None) -> None:
    """Remove a non-directory entry; `child` is its inode when the caller looked it up already."""
    check_dir_writable(op, parent, path)
    if child is None:
        child = _entry(op, parent, name, path)
    if child.is_dir:
        raise fs_error(errno.EISDIR, path)
    if sticky_denies(op.cred, parent, child):
        raise fs_error(errno.EPERM, path)
    records.remove_entry(op.txn, parent.ino, name)
    release_link(op, child)
    parent.mtime = parent.ctime = op.now
    records.put_inode(op.txn, parent)
    op.receipt("vfs.rm", _path(op, parent, name, path))
    op.changed(ChangeKind.ENTRY_DEL, child.ino, parent.ino, name)


def rmdir(op: Op, parent: Inode, name: bytes, path: str | None = None) -> None:
    if name == b".":
        raise fs_error(errno.EINVAL, path)
    if name == b"..":
        raise fs_error(errno.ENOTEMPTY, path)
    check_dir_writable(op, parent, path)
    child = _entry(op, parent, name, path)
    if not child.is_dir:
        raise fs_error(errno.ENOTDIR, path)
    if sticky_denies(op.cred, parent, child):
        raise fs_error(errno.EPERM, path)
    if records.has_entries(op.txn, child.ino):
        raise fs_error(errno.ENOTEMPTY, path)
    records.remove_entry(op.txn, parent.ino, name)
    records.drop_inode(op.txn, child)
    parent.nlink -= 1
    parent.mtime = parent.ctime = op.now
    records.put_inode(op.txn, parent)
    op.receipt("vfs.rm", _path(op, parent, name, path))
    op.changed(ChangeKind.ENTRY_DEL, child.ino, parent.ino, name)


def _is_ancestor(op: Op, ancestor: int, ino: int) -> bool:
    """Whether directory `ancestor` is `ino` or lies on the path from `ino` up to the root."""
    while True:
        if ino == ancestor:
            return True
        if ino == ROOT_INO:
            return False
        ino = records.dir_parent(op.txn, ino)[0]


def rename(
    op: Op,
    src_parent: Inode,
    src_name: bytes,
    dst_parent: Inode,
    dst_name: bytes,
    flags: int = 0,
    *,
    src_path: str | None = None,
    dst_path: str | None = None,
    known: tuple[Inode, Inode | None] | None = None,
) -> None:
    """rename(2) of an entry; `known` is (source inode, destination inode or None) when the
    caller looked both names up in this transaction already."""
    txn = op.txn
    if flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT) or (
            flags & RENAME_EXCHANGE and flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)):
        raise fs_error(errno.EINVAL, src_path)
    if flags & RENAME_WHITEOUT and not op.cred.is_root:
        raise fs_error(errno.EPERM, src_path)  # making the whiteout is mknod of a device: CAP_MKNOD
    for name, path in ((src_name, src_path), (dst_name, dst_path)):
        if name in (b".", b".."):
            raise fs_error(errno.EINVAL if name == b"." else errno.ENOTEMPTY, path)
    records.check_name(dst_name, dst_path)
    if dst_parent.ino == src_parent.ino:
        dst_parent = src_parent  # one object, so both updates land
    check_dir_writable(op, src_parent, src_path)
    if dst_parent is not src_parent:
        check_dir_writable(op, dst_parent, dst_path)
    if known is not None:
        src, dst = known
    else:
        src = _entry(op, src_parent, src_name, src_path)
        dst_ino = records.lookup_entry(txn, dst_parent.ino, dst_name)
        dst = records.get_inode(txn, dst_ino) if dst_ino is not None else None
    if sticky_denies(op.cred, src_parent, src):
        raise fs_error(errno.EPERM, src_path)
    if flags & RENAME_EXCHANGE:
        if dst is None:
            raise fs_error(errno.ENOENT, dst_path)
        _exchange(op, src_parent, src_name, src, dst_parent, dst_name, dst, src_path, dst_path)
        return
    if dst is not None and flags & RENAME_NOREPLACE:
        raise fs_error(errno.EEXIST, dst_path)
    if dst is not None and dst.ino == src.ino:
        return  # both names are links to one file: POSIX says do nothing
    if src.is_dir:
        if dst is not None and not dst.is_dir:
            raise fs_error(errno.ENOTDIR, dst_path)
        if _is_ancestor(op, src.ino, dst_parent.ino):
            raise fs_error(errno.EINVAL, src_path)
        if dst_parent is not src_parent:
            require(op.cred, src, W_OK, src_path, op.txn)  # its ".." entry changes
    elif dst is not None and dst.is_dir:
        raise fs_error(errno.EISDIR, dst_path)
    if dst is not None:
        if sticky_denies(op.cred, dst_parent, dst):
            raise fs_error(errno.EPERM, dst_path)
        if dst.is_dir and records.has_entries(txn, dst.ino):
            raise fs_error(errno.ENOTEMPTY, dst_path)
        records.remove_entry(txn, dst_parent.ino, dst_name)
        if dst.is_dir:
            records.drop_inode(txn, dst)
            dst_parent.nlink -= 1
        else:
            release_link(op, dst)
        op.changed(ChangeKind.ENTRY_DEL, dst.ino, dst_parent.ino, dst_name)
    records.remove_entry(txn, src_parent.ino, src_name)
    records.add_entry(txn, dst_parent.ino, dst_name, src)
    if src.is_dir and dst_parent is not src_parent:
        src_parent.nlink -= 1
        dst_parent.nlink += 1
    src.ctime = op.now
    records.put_inode(txn, src)
    src_parent.mtime = src_parent.ctime = op.now
    records.put_inode(txn, src_parent)
    if dst_parent is not src_parent:
        dst_parent.mtime = dst_parent.ctime = op.now
        records.put_inode(txn, dst_parent)
    op.receipt(
        "vfs.rename", _path(op, src_parent, src_name, src_path), to=_path(op, dst_parent, dst_name, dst_path)
    )
    op.changed(ChangeKind.ENTRY_DEL, src.ino, src_parent.ino, src_name)
    op.changed(ChangeKind.ENTRY_ADD, src.ino, dst_parent.ino, dst_name)
    if flags & RENAME_WHITEOUT:
        make_node(op, src_parent, src_name, st.S_IFCHR, path=src_path, absent=True)


def _exchange(
    op: Op,
    a_parent: Inode,
    a_name: bytes,
    a: Inode,
    b_parent: Inode,
    b_name: bytes,
    b: Inode,
    a_path: str | None,
    b_path: str | None,
) -> None:
    txn = op.txn
    if sticky_denies(op.cred, b_parent, b):
        raise fs_error(errno.EPERM, b_path)
    if a.ino == b.ino:
        return
    if a_parent is not b_parent:
        if a.is_dir and _is_ancestor(op, a.ino, b_parent.ino):
            raise fs_error(errno.EINVAL, a_path)
        if b.is_dir and _is_ancestor(op, b.ino, a_parent.ino):
            raise fs_error(errno.EINVAL, b_path)
        for node, path in ((a, a_path), (b, b_path)):
            if node.is_dir:
                require(op.cred, node, W_OK, path, op.txn)
    records.remove_entry(txn, a_parent.ino, a_name)
    records.remove_entry(txn, b_parent.ino, b_name)
    records.add_entry(txn, a_parent.ino, a_name, b)
    records.add_entry(txn, b_parent.ino, b_name, a)
    if a_parent is not b_parent:
        a_parent.nlink += int(b.is_dir) - int(a.is_dir)
        b_parent.nlink += int(a.is_dir) - int(b.is_dir)
    for node in (a, b):
        node.ctime = op.now
        records.put_inode(txn, node)
    for parent in {a_parent.ino: a_parent, b_parent.ino: b_parent}.values():
        parent.mtime = parent.ctime = op.now
        records.put_inode(txn, parent)
    op.receipt("vfs.rename", _path(op, a_parent, a_name, a_path), to=_path(op, b_parent, b_name, b_path), exchange=True)
    op.changed(ChangeKind.ENTRY_ADD, b.ino, a_parent.ino, a_name)
    op.changed(ChangeKind.ENTRY_ADD, a.ino, b_parent.ino, b_name)
