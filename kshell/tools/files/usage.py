"""du (-a -b -c -d/--max-depth -h -k -m -s --apparent-size) and df (-h -k, FILE...): space as
the VFS accounts it.

du counts each inode's st_blocks (4 KiB pages, as the VFS reports them; a directory is one
page, as on ext4; a symlink none) once per hard link set, and with several operands once per
inode. df reports the filesystems of the session's view, as `df` lists mounts: K's own ("kfs",
mounted on /; its size is the byte quota, or the store's map size when no quota is set, and its
use the stored bytes) and each of the image's drives (its kind, on its path: a memory drive's
size is its max_bytes, a host drive's that of the host filesystem holding it)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.tools.files.names import fail, join
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kfs.vfs.inode import Inode
    from kshell.core.context import ToolContext

DU_LONG = {
    "all": ("a", NONE),
    "apparent-size": ("A", NONE),
    "bytes": ("b", NONE),
    "total": ("c", NONE),
    "max-depth": ("d", REQUIRED),
    "human-readable": ("h", NONE),
    "summarize": ("s", NONE),
    "null": ("0", NONE),
}


def human(n: int) -> str:
    """GNU's -h rendering: powers of 1024, rounded up, one decimal below 10."""
    if n < 1024:
        return str(n)
    value = float(n)
    for unit in "KMGTPEZY":
        value /= 1024
        if value < 10:
            tenths = math.ceil(value * 10 - 1e-9)
            if tenths < 100:
                return f"{tenths // 10}.{tenths % 10}{unit}"
            value = 10.0
        whole = math.ceil(value - 1e-9)
        if whole < 1024:
            return f"{whole}{unit}"
    return f"{math.ceil(value)}Y"


class DiskUsage:
    def __init__(self, sh: ToolContext, apparent: bool, show_all: bool, depth: int | None, fmt) -> None:
        self.sh = sh
        self.fs = sh.fs
        self.apparent = apparent
        self.show_all = show_all
        self.depth = depth
        self.fmt = fmt
        self.seen: set[int] = set()
        self.hash_all = False
        self.ok = True
        self.lines: list[str] = []

    def size(self, inode: Inode) -> int:
        if self.apparent:
            return inode.size
        return 0 if inode.is_lnk else inode.blocks * 512  # a symlink's target lives in its inode, as stat shows

    def first_time(self, inode: Inode, top: bool) -> bool:
        """Whether this inode is new: hard links count once; with several operands (GNU's
        hash_all) every file and directory counts once."""
        if not (self.hash_all or top or inode.nlink > 1 and not inode.is_dir):
            return True
        if inode.ino in self.seen:
            return False
        self.seen.add(inode.ino)
        return True

    def emit(self, n: int, path: str) -> None:
        self.lines.append(f"{self.fmt(n)}\t{path}\n")

    def walk(self, path: str, inode: Inode, level: int) -> int:
        if not self.first_time(inode, level == 0):
            return 0
        total = self.size(inode)
        if inode.is_dir:
            try:
                entries = sorted(self.fs.scandir(path))
            except OSError as e:
                fail(self.sh, "du", f"cannot read directory {shell_quote(path)}", e)
                self.ok = False
                entries = []
            for name, child in entries:
                total += self.walk(join(path, name), child, level + 1)
            if self.depth is None or level <= self.depth:
                self.emit(total, path)
        elif (self.show_all or level == 0) and (self.depth is None or level <= self.depth):
            self.emit(total, path)
        return total


