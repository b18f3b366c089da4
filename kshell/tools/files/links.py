"""ln (-s -f -n -T -v) and readlink (-f -e -m -n): making and reading links."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from kshell.tools.files.names import fail, quote
from kshell.tools.files.paths import canonical
from kshell.tools.options import NONE, REQUIRED, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

LN_LONG = {
    "symbolic": ("s", NONE),
    "force": ("f", NONE),
    "no-dereference": ("n", NONE),
    "no-target-directory": ("T", NONE),
    "verbose": ("v", NONE),
    "relative": ("r", NONE),
    "target-directory": ("t", REQUIRED),
}


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or "/"


@tool("ln")
def ln(sh: Interp, argv: list[str]) -> int:
    opts, ops = parse(argv, "sfnTvt:", LN_LONG)
    given = dict(opts)
    fs = sh.fs
    symbolic, force = "s" in given, "f" in given
    no_deref = "n" in given
    if not ops:
        raise Usage("missing file operand")
    target_dir = given.get("t")
    pairs: list[tuple[str, str]] = []
    if target_dir is not None:
        pairs = [(src, f"{target_dir.rstrip('/')}/{_base(src)}") for src in ops]
    elif len(ops) == 1:
        pairs = [(ops[0], "./" + _base(ops[0]))]
    else:
        dest = ops[-1]
        is_dir = False
        if "T" not in given:
            try:
                is_dir = (fs.lstat(dest) if no_deref else fs.stat(dest)).is_dir
            except OSError:
                is_dir = False
        if len(ops) > 2 and not is_dir:
            if "T" in given:
                raise Usage(f"extra operand {quote(ops[2])}")
            if fs.exists(dest) or _lexists(fs, dest):
                sh.write_err(f"ln: target {quote(dest)} is not a directory\n")
            else:
                sh.write_err(f"ln: target {quote(dest)}: No such file or directory\n")
            return 1
        pairs = [(src, f"{dest.rstrip('/')}/{_base(src)}") for src in ops[:-1]] if is_dir else [(ops[0], dest)]
    status = 0
    kind = "symbolic link" if symbolic else "hard link"
    for src, dest in pairs:
        try:
            if not symbolic:
                inode = fs.lstat(src)
                if inode.is_dir:
                    sh.write_err(f"ln: {src}: hard link not allowed for directory\n")
                    status = 1
                    continue
            if force:
                try:
                    existing = fs.lstat(dest)
                    if existing.is_dir:
                        raise OSError(errno.EISDIR, "", dest)
                    fs.unlink(dest)
                except OSError as e:
                    if e.errno == errno.EISDIR:
                        sh.write_err(f"ln: {quote(dest)}: cannot overwrite directory\n")
                        status = 1
                        continue
            if symbolic:
                fs.symlink(src, dest)
            else:
                fs.link(src, dest)
            if "v" in given:
                sh.out(f"{quote(dest)} {'->' if symbolic else '=>'} {quote(src)}\n")
        except OSError as e:
            if not symbolic and e.filename == src:
                fail(sh, "ln", f"failed to access {quote(src)}", e)
            else:
                fail(sh, "ln", f"failed to create {kind} {quote(dest)}", e)
            status = 1
    return status


@tool("readlink")
def readlink(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(
        argv,
        "femnqsvz",
        {
            "canonicalize": ("f", NONE),
            "canonicalize-existing": ("e", NONE),
            "canonicalize-missing": ("m", NONE),
            "no-newline": ("n", NONE),
            "quiet": ("q", NONE),
            "silent": ("s", NONE),
            "verbose": ("v", NONE),
            "zero": ("z", NONE),
        },
    )
    given = dict(opts)
    if not operands:
        raise Usage("missing operand")
    mode = None
    for key, _ in opts:
        if key in "fem":
            mode = key
    end = "\0" if "z" in given else "\n"
    if "n" in given and len(operands) == 1:
        end = ""
    elif "n" in given:
        sh.write_err("readlink: ignoring --no-newline with multiple arguments\n")
    status = 0
    for path in operands:
        try:
            text = canonical(sh.fs, path, mode) if mode else sh.fs.readlink(path)
        except OSError as e:
            if "v" in given:
                fail(sh, "readlink", path, e)
            status = 1
            continue
        sh.out(text + end)
    return status


def _lexists(fs, path: str) -> bool:
    try:
        fs.lstat(path)
    except OSError:
        return False
    return True
