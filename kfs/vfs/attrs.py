"""Attribute changes (chmod, chown, truncate, utimes) and extended attributes."""

from __future__ import annotations

import errno
import stat as st
from typing import Final, Literal

from kfs.journal import ChangeKind
from kfs.kstate.schema import U64
from kfs.vfs import acl, data, records
from kfs.vfs.cred import R_OK, W_OK, allowed, require, require_owner
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import NAME_MAX, Inode
from kfs.vfs.ops import Op

NOW: Final = "now"
Time = int | Literal["now"] | None

XATTR_CREATE = 1
XATTR_REPLACE = 2
XATTR_SIZE_MAX = 65536
_XATTR_NAMESPACES = (b"user.", b"trusted.", b"security.")
CAPABILITY = b"security.capability"


def drop_privileges_on_write(op: Op, inode: Inode) -> None:
    """A write or truncate by a non-root caller clears setuid, and setgid when group-executable."""
    if op.cred.is_root or inode.is_dir:
        return
    inode.mode = mode_after_write(inode.mode)


def mode_after_write(mode: int) -> int:
    """`mode` of a non-directory after a non-root caller wrote to it (drop_privileges_on_write)."""
    if mode & st.S_ISUID:
        mode &= ~st.S_ISUID
    if mode & st.S_ISGID and mode & st.S_IXGRP:
        mode &= ~st.S_ISGID
    return mode


def setattr(
    op: Op,
    inode: Inode,
    *,
    mode: int | None = None,
    uid: int | None = None,
    gid: int | None = None,
    size: int | None = None,
    atime: Time = None,
    mtime: Time = None,
    path: str | None = None,
    writable_handle: bool = False,
) -> Inode:
    """Apply the requested changes in one transaction; unspecified attributes stay as they are."""
    cred = op.cred
    where = path if path is not None else f"ino {inode.ino}"
    if uid is not None or gid is not None:
        new_uid = inode.uid if uid is None else uid
        new_gid = inode.gid if gid is None else gid
        if not cred.is_root:
            if new_uid != inode.uid or cred.uid != inode.uid:
                raise fs_error(errno.EPERM, path)
            if new_gid != inode.gid and not cred.in_group(new_gid):
                raise fs_error(errno.EPERM, path)
        data.change_owner(op.txn, inode, new_uid)
        inode.uid, inode.gid = new_uid, new_gid
        if not inode.is_dir:
            inode.mode &= ~st.S_ISUID
            if inode.mode & st.S_IXGRP:
                inode.mode &= ~st.S_ISGID
        inode.ctime = op.now
        op.receipt("vfs.chown", where, uid=new_uid, gid=new_gid)
    if mode is not None:
        require_owner(cred, inode, path)
        perm = st.S_IMODE(mode)
        if not cred.is_root and not cred.in_group(inode.gid):
            perm &= ~st.S_ISGID
        inode.mode = inode.kind | perm
        inode.ctime = op.now
        _chmod_acl(op, inode)
        op.receipt("vfs.chmod", where, mode=f"{perm:04o}")
    if size is not None:
        if inode.is_dir:
            raise fs_error(errno.EISDIR, path)
        if not inode.is_reg:
            raise fs_error(errno.EINVAL, path)
        if not writable_handle:
            require(cred, inode, W_OK, path, op.txn)
        data.truncate(op.txn, inode, size, path)
        drop_privileges_on_write(op, inode)
        inode.mtime = inode.ctime = op.now
        op.receipt("vfs.truncate", where, size)
    if atime is not None or mtime is not None:
        explicit = (atime is not None and atime != NOW) or (mtime is not None and mtime != NOW)
        if explicit:
            require_owner(cred, inode, path)
        elif cred.uid != inode.uid and not cred.is_root and not allowed(cred, inode, W_OK, op.txn):
            raise fs_error(errno.EACCES, path)
        if atime is not None:
            inode.atime = op.now if atime == NOW else int(atime)
        if mtime is not None:
            inode.mtime = op.now if mtime == NOW else int(mtime)
        inode.ctime = op.now
        op.receipt("vfs.utime", where)
    records.put_inode(op.txn, inode)
    op.changed(ChangeKind.DATA if size is not None else ChangeKind.ATTR, inode.ino)
    return inode


def _chmod_acl(op: Op, inode: Inode) -> None:
    """Keep a stored access ACL in step with the new mode bits, as Linux's posix_acl_chmod."""
    key = _xattr_key(inode, acl.ACCESS)
    old = op.txn.get("xattrs", key)
    if old is not None:
        op.txn.put("xattrs", key, acl.pack(acl.chmod(acl.parse(bytes(old)), inode.mode)))


def inherit_acl(op: Op, parent: Inode, child: Inode) -> bool:
    """Give `child`, just created in `parent`, the directory's default ACL as Linux does:
    its mode masked by it, its access ACL (unless the mode says it all), and for a directory
    the default ACL itself. True when the child's mode changed (the caller stores it)."""
    default = op.txn.get("xattrs", _xattr_key(parent, acl.DEFAULT))
    if default is None or child.is_lnk:
        return False
    default = bytes(default)
    child.mode, access = acl.inherit(acl.parse(default), child.mode)
    inherited = [(acl.ACCESS, acl.pack(access))] if len(access) > 3 else []
    if child.is_dir:
        inherited.append((acl.DEFAULT, default))
    for name, value in inherited:  # charged as setxattr charges: drop_inode gives it back
        data.charge_owner(op.txn, child.uid, len(name) + len(value), None, not op.cred.is_root)
        op.txn.put("xattrs", _xattr_key(child, name), value)
    return True


