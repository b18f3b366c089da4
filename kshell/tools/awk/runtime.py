"""awk's run-time state: records and fields, input (main, files, commands) and output
redirections. The compiled program (compile.py) runs BEGIN, the record loop and END on it."""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import native
from kshell.core.errors import SigPipe
from kshell.exec import devices, regexes
from kshell.exec.streams import BufferSink, BytesSource
from kshell.tools.awk.helpers import ARITH
from kshell.tools.awk.values import UNINIT, AwkFatal, field, field_number, num_to_str, to_num, to_str
from kshell.tools.sed.pattern import adjust
from kshell.tools.text.regex import RegexError, translate
from kshell.tools.text.textio import Output, message, open_chunks

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_WS = re.compile(r"[^ \t\n]+")
COLUMNS_MIN = 32  # a shorter batch runs the record loop's general copy: C's set-up costs more
_ASSIGN_ARG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=", re.S)


def run_shell(sh: Interp, cmd: str, stdin=None, stdout=None) -> int:
    """Run `cmd` as `sh -c` would, in a subshell of the K shell."""
    child = sh.fork()
    if stdin is not None:
        child.fds[0] = stdin
    if stdout is not None:
        child.fds[1] = stdout
    try:
        return child.run_subshell(lambda: child.run_string(cmd))
    except SigPipe:
        return 141


class Records:
    """Records from a stream of chunks, cut by RS as it is when each record is read."""

    def __init__(self, rt: Runtime, chunks: Iterator[bytes]) -> None:
        self.rt = rt
        self.chunks = chunks
        self.buf = ""
        self.eof = False
        # records already cut from `buf` by a one-character RS (`pending_rs`), the next last:
        # a chunk is split once, not sliced per record
        self.pending: list[str] = []
        self.pending_rs = ""

    def _more(self) -> bool:
        if self.eof:
            return False
        for chunk in self.chunks:
            self.buf += chunk.decode("latin-1")
            return True
        self.eof = True
        return False

    def _unsplit(self) -> None:
        """Put the records cut ahead back into `buf` (RS changed, or another RS form reads)."""
        if self.pending:
            rs = self.pending_rs
            self.pending.reverse()
            self.buf = rs.join(self.pending) + rs + self.buf
            self.pending = []

    def batch(self) -> list[str] | None:
        """The records up to the end of the next chunk that completes one, in order (at least
        one), cut by a one-character RS; one record for any other RS; None at the end."""
        rs = self.rt.vars["RS"]
        if type(rs) is not str:
            rs = to_str(rs, "%.6g")
        if self.pending:
            if rs == self.pending_rs:
                records = self.pending[::-1]
                self.pending = []
                return records
            self._unsplit()
        if len(rs) != 1:
            rec = self.next()
            return None if rec is None else [rec]
        start = 0
        while True:
            if self.buf.find(rs, start) >= 0:
                records = self.buf.split(rs)
                self.buf = records.pop()
                return records
            start = len(self.buf)
            if not self._more():
                if self.buf:
                    rec, self.buf = self.buf, ""
                    return [rec]
                return None

    def next(self) -> str | None:
        rs = self.rt.vars["RS"]
        if type(rs) is not str:
            rs = to_str(rs, "%.6g")
        pending = self.pending
        if pending:
            if rs == self.pending_rs:
                return pending.pop()
            self._unsplit()
        if len(rs) == 1:
            start = 0
            while True:
                if self.buf.find(rs, start) >= 0:
                    parts = self.buf.split(rs)
                    self.buf = parts.pop()
                    if len(parts) > 1:
                        parts.reverse()
                        rec = parts.pop()
                        self.pending = parts
                        self.pending_rs = rs
                        return rec
                    return parts[0]
                start = len(self.buf)
                if not self._more():
                    if self.buf:
                        rec, self.buf = self.buf, ""
                        return rec
                    return None
        while self._more():
            pass
        if rs == "":
            self.buf = self.buf.lstrip("\n")
            if not self.buf:
                return None
            m = re.search(r"\n\n+", self.buf)
            if m is None:
                rec, self.buf = self.buf.rstrip("\n"), ""
                return rec
            rec = self.buf[: m.start()]
            self.buf = self.buf[m.end() :]
            return rec
        if not self.buf:
            return None
        m = self.rt.dyn_regex(rs).search(self.buf)
        if m is None or m.end() == m.start():
            rec, self.buf = self.buf, ""
            return rec
        rec = self.buf[: m.start()]
        self.buf = self.buf[m.end() :]
        return rec

    def close(self) -> None:
        close = getattr(self.chunks, "close", None)
        if close is not None:
            close()


