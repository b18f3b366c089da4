"""A fork's changes written into its parent's tree, inside the merge's one transaction, with the
VFS's own operations (links, sizes, quotas and the change feed kept as any write keeps them).

Entries the fork added or replaced come first, then the ones it removed, then the base files it
changed in place. A base file the fork gave a new name keeps its identity (a link, then the old
name's removal: a rename); a base directory it moved is moved; what the fork made is copied
(hard links among its files stay links). Of a base file changed in place only the chunks the
fork wrote are written again. What it writes is charged to the files' owners (kfs.kstate.quota)
and never refused for it: a merge is the operator's, as root's writes are, and what the fork
holds was bounded by its owner's quota when it was written."""

from __future__ import annotations

import stat as st
import time
from typing import TYPE_CHECKING

from kfs.journal import ChangeKind
from kfs.kstate import Txn
from kfs.kstate.layers import HERE, LAYERED, OWN, prefix
from kfs.kstate.schema import U64, U64x2
from kfs.vfs import ROOT, Inode, data, namespace, records
from kfs.vfs.inode import CHUNK_SIZE
from kfs.vfs.ops import Op

if TYPE_CHECKING:
    from kfs.forks import _Changes


def apply(c: _Changes, target: Txn, by: str) -> None:
    op = Op(target, ROOT, by, 0, time.time_ns())
    copied: dict[int, int] = {}  # a file the fork made -> its copy (the fork's hard links stay links)
    for e in c.entries:
        if e.child:
            if records.lookup_entry(target, e.parent, e.name) is not None:
                _remove(op, e.parent, e.name)
            _place(c, op, e.child, e.parent, e.name, copied)
    for e in c.entries:
        if not e.child and records.find_inode(target, e.parent) is not None \
                and records.lookup_entry(target, e.parent, e.name) is not None:
            _remove(op, e.parent, e.name)
    for ino in c.changed_files():
        if records.find_inode(target, ino) is not None:
            _update(c, op, ino)


def _place(c: _Changes, op: Op, child: int, parent: int, name: bytes, copied: dict[int, int]) -> None:
    """Make `name` in the parent's directory `parent` what `child` is in the fork."""
    txn = op.txn
    if child in copied:
        namespace.link(op, records.get_inode(txn, copied[child]), records.get_inode(txn, parent), name)
        return
    there = records.find_inode(txn, child) if child < c.first else None
    if there is not None and there.nlink:
        if there.is_dir:  # a base directory the fork moved here
            above, old = records.dir_parent(txn, child)
            namespace.rename(op, records.get_inode(txn, above), old, records.get_inode(txn, parent), name)
        else:
            namespace.link(op, there, records.get_inode(txn, parent), name)
        return
    mine = records.get_inode(c.mine, child)
    target = records.read_symlink(c.mine, child) if st.S_ISLNK(mine.mode) else None
    made = namespace.make_node(op, records.get_inode(txn, parent), name, mine.mode, rdev=mine.rdev, target=target)
    copied[child] = made.ino
    if st.S_ISREG(mine.mode):
        for key, chunk in c.mine.scan("chunks", U64.pack(child)):
            data.write(txn, made, U64x2.unpack(key)[1] * CHUNK_SIZE, chunk, check=False)
        data.truncate(txn, made, mine.size)
        records.put_inode(txn, made)
    for key, value in c.mine.scan("xattrs", U64.pack(child)):
        txn.put("xattrs", U64.pack(made.ino) + key[8:], value)
    data.charge_owner(txn, made.uid, data.xattr_bytes(txn, made.ino), check=False)  # as setxattr would
    if mine.is_dir:
        for sub, grandchild, _, _ in records.list_entries(c.mine, child):
            _place(c, op, grandchild, made.ino, sub, copied)
    _attributes(txn, made.ino, mine)


def _attributes(txn: Txn, ino: int, mine: Inode) -> None:
    """The fork's owner, mode and times on the parent's `ino` (links and size as they are)."""
    now = records.get_inode(txn, ino)
    data.change_owner(txn, now, mine.uid)
    now.mode, now.uid, now.gid, now.atime, now.mtime = mine.mode, mine.uid, mine.gid, mine.atime, mine.mtime
    records.put_inode(txn, now)


def _remove(op: Op, parent: int, name: bytes) -> None:
    """Remove the parent's entry `name` of `parent`, a directory with all it holds."""
    txn = op.txn
    child = records.lookup_entry(txn, parent, name)
    assert child is not None
    inode = records.get_inode(txn, child)
    if inode.is_dir:
        for sub, _, _, _ in records.list_entries(txn, child):
            _remove(op, child, sub)
        namespace.rmdir(op, records.get_inode(txn, parent), name)
    else:
        namespace.unlink(op, records.get_inode(txn, parent), name)


def _update(c: _Changes, op: Op, ino: int) -> None:
    """A base file (or directory's owner and mode) the fork changed in place."""
    txn = op.txn
    mine = records.get_inode(c.mine, ino)
    if not mine.is_dir and st.S_ISREG(mine.mode):
        inode = records.get_inode(txn, ino)
        head = prefix(c.fork, LAYERED["chunks"]) + U64.pack(ino)
        rows = [(U64x2.unpack(key[9:])[1], row) for key, row in c.txn.scan("layers", head) if row[0] & OWN]
        if any(not row[0] & HERE for _, row in rows):  # a chunk gone (truncated): write it whole
            data.truncate(txn, inode, 0)
            rows = [(U64x2.unpack(key)[1], b"\x02" + chunk) for key, chunk in c.mine.scan("chunks", U64.pack(ino))]
        else:
            data.truncate(txn, inode, min(inode.size, mine.size))
        for index, row in rows:
            if index * CHUNK_SIZE < mine.size:
                data.write(txn, inode, index * CHUNK_SIZE, row[1:], check=False)
        data.truncate(txn, inode, mine.size)
        records.put_inode(txn, inode)
        op.changed(ChangeKind.DATA, ino)
    if any(row[0] & OWN for _, row in c.txn.scan("layers", prefix(c.fork, LAYERED["xattrs"]) + U64.pack(ino))):
        owner = records.get_inode(txn, ino).uid
        data.charge_owner(txn, owner, -data.xattr_bytes(txn, ino))
        for key in txn.scan_keys("xattrs", U64.pack(ino)):
            txn.delete("xattrs", key)
        for key, value in c.mine.scan("xattrs", U64.pack(ino)):
            txn.put("xattrs", key, value)
        data.charge_owner(txn, owner, data.xattr_bytes(txn, ino), check=False)
    _attributes(txn, ino, mine)
    op.changed(ChangeKind.ATTR, ino)
