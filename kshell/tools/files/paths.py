"""Path names: basename, dirname, realpath, and the canonicalization readlink -f/-e/-m shares."""

from __future__ import annotations

import errno
import os
import posixpath
from typing import TYPE_CHECKING

from kfs.drives.view import DriveFS
from kshell.tools.files.names import fail
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kfs.vfs import PathFS
    from kshell.core.context import ToolContext


def canonical(fs: PathFS, path: str, mode: str = "f", *, physical: bool = True) -> str:
    """The absolute path with symlinks resolved. mode "e": every component must exist; "f": all
    but the last; "m": none. physical=False resolves lexically (realpath -s)."""
    if not path:
        raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    start = path if path.startswith("/") else os.fsdecode(fs.cwd) + "/" + path
    pending = [c for c in start.split("/") if c][::-1]
    trailing = path.endswith("/")
    done: list[str] = []
    hops = 0
    missing = False
    while pending:
        comp = pending.pop()
        if comp == ".":
            continue
        if comp == "..":
            if done:
                done.pop()
            continue
        cur = "/" + "/".join(done + [comp])
        last = not pending
        if missing or not physical:
            if not physical and not missing:
                try:
                    fs.lstat(cur)
                except OSError as e:
                    if mode == "e" or (mode == "f" and not last):
                        raise OSError(e.errno, os.strerror(e.errno), path) from e
                    missing = True
            done.append(comp)
            continue
        try:
            inode = fs.lstat(cur)
        except OSError as e:
            if e.errno == errno.ENOENT and (mode == "m" or (mode == "f" and last)):
                missing = True
                done.append(comp)
                continue
            raise OSError(e.errno, os.strerror(e.errno), path) from e
        if inode.is_lnk:
            hops += 1
            if hops > 40:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
            target = fs.readlink(cur)
            drive = fs.on_drive(cur) if isinstance(fs, DriveFS) else None
            if target.startswith("/") and drive is not None:  # a drive is its own root for its links
                target = drive.drive.path + target
            if target.startswith("/"):
                done = []
            pending.extend([c for c in target.split("/") if c][::-1])
            continue
        if not inode.is_dir and (pending or trailing) and mode != "m":
            raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
        done.append(comp)
    return "/" + "/".join(done)


@tool("basename")
def basename(sh: ToolContext, argv: list[str]) -> int:
    opts, ops = parse(argv, "as:z", {"multiple": ("a", NONE), "suffix": ("s", REQUIRED), "zero": ("z", NONE)})
    given = dict(opts)
    suffix = given.get("s")
    multiple = "a" in given or suffix is not None
    if not ops:
        raise Usage("missing operand")
    if not multiple:
        if len(ops) > 2:
            raise Usage(f"extra operand {shell_quote(ops[2])}")
        if len(ops) == 2:
            suffix = ops[1]
        ops = ops[:1]
    end = "\0" if "z" in given else "\n"
    for name in ops:
        stripped = name.rstrip("/")
        base = stripped.rsplit("/", 1)[-1] if stripped else ("/" if name else "")
        if suffix and base != suffix and base.endswith(suffix):
            base = base[: -len(suffix)]
        sh.out(base + end)
    return 0


@tool("dirname")
def dirname(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "z", {"zero": ("z", NONE)})
    if not operands:
        raise Usage("missing operand")
    end = "\0" if opts else "\n"
    for name in operands:
        stripped = name.rstrip("/")
        if not stripped:
            sh.out(("/" if name else ".") + end)
            continue
        head = stripped.rsplit("/", 1)[0] if "/" in stripped else "."
        head = head.rstrip("/") or ("/" if stripped.startswith("/") else ".")
        if head.startswith("//") and head.strip("/") == "":
            head = "/"
        sh.out(head + end)
    return 0


@tool("realpath")
def realpath(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(
        argv,
        "emsqzELP",
        {
            "canonicalize-existing": ("e", NONE),
            "canonicalize-missing": ("m", NONE),
            "strip": ("s", NONE),
            "no-symlinks": ("s", NONE),
            "quiet": ("q", NONE),
            "zero": ("z", NONE),
            "relative-to": ("rel", REQUIRED),
            "relative-base": ("base", REQUIRED),
            "logical": ("L", NONE),
            "physical": ("P", NONE),
        },
    )
    given = dict(opts)
    if not operands:
        raise Usage("missing operand")
    mode = "f"
    for key, _ in opts:
        if key in ("e", "m"):
            mode = key
        elif key == "E":
            mode = "f"
    physical = "s" not in given
    end = "\0" if "z" in given else "\n"
    rel = given.get("rel")
    base = given.get("base")
    try:
        rel_abs = canonical(sh.fs, rel, mode, physical=physical) if rel is not None else None
        base_abs = canonical(sh.fs, base, mode, physical=physical) if base is not None else None
    except OSError as e:
        fail(sh, "realpath", rel if rel is not None else base or "", e)
        return 1
    status = 0
    for path in operands:
        try:
            text = canonical(sh.fs, path, mode, physical=physical)
        except OSError as e:
            if "q" not in given:
                fail(sh, "realpath", path, e)
            status = 1
            continue
        if base_abs is not None and rel_abs is None:
            if _under(text, base_abs):
                text = posixpath.relpath(text, base_abs)
        elif rel_abs is not None and (base_abs is None or (_under(text, base_abs) and _under(rel_abs, base_abs))):
            text = posixpath.relpath(text, rel_abs)
        sh.out(text + end)
    return status


def _under(path: str, base: str) -> bool:
    return base == "/" or path == base or path.startswith(base + "/")
