"""The sed script compiler: GNU sed 4.9's grammar (addresses, commands, GNU one-liner forms) to a
flat list of `Cmd`, where blocks and branches are jumps; errors carry GNU's messages and
positions (`-e expression #1, char 3: unterminated `s' command`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kshell.exec import regexes
from kshell.tools.sed.pattern import RegexError, compile_posix

_ESCAPES = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_NOARG = set("=dDgGhHnNpPxzF")  # L is gone from GNU sed 4.9


class SedError(Exception):
    """A script error; `where` is `-e expression #N, char M` or `file F line L`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Addr:
    kind: str  # "n" line, "$" last, "re" regex, "step" first~step, "zero" 0 (of 0,/re/),
    #            second address only: "plus" +N, "mult" ~N
    n: int = 0
    step: int = 0
    regex: regexes.Compiled | None = None  # None with kind "re": the last regex used


@dataclass
class Subst:
    regex: regexes.Compiled | None
    parts: list[str | int]  # literal text, a group number, or a case op as -1..-5 (see _CASE)
    cased: bool
    glob: bool = False
    nth: int = 1
    print_: int = 0
    wfile: str | None = None


@dataclass
class Cmd:
    name: str
    a1: Addr | None = None
    a2: Addr | None = None
    neg: bool = False
    text: str = ""  # a/i/c text, label, file name
    num: int | None = None  # q/Q exit code, l width
    jump: int = -1  # `{`: index of its `}`; b/t/T: target
    subst: Subst | None = None
    ytable: dict[int, int] | None = None
    active: bool = False  # range state
    closed: bool = False
    end: int = 0  # a range's last line when its end is a line number
    where: str = ""
    extra: dict = field(default_factory=dict)


_CASE = {"U": -1, "L": -2, "u": -3, "l": -4, "E": -5}


