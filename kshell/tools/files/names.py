"""File names as the file tools build and show them: `join` (a child's path), `base` (the last
component), `lexists`, `target_pairs` (cp, mv, install and ln's SOURCE... DEST rules) and
`fail` (`tool: what: strerror`; names in messages are quoted by kshell.tools.quoting)."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kshell.core.options import Fail, Usage
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kfs.vfs.paths import PathFS
    from kshell.core.context import ToolContext


def join(base: str, name: str) -> str:
    """`base/name` as the tools build child paths (no doubled slash after "/" or "d/")."""
    return base + name if base.endswith("/") else f"{base}/{name}"


def base(path: str) -> str:
    """The last component of `path` (trailing slashes ignored): the name a copy into a
    directory takes."""
    return path.rstrip("/").rsplit("/", 1)[-1] or "/"


def lexists(fs: PathFS, path: str) -> bool:
    """Whether `path` names anything, a dangling symbolic link too."""
    try:
        fs.lstat(path)
    except OSError:
        return False
    return True


def strerror(e: OSError | int) -> str:
    if isinstance(e, int):
        return os.strerror(e)
    if e.errno:
        return os.strerror(e.errno)
    return e.strerror or str(e)


def fail(sh: ToolContext, prog: str, what: str, e: OSError | int) -> None:
    """`prog: what: strerror` on standard error (what is already quoted by the caller)."""
    sh.write_err(f"{prog}: {what}: {strerror(e)}\n")


def target_pairs(sh: ToolContext, given: Mapping[str, str], ops: list[str], *, bad_target: str = "target directory",
                 follow: bool = True) -> list[tuple[str, str]]:
    """(source, destination) pairs as GNU's cp, mv, install and ln resolve their operands:
    into the directory of -t DIR; the one destination of -T; else into the last operand when
    it is a directory (`follow`: through a symbolic link), or the single pair SOURCE DEST.
    Errors raise Usage or Fail in GNU's words; `bad_target` starts the message for an
    unusable -t directory (cp and mv: "target directory", install: "failed to access")."""
    fs = sh.fs
    target = given.get("t")
    if target is not None:
        if "T" in given:
            raise Usage("cannot combine --target-directory (-t) and --no-target-directory (-T)")
        if not ops:
            raise Usage("missing file operand")
        try:
            is_dir = fs.stat(target).is_dir
        except OSError as e:
            raise Fail(f"{bad_target} {shell_quote(target)}: {strerror(e)}") from None
        if not is_dir:
            raise Fail(f"{bad_target} {shell_quote(target)}: {strerror(errno.ENOTDIR)}")
        return [(src, join(target, base(src))) for src in ops]
    if not ops:
        raise Usage("missing file operand")
    if len(ops) == 1:
        raise Usage(f"missing destination file operand after {shell_quote(ops[0])}")
    dest = ops[-1]
    if "T" in given:
        if len(ops) > 2:
            raise Usage(f"extra operand {shell_quote(ops[2])}")
        return [(ops[0], dest)]
    try:
        inode = fs.stat(dest) if follow else fs.lstat(dest)
    except OSError as e:
        problem: OSError | int = e
    else:
        if inode.is_dir:
            return [(src, join(dest, base(src))) for src in ops[:-1]]
        problem = errno.ENOTDIR
    if len(ops) > 2:
        raise Fail(f"target {shell_quote(dest)}: {strerror(problem)}")
    return [(ops[0], dest)]
