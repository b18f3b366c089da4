"""How file attributes look to a Unix user: mode strings, sizes, GNU stat's default layout.

Owner and group names come from K's own user database (kfs.accounts), never the host's.
"""

from __future__ import annotations

import math
import stat as st
import time

from kfs.accounts import accounts, group_name, user_name  # noqa: F401 (the names ls and stat show; tools take them here)
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
