"""find: paths, tests, actions and operators as GNU findutils parses and evaluates them."""

from __future__ import annotations

import fnmatch
import re
import stat as st
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kfs.format import accounts
from kfs.vfs.inode import Inode
from kshell.exec import devices
from kshell.tools.files.names import join
from kshell.tools.quoting import locale_quote, shell_quote

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

Node = tuple  # ("and", a, b) | ("or", a, b) | ("not", a) | ("test", fn) ; fn(ctx) -> bool


class FindError(Exception):
    pass


class Quit(Exception):
    """-quit: stop walking at once (pending -exec ... + batches still run)."""


class Ctx:
    __slots__ = ("path", "name", "inode", "depth", "prune")

    def __init__(self, path: str, name: str, inode: Inode, depth: int) -> None:
        self.path, self.name, self.inode, self.depth, self.prune = path, name, inode, depth, False


def _glob(pattern: str, fold: bool) -> Callable[[str], bool]:
    rx = re.compile(fnmatch.translate(pattern), re.S | (re.I if fold else 0))
    return lambda s: rx.match(s) is not None


def _cmp_num(text: str) -> Callable[[int], bool]:
    if text.startswith("+"):
        n = int(text[1:])
        return lambda v: v > n
    if text.startswith("-"):
        n = int(text[1:])
        return lambda v: v < n
    n = int(text)
    return lambda v: v == n


_TYPES = {"f": st.S_IFREG, "d": st.S_IFDIR, "l": st.S_IFLNK, "p": st.S_IFIFO, "s": st.S_IFSOCK,
          "c": st.S_IFCHR, "b": st.S_IFBLK}
_LETTERS = {kind: letter for letter, kind in _TYPES.items()}
_TIME_FIELDS = {"a": "atime", "m": "mtime", "c": "ctime", "B": "btime"}
_SIZE_UNITS = {"b": 512, "c": 1, "w": 2, "k": 1024, "M": 1024**2, "G": 1024**3}


