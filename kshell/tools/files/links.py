"""ln (-s -f -n -T -v) and readlink (-f -e -m -n): making and reading links."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from kshell.tools.files.args import NO, Usage, fail, missing_operand, parse, quote, usage_error
from kshell.tools.files.paths import canonical

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

LN_LONG = {
    "symbolic": ("s", NO),
    "force": ("f", NO),
    "no-dereference": ("n", NO),
    "no-target-directory": ("T", NO),
    "verbose": ("v", NO),
    "relative": ("r", NO),
}


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or "/"


def ln(sh: Interp, argv: list[str]) -> int:
    try:
        opts = parse(argv, "sfnTvt:", LN_LONG | {"target-directory": ("t", 1)})
    except Usage as e:
        return usage_error(sh, "ln", e)
    fs = sh.fs
    ops = opts.operands
    symbolic, force = opts.has("s"), opts.has("f")
    no_deref = opts.has("n")
    if not ops:
        return usage_error(sh, "ln", Usage("missing file operand"))
    target_dir = opts.last("t")
    pairs: list[tuple[str, str]] = []
    if target_dir is not None:
        pairs = [(src, f"{target_dir.rstrip('/')}/{_base(src)}") for src in ops]
    elif len(ops) == 1:
        pairs = [(ops[0], "./" + _base(ops[0]))]
    else:
        dest = ops[-1]
        is_dir = False
        if not opts.has("T"):
            try:
                is_dir = (fs.lstat(dest) if no_deref else fs.stat(dest)).is_dir
            except OSError:
                is_dir = False
        if len(ops) > 2 and not is_dir:
            if opts.has("T"):
                return usage_error(sh, "ln", Usage(f"extra operand {quote(ops[2])}"))
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
            if opts.has("v"):
                sh.out(f"{quote(dest)} {'->' if symbolic else '=>'} {quote(src)}\n")
        except OSError as e:
            if not symbolic and e.filename == src:
                fail(sh, "ln", f"failed to access {quote(src)}", e)
            else:
                fail(sh, "ln", f"failed to create {kind} {quote(dest)}", e)
            status = 1
    return status


def readlink(sh: Interp, argv: list[str]) -> int:
    try:
        opts = parse(
            argv,
            "femnqsvz",
            {
                "canonicalize": ("f", NO),
                "canonicalize-existing": ("e", NO),
                "canonicalize-missing": ("m", NO),
                "no-newline": ("n", NO),
                "quiet": ("q", NO),
                "silent": ("s", NO),
                "verbose": ("v", NO),
                "zero": ("z", NO),
            },
        )
    except Usage as e:
        return usage_error(sh, "readlink", e)
    if not opts.operands:
        return missing_operand(sh, "readlink")
    mode = None
    for key, _ in opts.items:
        if key in "fem":
            mode = key
    end = "\0" if opts.has("z") else "\n"
    if opts.has("n") and len(opts.operands) == 1:
        end = ""
    elif opts.has("n"):
        sh.write_err("readlink: ignoring --no-newline with multiple arguments\n")
    status = 0
    for path in opts.operands:
        try:
            text = canonical(sh.fs, path, mode) if mode else sh.fs.readlink(path)
        except OSError as e:
            if opts.has("v"):
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
