"""How file attributes look to a Unix user: mode strings, owner names, GNU stat's default layout.

Owner and group names come from K's own user database, never the host's: root is uid/gid 0,
and each agent record (kfs.agents.records) names its uid and a group of its own name at its gid.
An id nobody has is shown as GNU shows it (ls the number, stat UNKNOWN): callers get None.
"""

from __future__ import annotations

import json
import math
import stat as st
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field

from kfs.kstate import KState
from kfs.vfs.inode import Inode

_DEVICES = (st.S_IFCHR, st.S_IFBLK)
_TYPE_NAMES = {
    st.S_IFREG: "regular file",
    st.S_IFDIR: "directory",
    st.S_IFLNK: "symbolic link",
    st.S_IFIFO: "fifo",
    st.S_IFSOCK: "socket",
    st.S_IFCHR: "character special file",
    st.S_IFBLK: "block special file",
}


def mode_string(mode: int) -> str:
    """`-rwxr-xr-x` as ls -l and stat %A print it (setuid s/S, sticky t/T)."""
    return st.filemode(mode)


def type_name(inode: Inode) -> str:
    if inode.is_reg and inode.size == 0:
        return "regular empty file"
    return _TYPE_NAMES.get(inode.kind, "weird file")


# The agent records' key prefix in the "keys" database, and the meta counter their creation and
# removal bump. Here rather than in kfs.agents so that the shell's tools read names without
# importing the SSH side (kfs.agents' package imports asyncssh).
AGENT_RECORDS = b"agent/"
AGENTS_GENERATION = b"agents_generation"
AGENT_SETTINGS = b"agentset/"  # an agent's own settings (kshell.delegate.config), removed with it
ROOT_ACCOUNT = ("root", 0, 0, "/root")


@dataclass(frozen=True, slots=True)
class Accounts:
    """Names and ids as K knows them: root, then each agent and its own group."""

    users: dict[int, str] = field(default_factory=dict)
    groups: dict[int, str] = field(default_factory=dict)
    uids: dict[str, int] = field(default_factory=dict)
    gids: dict[str, int] = field(default_factory=dict)
    primary: dict[str, int] = field(default_factory=dict)  # user name -> its primary gid

    @classmethod
    def of(cls, people: Iterable[tuple[str, int, int, str]]) -> Accounts:
        """From (name, uid, gid, home) rows, root first; the first row to claim an id names it."""
        made = cls()
        for name, uid, gid, _home in [ROOT_ACCOUNT, *people]:
            made.users.setdefault(uid, name)
            made.groups.setdefault(gid, name)
            made.uids.setdefault(name, uid)
            made.gids.setdefault(name, gid)
            made.primary.setdefault(name, gid)
        return made


ROOT_ONLY = Accounts.of([])
# per state: (generation, accounts). Re-read when the generation moved: an agent was created or
# removed, by this process or another one.
_cache: weakref.WeakKeyDictionary[KState, tuple[int, Accounts]] = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()


def accounts(state: KState | None) -> Accounts:
    """K's user database for `state` (root alone for None); one meta read when nothing changed."""
    if state is None:
        return ROOT_ONLY
    with state.read() as txn:
        generation = txn.counter(AGENTS_GENERATION)
        with _cache_lock:
            cached = _cache.get(state)
        if cached is not None and cached[0] == generation:
            return cached[1]
        rows = []
        for _, raw in txn.scan("keys", AGENT_RECORDS):
            rec = json.loads(raw)
            rows.append((rec["name"], rec["uid"], rec["gid"], rec["home"]))
    made = Accounts.of(rows)
    with _cache_lock:
        _cache[state] = (generation, made)
    return made


def user_name(state: KState | None, uid: int) -> str | None:
    """The name of `uid` in K (root, an agent), or None when no one has it."""
    return accounts(state).users.get(uid)


def group_name(state: KState | None, gid: int) -> str | None:
    """The name of group `gid` in K (root, an agent's own group), or None."""
    return accounts(state).groups.get(gid)


def timestamp(ns: int) -> str:
    """`2026-11-22 00:25:26.123456789 +0000`, local time, as GNU stat prints it."""
    secs, frac = divmod(ns, 1_000_000_000)
    local = time.localtime(secs)
    return time.strftime("%Y-%m-%d %H:%M:%S", local) + f".{frac:09d} " + time.strftime("%z", local)


def stat_text(name: str, inode: Inode, target: str | None = None, device: str = "0,0",
              state: KState | None = None) -> str:
    """GNU `stat FILE` default output for one file; owner names from `state`'s agents."""
    shown = f"{name} -> {target}" if target is not None else name
    kind = type_name(inode)
    owner = user_name(state, inode.uid) or "UNKNOWN"
    group = group_name(state, inode.gid) or "UNKNOWN"
    lines = [
        f"  File: {shown}",
        f"  Size: {inode.size:<10}\tBlocks: {inode.blocks:<10} IO Block: 4096   {kind}",
        f"Device: {device}\tInode: {inode.ino:<11} Links: {inode.nlink}"
        + (f"     Device type: {inode.rdev >> 8},{inode.rdev & 0xFF}" if inode.kind in _DEVICES else ""),
        f"Access: ({inode.perm:04o}/{mode_string(inode.mode)})  "
        f"Uid: ({inode.uid:5}/{owner:>8})   Gid: ({inode.gid:5}/{group:>8})",
        f"Access: {timestamp(inode.atime)}",
        f"Modify: {timestamp(inode.mtime)}",
        f"Change: {timestamp(inode.ctime)}",
        f" Birth: {timestamp(inode.btime)}",
    ]
    return "\n".join(lines) + "\n"


def human_size(n: int, si: bool = False) -> str:
    """A size as `ls -h`/`du -h` print it: rounded up, one decimal below 10 (1.5K, 12K, 4.0M)."""
    base = 1000 if si else 1024
    if n < base:
        return str(n)
    units = "kMGTPEZY" if si else "KMGTPEZY"
    value = float(n)
    for unit in units:
        value /= base
        if value < 10:
            tenths = math.ceil(value * 10 - 1e-9)
            if tenths < 100:
                return f"{tenths // 10}.{tenths % 10}{unit}"
            value = 10.0
        whole = math.ceil(value - 1e-9)
        if whole < base:
            return f"{whole}{unit}"
    return f"{math.ceil(value)}{units[-1]}"
