"""tree (-a -d -L -f --noreport), as tree 2.1 draws it in the C locale (ASCII lines, names in
byte order, symlinks shown and not followed, the top directory counted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.tools.files.names import join

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

USAGE = (
    "usage: tree [-acdfghilnpqrstuvxACDFJQNSUX] [-L level [-R]] [-H  baseHREF]\n"
    "\t[-T title] [-o filename] [-P pattern] [-I pattern] [--gitignore]\n"
    "\t[--gitfile[=]file] [--matchdirs] [--metafirst] [--ignore-case]\n"
    "\t[--nolinks] [--hintro[=]file] [--houtro[=]file] [--inodes] [--device]\n"
    "\t[--sort[=]<name>] [--dirsfirst] [--filesfirst] [--filelimit #] [--si]\n"
    "\t[--du] [--prune] [--charset[=]X] [--timefmt[=]format] [--fromfile]\n"
    "\t[--fflinks] [--info] [--infofile[=]file] [--noreport] [--version]\n"
    "\t[--help] [--] [directory ...]\n"
)


class Tree:
    def __init__(self, sh: ToolContext, show_all: bool, dirs_only: bool, level: int | None, full: bool) -> None:
        self.sh = sh
        self.fs = sh.fs
        self.show_all = show_all
        self.dirs_only = dirs_only
        self.level = level
        self.full = full
        self.dirs = 0
        self.files = 0
        self.out: list[str] = []
        self.failed = False
        self.shown = 0

    def walk(self, path: str, prefix: str, depth: int) -> None:
        try:
            entries = self.fs.scandir(path)
        except OSError:
            self.out.append("  [error opening dir]")
            self.failed = True
            return
        shown = sorted(
            ((name, inode) for name, inode in entries if self.show_all or not name.startswith(".")),
            key=lambda e: e[0].encode("utf-8", "surrogateescape"),
        )
        if self.dirs_only:
            shown = [(n, i) for n, i in shown if i.is_dir or (i.is_lnk and self._points_to_dir(join(path, n)))]
        if depth == 1:
            self.shown = len(shown)
        for k, (name, inode) in enumerate(shown):
            last = k == len(shown) - 1
            child = join(path, name)
            label = child if self.full else name
            self.out.append(f"\n{prefix}{'`-- ' if last else '|-- '}{label}")
            if inode.is_lnk:
                try:
                    target = self.fs.readlink(child)
                except OSError:
                    target = ""
                self.out.append(f" -> {target}")
                if self._points_to_dir(child):
                    self.dirs += 1
                else:
                    self.files += 1
                continue
            if inode.is_dir:
                self.dirs += 1
                if self.level is None or depth < self.level:
                    self.walk(child, prefix + ("    " if last else "|   "), depth + 1)
            else:
                self.files += 1

    def _points_to_dir(self, path: str) -> bool:
        try:
            return self.fs.stat(path).is_dir
        except OSError:
            return False


def tree(sh: ToolContext, argv: list[str]) -> int:
    show_all = dirs_only = full = noreport = False
    level: int | None = None
    roots: list[str] = []
    args = argv[1:]
    i = 0
    only_roots = False
    while i < len(args):
        arg = args[i]
        i += 1
        if only_roots or not arg.startswith("-") or arg == "-":
            roots.append(arg)
            continue
        if arg == "--":
            only_roots = True
            continue
        if arg.startswith("--"):
            if arg == "--noreport":
                noreport = True
                continue
            if arg == "--version":
                sh.out("tree v2.1.0 (c) 1996 - 2022 by Steve Baker, Thomas Moore, Francesc Rocher, Florian Sesser, "
                       "Kyosuke Tokoro\n")
                return 0
            sh.write_err(f"tree: Invalid argument `{arg}'.\n" + USAGE)
            return 1
        for c in arg[1:]:
            if c == "a":
                show_all = True
            elif c == "d":
                dirs_only = True
            elif c == "f":
                full = True
            elif c == "L":
                if i >= len(args):
                    sh.write_err("tree: Missing argument to -L option.\n")
                    return 1
                value = args[i]
                i += 1
                try:
                    level = int(value)
                except ValueError:
                    level = 0
                if level < 1:
                    sh.write_err("tree: Invalid level, must be greater than 0.\n")
                    return 1
            else:
                sh.write_err(f"tree: Invalid argument -`{c}'.\n" + USAGE)
                return 1
    t = Tree(sh, show_all, dirs_only, level, full)
    status = 0
    for root in roots or ["."]:
        t.out.append(root)
        try:
            inode = sh.fs.stat(root)
        except OSError:
            t.out.append("  [error opening dir]\n")
            status = 2
            continue
        if not inode.is_dir:
            t.out.append("  [error opening dir]\n")
            t.files += 1
            continue
        t.shown = 0
        if level is None or level > 0:
            t.walk(root, "", 1)
        if t.shown:  # tree 2.1 counts the top directory only when it lists something
            t.dirs += 1
        t.out.append("\n")
    if not noreport:
        d = f"{t.dirs} director{'y' if t.dirs == 1 else 'ies'}"
        f = f"{t.files} file{'' if t.files == 1 else 's'}"
        t.out.append(f"\n{d}\n" if dirs_only else f"\n{d}, {f}\n")
    sh.out("".join(t.out))
    return 2 if t.failed else status
