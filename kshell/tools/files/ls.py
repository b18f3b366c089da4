"""ls: GNU's listing (one entry a line, as on a pipe) with the long format's columns;
--time-style/--full-time, --sort/-X/-v, --time/-c/-u, -g/-o/-G, --hide/-I/-B, -Q/-N, -p and
--indicator-style, -m, -C, -x, -w, -T and --format (the later of a layout and -l wins), --si,
--block-size (kshell/tools/files/blocksize.py) and -k, --author, -Z, --dired."""

from __future__ import annotations

import contextlib
import stat as st
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from kfs.format import group_name, mode_string, user_name
from kfs.vfs.inode import Inode
from kshell.exec import devices
from kshell.core.clock import zone
from kshell.tools.files.blocksize import HUMAN, SI, BlockSizeError, Units, parse_block_size
from kshell.tools.files.names import fail, join
from kshell.core.options import NONE, OPTIONAL, REQUIRED, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

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
    "time-style": ("time-style", REQUIRED),
    "full-time": ("full-time", NONE),
    "sort": ("sort", REQUIRED),
    "time": ("time", REQUIRED),
    "no-group": ("G", NONE),
    "hide": ("hide", REQUIRED),
    "ignore": ("I", REQUIRED),
    "ignore-backups": ("B", NONE),
    "quote-name": ("Q", NONE),
    "literal": ("N", NONE),
    "file-type": ("file-type", NONE),
    "format": ("format", REQUIRED),
    "si": ("si", NONE),
    "block-size": ("block-size", REQUIRED),
    "width": ("w", REQUIRED),
    "tabsize": ("T", REQUIRED),
    "kibibytes": ("k", NONE),
    "author": ("author", NONE),
    "context": ("Z", NONE),
    "dired": ("D", NONE),
}
_SORTS = {"none": "none", "size": "S", "time": "t", "version": "v", "extension": "X", "width": "width"}
_TIMES = {"atime": "atime", "access": "atime", "use": "atime", "ctime": "ctime", "status": "ctime",
          "birth": "btime", "creation": "btime"}
_FORMATS = {"long": "l", "verbose": "l", "single-column": "1", "commas": "m", "across": "x",
            "horizontal": "x", "vertical": "C"}
_STYLES = {"full-iso": ("%Y-%m-%d %H:%M:%S.%N %z", None), "long-iso": ("%Y-%m-%d %H:%M", None),
           "iso": ("%m-%d %H:%M", "%Y-%m-%d "), "locale": ("%b %e %H:%M", "%b %e  %Y")}
_STYLE_HELP = ("  - [posix-]full-iso\n  - [posix-]long-iso\n  - [posix-]iso\n  - [posix-]locale\n"
               "  - +FORMAT (e.g., +%H:%M) for a 'date'-style format")


@dataclass
class Entry:
    name: str  # as shown
    path: str  # to reach it
    inode: Inode | None  # lstat (or stat when followed); None when it vanished
    target: str | None = None  # a symlink's contents
    target_inode: Inode | None = None


