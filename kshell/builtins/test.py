"""test / [ (POSIX argument-count rules, -a/-o/!/( )), and the unary and binary primaries
shared with [[ ]], evaluated against the VFS with the shell's credentials."""

from __future__ import annotations

import re
import stat as st
from typing import TYPE_CHECKING

from kshell.builtins import builtin
from kshell.exec import devices
from kshell.expand import arith
from kshell.syntax.errors import ArithSyntaxError

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_UNARY = frozenset(f"-{c}" for c in "abcdefghknoprstuvwxzGLNORS")
_BINARY = frozenset(["=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt",
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
        from kshell.builtins.vars import option_is_set

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


class _TestParser:
    def __init__(self, sh: Interp, args: list[str]) -> None:
        self.sh = sh
        self.args = args
        self.pos = 0

    def parse(self) -> bool:
        n = len(self.args)
        if n == 0:
            return False
        result = self.eval_n(n)
        if self.pos < n:
            raise TestError(f"{self.args[self.pos]}: unexpected operator" if False
                            else "too many arguments")
        return result

    def eval_n(self, n: int) -> bool:
        args = self.args
        p = self.pos
        if n == 1:
            self.pos += 1
            return args[p] != ""
        if n == 2:
            if args[p] == "!":
                self.pos += 2
                return args[p + 1] == ""
            if args[p] in _UNARY:
                self.pos += 2
                return unary_test(self.sh, args[p], args[p + 1])
            raise TestError(f"{args[p]}: unary operator expected")
        if n == 3:
            if args[p + 1] in _BINARY:
                self.pos += 3
                return binary_test(self.sh, args[p + 1], args[p], args[p + 2])
            if args[p + 1] in ("-a", "-o"):
                self.pos += 3
                a = args[p] != ""
                b = args[p + 2] != ""
                return (a and b) if args[p + 1] == "-a" else (a or b)
            if args[p] == "!":
                self.pos += 1
                return not self.eval_n(2)
            if args[p] == "(" and args[p + 2] == ")":
                self.pos += 3
                return args[p + 1] != ""
            raise TestError(f"{args[p + 1]}: binary operator expected")
        if n == 4:
            if args[p] == "!":
                self.pos += 1
                return not self.eval_n(3)
            if args[p] == "(" and args[p + 3] == ")":
                self.pos += 1
                r = self.eval_n(2)
                self.pos += 1
                return r
        return self.expr_or()

    def remaining(self) -> int:
        return len(self.args) - self.pos

    def expr_or(self) -> bool:
        r = self.expr_and()
        while self.pos < len(self.args) and self.args[self.pos] == "-o":
            self.pos += 1
            r2 = self.expr_and()
            r = r or r2
        return r

    def expr_and(self) -> bool:
        r = self.expr_not()
        while self.pos < len(self.args) and self.args[self.pos] == "-a":
            self.pos += 1
            r2 = self.expr_not()
            r = r and r2
        return r

    def expr_not(self) -> bool:
        if self.pos < len(self.args) and self.args[self.pos] == "!":
            self.pos += 1
            return not self.expr_not()
        return self.primary()

    def primary(self) -> bool:
        args = self.args
        p = self.pos
        if p >= len(args):
            raise TestError("argument expected")
        if args[p] == "(":
            self.pos += 1
            r = self.expr_or()
            if self.pos >= len(args) or args[self.pos] != ")":
                raise TestError("`)' expected")
            self.pos += 1
            return r
        if p + 2 < len(args) + 0 and p + 1 < len(args) and args[p + 1] in _BINARY and p + 2 < len(args):
            self.pos += 3
            return binary_test(self.sh, args[p + 1], args[p], args[p + 2])
        if args[p] in _UNARY and p + 1 < len(args):
            self.pos += 2
            return unary_test(self.sh, args[p], args[p + 1])
        self.pos += 1
        return args[p] != ""


def run_test(sh: Interp, name: str, args: list[str]) -> int:
    try:
        return 0 if _TestParser(sh, args).parse() else 1
    except TestError as e:
        sh.error(f"{name}: {e.args[0]}")
        return 2
    except ArithSyntaxError as e:
        sh.error(f"{name}: {e.text}")
        return 2


@builtin("test")
def test(sh: Interp, argv: list[str]) -> int:
    return run_test(sh, "test", argv[1:])


@builtin("[")
def bracket(sh: Interp, argv: list[str]) -> int:
    if argv[-1] != "]":
        sh.error("[: missing `]'")
        return 2
    args = argv[1:-1]
    if len(args) == 3 and args[1] in ("-lt", "-gt", "-le", "-ge", "-eq", "-ne"):
        a, op, b = args
        if a.isdigit() and b.isdigit():
            x, y = int(a), int(b)
            if op == "-lt":
                return 0 if x < y else 1
            if op == "-gt":
                return 0 if x > y else 1
            if op == "-le":
                return 0 if x <= y else 1
            if op == "-ge":
                return 0 if x >= y else 1
            if op == "-eq":
                return 0 if x == y else 1
            return 0 if x != y else 1
    return run_test(sh, "[", args)
