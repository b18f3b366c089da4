"""The unary and binary primaries of `test`, `[` and `[[ ]]`, evaluated against the VFS with
the shell's credentials: the language's predicates, below the interpreter that runs `[[ ]]`
and the builtins that parse `test`'s arguments."""

from __future__ import annotations

import re
import stat as st
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.exec.options import option_is_set
from kshell.expand import arith

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

UNARY = frozenset(f"-{c}" for c in "abcdefghknoprstuvwxzGLNORS")
BINARY = frozenset(["=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt",
                     "-ot", "-ef"])
_INT_RE = re.compile(r"\s*[+-]?[0-9]+\s*\Z")
R_OK, W_OK, X_OK = 4, 2, 1


class TestError(Exception):
    pass


def _stat(sh: Interp, path: str, follow: bool = True):
    if not path:
        return None
    try:
        return devices.stat(sh, path, follow=follow)
    except OSError:
        return None


def unary_test(sh: Interp, op: str, arg: str) -> bool:
    if op == "-n":
        return arg != ""
    if op == "-z":
        return arg == ""
    if op == "-o":
        return option_is_set(sh, arg)
    if op == "-v":
        if "[" in arg and arg.endswith("]"):
            name, _, key = arg[:-1].partition("[")
            try:
                return sh.get_element_text(name, key) is not None
            except Exception:  # noqa: BLE001
                return False
        target = sh.ref_target(arg)
        if target is not None and target != arg:
            return unary_test(sh, "-v", target)
        var = sh.vars.table.get(arg)
        return var is not None and var.value is not None
    if op == "-R":
        return False
    if op == "-t":
        return False
    if op == "-L" or op == "-h":
        inode = _stat(sh, arg, follow=False)
        return inode is not None and inode.is_lnk
    inode = _stat(sh, arg)
    if inode is None:
        return False
    if devices.device_name(arg) is not None and op in ("-r", "-w", "-x"):
        return op != "-x"
    mode = inode.mode
    if op == "-e" or op == "-a":
        return True
    if op == "-f":
        return st.S_ISREG(mode)
    if op == "-d":
        return st.S_ISDIR(mode)
    if op == "-s":
        return inode.size > 0
    if op == "-r":
        return sh.fs.access(arg, R_OK)
    if op == "-w":
        return sh.fs.access(arg, W_OK)
    if op == "-x":
        return sh.fs.access(arg, X_OK)
    if op == "-b":
        return st.S_ISBLK(mode)
    if op == "-c":
        return st.S_ISCHR(mode)
    if op == "-p":
        return st.S_ISFIFO(mode)
    if op == "-S":
        return st.S_ISSOCK(mode)
    if op == "-g":
        return bool(mode & st.S_ISGID)
    if op == "-u":
        return bool(mode & st.S_ISUID)
    if op == "-k":
        return bool(mode & st.S_ISVTX)
    if op == "-O":
        return inode.uid == sh.fs.cred.uid
    if op == "-G":
        return inode.gid == sh.fs.cred.gid
    if op == "-N":
        return inode.mtime > inode.atime
    return False


def _int(sh: Interp, text: str, arith_mode: bool) -> int:
    if arith_mode:
        return arith.evaluate_text(sh, text) if text.strip() else 0
    if not _INT_RE.match(text):
        raise TestError(f"{text}: integer expression expected")
    return int(text)


def binary_test(sh: Interp, op: str, left: str, right: str, arith: bool = False) -> bool:
    if op in ("=", "=="):
        return left == right
    if op == "!=":
        return left != right
    if op == "<":
        return left.encode("utf-8", "surrogateescape") < right.encode("utf-8", "surrogateescape")
    if op == ">":
        return left.encode("utf-8", "surrogateescape") > right.encode("utf-8", "surrogateescape")
    if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
        a = _int(sh, left, arith)
        b = _int(sh, right, arith)
        if op == "-eq":
            return a == b
        if op == "-ne":
            return a != b
        if op == "-lt":
            return a < b
        if op == "-le":
            return a <= b
        if op == "-gt":
            return a > b
        return a >= b
    if op in ("-nt", "-ot"):
        a = _stat(sh, left)
        b = _stat(sh, right)
        if op == "-nt":
            return a is not None and (b is None or a.mtime > b.mtime)
        return b is not None and (a is None or a.mtime < b.mtime)
    if op == "-ef":
        a = _stat(sh, left)
        b = _stat(sh, right)
        return a is not None and b is not None and a.ino == b.ino
    raise TestError(f"{op}: binary operator expected")
