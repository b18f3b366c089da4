"""ls: GNU's listing (one entry a line, as on a pipe) with the long format's columns."""

from __future__ import annotations

import contextlib
import stat as st
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from kfs.format import group_name, human_size, mode_string, user_name
from kfs.vfs.inode import Inode
from kshell.exec import devices
from kshell.tools.clock import zone
from kshell.tools.files.names import fail, join
from kshell.tools.options import NONE, OPTIONAL, REQUIRED, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

SIX_MONTHS_NS = 31556952 // 2 * 1_000_000_000

LONG = {
    "all": ("a", NONE),
    "almost-all": ("A", NONE),
    "classify": ("F", NONE),
    "recursive": ("R", NONE),
    "directory": ("d", NONE),
    "human-readable": ("h", NONE),
    "inode": ("i", NONE),
    "reverse": ("r", NONE),
    "color": ("color", OPTIONAL),
    "numeric-uid-gid": ("n", NONE),
    "dereference": ("L", NONE),
    "size": ("s", NONE),
    "indicator-style": ("indicator-style", REQUIRED),
    "group-directories-first": ("gdf", NONE),
}


@dataclass
class Entry:
    name: str  # as shown
    path: str  # to reach it
    inode: Inode | None  # lstat (or stat when followed); None when it vanished
    target: str | None = None  # a symlink's contents
    target_inode: Inode | None = None


