"""fsck: check every invariant the VFS relies on, and repair what can be repaired.

Runs in one transaction (read-only, or one write transaction with --repair), so it sees and
fixes one consistent snapshot even while other processes keep using the state.
"""

from __future__ import annotations

import stat as st
from collections import Counter
from dataclasses import dataclass, field

from kfs.kstate import KState, Txn, quota
from kfs.kstate.schema import U64, U64x2
from kfs.vfs import handles, records
from kfs.vfs.data import DATA_BYTES
from kfs.vfs.inode import CHUNK_SIZE, ROOT_INO, Inode
from kfs.vfs.records import count_usage

LOST_FOUND = b"lost+found"


@dataclass
class Report:
    inodes: int = 0
    dirents: int = 0
    chunks: int = 0
    problems: list[str] = field(default_factory=list)
    repaired: bool = False

    @property
    def clean(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        state = "clean" if self.clean else f"{len(self.problems)} problem(s)" + (" repaired" if self.repaired else "")
        return f"{self.inodes} inodes, {self.dirents} entries, {self.chunks} chunks: {state}"


def check(state: KState, *, repair: bool = False) -> Report:
    if repair:
        return state.write(lambda txn: _check(txn, repair=True))
    with state.read() as txn:
        return _check(txn, repair=False)


def _check(txn: Txn, *, repair: bool) -> Report:
    report = Report(repaired=repair)
    problem = report.problems.append
    inodes: dict[int, Inode] = {}
    for key, raw in txn.scan("inodes"):
        ino = U64.unpack(key)[0]
        inodes[ino] = Inode.unpack(ino, raw)
    report.inodes = len(inodes)
    if ROOT_INO not in inodes or not inodes[ROOT_INO].is_dir:
        problem("root directory missing")
        return report  # nothing else can be judged without a root

    # -- directory entries --------------------------------------------------------------------
    links: Counter[int] = Counter()
    subdirs: Counter[int] = Counter()
    dir_of: dict[int, list[tuple[int, bytes]]] = {}
    for key, raw in list(txn.scan("dirents")):
        parent, cookie, name, child, kind = records.decode_entry(key, raw)
        report.dirents += 1
        where = _name(txn, parent, name)
        if parent not in inodes or not inodes[parent].is_dir:
            problem(f"entry {where} is in a missing directory {parent}")
            if repair:
                txn.delete("dirents", key)
            continue
        if cookie != records.name_cookie(name):
            problem(f"entry {where} is filed under the wrong hash")
            if repair:
                txn.delete("dirents", key)
                txn.put("dirents", records.dirent_key(parent, name), raw)
        if child not in inodes:
            problem(f"entry {where} names missing inode {child}")
            if repair:
                records.remove_entry(txn, parent, name)
            continue
        if inodes[child].kind != kind:
            problem(f"entry {where} records the wrong file type")
            if repair:
                txn.put("dirents", records.dirent_key(parent, name), records.encode_entry(child, inodes[child].kind))
        links[child] += 1
        if inodes[child].is_dir:
            subdirs[parent] += 1
            dir_of.setdefault(child, []).append((parent, name))

    # -- each inode ------------------------------------------------------------------------
    orphans = {U64.unpack(k)[0] for k, _ in txn.scan("orphans")}
    for ino, inode in list(inodes.items()):
        if inode.is_dir:
            names = dir_of.get(ino, [])
            if ino != ROOT_INO and len(names) > 1:
                problem(f"directory {ino} has {len(names)} names")
            if ino != ROOT_INO and names:
                raw = txn.get("parents", U64.pack(ino))
                parent, name = names[0]
                if raw != U64.pack(parent) + name:
                    problem(f"directory {_name(txn, parent, name)} has a wrong parent record")
                    if repair:
                        records.put_parent(txn, ino, parent, name)
            want = 2 + subdirs[ino]
        else:
            want = links[ino]
        reachable = ino == ROOT_INO or links[ino] > 0
        if not reachable:
            if ino in orphans:
                continue  # unlinked but open: data lives until the last close
            problem(f"inode {ino} is unreachable (no entry names it)")
            if repair:
                want = _reconnect(txn, inodes, inode, want)
            else:
                continue
        if inode.nlink != want:
            problem(f"inode {ino} has nlink {inode.nlink}, entries say {want}")
            if repair:
                inode.nlink = want
                records.put_inode(txn, inode)
        has_target = txn.get("symlinks", U64.pack(ino)) is not None
        if inode.is_lnk != has_target:
            problem(f"inode {ino}: symlink record {'missing' if inode.is_lnk else 'on a non-symlink'}")
            if repair and has_target:
                txn.delete("symlinks", U64.pack(ino))
    for ino in orphans - inodes.keys():
        problem(f"orphan record for missing inode {ino}")
        if repair:
            txn.delete("orphans", U64.pack(ino))

    # -- file data -------------------------------------------------------------------------
    stored = 0
    for key, chunk in list(txn.scan("chunks")):
        ino, index = U64x2.unpack(key)
        report.chunks += 1
        inode = inodes.get(ino)
        if inode is None or not inode.is_reg:
            problem(f"chunk {index} of inode {ino} belongs to no regular file")
            if repair:
                txn.delete("chunks", key)
            continue
        end = index * CHUNK_SIZE + len(chunk)
        if len(chunk) > CHUNK_SIZE or end > inode.size:
            problem(f"chunk {index} of inode {ino} extends past the file size {inode.size}")
            if repair:
                keep = max(0, min(CHUNK_SIZE, inode.size - index * CHUNK_SIZE))
                chunk = chunk[:keep]
                if chunk:
                    txn.put("chunks", key, chunk)
                else:
                    txn.delete("chunks", key)
        stored += len(chunk)
    for key, _ in list(txn.scan("xattrs")):
        if U64.unpack_from(key)[0] not in inodes:
            problem(f"extended attribute of missing inode {U64.unpack_from(key)[0]}")
            if repair:
                txn.delete("xattrs", key)
    if txn.counter(DATA_BYTES) != stored:
        problem(f"stored-bytes counter says {txn.counter(DATA_BYTES)}, chunks hold {stored}")
        if repair:
            txn.put("meta", DATA_BYTES, U64.pack(stored))
    counted, files = count_usage(txn)
    if quota.charged(txn) != counted:
        problem(f"per-owner use counters say {_uses(quota.charged(txn))}, the data is {_uses(counted)}")
    if quota.charged(txn, quota.FILES) != files:
        problem(f"per-owner file counters say {_uses(quota.charged(txn, quota.FILES))}, the files are {_uses(files)}")
    if repair and (quota.charged(txn) != counted or quota.charged(txn, quota.FILES) != files):
        quota.store(txn, counted, files)
    if txn.counter(b"next_ino") < max(inodes):
        problem("inode counter is behind the highest inode number")
        if repair:
            txn.put("meta", b"next_ino", U64.pack(max(inodes)))
    if repair:
        handles.recover(txn)
    return report


def _reconnect(txn: Txn, inodes: dict[int, Inode], inode: Inode, want: int) -> int:
    """Give an unreachable inode a name in /lost+found, as e2fsck does; returns its new nlink."""
    lf = records.lookup_entry(txn, ROOT_INO, LOST_FOUND)
    if lf is None:
        lf_inode = records.new_inode(txn, st.S_IFDIR | 0o700, 0, 0, inode.ctime)
        records.add_entry(txn, ROOT_INO, LOST_FOUND, lf_inode)
        root = inodes[ROOT_INO]
        root.nlink += 1
        records.put_inode(txn, root)
        inodes[lf_inode.ino] = lf_inode
        lf = lf_inode.ino
    records.add_entry(txn, lf, b"#%d" % inode.ino, inode)
    if inode.is_dir:
        lf_dir = records.get_inode(txn, lf)
        lf_dir.nlink += 1
        records.put_inode(txn, lf_dir)
        return want
    return 1


def _name(txn: Txn, parent: int, name: bytes) -> str:
    return records.child_path(txn, parent, name)


def _uses(counts: dict[int, int]) -> str:
    return ", ".join(f"uid {uid}: {used}" for uid, used in sorted(counts.items())) or "nothing"
