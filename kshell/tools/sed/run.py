"""The sed executor: cycles over the input lines with pattern and hold space, as GNU sed 4.9.

Text is handled as latin-1 (one character per byte), so any byte passes through unchanged and
regexes see bytes as in the C locale.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kshell.exec import devices, regexes
from kshell.core.options import Fail
from kshell.tools.sed.script import Cmd, SedError, Subst
from kshell.tools.text.textio import Output, lines, message, open_chunks

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_L_ESC = {"\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
          "\t": "\\t", "\v": "\\v"}


class Quit(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


class Sink:
    """An output (stdout or a `w` file) that remembers whether its last line lacked a newline."""

    def __init__(self, write) -> None:
        self.write_bytes = write
        self.missing = False

    def text(self, data: str) -> None:
        if self.missing:
            self.write_bytes(b"\n")
            self.missing = False
        self.write_bytes(data.encode("latin-1"))

    def line(self, data: str, nl: bool, sep: str) -> None:
        if self.missing:
            self.write_bytes(b"\n")
        self.write_bytes((data + sep).encode("latin-1") if nl else data.encode("latin-1"))
        self.missing = not nl


class Input:
    """The lines of a list of operands with one line of lookahead (for `$`)."""

    def __init__(self, runner: Runner, names: list[str]) -> None:
        self.runner = runner
        self.names = list(names)
        self.it: Iterator[bytes] | None = None
        self.chunks: Iterator[bytes] | None = None
        self.ahead: bytes | None = None
        self.name = ""

    def _open_next(self) -> bool:
        while self.names:
            name = self.names.pop(0)
            try:
                self.chunks = open_chunks(self.runner.sh, name)
                self.it = lines(self.chunks, self.runner.sepb)
            except OSError as e:
                self.runner.sh.write_err(f"sed: can't read {name}: {message(e)}\n")
                self.runner.status = 2
                continue
            self.name = name
            return True
        return False

    def _pull(self) -> bytes | None:
        while True:
            if self.it is not None:
                try:
                    return next(self.it)
                except StopIteration:
                    self.it = None
                except OSError as e:
                    if e.errno == errno.EISDIR:
                        raise Fail(f"read error on {self.name}: {message(e)}", 4) from None
                    raise Fail(f"read error on {self.name}: {message(e)}", 4) from None
            if not self._open_next():
                return None

    def next(self) -> bytes | None:
        if self.ahead is not None:
            line, self.ahead = self.ahead, None
            return line
        return self._pull()

    def close(self) -> None:
        for gen in (self.it, self.chunks):
            close = getattr(gen, "close", None)
            if close is not None:
                close()
        self.it = self.chunks = None

    def at_end(self) -> bool:
        if self.ahead is None:
            self.ahead = self._pull()
        return self.ahead is None


class Runner:
    def __init__(self, sh: ToolContext, program: list[Cmd], quiet: bool, zero: bool, width: int) -> None:
        self.sh = sh
        self.prog = program
        self.quiet = quiet
        self.sep = "\0" if zero else "\n"
        self.sepb = self.sep.encode()
        self.width = width
        self.status = 0
        self.hold = ""
        self.last_re: regexes.Compiled | None = None
        self.wfiles: dict[str, Sink] = {}
        self.handles: list = []
        self.branches = 0  # taken since the last cancel check (`:a;ba` reads nothing, ever)
        self.out: Sink
        self.err = Sink(lambda b: sh.write_err(b.decode("latin-1")))

    # ---------------------------------------------------------------- files

    def open_wfiles(self, stdout: Sink) -> None:
        for cmd in self.prog:
            name = cmd.text if cmd.name in "wW" else (cmd.subst.wfile if cmd.subst else None)
            if name and name not in self.wfiles:
                if name == "/dev/stdout":
                    self.wfiles[name] = stdout
                    continue
                if name == "/dev/stderr":
                    self.wfiles[name] = self.err
                    continue
                try:
                    handle = devices.open_file(self.sh, name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                except OSError as e:
                    raise Fail(f"couldn't open file {name}: {message(e)}", 4) from None
                self.handles.append(handle)
                state = {"off": 0}

                def write(data: bytes, handle=handle, state=state) -> None:
                    handle.pwrite(data, state["off"])
                    state["off"] += len(data)

                self.wfiles[name] = Sink(write)

    def close_wfiles(self) -> None:
        for h in self.handles:
            h.close()
        self.handles.clear()

    # ---------------------------------------------------------------- addresses

    def match_one(self, a, ps: str) -> bool:
        k = a.kind
        if k == "n":
            return self.lineno == a.n
        if k == "re":
            return self.search(a.regex, ps) is not None
        if k == "$":
            return self.input.at_end()
        if k == "step":
            if a.step <= 0:
                return self.lineno == a.n
            return self.lineno >= a.n and (self.lineno - a.n) % a.step == 0
        return False

    def search(self, regex, ps: str):
        if regex is None:
            regex = self.last_re
            if regex is None:
                raise Fail("no previous regular expression", 1)
        else:
            self.last_re = regex
        return regex.search(ps)

    def matches(self, cmd: Cmd) -> bool:
        a2 = cmd.a2
        ln = self.lineno
        if a2 is None:
            return self.match_one(cmd.a1, self.ps)
        if cmd.active:
            k = a2.kind
            if k in ("n", "plus", "mult"):
                if ln >= cmd.end:
                    cmd.active = False
                return ln <= cmd.end
            if self.match_one(a2, self.ps):
                cmd.active = False
            return True
        if cmd.a1.kind == "zero":
            if cmd.closed:
                return False
            cmd.closed = True
            if self.match_one(a2, self.ps):
                return True
            cmd.active = True
            return True
        if not self.match_one(cmd.a1, self.ps):
            return False
        k = a2.kind
        if k == "n":
            if a2.n <= ln:
                return True
            cmd.end = a2.n
        elif k == "plus":
            if a2.n == 0:
                return True
            cmd.end = ln + a2.n
        elif k == "mult":
            if a2.n <= 0 or ln % a2.n == 0:
                return True
            cmd.end = ln + a2.n - ln % a2.n
        elif k == "$" and self.input.at_end():
            return True
        cmd.active = True
        return True

    # ---------------------------------------------------------------- cycles

    def read(self) -> bool:
        raw = self.input.next()
        if raw is None:
            return False
        text = raw.decode("latin-1")
        if text.endswith(self.sep):
            self.ps, self.chomped = text[:-1], True
        else:
            self.ps, self.chomped = text, False
        self.lineno += 1
        self.replaced = False
        return True

    def dump_append(self) -> None:
        for kind, value in self.append:
            if kind == "t":
                self.out.text(value)
            elif kind == "r":
                try:
                    data = devices.read_file(self.sh, value) if value != "-" else b""
                except OSError:
                    continue
                if data:
                    self.out.text(data.decode("latin-1"))
                    if not data.endswith(self.sepb):
                        self.out.missing = True
        self.append.clear()

    def process(self, input_: Input, out: Sink) -> None:
        """Run the script over `input_`; raises Quit to stop everything."""
        try:
            self._process(input_, out)
        finally:
            input_.close()

    def _process(self, input_: Input, out: Sink) -> None:
        self.input = input_
        self.out = out
        self.lineno = 0
        self.append: list[tuple[str, str]] = []
        self.ps = ""
        self.chomped = True
        self.replaced = False
        skip_read = False
        while True:
            if not skip_read and not self.read():
                return
            skip_read = False
            end = self.cycle()
            if end == "D":
                skip_read = True
                self.dump_append()
                continue
            if end != "d" and not self.quiet:
                out.line(self.ps, self.chomped, self.sep)
            self.dump_append()
            if end == "q":
                raise Quit(self.quit_status)
            if end == "eof":
                return

    def branch(self, target: int) -> int:
        """A jump: the only way a cycle can loop without reading, so Ctrl-C, `timeout` and
        the wall-time bound are checked here (every 1024 jumps)."""
        self.branches += 1
        if not self.branches & 1023:
            self.sh.session.cancel.check()
        return target

    def cycle(self) -> str:
        prog = self.prog
        n = len(prog)
        pc = 0
        while pc < n:
            cmd = prog[pc]
            if cmd.a1 is not None:
                if self.matches(cmd) == cmd.neg:
                    pc = cmd.jump + 1 if cmd.name == "{" else pc + 1
                    continue
            elif cmd.neg:
                pc = cmd.jump + 1 if cmd.name == "{" else pc + 1
                continue
            c = cmd.name
            pc += 1
            if c == "s":
                self.substitute(cmd.subst)
            elif c == "p":
                self.out.line(self.ps, True, self.sep)
            elif c == "d":
                return "d"
            elif c in "{}:#":
                pass
            elif c == "b":
                pc = self.branch(cmd.jump)
            elif c == "t":
                if self.replaced:
                    self.replaced = False
                    pc = self.branch(cmd.jump)
            elif c == "T":
                if not self.replaced:
                    pc = self.branch(cmd.jump)
                else:
                    self.replaced = False
            elif c == "h":
                self.hold = self.ps
            elif c == "H":
                self.hold += "\n" + self.ps
            elif c == "g":
                self.ps = self.hold
            elif c == "G":
                self.ps += "\n" + self.hold
            elif c == "x":
                self.ps, self.hold = self.hold, self.ps
            elif c == "n":
                if self.input.at_end():
                    return "eof"
                if not self.quiet:
                    self.out.line(self.ps, self.chomped, self.sep)
                self.dump_append()
                self.read()
            elif c == "N":
                if self.input.at_end():
                    return "eof"
                self.dump_append()
                prev = self.ps
                self.read()
                self.ps = prev + "\n" + self.ps
            elif c == "D":
                i = self.ps.find("\n")
                if i < 0:
                    return "d"
                self.ps = self.ps[i + 1 :]
                return "D"
            elif c == "P":
                i = self.ps.find("\n")
                self.out.line(self.ps if i < 0 else self.ps[:i], True, self.sep)
            elif c == "=":
                self.out.text(f"{self.lineno}\n")
            elif c == "a":
                self.append.append(("t", cmd.text))
            elif c == "i":
                self.out.text(cmd.text)
            elif c == "c":
                if cmd.a2 is None or not cmd.active or cmd.neg:
                    self.out.text(cmd.text)
                return "d"
            elif c == "q":
                self._quit(cmd.num or 0)
                return "q"
            elif c == "Q":
                raise Quit(cmd.num or 0)
            elif c == "y":
                self.ps = self.ps.translate(cmd.ytable)
            elif c == "l":
                self.list_(cmd.num if cmd.num is not None else self.width)
            elif c == "r":
                self.append.append(("r", cmd.text))
            elif c == "w":
                self.wfiles[cmd.text].line(self.ps, True, self.sep)
            elif c == "W":
                i = self.ps.find("\n")
                self.wfiles[cmd.text].line(self.ps if i < 0 else self.ps[:i], True, self.sep)
            elif c == "z":
                self.ps = ""
            elif c == "F":
                self.out.text(("-" if self.input.name == "-" else self.input.name) + "\n")
            elif c == "L":
                pass
        return ""

    def _quit(self, status: int) -> bool:
        self.quit_status = status
        return True

    def list_(self, width: int) -> None:
        pieces = []
        for ch in self.ps:
            esc = _L_ESC.get(ch)
            if esc is None:
                o = ord(ch)
                esc = ch if 32 <= o < 127 else f"\\{o:03o}"
            pieces.append(esc)
        out: list[str] = []
        if width > 1:
            cur: list[str] = []
            size = 0
            for p in pieces:
                if size + len(p) > width - 1:
                    out.append("".join(cur) + "\\\n")
                    cur, size = [], 0
                cur.append(p)
                size += len(p)
            out.append("".join(cur))
        else:
            out.append("".join(pieces))
        self.out.text("".join(out) + "$\n")

    def substitute(self, s: Subst) -> None:
        regex = s.regex
        if regex is None:
            regex = self.last_re
            if regex is None:
                raise Fail("no previous regular expression", 1)
        else:
            self.last_re = regex
        ps = self.ps
        count = 0
        pieces: list[str] = []
        pos = 0
        prev_end = -1
        done = False
        for m in regex.finditer(ps):
            st, en = m.span()
            if st == en and st == prev_end:
                continue
            prev_end = en
            count += 1
            if count < s.nth:
                continue
            pieces.append(ps[pos:st])
            pieces.append(expand(s, m))
            pos = en
            done = True
            if not s.glob:
                break
        if not done:
            return
        pieces.append(ps[pos:])
        self.ps = "".join(pieces)
        self.replaced = True
        if s.print_:
            self.out.line(self.ps, True, self.sep)
        if s.wfile:
            self.wfiles[s.wfile].line(self.ps, True, self.sep)


def expand(s: Subst, m: re.Match[str]) -> str:
    """The replacement text for one match."""
    if not s.cased:
        return "".join(p if type(p) is str else (m.group(p) or "") for p in s.parts)
    out: list[str] = []
    mode = 0  # -1 upper, -2 lower
    once = 0  # -3 upper next, -4 lower next
    for p in s.parts:
        if type(p) is int and p < 0:
            if p in (-1, -2):
                mode, once = p, 0
            elif p == -5:
                mode = once = 0
            else:
                once = p
            continue
        text = p if type(p) is str else (m.group(p) or "")
        if not text:
            continue
        if mode == -1:
            text = text.upper()
        elif mode == -2:
            text = text.lower()
        if once:
            text = (text[0].upper() if once == -3 else text[0].lower()) + text[1:]
            once = 0
        out.append(text)
    return "".join(out)


__all__ = ["Runner", "Input", "Sink", "Quit", "SedError", "Output", "expand"]