class Lister:
    def __init__(self, sh: Interp, flags: set[str], sort: str) -> None:
        self.sh = sh
        self.fs = sh.fs
        self.flags = flags
        self.sort = sort
        self.long = "l" in flags or "n" in flags
        self.status = 0
        self.first = True  # nothing printed yet (for the blank lines between directories)
        self.now = time.time_ns()
        self.tz = zone(sh)
        # per-command caches: owner and group names, mode strings and dates repeat across entries
        self.users: dict[int, str] = {}
        self.groups: dict[int, str] = {}
        self.modes: dict[int, str] = {}
        self.dates: dict[int, str] = {}

    def out(self, text: str) -> None:
        self.sh.out(text)

    # -- ordering and one line per entry --------------------------------------------------------

    def ordered(self, entries: list[Entry]) -> list[Entry]:
        if self.sort == "none":
            return list(entries)
        entries = sorted(entries, key=lambda e: e.name.encode("utf-8", "surrogateescape"))
        if self.sort == "t":
            entries.sort(key=lambda e: -(e.inode.mtime if e.inode else 0))
        elif self.sort == "S":
            entries.sort(key=lambda e: -(e.inode.size if e.inode else 0))
        if "gdf" in self.flags:
            entries.sort(key=lambda e: not (e.inode and self.is_dir(e)))
        if "r" in self.flags:
            entries.reverse()
        return entries

    def is_dir(self, e: Entry) -> bool:
        if e.inode is None:
            return False
        if e.inode.is_dir:
            return True
        return bool(e.inode.is_lnk and e.target_inode is not None and e.target_inode.is_dir)

    def indicator(self, inode: Inode | None) -> str:
        if inode is None or "F" not in self.flags:
            return ""
        if inode.is_dir:
            return "/"
        if inode.is_lnk:
            return "@"
        kind = inode.kind
        if kind == st.S_IFIFO:
            return "|"
        if kind == st.S_IFSOCK:
            return "="
        if inode.is_reg and inode.mode & 0o111:
            return "*"
        return ""

    def fill_link(self, e: Entry) -> None:
        if e.inode is not None and e.inode.is_lnk:
            try:
                e.target = devices.readlink(self.sh, e.path)
                e.target_inode = devices.stat(self.sh, e.path)
            except OSError:
                pass

    def print_group(self, entries: list[Entry], total: bool) -> None:
        lines: list[str] = []
        if not self.long:
            for e in entries:
                ino = f"{e.inode.ino} " if "i" in self.flags and e.inode else ""
                blocks = f"{_kblocks(e.inode)} " if "s" in self.flags and e.inode else ""
                lines.append(f"{ino}{blocks}{e.name}{self.indicator(e.inode)}\n")
            if total and "s" in self.flags:
                lines.insert(0, f"total {self.total(entries)}\n")
            self.out("".join(lines))
            return
        rows = []
        numeric = "n" in self.flags
        show_ino = "i" in self.flags
        show_blocks = "s" in self.flags
        users, groups, modes, dates = self.users, self.groups, self.modes, self.dates
        for e in entries:
            i = e.inode
            if i is None:
                continue
            if numeric:
                owner, group = str(i.uid), str(i.gid)
            else:
                owner = users.get(i.uid)
                if owner is None:
                    owner = users[i.uid] = user_name(self.sh.fs.vfs.state, i.uid) or str(i.uid)
                group = groups.get(i.gid)
                if group is None:
                    group = groups[i.gid] = group_name(self.sh.fs.vfs.state, i.gid) or str(i.gid)
            mode = modes.get(i.mode)
            if mode is None:
                mode = modes[i.mode] = mode_string(i.mode)
            date = dates.get(i.mtime)
            if date is None:
                date = dates[i.mtime] = self.date(i.mtime)
            if i.kind in (st.S_IFCHR, st.S_IFBLK):
                size = f"{i.rdev >> 8}, {i.rdev & 0xFF}"
            else:
                size = human_size(i.size) if "h" in self.flags else str(i.size)
            name = e.name
            if i.is_lnk and e.target is not None:
                name += (
                    " -> "
                    + e.target
                    + (self.indicator(e.target_inode) if e.target_inode and not e.target_inode.is_lnk else "")
                )
            elif not i.is_lnk:
                name += self.indicator(i)
            rows.append(
                (
                    str(i.ino) if show_ino else "",
                    str(_kblocks(i)) if show_blocks else "",
                    mode,
                    str(i.nlink),
                    owner,
                    group,
                    size,
                    date,
                    name,
                )
            )
        w = [max(map(len, col), default=0) for col in zip(*rows)] if rows else [0] * 9
        if total:
            lines.append(f"total {self.total(entries)}\n")
        w3, w4, w5, w6 = w[3], w[4], w[5], w[6]
        for r in rows:
            pre = (f"{r[0]:>{w[0]}} " if show_ino else "") + (f"{r[1]:>{w[1]}} " if show_blocks else "")
            # GNU pads names on the right and right-aligns bare ids (-n, or an id without a name;
            # no K name is all digits)
            owner = f"{r[4]:>{w4}}" if r[4].isdigit() else f"{r[4]:<{w4}}"
            group = f"{r[5]:>{w5}}" if r[5].isdigit() else f"{r[5]:<{w5}}"
            lines.append(f"{pre}{r[2]} {r[3]:>{w3}} {owner} {group} {r[6]:>{w6}} {r[7]} {r[8]}\n")
        self.out("".join(lines))

    def total(self, entries: list[Entry]) -> str:
        blocks = sum(_blocks(e.inode) for e in entries if e.inode is not None)
        if "h" in self.flags:
            return human_size(blocks * 512)
        return str((blocks + 1) // 2)

    def date(self, ns: int) -> str:
        when = datetime.fromtimestamp(ns // 1_000_000_000, self.tz)
        recent = self.now - SIX_MONTHS_NS < ns <= self.now
        fmt = "%b %e %H:%M" if recent else "%b %e  %Y"
        return when.strftime(fmt)

    # -- operands and directories --------------------------------------------------------------

    def run(self, operands: list[str]) -> int:
        explicit = bool(operands)
        operands = operands or ["."]
        files: list[Entry] = []
        dirs: list[Entry] = []
        follow_cl = not (self.long or "d" in self.flags or "F" in self.flags) or "L" in self.flags
        for path in operands:
            try:
                inode = devices.stat(self.sh, path, follow=False)
            except OSError as e:
                fail(self.sh, "ls", f"cannot access {shell_quote(path)}", e)
                self.status = 2
                continue
            entry = Entry(path, path, inode)
            self.fill_link(entry)
            if (
                inode.is_lnk
                and e_target_dir(entry)
                and ("L" in self.flags or (follow_cl and "d" not in self.flags))
                or inode.is_lnk
                and "L" in self.flags
                and entry.target_inode is not None
            ):
                entry.inode = entry.target_inode
            if "d" not in self.flags and entry.inode is not None and entry.inode.is_dir:
                dirs.append(entry)
            else:
                files.append(entry)
        if files:
            self.print_group(self.ordered(files), total=False)
            self.first = False
        headers = explicit and (len(operands) > 1 or "R" in self.flags) or "R" in self.flags
        for d in self.ordered(dirs):
            self.list_dir(d.path, headers, top=True)
        return self.status

    def list_dir(self, path: str, header: bool, top: bool) -> None:
        try:
            listing = devices.scandir(self.sh, path)  # /dev and /dev/fd are the shell's
        except OSError as e:
            fail(self.sh, "ls", f"cannot open directory {shell_quote(path)}", e)
            self.status = 2 if top else max(self.status, 1)
            return
        if header:
            self.out(("" if self.first else "\n") + f"{path}:\n")
        self.first = False
        entries = []
        if "a" in self.flags:
            for dot in (".", ".."):
                with contextlib.suppress(OSError):
                    entries.append(Entry(dot, join(path, dot), devices.stat(self.sh, join(path, dot))))
        for name, inode in listing:
            if name.startswith(".") and not ({"a", "A"} & self.flags):
                continue
            entries.append(Entry(name, join(path, name), inode))
        for e in entries:
            if self.long or "F" in self.flags:
                self.fill_link(e)
            if "L" in self.flags and e.target_inode is not None:
                e.inode = e.target_inode
        entries = self.ordered(entries)
        self.print_group(entries, total=True)
        if "R" in self.flags:
            for e in entries:
                if e.inode is not None and e.inode.is_dir and e.name not in (".", ".."):
                    self.list_dir(e.path, True, top=False)


def e_target_dir(e: Entry) -> bool:
    return e.target_inode is not None and e.target_inode.is_dir


def _blocks(inode: Inode) -> int:
    """512-byte blocks as the tools show them: a symlink's target lives in the inode (0 blocks)."""
    return 0 if inode.is_lnk or inode.is_dir and inode.size == 0 else inode.blocks


def _kblocks(inode: Inode) -> int:
    return (_blocks(inode) + 1) // 2


@tool("ls", 2)
def ls(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "aAlFR1dhtSrinLsUfC", LONG)
    flags: set[str] = set()
    sort = "name"
    for key, value in opts:
        if key in ("t", "S"):
            sort = key
        elif key == "U":
            sort = "none"
        elif key == "color":
            if value not in (None, "never", "no", "none", "auto", "tty", "if-tty"):
                sh.write_err(
                    f"ls: invalid argument {shell_quote(value or '')} for '--color'\n"
                    "Valid arguments are:\n  - 'always', 'yes', 'force'\n  - 'never', 'no', 'none'\n"
                    "  - 'auto', 'tty', 'if-tty'\nTry 'ls --help' for more information.\n"
                )
                return 1
        elif key == "1" or key == "C":
            continue
        elif key == "indicator-style":
            if value == "classify":
                flags.add("F")
        elif key == "a":
            flags.discard("A")
            flags.add("a")
        elif key == "A":
            flags.discard("a")
            flags.add("A")
        else:
            flags.add(key)
    return Lister(sh, flags, sort).run(operands)