@tool("du")
def du(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "abcd:hkmsAL0", DU_LONG)
    given = dict(opts)
    apparent = scale_human = False
    block = 1024
    depth: int | None = None
    for key, value in opts:
        if key == "A":
            apparent = True
        elif key == "b":
            apparent, block, scale_human = True, 1, False
        elif key == "h":
            scale_human = True
        elif key == "k":
            block, scale_human = 1024, False
        elif key == "m":
            block, scale_human = 1024 * 1024, False
        elif key == "d":
            if not value.isdigit():
                raise Usage(f"invalid maximum depth {shell_quote(value)}")
            depth = int(value)
    summarize, show_all = "s" in given, "a" in given
    if summarize and show_all:
        raise Usage("cannot both summarize and show all entries")
    if summarize and depth not in (None, 0):
        raise Usage(f"warning: summarizing conflicts with --max-depth={depth}")
    if summarize:
        depth = 0

    def fmt(n: int) -> str:
        return human(n) if scale_human else str(-(-n // block))

    walker = DiskUsage(sh, apparent, show_all, depth, fmt)
    walker.hash_all = len(operands) > 1
    grand = 0
    for path in operands or ["."]:
        try:
            inode = devices.stat(sh, path, follow=False)
        except OSError as e:
            sh.out("".join(walker.lines))
            walker.lines.clear()
            fail(sh, "du", f"cannot access {shell_quote(path)}", e)
            walker.ok = False
            continue
        grand += walker.walk(path, inode, 0)
        sh.out("".join(walker.lines))
        walker.lines.clear()
    if "c" in given:
        sh.out(f"{fmt(grand)}\ttotal\n")
    return 0 if walker.ok else 1


@tool("df")
def df(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "hkaHlPTt:x:", {"human-readable": ("h", NONE), "all": ("a", NONE), "si": ("H", NONE),
                                                 "local": ("l", NONE), "portability": ("P", NONE),
                                                 "print-type": ("T", NONE), "type": ("t", REQUIRED),
                                                 "exclude-type": ("x", REQUIRED)})
    types = "T" in dict(opts)
    status = 0
    shown = []
    for path in operands:
        try:
            sh.fs.stat(path)
        except OSError as e:
            fail(sh, "df", path, e)
            status = 1
            continue
        shown.append(sh.fs.filesystem(path))
    if operands and not shown:
        return status
    wanted, excluded = [v for k, v in opts if k == "t"], [v for k, v in opts if k == "x"]
    shown = [f for f in shown or sh.fs.filesystems() if (not wanted or f.kind in wanted) and f.kind not in excluded]
    if not shown:
        sh.write_err("df: no file systems processed\n")
        return 1
    scale = ([k for k, _ in opts if k in "hHk"][-1:] or ["k"])[0]

    def fmt(n: int) -> str:
        if scale == "H":  # --si: powers of 1000, rounded up
            units, value = "kMGTPEZY", float(n)
            if value < 1000:
                return str(n)
            for unit in units:
                value /= 1000
                if value < 10:
                    return f"{math.ceil(value * 10 - 1e-9) / 10:.1f}{unit}"
                if value < 1000:
                    return f"{math.ceil(value - 1e-9)}{unit}"
        return human(n) if scale == "h" else str(-(-n // 1024))

    posix = "P" in dict(opts) and scale == "k"  # POSIX headers, unless -h/-H
    size_label, avail_label = ("Size", "Avail") if scale in "hH" else (
        "1024-blocks" if posix else "1K-blocks", "Available")
    rows = [["Filesystem", "Type", size_label, "Used", avail_label, "Capacity" if posix else "Use%", "Mounted on"]]
    for f in shown:
        size = f.stats.blocks * f.stats.block_size
        avail = f.stats.blocks_free * f.stats.block_size
        used = size - avail
        pct = f"{math.ceil(used * 100 / (used + avail))}%" if used + avail else "-"
        rows.append([f.kind, f.kind, fmt(size), fmt(used), fmt(avail), pct, f.path])
    if not types:
        rows = [r[:1] + r[2:] for r in rows]
    mins = [14, 4, 5, 5, 5, 4] if types else [14, 5, 5, 5, 4]
    widths = [max([m] + [len(r[i]) for r in rows]) for i, m in enumerate(mins)]
    out = []
    for r in rows:
        cells = [r[0].ljust(widths[0])]
        if types:
            cells.append(r[1].ljust(widths[1]))
        cells += [c.rjust(w) for c, w in zip(r[len(cells):-1], widths[len(cells):], strict=True)]
        out.append(" ".join(cells + [r[-1]]) + "\n")
    sh.out("".join(out))
    return status
