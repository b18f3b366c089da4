"""ln (-s -f -n -T -v) and readlink (-f -e -m -n): making and reading links."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.tools.files.names import base, fail, join, target_pairs
from kshell.tools.files.paths import canonical
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

LN_LONG = {
    "symbolic": ("s", NONE),
    "force": ("f", NONE),
    "no-dereference": ("n", NONE),
    "no-target-directory": ("T", NONE),
    "verbose": ("v", NONE),
    "relative": ("r", NONE),
    "target-directory": ("t", REQUIRED),
}


@tool("ln")
def ln(sh: ToolContext, argv: list[str]) -> int:
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
        pairs = [(src, join(target_dir, base(src))) for src in ops]
    elif len(ops) == 1:
        pairs = [(ops[0], "./" + base(ops[0]))]
    else:
        pairs = target_pairs(sh, given, ops, follow=not no_deref)
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
                        sh.write_err(f"ln: {shell_quote(dest)}: cannot overwrite directory\n")
                        status = 1
                        continue
            if symbolic:
                fs.symlink(src, dest)
            else:
                fs.link(src, dest)
            if "v" in given:
                sh.out(f"{shell_quote(dest)} {'->' if symbolic else '=>'} {shell_quote(src)}\n")
        except OSError as e:
            if not symbolic and e.filename == src:
                fail(sh, "ln", f"failed to access {shell_quote(src)}", e)
            else:
                fail(sh, "ln", f"failed to create {kind} {shell_quote(dest)}", e)
            status = 1
    return status


@tool("readlink")
def readlink(sh: ToolContext, argv: list[str]) -> int:
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
            text = canonical(sh.fs, path, mode) if mode else devices.readlink(sh, path)
        except OSError as e:
            if "v" in given:
                fail(sh, "readlink", path, e)
            status = 1
            continue
        sh.out(text + end)
    return status