class OutFile:
    def __init__(self, rt: Runtime, op: str, name: str) -> None:
        self.rt = rt
        self.name = name
        self.op = op
        self.parts: list[str] = []
        self.handle = None
        self.stream = None
        self.offset = 0
        sh = rt.sh
        if op == "|":
            return
        if name in ("/dev/stdout", "-"):
            self.stream = "stdout"
            return
        if name == "/dev/stderr":
            self.stream = "stderr"
            return
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if op == ">>" else os.O_TRUNC)
        try:
            self.handle = devices.open_file(sh, name, flags)
        except OSError as e:
            raise AwkFatal(f"cannot redirect to `{name}': {message(e)}") from None
        if op == ">>":
            self.offset = self.handle.inode.size if hasattr(self.handle, "inode") else 0

    def write(self, s: str) -> None:
        if self.stream == "stdout":
            self.rt.write(s)
        elif self.stream == "stderr":
            self.rt.flush()
            self.rt.sh.write_err(s)
        else:
            self.parts.append(s)
            if self.handle is not None and len(self.parts) > 512:
                self.flush()

    def flush(self) -> None:
        if self.handle is not None and self.parts:
            data = "".join(self.parts).encode("latin-1")
            self.parts.clear()
            if self.op == ">>":
                self.handle.pwrite(data, self.handle_size())
            else:
                self.handle.pwrite(data, self.offset)
                self.offset += len(data)

    def handle_size(self) -> int:
        try:
            return devices.stat(self.rt.sh, self.name).size
        except OSError:
            return 0

    def close(self) -> int:
        if self.op == "|":
            self.rt.flush()
            data = "".join(self.parts).encode("latin-1")
            self.parts.clear()
            return run_shell(self.rt.sh, self.name, stdin=BytesSource(data))
        if self.handle is not None:
            self.flush()
            self.handle.close()
            self.handle = None
        return 0


