"""stat (default layout, -c/--format, --printf, -L) and chmod (octal, symbolic, -R, --reference)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from kfs.format import group_name, mode_string, stat_text, type_name, user_name
from kfs.vfs.inode import Inode
from kshell.exec import devices
from kshell.core.clock import zone
from kshell.tools.files.modes import apply_mode
from kshell.tools.files.names import fail, join
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


def _time(sh: ToolContext, ns: int) -> str:
    secs, frac = divmod(ns, 1_000_000_000)
    when = datetime.fromtimestamp(secs, zone(sh))
    return when.strftime("%Y-%m-%d %H:%M:%S") + f".{frac:09d} " + when.strftime("%z")


def _field(sh: ToolContext, c: str, name: str, i: Inode, target: str | None) -> str | None:
    if c == "a":
        return f"{i.perm:o}"
    if c == "A":
        return mode_string(i.mode)
    if c == "s":
        return str(i.size)
    if c == "n":
        return name
    if c == "N":
        return shell_quote(name) + (f" -> {shell_quote(target)}" if target is not None else "")
    if c == "F":
        return type_name(i)
    if c == "U":
        return user_name(sh.fs.vfs.state, i.uid) or "UNKNOWN"
    if c == "G":
        return group_name(sh.fs.vfs.state, i.gid) or "UNKNOWN"
    if c == "u":
        return str(i.uid)
    if c == "g":
        return str(i.gid)
    if c == "i":
        return str(i.ino)
    if c == "h":
        return str(i.nlink)
    if c == "b":
        return str(0 if i.is_lnk else i.blocks)
    if c == "B":
        return "512"
    if c == "o":
        return "4096"
    if c == "f":
        return f"{i.mode:x}"
    if c == "t":
        return f"{i.rdev >> 8:x}"
    if c == "T":
        return f"{i.rdev & 0xFF:x}"
    times = {"x": i.atime, "y": i.mtime, "z": i.ctime, "w": i.btime}
    if c in times:
        return _time(sh, times[c])
    secs = {"X": i.atime, "Y": i.mtime, "Z": i.ctime, "W": i.btime}
    if c in secs:
        return str(secs[c] // 1_000_000_000)
    return None


def render(sh: ToolContext, fmt: str, name: str, inode: Inode, target: str | None) -> str:
    out: list[str] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%" or i + 1 >= len(fmt):
            out.append(ch)
            i += 1
            continue
        c = fmt[i + 1]
        i += 2
        if c == "%":
            out.append("%")
            continue
        value = _field(sh, c, name, inode, target)
        out.append(value if value is not None else "?")
    return "".join(out)


def _escapes(text: str) -> str:
    return text.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")


@tool("stat")
def stat(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(
        argv,
        "c:Lt",
        {"format": ("c", REQUIRED), "printf": ("printf", REQUIRED), "dereference": ("L", NONE), "terse": ("t", NONE)},
    )
    given = dict(opts)
    if not operands:
        raise Usage("missing operand")
    fmt = given.get("c")
    printf = given.get("printf")
    follow = "L" in given
    status = 0
    for path in operands:
        try:
            inode = devices.stat(sh, path, follow=follow)
            target = devices.readlink(sh, path) if inode.is_lnk else None
        except OSError as e:
            fail(sh, "stat", f"cannot statx {shell_quote(path)}", e)
            status = 1
            continue
        if printf is not None:
            sh.out(render(sh, _escapes(printf), path, inode, target))
        elif fmt is not None:
            sh.out(render(sh, fmt, path, inode, target) + "\n")
        else:
            sh.out(stat_text(path, inode, target, state=sh.fs.vfs.state))
    return status


@tool("chmod")
def chmod(sh: ToolContext, argv: list[str]) -> int:
    # a leading "-w"/"-x" is a mode, not an option: take modes out before parsing
    args = [argv[0]]
    mode_arg: str | None = None
    for a in argv[1:]:
        if mode_arg is None and len(a) > 1 and a[0] == "-" and all(c in "rwxXst" for c in a[1:]) and a != "--":
            mode_arg = a
        else:
            args.append(a)
    opts, ops = parse(
        args,
        "RvcfH",
        {
            "recursive": ("R", NONE),
            "verbose": ("v", NONE),
            "changes": ("c", NONE),
            "silent": ("f", NONE),
            "quiet": ("f", NONE),
            "reference": ("ref", REQUIRED),
        },
    )
    given = dict(opts)
    ref = given.get("ref")
    fs = sh.fs
    ref_mode: int | None = None
    if ref is not None:
        try:
            ref_mode = fs.stat(ref).perm
        except OSError as e:
            fail(sh, "chmod", f"failed to get attributes of {shell_quote(ref)}", e)
            return 1
    elif mode_arg is None:
        if not ops:
            raise Usage("missing operand")
        mode_arg = ops.pop(0)
    if not ops:
        if mode_arg is not None and ref is None:
            raise Usage(f"missing operand after {shell_quote(mode_arg)}")
        raise Usage("missing operand")
    if mode_arg is not None and apply_mode(mode_arg, 0, False, fs.umask) is None:
        raise Usage(f"invalid mode: {shell_quote(mode_arg)}")
    status = 0

    def change(path: str, top: bool) -> None:
        nonlocal status
        try:
            inode = fs.stat(path) if top else fs.lstat(path)
        except OSError as e:
            if "f" not in given:
                fail(sh, "chmod", f"cannot access {shell_quote(path)}", e)
            status = 1
            return
        if inode.is_lnk:
            return
        new = ref_mode if ref_mode is not None else apply_mode(mode_arg or "", inode.perm, inode.is_dir, fs.umask)
        assert new is not None
        try:
            if new != inode.perm:
                fs.chmod(path, new)
            if "v" in given or ("c" in given and new != inode.perm):
                verb = "changed from" if new != inode.perm else "retained as"
                old_s, new_s = (
                    f"{inode.perm:04o} ({mode_string(inode.mode)[1:]})",
                    f"{new:04o} ({mode_string(inode.mode & ~0o7777 | new)[1:]})",
                )
                if new != inode.perm:
                    sh.out(f"mode of {shell_quote(path)} {verb} {old_s} to {new_s}\n")
                else:
                    sh.out(f"mode of {shell_quote(path)} {verb} {new_s}\n")
        except OSError as e:
            if "f" not in given:
                fail(sh, "chmod", f"changing permissions of {shell_quote(path)}", e)
            status = 1
            return
        if "R" in given and inode.is_dir:
            try:
                names = sorted(n for n, _ in fs.scandir(path))
            except OSError as e:
                fail(sh, "chmod", f"cannot read directory {shell_quote(path)}", e)
                status = 1
                return
            for name in names:
                change(join(path, name), False)

    for path in ops:
        change(path, True)
    return status
