"""`komputer import` and `export`: copy trees between the host filesystem and the VFS.

Modes, symlinks, owners and nanosecond times are preserved both ways. An import is one
transaction: after a crash the tree is either wholly there or not at all.
"""

from __future__ import annotations

import errno
import os
import stat as st

from kfs.vfs import attrs, data, namespace, records
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import Inode
from kfs.vfs.ops import Op
from kfs.vfs.paths import PathFS


def import_tree(fs: PathFS, host: str, kpath: str) -> int:
    """Copy host file or directory `host` to `kpath` (created with its parents); returns entries copied."""
    top = os.lstat(host)

    def body(op: Op) -> int:
        if st.S_ISDIR(top.st_mode):
            target = fs.mkdirs_in(op, kpath)
            count = _copy_children(op, fs, os.fsencode(host), target, fs.abspath(kpath))
            _preserve(op, records.get_inode(op.txn, target.ino), top)
            return count
        fs.mkdirs_in(op, os.path.dirname(fs.abspath(kpath)))
        found = fs.resolve(op.txn, kpath)
        if found.inode is not None or found.parent is None:
            raise fs_error(errno.EEXIST, kpath)
        _copy_one(op, fs, os.fsencode(host), top, found.parent, found.name, fs.abspath(kpath))
        return 1

    return fs.vfs.run(fs.cred, body)


def _copy_children(op: Op, fs: PathFS, host: bytes, parent: Inode, shown: str) -> int:
    count = 0
    with os.scandir(host) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        info = entry.stat(follow_symlinks=False)
        name = os.fsencode(entry.name)
        child = shown.rstrip("/") + "/" + os.fsdecode(entry.name)
        if records.lookup_entry(op.txn, parent.ino, name) is not None:
            raise fs_error(errno.EEXIST, child)
        count += _copy_one(op, fs, os.fsencode(entry.path), info, parent, name, child)
    return count


def _copy_one(op: Op, fs: PathFS, host: bytes, info: os.stat_result, parent: Inode, name: bytes, shown: str) -> int:
    parent = records.get_inode(op.txn, parent.ino)  # earlier siblings changed its record
    mode = info.st_mode
    if st.S_ISLNK(mode):
        node = namespace.make_node(op, parent, name, st.S_IFLNK | 0o777, target=os.readlink(host), path=shown)
    elif st.S_ISDIR(mode):
        node = namespace.make_node(op, parent, name, st.S_IFDIR | 0o700, path=shown)
        count = 1 + _copy_children(op, fs, host, node, shown)
        _preserve(op, records.get_inode(op.txn, node.ino), info)
        return count
    elif st.S_ISREG(mode):
        node = namespace.make_node(op, parent, name, st.S_IFREG | 0o600, path=shown)
        with open(host, "rb") as f:
            offset = 0
            while block := f.read(1 << 20):
                data.write(op.txn, node, offset, block, check=not op.cred.is_root)
                offset += len(block)
        records.put_inode(op.txn, node)
        op.receipt("vfs.write", shown, offset)
    else:
        node = namespace.make_node(op, parent, name, mode, rdev=info.st_rdev, path=shown)
    _preserve(op, node, info)
    return 1


def _preserve(op: Op, node: Inode, info: os.stat_result) -> None:
    owner = {"uid": info.st_uid, "gid": info.st_gid} if op.cred.is_root else {}
    attrs.setattr(op, node, **owner, atime=info.st_atime_ns, mtime=info.st_mtime_ns)
    if not node.is_lnk:
        attrs.setattr(op, node, mode=st.S_IMODE(info.st_mode))


def export_tree(fs: PathFS, kpath: str, host: str, *, keep_setuid: bool = False) -> tuple[int, int]:
    """Copy `kpath` to `host`: a directory's contents go into `host` (created if missing).
    Returns (entries copied, files whose setuid/setgid bits were dropped). On the host the
    files belong to the agents' uids, which an agent chose no host account for: their setuid
    and setgid bits go unless `keep_setuid` (as GNU tar drops them unless told to preserve
    permissions)."""
    out = _Export(fs, keep_setuid)
    inode = fs.lstat(kpath)
    if inode.is_dir:
        os.makedirs(host, exist_ok=True)
        count = out.children(fs.abspath(kpath), os.fsencode(host))
        out.restore(os.fsencode(host), inode)
        return count, out.stripped
    dest = os.path.join(host, os.path.basename(fs.abspath(kpath))) if os.path.isdir(host) else host
    return out.one(fs.abspath(kpath), inode, os.fsencode(dest)), out.stripped


class _Export:
    def __init__(self, fs: PathFS, keep_setuid: bool) -> None:
        self.fs = fs
        self.keep_setuid = keep_setuid
        self.stripped = 0

    def children(self, kpath: str, host: bytes) -> int:
        count = 0
        for name, inode in self.fs.scandir(kpath):
            child = kpath.rstrip("/") + "/" + name
            count += self.one(child, inode, os.path.join(host, os.fsencode(name)))
        return count

    def one(self, kpath: str, inode: Inode, host: bytes) -> int:
        fs = self.fs
        if inode.is_lnk:
            os.symlink(os.fsencode(fs.readlink(kpath)), host)
        elif inode.is_dir:
            os.mkdir(host, 0o700)
            count = 1 + self.children(kpath, host)
            self.restore(host, inode)
            return count
        elif inode.is_reg:
            fd = os.open(host, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with fs.open(kpath) as handle:
                    offset = 0
                    while block := handle.pread(1 << 20, offset):
                        os.write(fd, block)
                        offset += len(block)
            finally:
                os.close(fd)
        else:
            os.mknod(host, st.S_IFMT(inode.mode) | 0o600, inode.rdev)
        self.restore(host, inode)
        return 1

    def restore(self, host: bytes, inode: Inode) -> None:
        """Owner, mode, times; the owner first (a chown clears setuid bits the chmod then sets)."""
        if os.geteuid() == 0:
            os.chown(host, inode.uid, inode.gid, follow_symlinks=False)
        if not inode.is_lnk:
            perm = inode.perm
            if perm & (st.S_ISUID | st.S_ISGID) and not inode.is_dir and not self.keep_setuid:
                perm &= ~(st.S_ISUID | st.S_ISGID)
                self.stripped += 1
            os.chmod(host, perm)
        os.utime(host, ns=(inode.atime, inode.mtime), follow_symlinks=False)