class Parser:
    """Compiles the script pieces (each -e, each -f file) into one program."""

    def __init__(self, extended: bool) -> None:
        self.extended = extended
        self.cmds: list[Cmd] = []
        self.blocks: list[tuple[int, str]] = []
        self.src = ""
        self.i = 0
        self.where = ""
        self.file_line = 0

    # ---------------------------------------------------------------- reading

    def fail(self, message: str, pos: int | None = None) -> SedError:
        if self.where.startswith("file "):
            line = self.src.count("\n", 0, max(self.i - 1, 0)) + 1
            return SedError(f"{self.where} line {line}: {message}")
        return SedError(f"{self.where}, char {self.i if pos is None else pos}: {message}")

    def get(self) -> str:
        if self.i >= len(self.src):
            return ""
        c = self.src[self.i]
        self.i += 1
        return c

    def peek(self) -> str:
        return self.src[self.i] if self.i < len(self.src) else ""

    def unget(self, c: str) -> None:
        if c:
            self.i -= 1

    def skip_ws(self) -> str:
        c = self.get()
        while c and c in " \t":
            c = self.get()
        return c

    # ---------------------------------------------------------------- program

    def add(self, source: str, where: str) -> None:
        self.src = source
        self.i = 0
        self.where = where
        while True:
            c = self.get()
            while c and (c in " \t\n;"):
                c = self.get()
            if not c:
                break
            self.unget(c)
            self.command()
        self.i = len(self.src)

    def finish(self) -> list[Cmd]:
        if self.blocks:
            raise SedError(f"{self.blocks[-1][1]}, char 0: unmatched `{{'")
        labels: dict[str, int] = {}
        for idx, cmd in enumerate(self.cmds):
            if cmd.name == ":":
                if cmd.text in labels:
                    raise SedError(f"{cmd.where}, char 0: duplicate label `{cmd.text}'")
                labels[cmd.text] = idx
        for cmd in self.cmds:
            if cmd.name in "btT":
                if not cmd.text:
                    cmd.jump = len(self.cmds)
                elif cmd.text in labels:
                    cmd.jump = labels[cmd.text]
                else:
                    raise SedError(f"can't find label for jump to `{cmd.text}'", 4)
        return self.cmds

    def address(self) -> Addr | None:
        c = self.get()
        if c.isdigit():
            n = self.number(c)
            if self.peek() == "~":
                self.get()
                d = self.get()
                step = self.number(d) if d.isdigit() else (self.unget(d), 0)[1]
                return Addr("step", n, step)
            return Addr("zero" if n == 0 else "n", n)
        if c == "$":
            return Addr("$")
        if c == "/" or c == "\\":
            delim = c if c == "/" else self.get()
            if not delim or delim in "\n\\":
                raise self.fail("unterminated address regex")
            body = self.slash(delim, True)
            if body is None:
                raise self.fail("unterminated address regex")
            icase = multi = False
            while True:
                c = self.get()
                if c == "I":
                    icase = True
                elif c == "M":
                    multi = True
                else:
                    self.unget(c)
                    break
            return Addr("re", regex=self.regex(body, icase, multi))
        self.unget(c)
        return None

    def number(self, first: str) -> int:
        digits = first
        while self.peek().isdigit():
            digits += self.get()
        return int(digits)

    def command(self) -> None:
        cmd = Cmd("")
        cmd.where = self.where
        cmd.a1 = self.address()
        if cmd.a1 is not None:
            c = self.skip_ws()
            if c == ",":
                c = self.skip_ws()
                if c == "+" or c == "~":
                    d = self.get()
                    if not d.isdigit():
                        raise self.fail("unexpected `,'")
                    cmd.a2 = Addr("plus" if c == "+" else "mult", self.number(d))
                else:
                    self.unget(c)
                    cmd.a2 = self.address()
                    if cmd.a2 is None:
                        raise self.fail("unexpected `,'", self.i + 1)
                    if cmd.a2.kind == "zero":
                        raise self.fail("invalid usage of line address 0")
                    if cmd.a2.kind == "step":
                        cmd.a2 = Addr("n", cmd.a2.n)
            else:
                self.unget(c)
        c = self.skip_ws()
        if c == "!":
            cmd.neg = True
            c = self.skip_ws()
            if c == "!":
                raise self.fail("multiple `!'s")
        if not c:
            raise self.fail("missing command")
        cmd.name = c
        if cmd.a1 is not None and cmd.a1.kind == "zero" and (cmd.a2 is None or cmd.a2.kind != "re"):
            raise self.fail("invalid usage of line address 0")
        has_addr = cmd.a1 is not None
        if c == "{":
            self.blocks.append((len(self.cmds), self.where))
            self.cmds.append(cmd)
            return
        if c == "}":
            if not self.blocks:
                raise self.fail("unexpected `}'")
            if has_addr or cmd.neg:
                raise self.fail("} doesn't want any addresses")
            start, _ = self.blocks.pop()
            self.cmds[start].jump = len(self.cmds)
            self.cmds.append(cmd)
            self.end_of_cmd()
            return
        if c == "#":
            if has_addr:
                raise self.fail("comments don't accept any addresses")
            while (c := self.get()) and c != "\n":
                pass
            return
        if c == ":":
            if has_addr:
                raise self.fail(": doesn't want any addresses")
            label = self.label()
            if not label:
                raise self.fail('":" lacks a label')
            cmd.text = label
        elif c in "btT":
            cmd.text = self.label()
        elif c in "aic":
            cmd.text = self.read_text()
        elif c in "Re":
            raise self.fail(f"the `{c}' command is not supported")
        elif c in "qQl":
            if c in "qQ" and cmd.a2 is not None:
                raise self.fail("command only uses one address")
            d = self.skip_ws()
            if d.isdigit():
                cmd.num = self.number(d)
            else:
                self.unget(d)
            self.end_of_cmd()
        elif c in "rwW":
            cmd.text = self.filename()
        elif c == "s":
            cmd.subst = self.subst()
        elif c == "y":
            cmd.ytable = self.ycmd()
            self.end_of_cmd()
        elif c == "=" or c in _NOARG:
            self.end_of_cmd()
        else:
            raise self.fail(f"unknown command: `{c}'")
        self.cmds.append(cmd)

    def end_of_cmd(self) -> None:
        c = self.skip_ws()
        if not c or c in "\n;":
            return
        if c in "#}":
            self.unget(c)
            return
        raise self.fail("extra characters after command")

    def label(self) -> str:
        c = self.skip_ws()
        out = []
        while c and c not in "\n;":
            out.append(c)
            c = self.get()
        return "".join(out).rstrip(" \t")

    def filename(self) -> str:
        c = self.skip_ws()
        out = []
        while c and c != "\n":
            out.append(c)
            c = self.get()
        if not out:
            raise self.fail("missing filename in r/R/w/W commands")
        return "".join(out)

    def read_text(self) -> str:
        c = self.skip_ws()
        if not c:
            raise self.fail("expected \\ after `a', `c' or `i'")
        if c == "\\":
            c = self.get()
            if c == "\n":
                c = self.get()
            elif c:
                pass
        out: list[str] = []
        while c:
            if c == "\\":
                c = self.get()
                if not c:
                    break
                out.append(c)
            elif c == "\n":
                break
            else:
                out.append(c)
            c = self.get()
        return "".join(out) + "\n"

    def slash(self, delim: str, regex: bool) -> str | None:
        """Text up to an unescaped `delim` (`\\delim` is the delimiter itself, and in a regex
        `\\n` is a newline); None when the text ends first."""
        out: list[str] = []
        while True:
            c = self.get()
            if not c:
                return None
            if c == "\\":
                c = self.get()
                if not c:
                    return None
                if c == delim:
                    out.append(c)
                elif regex and c in "n\n":
                    out.append("\n")
                else:
                    out.append("\\" + c)
            elif c == delim:
                return "".join(out)
            elif c == "\n" and regex:
                return None
            else:
                out.append(c)

    def regex(self, body: str, icase: bool, multi: bool) -> regexes.Compiled | None:
        if body == "":
            return None
        try:
            return compile_posix(_unescape_regex(body), self.extended, icase, multi)
        except RegexError as e:
            raise self.fail(e.message) from None

    def subst(self) -> Subst:
        delim = self.get()
        if not delim or delim in "\n\\":
            raise self.fail("unterminated `s' command")
        pat = self.slash(delim, True)
        repl = self.slash(delim, False) if pat is not None else None
        if pat is None or repl is None:
            raise self.fail("unterminated `s' command")
        glob = False
        nth: int | None = None
        pflag = 0
        icase = multi = False
        wfile = None
        while True:
            c = self.get()
            if c in ("i", "I"):
                icase = True
            elif c in ("m", "M"):
                multi = True
            elif c == "g":
                if glob:
                    raise self.fail("multiple `g' options to `s' command")
                glob = True
            elif c == "p":
                if pflag:
                    raise self.fail("multiple `p' options to `s' command")
                pflag = 1
            elif c.isdigit() and c:
                if nth is not None:
                    raise self.fail("multiple number options to `s' command")
                nth = self.number(c)
                if nth == 0:
                    raise self.fail("number option to `s' command may not be zero")
            elif c == "w":
                wfile = self.filename()
                break
            elif c == "e":
                raise self.fail("the `e' flag of `s' is not supported")
            elif not c or c in "\n;":
                break
            elif c in "#}":
                self.unget(c)
                break
            elif c in " \t":
                self.end_of_cmd()
                break
            else:
                raise self.fail("unknown option to `s'")
        regex = self.regex(pat, icase, multi)
        parts, cased, maxref = replacement(repl)
        groups = regex.groups if regex is not None else None
        if groups is not None and maxref > groups:
            raise self.fail(f"invalid reference \\{maxref} on `s' command's RHS")
        return Subst(regex, parts, cased, glob, nth or 1, pflag, wfile)

    def ycmd(self) -> dict[int, int]:
        delim = self.get()
        if not delim or delim in "\n\\":
            raise self.fail("unterminated `y' command")
        src = self.slash(delim, False)
        dst = self.slash(delim, False) if src is not None else None
        if src is None or dst is None:
            raise self.fail("unterminated `y' command")
        a, b = _unescape_y(src), _unescape_y(dst)
        if len(a) != len(b):
            raise self.fail("strings for `y' command are different lengths")
        return {ord(x): ord(y) for x, y in zip(a, b, strict=True)}