class Runtime:
    def __init__(self, sh: Interp) -> None:
        self.sh = sh
        self.out = Output(sh)
        self.pending: list[str] = []  # written, not yet encoded into `out`
        self.vars: dict = {
            "FS": " ", "OFS": " ", "ORS": "\n", "RS": "\n", "NR": 0.0, "FNR": 0.0, "NF": 0.0,
            "SUBSEP": "\x1c", "CONVFMT": "%.6g", "OFMT": "%.6g", "RSTART": 0.0, "RLENGTH": -1.0,
            "FILENAME": "",
        }
        env = {}
        for k, v in sh.exported_env().items():
            env[k] = field(v)
        self.vars["ENVIRON"] = env
        self.record = ""
        self.fields: list[str] | None = []
        self._char_fs = "\0\0"  # the last FS seen that splits on its one character (str.split)
        self.frame: list = []
        self.depth = 0
        self.seed = 0.0
        self.random = random.Random(0)
        self.regex_cache: dict[str, regexes.Compiled] = {}
        self.outputs: dict[str, OutFile] = {}
        self.readers: dict[str, Records] = {}
        self.main: Records | None = None
        self.argi = 1
        self.used_files = False
        self.status = 0

    def checkpoint(self) -> None:
        """Every 1024th iteration of an awk loop: Ctrl-C, `timeout` and the wall time
        (`BEGIN{while(1){}}` reads nothing, so no input check would ever see them)."""
        self.sh.session.cancel.check()

    # ---------------------------------------------------------------- conversions

    def convfmt(self) -> str:
        return self.vars["CONVFMT"]

    def out_str(self, x: float) -> str:
        return num_to_str(x, self.vars["OFMT"])

    def key_str(self, x: float) -> str:
        return num_to_str(x, self.vars["CONVFMT"])

    def warn(self, text: str) -> None:
        self.flush()
        self.sh.write_err(f"awk: cmd. line:1: warning: {text}\n")

    def regex(self, src: str) -> regexes.Compiled:
        cached = self.regex_cache.get(src)
        if cached is not None:
            return cached
        try:
            text, _ = translate(src, True)
            compiled = regexes.compile(adjust(text), re.ASCII)
        except (RegexError, *regexes.error) as e:
            msg = e.message if isinstance(e, RegexError) else str(e)
            raise AwkFatal(f"invalid regexp: {msg}: /{src}/") from None
        self.regex_cache[src] = compiled
        return compiled

    def dyn_regex(self, v) -> regexes.Compiled:
        return self.regex(_escapes(to_str(v, self.vars["CONVFMT"])))

    # ---------------------------------------------------------------- fields

    def set_record(self, text: str) -> None:
        self.record = text
        self.fields = None

    def split_fs(self, s: str, fs: str) -> tuple[list[str], list[str]]:
        if fs == " ":
            parts = _WS.findall(s)
            return parts, []
        if s == "":
            return [], []
        if len(fs) == 1 and fs != "\\" and (fs == "\t" or not fs.isalnum()):
            return s.split(fs), []
        if fs == "":
            return list(s), []
        return self.split_regex(s, self.dyn_regex(fs))

    def split_regex(self, s: str, regex: regexes.Compiled) -> tuple[list[str], list[str]]:
        if s == "":
            return [], []
        parts: list[str] = []
        seps: list[str] = []
        pos = 0
        for m in regex.finditer(s):
            if m.end() == m.start():
                continue
            parts.append(s[pos : m.start()])
            seps.append(m.group())
            pos = m.end()
        parts.append(s[pos:])
        return parts, seps

    def char_sep(self) -> str | None:
        """How the main loop cuts the fields of the records of a batch (FS does not change
        within one unless the program assigns it): the one character str.split takes, ""
        for the default (white space: str.split() when the record is printable), None for
        split() to decide."""
        fs = to_str(self.vars["FS"])
        if fs == " ":
            return ""
        if len(fs) == 1 and fs != "\\" and (fs == "\t" or not fs.isalnum()):
            return fs
        return None

    def split(self) -> list[str]:
        f = self.fields
        if f is None:
            fs = self.vars["FS"]
            rec = self.record
            if fs == self._char_fs and type(fs) is str:  # split_fs's one-character case
                f = self.fields = rec.split(fs) if rec else []
            elif fs == " " and rec.isprintable():
                # no tab, newline or other white space that str.split() would also cut at
                f = self.fields = rec.split()
            else:
                fs = to_str(fs)
                if len(fs) == 1 and fs != " " and fs != "\\" and (fs == "\t" or not fs.isalnum()):
                    self._char_fs = fs
                f = self.fields = self.split_fs(rec, fs)[0]
        return f

    def cut(self, rec: str) -> list[str]:
        """The fields of a record of the main loop as FS cuts them, leaving rt.record and
        rt.fields alone (the loop may not store its records there: compile.py)."""
        return self.split_fs(rec, to_str(self.vars["FS"]))[0]

    def columns(self, batch: list[str], sep: str | None, cuts: int, nums: tuple[int, ...],
                texts: tuple[int, ...], want_nf: bool) -> list[Sequence] | None:
        """For the record loop's columnar copy (compile.py, Compiler.columnar): the batch's
        records, then for each j in nums the number in field j+1 of each (0 past NF), for each
        j in texts its text ("" past NF), and with want_nf min(NF, cuts + 1) of each, all cut
        and converted by one C call (native.awk_columns). None, for the general copy, when
        sep (char_sep) is None (a regex FS), the batch is short or not cut by a one-character
        RS."""
        if sep is None or len(batch) < COLUMNS_MIN:
            return None
        rs = self.vars["RS"]
        if type(rs) is not str:
            rs = to_str(rs, "%.6g")
        if len(rs) != 1 or ord(rs) > 255 or sep and ord(sep) > 255:  # C reads bytes
            return None
        got = native.awk_columns(rs.join(batch).encode("latin-1"), len(batch), ord(rs),
                                 ord(sep) if sep else -1, cuts, nums, texts, want_nf)
        if got is None:  # a record holds RS: the batch was not cut by it
            return None
        numbers, joined, nf, unread = got
        if unread:  # numbers C leaves to values.field_number (NaN)
            for j, column in zip(nums, numbers):
                for r, v in enumerate(column):
                    if v != v:
                        column[r] = field_number(self.cut(batch[r])[j])
        out = [batch, *numbers]
        if texts:
            parts = joined.decode("latin-1").split(sep or " ")
            out += [parts[k :: len(texts)] for k in range(len(texts))]
        if nf is not None:
            out.append(nf)
        return out

    def get_record(self) -> str:
        return self.record

    def get_record_value(self):
        return field(self.record)

    def get_field(self, i: int):
        if i == 0:
            return field(self.record)
        if i < 0:
            raise AwkFatal(f"attempt to access field {i}")
        f = self.fields if self.fields is not None else self.split()
        if i > len(f):
            return UNINIT
        return field(f[i - 1])

    def field_text(self, j: int) -> str:
        """Field j+1's text ("" past NF)."""
        f = self.fields if self.fields is not None else self.split()
        return f[j] if j < len(f) else ""

    def field_num(self, j: int) -> float:
        """Field j+1's value as a number (0 past NF)."""
        f = self.fields if self.fields is not None else self.split()
        return field_number(f[j]) if j < len(f) else 0.0

    def get_nf(self) -> float:
        return float(len(self.split()))

    def rebuild(self) -> None:
        self.record = to_str(self.vars["OFS"], self.convfmt()).join(self.fields or [])

    def set_field(self, i: int, v) -> None:
        s = v if type(v) is str else to_str(v, self.convfmt())
        if i == 0:
            self.set_record(s)
            return
        if i < 0:
            raise AwkFatal(f"attempt to access field {i}")
        f = self.split()
        if i > len(f):
            f.extend([""] * (i - len(f)))
        f[i - 1] = s
        self.rebuild()

    def store_field(self, v, i: int):
        """`$i = v` as an expression: v."""
        self.set_field(i, v)
        return v

    def augment_field(self, v: float, i: int, op: str, post: bool = False) -> float:
        """`$i op= v` (the field's index evaluated once): the new value, the old for $i++."""
        old = to_num(self.get_field(i))
        new = ARITH[op](old, v)
        self.set_field(i, new)
        return old if post else new

    def set_special(self, name: str, v):
        if name == "NF":
            n = int(to_num(v))
            if n < 0:
                raise AwkFatal("NF set to negative value")
            f = self.split()
            if n < len(f):
                del f[n:]
            else:
                f.extend([""] * (n - len(f)))
            self.rebuild()
            return v
        self.vars[name] = v if type(v) is str else to_str(v, self.convfmt())
        return v

    # ---------------------------------------------------------------- output

    def write(self, s: str) -> None:
        pending = self.pending
        pending.append(s)
        if len(pending) >= 512:  # as compile's print does
            self.drain()

    def drain(self) -> None:
        """Hand the text written so far to the output buffer (encoded once for many writes)."""
        if self.pending:
            data = "".join(self.pending).encode("latin-1")
            self.pending.clear()
            self.out.write(data)

    def flush(self) -> None:
        self.drain()
        self.out.flush()

    def output(self, op: str, name: str) -> OutFile:
        f = self.outputs.get(name)
        if f is None:
            f = self.outputs[name] = OutFile(self, op, name)
        return f

    def close(self, name: str) -> int:
        status = -1
        f = self.outputs.pop(name, None)
        if f is not None:
            status = f.close()
        r = self.readers.pop(name, None)
        if r is not None:
            r.close()
            status = 0 if status == -1 else status
        return status

    def close_all(self) -> None:
        for name in list(self.outputs):
            self.close(name)
        for name in list(self.readers):
            self.close(name)
        if self.main is not None:
            self.main.close()
            self.main = None

    def fflush(self) -> float:
        self.flush()
        for f in self.outputs.values():
            f.flush()
        return 0.0

    def system(self, cmd: str) -> int:
        self.fflush()
        return run_shell(self.sh, cmd)

    # ---------------------------------------------------------------- input

    def next_main(self) -> str | None:
        """The next record of the main input (ARGV operands, or standard input)."""
        while True:
            if self.main is not None:
                rec = self.main.next()
                if rec is not None:
                    return rec
                self.main.close()
                self.main = None
            if not self.open_next():
                return None

    def next_batch(self, single: bool) -> list[str] | None:
        """The main loop's next records: all those the main input's next chunk completes, or
        only the next one (`single`: getline reads the main input too, or RS may change
        between records). None at the end of the input."""
        if single:
            rec = self.next_main()
            return None if rec is None else [rec]
        while True:
            if self.main is not None:
                records = self.main.batch()
                if records is not None:
                    return records
                self.main.close()
                self.main = None
            if not self.open_next():
                return None

    def end_file(self) -> None:
        """nextfile: the rest of the current input is skipped."""
        if self.main is not None:
            self.main.close()
            self.main = None

    def open_next(self) -> bool:
        """Make the next main input current: the ARGV operands in turn (doing command-line
        assignments on the way), standard input when none named a file. False at the end."""
        while True:
            argv = self.vars["ARGV"]
            argc = int(to_num(self.vars.get("ARGC", 0.0)))
            if self.argi >= argc:
                if self.used_files:
                    return False
                self.used_files = True
                self.vars["FILENAME"] = ""
                self.vars["FNR"] = 0.0
                self.main = Records(self, open_chunks(self.sh, "-"))
                return True
            arg = to_str(argv.get(str(self.argi), ""), self.convfmt())
            self.argi += 1
            if arg == "":
                continue
            if _ASSIGN_ARG.match(arg):
                name, _, value = arg.partition("=")
                self.assign_arg(name, value)
                continue
            self.used_files = True
            try:
                if arg != "-" and devices.stat(self.sh, arg).is_dir:
                    self.warn_plain(f"command line argument `{arg}' is a directory: skipped")
                    continue
                chunks = open_chunks(self.sh, arg)
            except OSError as e:
                self.flush()
                self.sh.write_err(f"awk: fatal: cannot open file `{arg}' for reading: {message(e)}\n")
                raise AwkFatal("", 2) from None
            self.vars["FILENAME"] = arg
            self.vars["FNR"] = 0.0
            self.main = Records(self, chunks)
            return True

    def warn_plain(self, text: str) -> None:
        self.flush()
        self.sh.write_err(f"awk: warning: {text}\n")

    def assign_arg(self, name: str, value: str) -> None:
        v = field(_escapes_str(value))
        if name in ("FS", "OFS", "ORS", "RS", "SUBSEP", "CONVFMT", "OFMT"):
            self.vars[name] = str(v)
        else:
            self.vars[name] = v

    # getline: with `text` the record's text is the answer (the compiled code assigns it to
    # the target); without, the record becomes $0 and the answer is 1. 0 at the end, -1 when
    # the file cannot be read.

    def getline_main(self, text: bool) -> str | float:
        rec = self.next_main()
        if rec is None:
            return 0.0
        self.vars["NR"] = to_num(self.vars["NR"]) + 1
        self.vars["FNR"] = to_num(self.vars["FNR"]) + 1
        if text:
            return rec
        self.set_record(rec)
        return 1.0

    def getline_file(self, name: str, text: bool) -> str | float:
        r = self.readers.get(name)
        if r is None:
            try:
                r = Records(self, open_chunks(self.sh, name))
            except OSError:
                return -1.0
            self.readers[name] = r
        try:
            rec = r.next()
        except OSError:
            return -1.0
        if rec is None:
            return 0.0
        if text:
            return rec
        self.set_record(rec)
        self.vars["NR"] = to_num(self.vars["NR"]) + 1
        return 1.0

    def getline_cmd(self, cmd: str, text: bool) -> str | float:
        r = self.readers.get(cmd)
        if r is None:
            self.fflush()
            sink = BufferSink(1 << 30, "command output")
            run_shell(self.sh, cmd, stdout=sink)
            r = Records(self, iter([bytes(sink.data)]))
            self.readers[cmd] = r
        rec = r.next()
        if rec is None:
            return 0.0
        self.vars["NR"] = to_num(self.vars["NR"]) + 1
        if text:
            return rec
        self.set_record(rec)
        return 1.0


def _escapes(s: str) -> str:
    return s


_STR_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "/": "/", "a": "\a",
            "b": "\b", "f": "\f", "v": "\v"}


def _escapes_str(s: str) -> str:
    """Escape sequences in a -v or command-line assignment value, as in a string literal."""
    if "\\" not in s:
        return s
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            d = s[i + 1]
            if d in _STR_ESC:
                out.append(_STR_ESC[d])
            else:
                out.append("\\" + d)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)
