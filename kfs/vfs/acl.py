"""POSIX ACLs as Linux stores them: the `system.posix_acl_access` / `_default` xattr values.

The mount asks the kernel to enforce them (FUSE_POSIX_ACL: the kernel reads the access ACL
through getxattr and checks it itself, with default_permissions); what is left to the file
system, as for any FUSE file system, is what Linux's own file systems do in posix_acl.c:
an access ACL that says no more than the mode bits is folded into them (`equivalent_mode`),
the mode and the ACL stay in step on chmod (`chmod`), and a directory's default ACL is
inherited by what is created in it (`inherit`).

The value is little-endian: a u32 version (2), then entries of u16 tag, u16 perm, u32 id.
"""

from __future__ import annotations

import errno
import struct
from typing import TYPE_CHECKING

from kfs.kstate.schema import U64
from kfs.vfs.errors import fs_error

if TYPE_CHECKING:
    from kfs.kstate import Txn
    from kfs.vfs.cred import Cred
    from kfs.vfs.inode import Inode

ACCESS = b"system.posix_acl_access"
DEFAULT = b"system.posix_acl_default"
NAMES = (ACCESS, DEFAULT)

VERSION = 2
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
UNDEFINED_ID = 0xFFFFFFFF
_HEADER = struct.Struct("<I")
_ENTRY = struct.Struct("<HHI")
_ORDER = {USER_OBJ: 0, USER: 1, GROUP_OBJ: 2, GROUP: 3, MASK: 4, OTHER: 5}

Entry = tuple[int, int, int]  # tag, perm (rwx bits), id


def parse(value: bytes, path: str | None = None) -> list[Entry]:
    """The entries of an xattr value, checked as Linux's posix_acl_valid checks them (EINVAL)."""
    if len(value) < _HEADER.size or (len(value) - _HEADER.size) % _ENTRY.size:
        raise fs_error(errno.EINVAL, path)
    if _HEADER.unpack_from(value)[0] != VERSION:
        raise fs_error(errno.EOPNOTSUPP, path)
    entries = [_ENTRY.unpack_from(value, at) for at in range(_HEADER.size, len(value), _ENTRY.size)]
    _validate(entries, path)
    return entries


def _validate(entries: list[Entry], path: str | None) -> None:
    seen: set[tuple[int, int]] = set()
    last = -1
    for tag, perm, id_ in entries:
        if tag not in _ORDER or perm & ~7:
            raise fs_error(errno.EINVAL, path)
        order = _ORDER[tag]
        named = tag in (USER, GROUP)
        if order < last or (not named and order == last) or (tag, id_ if named else 0) in seen:
            raise fs_error(errno.EINVAL, path)
        seen.add((tag, id_ if named else 0))
        last = order
    tags = {tag for tag, _, _ in entries}
    if not {USER_OBJ, GROUP_OBJ, OTHER} <= tags:
        raise fs_error(errno.EINVAL, path)
    if tags & {USER, GROUP} and MASK not in tags:
        raise fs_error(errno.EINVAL, path)


def pack(entries: list[Entry]) -> bytes:
    """The xattr value of `entries` (in the order `parse` requires)."""
    return _HEADER.pack(VERSION) + b"".join(
        _ENTRY.pack(tag, perm, id_ if tag in (USER, GROUP) else UNDEFINED_ID) for tag, perm, id_ in entries
    )


def equivalent_mode(entries: list[Entry], mode: int) -> tuple[int, bool]:
    """The mode `entries` set on a file of `mode`, and whether the ACL says no more than it
    (then Linux stores no access ACL at all: posix_acl_update_mode)."""
    perm = {tag: p for tag, p, _ in entries}
    group = perm[MASK] if MASK in perm else perm[GROUP_OBJ]
    new = (mode & ~0o777) | perm[USER_OBJ] << 6 | group << 3 | perm[OTHER]
    return new, len(entries) == 3


def chmod(entries: list[Entry], mode: int) -> list[Entry]:
    """The access ACL after chmod to `mode` (posix_acl_chmod): owner, mask (else owning group)
    and other take the new bits, named entries stay."""
    has_mask = any(tag == MASK for tag, _, _ in entries)
    bits = {USER_OBJ: mode >> 6 & 7, MASK: mode >> 3 & 7, OTHER: mode & 7}
    if not has_mask:
        bits[GROUP_OBJ] = mode >> 3 & 7
    return [(tag, bits.get(tag, perm), id_) for tag, perm, id_ in entries]


def inherit(default: list[Entry], mode: int) -> tuple[int, list[Entry]]:
    """The mode and access ACL of a file created with `mode` in a directory whose default ACL
    is `default` (posix_acl_create_masq: each class keeps what both allow)."""
    has_mask = any(tag == MASK for tag, _, _ in default)
    out: list[Entry] = []
    new = mode & ~0o777
    for tag, perm, id_ in default:
        if tag == USER_OBJ:
            perm &= mode >> 6 & 7
            new |= perm << 6
        elif tag == OTHER:
            perm &= mode & 7
            new |= perm
        elif tag == MASK or (tag == GROUP_OBJ and not has_mask):
            perm &= mode >> 3 & 7
            new |= perm << 3
        out.append((tag, perm, id_))
    return new, out


def permits(entries: list[Entry], cred: Cred, inode: Inode, want: int) -> bool:
    """Whether the ACL lets `cred` (not root) have `want` on `inode` (posix_acl_permission)."""
    mask = next((perm for tag, perm, _ in entries if tag == MASK), 7)
    group_match = False
    for tag, perm, id_ in entries:
        if tag == USER_OBJ and cred.uid == inode.uid:
            return perm & want == want
        if tag == USER and id_ == cred.uid:
            return perm & mask & want == want
        if (tag == GROUP_OBJ and cred.in_group(inode.gid)) or (tag == GROUP and cred.in_group(id_)):
            if perm & mask & want == want:
                return True
            group_match = True
        if tag == OTHER:
            return not group_match and perm & want == want
    return False


def access_entries(txn: Txn, ino: int) -> list[Entry] | None:
    """The stored access ACL of `ino`, if it has one (the permission check's second look)."""
    value = txn.get("xattrs", U64.pack(ino) + ACCESS)
    return None if value is None else parse(bytes(value))
