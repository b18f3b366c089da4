"""install (-m -d -D -t -T -p -v -C) and mktemp (-d -p -t -u -q --suffix, templates), as GNU
coreutils: install replaces the target with a fresh file of exactly the given mode."""

from __future__ import annotations

import errno
import os
import secrets
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.tools.files.modes import apply_mode
from kshell.tools.files.names import fail, join, target_pairs
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

INSTALL_LONG = {
    "mode": ("m", REQUIRED),
    "directory": ("d", NONE),
    "target-directory": ("t", REQUIRED),
    "no-target-directory": ("T", NONE),
    "preserve-timestamps": ("p", NONE),
    "verbose": ("v", NONE),
    "compare": ("C", NONE),
    "owner": ("o", REQUIRED),
    "group": ("g", REQUIRED),
    "strip": ("s", NONE),
}


def _mkdirs(sh: ToolContext, path: str, verbose: bool, last_mode: int | None) -> bool:
    """mkdir -p with install's messages; `last_mode` (when given) is set on the final directory."""
    fs = sh.fs
    parts = [p for p in path.split("/") if p]
    prefix = "/" if path.startswith("/") else ""
    for i in range(len(parts)):
        sub = prefix + "/".join(parts[: i + 1])
        try:
            inode = fs.stat(sub)
        except OSError as e:
            if e.errno != errno.ENOENT:
                fail(sh, "install", f"cannot create directory {shell_quote(sub)}", e)
                return False
            try:
                fs.mkdir(sub, 0o755)
                fs.chmod(sub, 0o755)
            except OSError as e2:
                fail(sh, "install", f"cannot create directory {shell_quote(sub)}", e2)
                return False
            if verbose:
                sh.out(f"install: creating directory {shell_quote(sub)}\n")
            continue
        if not inode.is_dir:
            fail(sh, "install", f"cannot create directory {shell_quote(sub)}", errno.EEXIST)
            return False
    if last_mode is not None and parts:
        try:
            fs.chmod(path, last_mode)
        except OSError as e:
            fail(sh, "install", f"cannot change permissions of {shell_quote(path)}", e)
            return False
    return True


@tool("install")
def install(sh: ToolContext, argv: list[str]) -> int:
    opts, ops = parse(argv, "m:dt:TpvCo:g:sD", INSTALL_LONG)
    given = dict(opts)
    fs = sh.fs
    mode = 0o755
    text = given.get("m")
    if text is not None:
        value = apply_mode(text, 0o755, False, 0)
        if value is None:
            sh.write_err(f"install: invalid mode {shell_quote(text)}\n")
            return 1
        mode = value
    verbose = "v" in given
    if "d" in given:
        if not ops:
            raise Usage("missing file operand")
        ok = True
        for path in ops:
            ok = _mkdirs(sh, path, verbose, mode) and ok
        return 0 if ok else 1
    target = given.get("t")
    if target is not None and "D" in given and not _mkdirs(sh, target, verbose, None):
        return 1
    pairs = target_pairs(sh, given, ops, bad_target="failed to access")
    dest = ops[-1]
    if "D" in given and target is None and pairs[0][1] == dest:
        parent = dest.rstrip("/").rsplit("/", 1)[0] if "/" in dest.rstrip("/") else ""
        if parent and not _mkdirs(sh, parent, verbose, None):
            return 1
    status = 0
    for src, dst in pairs:
        try:
            inode = devices.stat(sh, src)
        except OSError as e:
            fail(sh, "install", f"cannot stat {shell_quote(src)}", e)
            status = 1
            continue
        if inode.is_dir:
            sh.write_err(f"install: omitting directory {shell_quote(src)}\n")
            status = 1
            continue
        try:
            existing = fs.stat(dst)
        except OSError:
            existing = None
        if existing is not None and existing.ino == inode.ino:
            sh.write_err(f"install: {shell_quote(src)} and {shell_quote(dst)} are the same file\n")
            status = 1
            continue
        if existing is not None and existing.is_dir:
            sh.write_err(f"install: cannot overwrite directory {shell_quote(dst)} with non-directory\n")
            status = 1
            continue
        try:
            content = devices.read_file(sh, src)
        except OSError as e:
            fail(sh, "install", f"cannot open {shell_quote(src)} for reading", e)
            status = 1
            continue
        try:
            if existing is not None:
                fs.unlink(dst)
            fs.write_file(dst, content, mode=0o600)
        except OSError as e:
            if e.errno == errno.EISDIR and existing is None and dst.endswith("/"):
                e = OSError(errno.ENOTDIR, "", dst)
            fail(sh, "install", f"cannot create regular file {shell_quote(dst)}", e)
            status = 1
            continue
        try:
            fs.chmod(dst, mode)
            if "p" in given:
                fs.utime(dst, inode.atime, inode.mtime)
        except OSError as e:
            fail(sh, "install", f"cannot change permissions of {shell_quote(dst)}", e)
            status = 1
            continue
        if verbose:
            sh.out(f"{shell_quote(src)} -> {shell_quote(dst)}\n")
    return status


MKTEMP_LONG = {
    "directory": ("d", NONE),
    "dry-run": ("u", NONE),
    "quiet": ("q", NONE),
    "suffix": ("suffix", REQUIRED),
    "tmpdir": ("p", OPTIONAL),
}
_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@tool("mktemp")
def mktemp(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "dp:qtu", MKTEMP_LONG)
    given = dict(opts)
    if len(operands) > 1:
        raise Usage("too many templates")
    quiet = "q" in given

    def error(text: str, creating: bool = False) -> int:
        if not (quiet and creating):
            sh.write_err(f"mktemp: {text}\n")
        return 1

    template_arg = operands[0] if operands else None
    template = template_arg or "tmp.XXXXXXXXXX"
    suffix = given.get("suffix") or ""
    if "/" in suffix:
        return error(f"invalid suffix {shell_quote(suffix)}, contains directory separator")
    stem = template.rstrip("X")
    xs = len(template) - len(stem)
    if xs < 3:
        return error(f"too few X's in template {shell_quote(template + (suffix if 'suffix' in given else ''))}")
    tmpdir_opt = given.get("p") or None
    use_dir = "t" in given or "p" in given or template_arg is None
    base = ""
    if use_dir:
        if "t" in given and "/" in template:
            return error(f"invalid template, {shell_quote(template)}, contains directory separator")
        env_tmp = sh.get_param_or_none("TMPDIR")
        order = (env_tmp, tmpdir_opt) if "t" in given else (tmpdir_opt, env_tmp)
        base = order[0] or order[1] or "/tmp"
    prefix_path = join(base, stem) if base else stem
    fs = sh.fs
    shown_template = join(base, template) if base else template
    for _ in range(100):
        name = prefix_path + "".join(secrets.choice(_CHARS) for _ in range(xs)) + suffix
        if "u" in given:
            if not fs.exists(name):
                sh.out(name + "\n")
                return 0
            continue
        try:
            if "d" in given:
                fs.mkdir(name, 0o700)
                fs.chmod(name, 0o700)
            else:
                fs.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600).close()
                fs.chmod(name, 0o600)
        except OSError as e:
            if e.errno == errno.EEXIST:
                continue
            kind = "directory" if "d" in given else "file"
            return error(f"failed to create {kind} via template {shell_quote(shown_template)}: "
                         f"{os.strerror(e.errno or errno.EIO)}", True)
        sh.out(name + "\n")
        return 0
    return error(f"failed to create file via template {shell_quote(shown_template)}: File exists", True)