def _xattr_key(inode: Inode, name: bytes) -> bytes:
    return U64.pack(inode.ino) + name


def _check_xattr(op: Op, inode: Inode, name: bytes, want: int, path: str | None) -> None:
    if not name or len(name) > NAME_MAX:
        raise fs_error(errno.ERANGE, path)
    if name in acl.NAMES:
        if inode.is_lnk:
            raise fs_error(errno.EOPNOTSUPP, path)
        if want == W_OK:  # reading an ACL needs no permission, as on Linux
            require_owner(op.cred, inode, path)
        return
    if not name.startswith(_XATTR_NAMESPACES):
        raise fs_error(errno.EOPNOTSUPP, path)
    if name.startswith(b"user."):
        if not (inode.is_reg or inode.is_dir):
            raise fs_error(errno.EPERM if want == W_OK else errno.ENODATA, path)
        require(op.cred, inode, want, path, op.txn)
    elif name.startswith(b"security."):
        # anyone reads them, as on Linux; root writes them, and a file's owner its capability:
        # the kernel checked CAP_SETFCAP in the caller's user namespace (a namespaced v3 one)
        if want == W_OK and not op.cred.is_root and not (name == CAPABILITY and op.cred.uid == inode.uid):
            raise fs_error(errno.EPERM, path)
    elif not op.cred.is_root:
        raise fs_error(errno.EPERM if want == W_OK else errno.ENODATA, path)


def getxattr(op: Op, inode: Inode, name: bytes, path: str | None = None) -> bytes:
    value = find_xattr(op, inode, name, path)
    if value is None:
        raise fs_error(errno.ENODATA, path)
    return value


def find_xattr(op: Op, inode: Inode, name: bytes, path: str | None = None) -> bytes | None:
    """getxattr's value, or None where getxattr raises ENODATA for a missing attribute."""
    _check_xattr(op, inode, name, R_OK, path)
    return op.txn.get("xattrs", _xattr_key(inode, name))


def listxattr(op: Op, inode: Inode) -> list[bytes]:
    prefix = U64.pack(inode.ino)
    names = [key[8:] for key, _ in op.txn.scan("xattrs", prefix)]
    if op.cred.is_root:
        return names
    return [n for n in names if n.startswith((b"user.", b"security.")) or n in acl.NAMES]


def setxattr(op: Op, inode: Inode, name: bytes, value: bytes, flags: int = 0, path: str | None = None) -> None:
    _check_xattr(op, inode, name, W_OK, path)
    if len(value) > XATTR_SIZE_MAX:
        raise fs_error(errno.E2BIG, path)
    key = _xattr_key(inode, name)
    old = op.txn.get("xattrs", key)
    exists = old is not None
    if name in acl.NAMES and _set_acl(op, inode, name, value, flags, exists, path):
        return
    if flags & XATTR_CREATE and exists:
        raise fs_error(errno.EEXIST, path)
    if flags & XATTR_REPLACE and not exists:
        raise fs_error(errno.ENODATA, path)
    # an attribute takes room as data does: its owner pays for it (a loop of setfattr fills a disk)
    charge = len(value) - len(old) if old is not None else len(name) + len(value)
    data.charge_owner(op.txn, inode.uid, charge, path, not op.cred.is_root)
    op.txn.put("xattrs", key, value)
    inode.ctime = op.now
    records.put_inode(op.txn, inode)
    op.receipt("vfs.setxattr", path or f"ino {inode.ino}", len(value), name=name.decode("utf-8", "replace"))
    op.changed(ChangeKind.ATTR, inode.ino)


def _set_acl(op: Op, inode: Inode, name: bytes, value: bytes, flags: int, exists: bool, path: str | None) -> bool:
    """Check an ACL as Linux does before it is stored; True when nothing is left to store:
    an access ACL the mode bits say in full becomes those bits (posix_acl_update_mode)."""
    entries = acl.parse(value, path)
    if name == acl.DEFAULT:
        if not inode.is_dir:
            raise fs_error(errno.EACCES, path)
        return False
    inode.mode, plain = acl.equivalent_mode(entries, inode.mode)
    if not op.cred.is_root and not op.cred.in_group(inode.gid):
        inode.mode &= ~st.S_ISGID
    if not plain:
        return False
    if flags & XATTR_REPLACE and not exists:
        raise fs_error(errno.ENODATA, path)
    if exists:
        old = op.txn.get("xattrs", _xattr_key(inode, name))
        op.txn.delete("xattrs", _xattr_key(inode, name))
        data.charge_owner(op.txn, inode.uid, -len(name) - len(old))
    inode.ctime = op.now
    records.put_inode(op.txn, inode)
    op.receipt("vfs.setxattr", path or f"ino {inode.ino}", len(value), name=name.decode())
    op.changed(ChangeKind.ATTR, inode.ino)
    return True


def removexattr(op: Op, inode: Inode, name: bytes, path: str | None = None) -> None:
    _check_xattr(op, inode, name, W_OK, path)
    key = _xattr_key(inode, name)
    old = op.txn.get("xattrs", key)
    if old is None:
        raise fs_error(errno.ENODATA, path)
    op.txn.delete("xattrs", key)
    data.charge_owner(op.txn, inode.uid, -len(name) - len(old))
    inode.ctime = op.now
    records.put_inode(op.txn, inode)
    op.receipt("vfs.removexattr", path or f"ino {inode.ino}", name=name.decode("utf-8", "replace"))
    op.changed(ChangeKind.ATTR, inode.ino)