class Lister:
    def __init__(self, sh: ToolContext, flags: set[str], sort: str) -> None:
        self.sh = sh
        self.fs = sh.fs
        self.flags = flags
        self.sort = sort
        self.long = bool({"l", "n", "g", "o"} & flags)
        self.time = "mtime"  # the time shown and sorted by (--time, -c, -u)
        self.style: tuple[str, str | None] = ("%b %e %H:%M", "%b %e  %Y")  # recent, older (None: same)
        self.hide: list[str] = []  # --hide (not with -a/-A) and -I patterns
        self.ignore: list[str] = []
        self.quote = False
        self.slash = False  # -p: `/` after directories
        self.status = 0
        self.first = True  # nothing printed yet (for the blank lines between directories)
        self.now = time.time_ns()
        self.tz = zone(sh)
        # per-command caches: owner and group names, mode strings and dates repeat across entries
        self.users: dict[int, str] = {}
        self.groups: dict[int, str] = {}
        self.modes: dict[int, str] = {}
        self.dates: dict[int, str] = {}
        self.layout = "1"  # 1 (a line each, as on a pipe), C (columns down), x (across), m (commas)
        self.width = 80  # the line, off a terminal (-w, COLUMNS; 0: no limit)
        self.tabsize = 8  # -T
        self.file_units = Units()  # the size column (-h, --si, --block-size)
        self.block_units = Units(1024)  # -s and the total

        self.pos = 0  # bytes written, for --dired's offsets
        self.dired: list[int] = []  # --dired (with the long format): where each name starts and ends
        self.subdired: list[int] = []  # and each directory's name in its header

    @property
    def indented(self) -> bool:
        """--dired with the long format: each line starts with two spaces (GNU's DIRED_INDENT)."""
        return self.long and "D" in self.flags

    def out(self, text: str) -> None:
        self.pos += len(text.encode("utf-8", "surrogateescape"))
        self.sh.out(text)

    def dired_trailer(self) -> None:
        """--dired's last lines: the names' offsets, the headers', and the quoting style."""
        if self.dired:
            self.out("//DIRED// " + " ".join(map(str, self.dired)) + "\n")
        if self.subdired:
            self.out("//SUBDIRED// " + " ".join(map(str, self.subdired)) + "\n")
        self.out(f"//DIRED-OPTIONS// --quoting-style={'c' if self.quote else 'literal'}\n")

    # -- ordering and one line per entry --------------------------------------------------------

    def ordered(self, entries: list[Entry]) -> list[Entry]:
        if self.sort == "none":
            return list(entries)
        entries = sorted(entries, key=lambda e: e.name.encode("utf-8", "surrogateescape"))
        if self.sort == "t":
            entries.sort(key=lambda e: -(getattr(e.inode, self.time) if e.inode else 0))
        elif self.sort == "S":
            entries.sort(key=lambda e: -(e.inode.size if e.inode else 0))
        elif self.sort == "X":
            entries.sort(key=lambda e: _extension(e.name))
        elif self.sort == "v":
            entries.sort(key=lambda e: _version_key(e.name))
        elif self.sort == "width":
            entries.sort(key=lambda e: len(e.name))
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
        if inode is not None and self.slash and "F" not in self.flags and "file-type" not in self.flags:
            return "/" if inode.is_dir else ""
        if inode is None or not {"F", "file-type"} & self.flags:
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
        if inode.is_reg and inode.mode & 0o111 and "F" in self.flags:
            return "*"
        return ""

    def shown_name(self, name: str) -> str:
        return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"' if self.quote else name

    def fill_link(self, e: Entry) -> None:
        if e.inode is not None and e.inode.is_lnk:
            try:
                e.target = devices.readlink(self.sh, e.path)
                e.target_inode = devices.stat(self.sh, e.path)
            except OSError:
                pass

    def print_group(self, entries: list[Entry], total: bool, sizing: list[Entry] | tuple[()] = ()) -> None:
        """Print `entries`; in the long format the columns are as wide as `sizing`'s too (GNU
        sizes the operands' columns with the directory operands among them)."""
        lines: list[str] = []
        if not self.long and self.layout == "m":
            words = [f"{self.shown_name(e.name)}{self.indicator(e.inode)}" for e in entries]
            line = ""
            for k, word in enumerate(words):
                word += "," if k < len(words) - 1 else ""
                if line and len(line) + 1 + len(word) > self.width:  # 80 columns off a terminal
                    lines.append(line + "\n")
                    line = word
                else:
                    line = f"{line} {word}" if line else word
            if line:
                lines.append(line + "\n")
            self.out("".join(lines))
            return
        if not self.long:
            # the number columns right-aligned to the widest, as GNU's (-i, -s)
            inos = [str(e.inode.ino) if "i" in self.flags and e.inode else "" for e in entries]
            sizes = [self.blocks(e.inode) if "s" in self.flags and e.inode else "" for e in entries]
            wi, ws = max(map(len, inos), default=0), max(map(len, sizes), default=0)
            context = "? " if "Z" in self.flags else ""  # no SELinux: GNU's `?` for each file
            items = [(f"{ino:>{wi}} " if ino else "") + (f"{size:>{ws}} " if size else "") + context
                     + f"{self.shown_name(e.name)}{self.indicator(e.inode)}"
                     for e, ino, size in zip(entries, inos, sizes)]
            if total and "s" in self.flags:
                lines.append(f"total {self.total(entries)}\n")
            if self.layout in ("C", "x") and items:
                lines.extend(self.columns(items, self.layout == "C"))
            else:
                lines.extend(item + "\n" for item in items)
            self.out("".join(lines))
            return
        rows = []
        numeric = "n" in self.flags
        show_ino = "i" in self.flags
        show_blocks = "s" in self.flags
        users, groups, modes, dates = self.users, self.groups, self.modes, self.dates
        shown = len(entries)
        for e in [*entries, *sizing]:
            i = e.inode
            if i is None:
                shown -= e in entries
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
            stamp = getattr(i, self.time)
            date = dates.get(stamp)
            if date is None:
                date = dates[stamp] = self.date(stamp)
            if i.kind in (st.S_IFCHR, st.S_IFBLK):
                size = f"{i.rdev >> 8}, {i.rdev & 0xFF}"
            else:
                size = self.file_units.show(i.size)
            name = self.shown_name(e.name)
            name_len = len(name.encode("utf-8", "surrogateescape"))
            if i.is_lnk and e.target is not None:
                name += (
                    " -> "
                    + self.shown_name(e.target)
                    + (self.indicator(e.target_inode) if e.target_inode and not e.target_inode.is_lnk else "")
                )
            elif not i.is_lnk:
                name += self.indicator(i)
            rows.append(
                (
                    str(i.ino) if show_ino else "",
                    self.blocks(i) if show_blocks else "",
                    mode,
                    str(i.nlink),
                    owner,
                    group,
                    size,
                    date,
                    name,
                    name_len,
                )
            )
        w = [max(map(len, map(str, col)), default=0) for col in zip(*rows)] if rows else [0] * 10
        indent = "  " if self.indented else ""
        if total:
            lines.append(f"{indent}total {self.total(entries)}\n")
        w3, w4, w5, w6 = w[3], w[4], w[5], w[6]
        at = self.pos + sum(len(line.encode("utf-8", "surrogateescape")) for line in lines)
        for r in rows[:shown]:
            pre = (f"{r[0]:>{w[0]}} " if show_ino else "") + (f"{r[1]:>{w[1]}} " if show_blocks else "")
            # GNU pads names on the right and right-aligns bare ids (-n, or an id without a name;
            # no K name is all digits)
            owner = f"{r[4]:>{w4}} " if r[4].isdigit() else f"{r[4]:<{w4}} "
            group = f"{r[5]:>{w5}} " if r[5].isdigit() else f"{r[5]:<{w5}} "
            if "g" in self.flags:
                owner = ""
            if {"o", "G"} & self.flags:
                group = ""
            # --author: the owner again (on Linux a file's author is its owner); -Z: `?`
            author = (f"{r[4]:>{w4}} " if r[4].isdigit() else f"{r[4]:<{w4}} ") if "author" in self.flags else ""
            context = "? " if "Z" in self.flags else ""
            head = f"{indent}{pre}{r[2]} {r[3]:>{w3}} {owner}{group}{author}{context}{r[6]:>{w6}} {r[7]} "
            line = f"{head}{r[8]}\n"
            if indent:
                start = at + len(head.encode("utf-8", "surrogateescape"))
                self.dired += [start, start + r[9]]
                at += len(line.encode("utf-8", "surrogateescape"))
            lines.append(line)
        self.out("".join(lines))

    def columns(self, items: list[str], down: bool) -> list[str]:
        """-C (down the columns) and -x (across): GNU's calculate_columns (the most columns
        whose widths, each the widest entry plus two, fit the line) and indent (tabs where
        they reach, then spaces)."""
        if not self.width:  # -w 0: no limit, GNU's print_with_separator(' ')
            return ["  ".join(items) + "\n"]
        n = len(items)
        widths = [len(item) for item in items]  # names as shown: one column a character

        def layout(cols: int) -> list[int]:
            rows = -(-n // cols)
            col = [3] * cols  # GNU's MIN_COLUMN_WIDTH, unused columns too
            for k, width in enumerate(widths):
                c = k // rows if down else k % cols
                col[c] = max(col[c], width + (0 if c == cols - 1 else 2))
            return col

        cols = max(1, min(n, self.width // 3))
        col = layout(cols)
        while cols > 1 and sum(col) >= self.width:
            cols -= 1
            col = layout(cols)
        rows = -(-n // cols)
        grid = [[r + c * rows if down else r * cols + c for c in range(cols)] for r in range(rows)]
        out = []
        for row in grid:
            line, pos = "", 0
            cells = [k for k in row if k < n]
            for c, k in enumerate(cells):
                line += items[k]
                if c < len(cells) - 1:
                    line += self.indent(pos + widths[k], pos + col[c])
                    pos += col[c]
            out.append(line + "\n")
        return out

    def indent(self, start: int, end: int) -> str:
        """GNU ls's indent: a tab wherever one stops at or before `end`, else spaces."""
        out = []
        tab = self.tabsize
        while start < end:
            if tab and end // tab > (start + 1) // tab:
                out.append("\t")
                start += tab - start % tab
            else:
                out.append(" ")
                start += 1
        return "".join(out)

    def total(self, entries: list[Entry]) -> str:
        return self.block_units.show(sum(_blocks(e.inode) for e in entries if e.inode is not None), 512)

    def blocks(self, inode: Inode) -> str:
        """A file's allocated size as -s shows it, in -s's units (1 KiB unless told)."""
        return self.block_units.show(_blocks(inode), 512)

    def date(self, ns: int) -> str:
        from kshell.tools.system.date import strftime

        when = datetime.fromtimestamp(ns // 1_000_000_000, self.tz)
        recent_fmt, old_fmt = self.style
        recent = self.now - SIX_MONTHS_NS < ns <= self.now
        fmt = recent_fmt if old_fmt is None or recent else old_fmt
        return strftime(when, fmt, ns % 1_000_000_000)

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
            self.print_group(self.ordered(files), total=False, sizing=dirs)
            self.first = False
        headers = explicit and (len(operands) > 1 or "R" in self.flags) or "R" in self.flags
        for d in self.ordered(dirs):
            self.list_dir(d.path, headers, top=True)
        if self.indented:
            self.dired_trailer()
        return self.status

    def list_dir(self, path: str, header: bool, top: bool) -> None:
        try:
            listing = devices.scandir(self.sh, path)  # /dev and /dev/fd are the shell's
        except OSError as e:
            fail(self.sh, "ls", f"cannot open directory {shell_quote(path)}", e)
            self.status = 2 if top else max(self.status, 1)
            return
        if header:
            if self.indented:
                self.out("" if self.first else "\n")
                self.subdired += [self.pos + 2, self.pos + 2 + len(path.encode("utf-8", "surrogateescape"))]
                self.out(f"  {path}:\n")
            else:
                self.out(("" if self.first else "\n") + f"{path}:\n")
        self.first = False
        entries = []
        if "a" in self.flags:
            for dot in (".", ".."):
                with contextlib.suppress(OSError):
                    entries.append(Entry(dot, join(path, dot), devices.stat(self.sh, join(path, dot))))
        from fnmatch import fnmatchcase

        hide = self.ignore + ([] if {"a", "A"} & self.flags else self.hide)
        for name, inode in listing:
            if name.startswith(".") and not ({"a", "A"} & self.flags):
                continue
            if hide and any(fnmatchcase(name, pat) for pat in hide):
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


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot + 1 :] if dot > 0 else ""


def _version_key(name: str) -> list[tuple[int, int | str]]:
    """GNU's version sort, closely enough: digit runs compare as numbers."""
    import re

    return [(1, int(part)) if part.isdigit() else (0, part) for part in re.split(r"(\d+)", name) if part]


def e_target_dir(e: Entry) -> bool:
    return e.target_inode is not None and e.target_inode.is_dir


def _blocks(inode: Inode) -> int:
    """512-byte blocks as the tools show them: a symlink's target lives in the inode (0 blocks)."""
    return 0 if inode.is_lnk or inode.is_dir and inode.size == 0 else inode.blocks


@tool("ls", 2)
def ls(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "aAlFR1dhtSrinLsUfCXvcugoGI:BQNpmkxw:T:ZD", LONG)
    flags: set[str] = set()
    fmt = ""  # the format the last option chose: "long", or a layout (1 C x m); "" none
    sort = "name"
    settings: dict[str, object] = {}
    hide: list[str] = []
    ignore: list[str] = []
    bad_style = ""
    units: Units | None = None  # -h, --si, --block-size: the last one given
    for key, value in opts:
        if key in ("t", "S", "X", "v"):
            sort = key
        elif key in ("h", "si"):
            units = HUMAN if key == "h" else SI
        elif key == "block-size":
            try:
                units = parse_block_size(value)
            except BlockSizeError as e:
                sh.write_err(f"ls: {e.message()}\n")
                return 2
        elif key == "U":
            sort = "none"
        elif key == "sort":
            if value not in _SORTS:
                return _bad_argument(sh, value, "--sort", "  - 'none'\n  - 'time'\n  - 'size'\n  - 'extension'\n"
                                     "  - 'version'\n  - 'width'")
            sort = _SORTS[value]
        elif key in ("c", "u"):
            settings["time"] = "ctime" if key == "c" else "atime"
        elif key == "time":
            if value not in _TIMES:
                return _bad_argument(sh, value, "--time", "  - 'atime', 'access', 'use'\n  - 'ctime', 'status'\n"
                                     "  - 'birth', 'creation'")
            settings["time"] = _TIMES[value]
        elif key == "time-style" or key == "full-time":
            style = "full-iso" if key == "full-time" else value
            if key == "full-time":
                flags.add("l")
                fmt = "long"
            if style.startswith("posix-"):  # STYLE unless the locale is POSIX's
                style = "locale" if _posix_locale(sh) else style[6:]
            if style.startswith("+"):
                older, _, recent = style[1:].partition("\n")  # GNU: older files first
                settings["style"] = (recent, older) if recent else (older, None)
            elif style in _STYLES:
                settings["style"] = _STYLES[style]
            else:
                settings["style"] = None  # refused only where a long listing shows times (GNU)
                bad_style = value
        elif key == "format":
            if value not in _FORMATS:
                return _bad_argument(sh, value, "--format", "  - 'verbose', 'long'\n  - 'commas'\n"
                                     "  - 'horizontal', 'across'\n  - 'vertical'\n  - 'single-column'")
            if _FORMATS[value] == "l":
                flags.add("l")
                fmt = "long"
            elif _FORMATS[value] != "1" or fmt != "long":
                settings["layout"] = fmt = _FORMATS[value]
        elif key == "color":
            if value not in (None, "never", "no", "none", "auto", "tty", "if-tty"):
                sh.write_err(
                    f"ls: invalid argument {shell_quote(value or '')} for '--color'\n"
                    "Valid arguments are:\n  - 'always', 'yes', 'force'\n  - 'never', 'no', 'none'\n"
                    "  - 'auto', 'tty', 'if-tty'\nTry 'ls --help' for more information.\n"
                )
                return 1
        elif key in ("1", "C", "x", "m"):  # the later of these and -l wins, but -1 leaves -l as it is
            if key != "1" or fmt != "long":
                settings["layout"] = fmt = key
        elif key in ("w", "T"):
            if not value.isdigit():
                what = "line width" if key == "w" else "tab size"
                sh.write_err(f"ls: invalid {what}: {shell_quote(value)}\n")
                return 2
            settings["width" if key == "w" else "tabsize"] = int(value)
        elif key == "indicator-style":
            flags -= {"F", "file-type"}
            settings["slash"] = value == "slash"
            if value == "classify":
                flags.add("F")
            elif value == "file-type":
                flags.add("file-type")
        elif key == "p":
            settings["slash"] = True
        elif key == "hide":
            hide.append(value)
        elif key == "I":
            ignore.append(value)
        elif key == "B":
            ignore.extend(("*~", ".*~"))
        elif key in ("Q", "N"):
            settings["quote"] = key == "Q"
        elif key == "a":
            flags.discard("A")
            flags.add("a")
        elif key == "A":
            flags.discard("a")
            flags.add("A")
        else:
            flags.add(key)
            if key in ("l", "n", "g", "o"):
                fmt = "long"
    if settings.get("style", "") is None:
        if {"l", "n", "g", "o"} & flags:
            return _bad_argument(sh, bad_style, "time style", _STYLE_HELP, 2)
        del settings["style"]
    lister = Lister(sh, flags, sort)
    lister.hide, lister.ignore = hide, ignore
    columns = sh.exported_env().get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0 and "width" not in settings:  # GNU reads it off a terminal too
        lister.width = int(columns)
    if units is not None:
        lister.file_units = lister.block_units = units
    else:
        lister.file_units, lister.block_units = _env_units(sh, "k" in flags)
    for name, value in settings.items():
        setattr(lister, name, value)
    if fmt:
        lister.long = fmt == "long"
    return lister.run(operands)


def _env_units(sh: ToolContext, kibibytes: bool) -> tuple[Units, Units]:
    """The units of sizes and of blocks without -h, --si or --block-size: LS_BLOCK_SIZE, else
    BLOCK_SIZE, for both; BLOCKSIZE for blocks only; 512-byte blocks under POSIXLY_CORRECT;
    -k makes blocks KiB again. A value GNU cannot read counts in 1024 bytes, as GNU's does."""
    env = sh.exported_env()
    default = Units(512 if "POSIXLY_CORRECT" in env else 1024)
    spec = env.get("LS_BLOCK_SIZE", env.get("BLOCK_SIZE", env.get("BLOCKSIZE")))
    blocks = default
    if spec is not None:
        try:
            blocks = parse_block_size(spec)
        except BlockSizeError:
            blocks = Units(1024)
    files = blocks if "LS_BLOCK_SIZE" in env or "BLOCK_SIZE" in env else Units()
    return files, Units(1024) if kibibytes else blocks


def _posix_locale(sh: ToolContext) -> bool:
    env = sh.exported_env()
    name = env.get("LC_ALL") or env.get("LC_TIME") or env.get("LANG") or "C"
    return name in ("C", "POSIX")


def _bad_argument(sh: ToolContext, value: str, option: str, valid: str, status: int = 1) -> int:
    sh.write_err(f"ls: invalid argument {shell_quote(value)} for '{option}'\nValid arguments are:\n{valid}\n"
                 "Try 'ls --help' for more information.\n")
    return status
