"""Who is asking: credentials and the POSIX permission check on stored mode bits."""

from __future__ import annotations

import errno
import stat as st
from typing import TYPE_CHECKING

from kfs.values import value_class
from kfs.vfs import acl
from kfs.vfs.errors import fs_error
from kfs.vfs.inode import Inode

if TYPE_CHECKING:
    from kfs.kstate import Txn

R_OK, W_OK, X_OK = 4, 2, 1


@value_class(frozen=True, slots=True)
class Cred:
    """A caller's uid, primary gid and supplementary groups."""

    uid: int = 0
    gid: int = 0
    groups: frozenset[int] = frozenset()  # one shared empty set: immutable, and no factory call per Cred

    @property
    def is_root(self) -> bool:
        return self.uid == 0

    def in_group(self, gid: int) -> bool:
        return gid == self.gid or gid in self.groups


ROOT = Cred(0, 0)


def allowed(cred: Cred, inode: Inode, want: int, txn: Txn | None = None) -> bool:
    """Whether `cred` may access `inode` for `want` (a mask of R_OK, W_OK, X_OK).

    Root may read and write anything and execute anything with an x bit (or any directory),
    as Linux allows with CAP_DAC_OVERRIDE. With `txn`, a POSIX ACL the inode carries decides
    for everyone but its owner (kfs/vfs/acl.py); the owner's bits are the mode's either way.
    """
    mode = inode.mode
    if cred.uid == 0:
        return not (want & X_OK and not st.S_ISDIR(mode) and not mode & 0o111)
    if txn is not None and cred.uid != inode.uid:
        entries = acl.access_entries(txn, inode.ino)
        if entries is not None:
            return acl.permits(entries, cred, inode, want)
    if cred.uid == inode.uid:
        bits = (mode >> 6) & 7
    elif cred.in_group(inode.gid):
        bits = (mode >> 3) & 7
    else:
        bits = mode & 7
    return bits & want == want


def require(cred: Cred, inode: Inode, want: int, path: str | bytes | None = None, txn: Txn | None = None) -> None:
    """Raise EACCES unless `allowed`."""
    if cred.uid == 0 and (not want & X_OK or inode.mode & 0o170000 == 0o040000):
        return  # what `allowed` says of root, without the call: every lookup and change asks
    if not allowed(cred, inode, want, txn):
        raise fs_error(errno.EACCES, path)


def require_owner(cred: Cred, inode: Inode, path: str | bytes | None = None) -> None:
    """Raise EPERM unless the caller owns the inode or is root (chmod, utime to a set time)."""
    if cred.uid != 0 and cred.uid != inode.uid:
        raise fs_error(errno.EPERM, path)


def sticky_denies(cred: Cred, parent: Inode, child: Inode) -> bool:
    """In a sticky directory only the owner of the entry, of the directory, or root may remove it."""
    return bool(
        parent.mode & st.S_ISVTX
        and cred.uid != 0
        and cred.uid != child.uid
        and cred.uid != parent.uid
    )