class Find:
    def __init__(self, sh: Interp) -> None:
        self.sh = sh
        self.fs = sh.fs
        self.status = 0
        self.maxdepth: int | None = None
        self.mindepth = 0
        self.depth_first = False
        self.has_action = False
        self.batches: list[tuple[list[str], list[str]]] = []
        self.now = time.time_ns()

    # -- parsing ---------------------------------------------------------------------------------

    def parse(self, args: list[str]) -> Node | None:
        self.args = args
        self.pos = 0
        if not args:
            return None
        node = self.parse_or()
        if self.pos < len(args):
            tok = args[self.pos]
            if tok == ")":
                raise FindError("invalid expression; you have too many ')'")
            raise FindError(f"paths must precede expression: `{tok}'")
        return node

    def peek(self) -> str | None:
        return self.args[self.pos] if self.pos < len(self.args) else None

    def parse_or(self) -> Node:
        left = self.parse_and()
        while self.peek() in ("-o", "-or"):
            self.pos += 1
            if self.peek() in (None, ")"):
                raise FindError("invalid expression; you have used a binary operator '-o' with nothing after it.")
            left = ("or", left, self.parse_and())
        return left

    def parse_and(self) -> Node:
        left = self.parse_not()
        while True:
            tok = self.peek()
            if tok in ("-a", "-and"):
                self.pos += 1
                left = ("and", left, self.parse_not())
            elif tok is not None and tok not in ("-o", "-or", ")", ","):
                left = ("and", left, self.parse_not())
            else:
                return left

    def parse_not(self) -> Node:
        tok = self.peek()
        if tok in ("!", "-not"):
            self.pos += 1
            return ("not", self.parse_not())
        if tok == "(":
            self.pos += 1
            if self.peek() == ")":
                raise FindError("invalid expression; empty parentheses are not allowed.")
            node = self.parse_or()
            if self.peek() != ")":
                raise FindError("invalid expression; I was expecting to find a ')' somewhere but did not see one.")
            self.pos += 1
            return node
        return self.primary()

    def arg(self, name: str) -> str:
        if self.pos >= len(self.args):
            raise FindError(f"missing argument to `{name}'")
        value = self.args[self.pos]
        self.pos += 1
        return value

    def primary(self) -> Node:
        tok = self.args[self.pos]
        self.pos += 1
        t: Callable[[Ctx], bool]
        if tok in ("-name", "-iname"):
            match = _glob(self.arg(tok), tok == "-iname")
            t = lambda c: match(c.name)  # noqa: E731
        elif tok in ("-path", "-ipath", "-wholename", "-iwholename"):
            match = _glob(self.arg(tok), tok.startswith("-i"))
            t = lambda c: match(c.path)  # noqa: E731
        elif tok in ("-regex", "-iregex"):
            rx = re.compile(self.arg(tok), re.S | (re.I if tok == "-iregex" else 0))
            t = lambda c: rx.fullmatch(c.path) is not None  # noqa: E731
        elif tok == "-type":
            kinds = self.arg(tok)
            table = _TYPES
            wanted = set()
            for k in kinds.split(","):
                if k not in table:
                    raise FindError(f"Unknown argument to -type: {k}")
                wanted.add(table[k])
            t = lambda c: c.inode.kind in wanted  # noqa: E731
        elif tok in ("-maxdepth", "-mindepth"):
            value = self.arg(tok)
            if not value.isdigit():
                raise FindError(f"Expected a positive decimal integer argument to {tok}, but got {shell_quote(value)}")
            if tok == "-maxdepth":
                self.maxdepth = int(value)
            else:
                self.mindepth = int(value)
            t = lambda c: True  # noqa: E731
        elif tok == "-depth":
            self.depth_first = True
            t = lambda c: True  # noqa: E731
        elif tok in ("-newer", "-anewer", "-cnewer") or re.fullmatch(r"-newer[amcB][amcBt]", tok):
            # -newerXY: the file's X time against the reference's Y time (t: a date string)
            mine, theirs = {"-newer": ("m", "m"), "-anewer": ("a", "m"), "-cnewer": ("c", "m")}.get(tok, (tok[6:7], tok[7:]))
            ref = self.arg(tok)
            if theirs == "t":  # a date string, as date -d reads it
                from kshell.core.clock import zone
                from kshell.tools.system.datestr import parse as parse_date

                try:
                    stamp, ns = parse_date(ref, self.now, zone(self.sh))
                except (ValueError, OverflowError):
                    raise FindError(f"I cannot figure out how to interpret {shell_quote(ref)} as a date or time") \
                        from None
                when = int(stamp.timestamp()) * 1_000_000_000 + ns
            else:
                try:
                    when = getattr(self.fs.stat(ref), _TIME_FIELDS[theirs])
                except OSError as e:
                    raise FindError(f"{shell_quote(ref)}: {e.strerror or 'No such file or directory'}") from e
            field = _TIME_FIELDS[mine]
            t = lambda c: getattr(c.inode, field) > when  # noqa: E731
        elif tok in ("-executable", "-readable", "-writable"):
            import os

            bit = {"-executable": os.X_OK, "-readable": os.R_OK, "-writable": os.W_OK}[tok]
            t = lambda c: self.fs.access(c.path, bit)  # noqa: E731
        elif tok in ("-xdev", "-mount", "-noleaf"):  # K's files are one file system
            t = lambda c: True  # noqa: E731
        elif tok in ("-links", "-uid", "-gid", "-inum"):
            test = _cmp_num(self.arg(tok))
            field = {"-links": "nlink", "-uid": "uid", "-gid": "gid", "-inum": "ino"}[tok]
            t = lambda c: test(getattr(c.inode, field))  # noqa: E731
        elif tok in ("-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin"):
            test = _cmp_num(self.arg(tok))
            unit = 86400 if tok.endswith("time") else 60
            days = tok.endswith("time")
            field = _TIME_FIELDS[tok[1]]

            def t(c: Ctx) -> bool:
                age = self.now - getattr(c.inode, field)
                if days:  # whole days, rounded down; minutes rounded up, as GNU counts them
                    return test(int(age // 1_000_000_000 // unit))
                return test(-(-age // (unit * 1_000_000_000)))
        elif tok == "-size":
            spec = self.arg(tok)
            m = re.fullmatch(r"([+-]?)(\d+)([bcwkMG]?)", spec)
            if m is None:
                raise FindError(f"invalid -size type `{spec[-1:]}'")
            sign, num, unit = m.group(1), int(m.group(2)), _SIZE_UNITS[m.group(3) or "b"]

            def t(c: Ctx) -> bool:
                v = -(-c.inode.size // unit)
                return v > num if sign == "+" else v < num if sign == "-" else v == num
        elif tok == "-empty":
            t = lambda c: (c.inode.is_reg and c.inode.size == 0) or (c.inode.is_dir and not self.fs.scandir(c.path))  # noqa: E731
        elif tok == "-perm":
            spec = self.arg(tok)
            from kshell.tools.files.modes import apply_mode

            body = spec[1:] if spec[:1] in "-/" else spec
            mode = apply_mode(body, 0, False, 0)
            if mode is None:
                raise FindError(f"invalid mode {shell_quote(spec)}")
            if spec.startswith("-"):
                t = lambda c: c.inode.perm & mode == mode  # noqa: E731
            elif spec.startswith("/"):
                t = lambda c: mode == 0 or bool(c.inode.perm & mode)  # noqa: E731
            else:
                t = lambda c: c.inode.perm == mode  # noqa: E731
        elif tok in ("-user", "-group"):
            who = self.arg(tok)
            known = accounts(self.sh.fs.vfs.state)  # K's names, as GNU find asks getpwnam/getgrnam
            want = (known.uids if tok == "-user" else known.gids).get(who)
            if want is None and who.isdigit():
                want = int(who)
            if want is None:
                raise FindError(f"{locale_quote(who)} is not the name of "
                                + ("a known user" if tok == "-user" else "an existing group"))
            if tok == "-user":
                t = lambda c: c.inode.uid == want  # noqa: E731
            else:
                t = lambda c: c.inode.gid == want  # noqa: E731
        elif tok == "-quit":
            self.has_action = True

            def t(c: Ctx) -> bool:
                raise Quit
        elif tok in ("-true", "-false"):
            value = tok == "-true"
            t = lambda c: value  # noqa: E731
        elif tok == "-print":
            self.has_action = True
            t = lambda c: self.emit(c.path + "\n")  # noqa: E731
        elif tok == "-print0":
            self.has_action = True
            t = lambda c: self.emit(c.path + "\0")  # noqa: E731
        elif tok == "-printf":
            self.has_action = True
            fmt = self.arg(tok)
            t = lambda c: self.emit(self.printf(fmt, c))  # noqa: E731
        elif tok == "-prune":

            def t(c: Ctx) -> bool:
                c.prune = True
                return True
        elif tok == "-delete":
            self.has_action = True
            self.depth_first = True
            t = self.delete
        elif tok in ("-exec", "-execdir", "-ok"):
            self.has_action = True
            t = self.exec_primary(tok)
        else:
            if tok.startswith("-"):
                raise FindError(f"unknown predicate `{tok}'")
            raise FindError(f"paths must precede expression: `{tok}'")
        return ("test", t)

    def exec_primary(self, tok: str) -> Callable[[Ctx], bool]:
        words: list[str] = []
        while True:
            if self.pos >= len(self.args):
                raise FindError(f"missing argument to `{tok}'")
            w = self.args[self.pos]
            self.pos += 1
            if w == ";":
                break
            if w == "+" and words and words[-1] == "{}":
                batch: tuple[list[str], list[str]] = (words[:-1], [])
                self.batches.append(batch)
                execdir = tok == "-execdir"

                def add(c: Ctx, batch: tuple[list[str], list[str]] = batch, execdir: bool = execdir) -> bool:
                    batch[1].append("./" + c.name if execdir else c.path)
                    return True

                return add
            words.append(w)
        if not words:
            raise FindError(f"missing argument to `{tok}'")
        execdir = tok == "-execdir"

        def run(c: Ctx) -> bool:
            target = ("./" + c.name) if execdir else c.path
            argv = [w.replace("{}", target) for w in words]
            return self.run(argv, c.path.rsplit("/", 1)[0] if execdir and "/" in c.path else ".") == 0

        return run

    def run(self, argv: list[str], cwd: str = ".") -> int:
        """Run a command as find's fork+exec would: a tool or a builtin that has a binary (echo,
        printf, test, true, false, ...), never a shell function."""
        sh = self.sh
        saved = sh.fs.cwd
        try:
            if cwd != ".":
                sh.fs.cwd = sh.fs.realpath(cwd).encode()
            tool = sh.tool(argv[0])
            if tool is not None:
                return tool(sh, argv)
            builtin = sh.builtins.get(argv[0])
            if builtin is not None:
                return sh.call_builtin(builtin, argv)
            return sh.run_external(argv)
        finally:
            sh.fs.cwd = saved

    def emit(self, text: str) -> bool:
        self.sh.out(text)
        return True

    def delete(self, c: Ctx) -> bool:
        try:
            if c.inode.is_dir:
                self.fs.rmdir(c.path)
            else:
                self.fs.unlink(c.path)
        except OSError as e:
            self.sh.write_err(f"find: cannot delete {shell_quote(c.path)}: {e.strerror}\n")
            self.status = 1
            return False
        return True

    def printf(self, fmt: str, c: Ctx) -> str:
        out: list[str] = []
        i = 0
        esc = {"n": "\n", "t": "\t", "0": "\0", "\\": "\\"}
        while i < len(fmt):
            ch = fmt[i]
            if ch == "\\" and i + 1 < len(fmt):
                out.append(esc.get(fmt[i + 1], "\\" + fmt[i + 1]))
                i += 2
            elif ch == "%" and i + 1 < len(fmt):
                d = fmt[i + 1]
                i += 2
                if d == "p":
                    out.append(c.path)
                elif d == "f":
                    out.append(c.name)
                elif d == "s":
                    out.append(str(c.inode.size))
                elif d == "m":
                    out.append(f"{c.inode.perm:o}")
                elif d == "y":
                    out.append(_LETTERS.get(c.inode.kind, "U"))
                elif d == "d":
                    out.append(str(c.depth))
                elif d == "h":
                    out.append(c.path.rsplit("/", 1)[0] if "/" in c.path else ".")
                elif d == "%":
                    out.append("%")
                else:
                    out.append("%" + d)
            else:
                out.append(ch)
                i += 1
        return "".join(out)

    # -- evaluation ------------------------------------------------------------------------------

    def evaluate(self, node: Node, c: Ctx) -> bool:
        kind = node[0]
        if kind == "test":
            return node[1](c)
        if kind == "and":
            return self.evaluate(node[1], c) and self.evaluate(node[2], c)
        if kind == "or":
            return self.evaluate(node[1], c) or self.evaluate(node[2], c)
        return not self.evaluate(node[1], c)

    def visit(self, path: str, name: str, inode: Inode, depth: int, expr: Node | None) -> None:
        c = Ctx(path, name, inode, depth)
        act = depth >= self.mindepth
        if act and not self.depth_first:
            self.apply(expr, c)
        if inode.is_dir and (self.maxdepth is None or depth < self.maxdepth) and not (c.prune and not self.depth_first):
            try:
                entries = sorted(self.fs.scandir(path), key=lambda e: e[0].encode("utf-8", "surrogateescape"))
            except OSError as e:
                self.sh.write_err(f"find: {shell_quote(path)}: {e.strerror}\n")
                self.status = 1
                entries = []
            for child, child_inode in entries:
                self.visit(join(path, child), child, child_inode, depth + 1, expr)
        if act and self.depth_first:
            self.apply(expr, c)

    def apply(self, expr: Node | None, c: Ctx) -> None:
        if expr is None:
            self.sh.out(c.path + "\n")
            return
        if self.has_action:
            self.evaluate(expr, c)
        elif self.evaluate(expr, c):
            self.sh.out(c.path + "\n")


def find(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    paths: list[str] = []
    while args and not (args[0].startswith("-") and len(args[0]) > 1 or args[0] in ("(", "!")):
        paths.append(args.pop(0))
    f = Find(sh)
    try:
        expr = f.parse(args)
    except FindError as e:
        sh.write_err(f"find: {e}\n")
        return 1
    except re.error as e:
        sh.write_err(f"find: invalid regular expression: {e}\n")
        return 1
    try:
        for path in paths or ["."]:
            try:
                inode = devices.stat(sh, path, follow=False)
            except OSError as e:
                sh.write_err(f"find: {shell_quote(path)}: {e.strerror}\n")
                f.status = 1
                continue
            name = path.rstrip("/").rsplit("/", 1)[-1] or "/"
            f.visit(path, name, inode, 0, expr)
    except Quit:
        pass
    for words, items in f.batches:
        if items and f.run(words + items) != 0:
            f.status = 1
    return f.status