def _unescape_y(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            d = text[i + 1]
            out.append(_ESCAPES.get(d, d))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _unescape_regex(text: str) -> str:
    """GNU sed's escapes in a regex (`\\t`, `\\n`, ...) become the characters themselves."""
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            d = text[i + 1]
            if d in "afnrtv":
                out.append(_ESCAPES[d])
            else:
                out.append(c + d)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def replacement(text: str) -> tuple[list[str | int], bool, int]:
    """An s command's replacement: its parts (text, group numbers, case operators), whether
    it changes case, and the highest group it names (tar --transform reads it too)."""
    parts: list[str | int] = []
    lit: list[str] = []
    cased = False
    maxref = 0
    i = 0
    n = len(text)

    def flush() -> None:
        if lit:
            parts.append("".join(lit))
            lit.clear()

    while i < n:
        c = text[i]
        i += 1
        if c == "&":
            flush()
            parts.append(0)
        elif c == "\\" and i < n:
            d = text[i]
            i += 1
            if d.isdigit():
                flush()
                parts.append(int(d))
                maxref = max(maxref, int(d))
            elif d in _CASE:
                flush()
                parts.append(_CASE[d])
                cased = True
            elif d in _ESCAPES:
                lit.append(_ESCAPES[d])
            else:
                lit.append(d)
        else:
            lit.append(c)
    flush()
    return parts, cased, maxref
