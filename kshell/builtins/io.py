"""echo, printf (bash's full format set) and read."""

from __future__ import annotations

import math
import re
import time
from typing import TYPE_CHECKING

from kshell.builtins import builtin
from kshell.exec.errors import CommandError
from kshell.syntax.parts import unicode_char

if TYPE_CHECKING:
    from kshell.exec.interp import Interp


def _enc(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------- escapes

_ECHO_ESC = re.compile(r"\\(0[0-7]{0,3}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|.)", re.DOTALL)
_PRINTF_ESC = re.compile(r"\\([0-7]{1,3}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|.)", re.DOTALL)
_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
           "t": "\t", "v": "\v", "\\": "\\"}


class _Stop(Exception):
    """`\\c`: produce no further output."""


def _byte(v: int) -> str:
    v &= 0xFF
    return chr(v) if v < 0x80 else chr(0xDC00 + v)


def _decode(text: str, rx: re.Pattern[str], echo: bool, quote: bool = False,
            utf8: bool = True) -> tuple[str, bool]:
    """Backslash escapes as echo -e / printf %b (echo=True: octal needs a leading 0) or the
    printf format string; `utf8` is the locale's (for \\u). Returns (text, stopped by \\c)."""
    stopped = False
    out: list[str] = []
    pos = 0
    for m in rx.finditer(text):
        out.append(text[pos : m.start()])
        pos = m.end()
        esc = m.group(1)
        c = esc[0]
        if c == "c" and len(esc) == 1:
            stopped = True
            break
        if c in _SIMPLE and len(esc) == 1:
            out.append(_SIMPLE[c])
        elif c == "0" and echo:
            out.append(_byte(int(esc[1:] or "0", 8)))
        elif "0" <= c <= "7" and not echo:
            out.append(_byte(int(esc, 8)))
        elif c == "x" and len(esc) > 1:
            out.append(_byte(int(esc[1:], 16)))
        elif (c == "u" or c == "U") and len(esc) > 1:
            out.append(unicode_char(int(esc[1:], 16), utf8, m.group(0)))
        elif quote and c in "\"'?":
            out.append(c)
        else:
            out.append(m.group(0))
    else:
        out.append(text[pos:])
    return "".join(out), stopped


# --------------------------------------------------------------------------- echo


@builtin("echo")
def echo(sh: Interp, argv: list[str]) -> int:
    newline = True
    escapes = "xpg_echo" in sh.shopts
    i = 1
    n = len(argv)
    while i < n:
        arg = argv[i]
        if len(arg) > 1 and arg[0] == "-" and all(c in "neE" for c in arg[1:]):
            for c in arg[1:]:
                if c == "n":
                    newline = False
                elif c == "e":
                    escapes = True
                else:
                    escapes = False
            i += 1
            continue
        break
    text = " ".join(argv[i:])
    if escapes and "\\" in text:
        text, stopped = _decode(text, _ECHO_ESC, echo=True, utf8=sh.utf8_locale())
        if stopped:
            newline = False
    if newline:
        text += "\n"
    sh.out(_enc(text))
    return 0


# --------------------------------------------------------------------------- printf

_SPEC = re.compile(r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
                   r"(?P<len>hh|h|ll|l|L|q|j|z|t)?(?P<conv>\(([^)]*)\)T|[a-zA-Z%])", re.DOTALL)


class _Args:
    __slots__ = ("args", "i", "sh", "status", "used")

    def __init__(self, sh: Interp, args: list[str]) -> None:
        self.sh = sh
        self.args = args
        self.i = 0
        self.status = 0
        self.used = False

    def more(self) -> bool:
        return self.i < len(self.args)

    def next(self) -> str | None:
        if self.i < len(self.args):
            self.i += 1
            self.used = True
            return self.args[self.i - 1]
        return None

    def number(self, conv: str) -> int:
        arg = self.next()
        if arg is None or arg == "":
            return 0
        return self.to_int(arg)

    def to_int(self, arg: str) -> int:
        text = arg.strip(" \t\n")
        if text[:1] in "'\"" and len(text) >= 1:
            return ord(text[1]) if len(text) > 1 else 0
        m = re.match(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
        if m is None:
            self.sh.error(f"printf: {arg}: invalid number")
            self.status = 1
            return 0
        body = m.group(0)
        sign = -1 if body.startswith("-") else 1
        digits = body.lstrip("+-")
        if digits.lower().startswith("0x"):
            value = int(digits[2:], 16)
        elif digits.startswith("0") and len(digits) > 1:
            value = int(digits, 8)
        else:
            value = int(digits)
        if m.end() != len(text):
            self.sh.error(f"printf: {arg}: invalid number")
            self.status = 1
        value *= sign
        if value >= 1 << 63 or value < -(1 << 63):
            self.sh.error(f"printf: {arg}: Result too large")
            self.status = 1
            value = (1 << 63) - 1 if value > 0 else -(1 << 63)
        return value

    def floating(self) -> float:
        arg = self.next()
        if arg is None or arg == "":
            return 0.0
        text = arg.strip()
        if text[:1] in "'\"":
            return float(ord(text[1])) if len(text) > 1 else 0.0
        try:
            return float(text)
        except ValueError:
            try:
                return float(self.to_int(text))
            except Exception:  # noqa: BLE001
                self.sh.error(f"printf: {arg}: invalid number")
                self.status = 1
                return 0.0


def _pad(text: str, flags: str, width: int | None) -> str:
    if width is None or len(text) >= width:
        return text
    if "-" in flags:
        return text.ljust(width)
    return text.rjust(width)


def _int_format(value: int, conv: str, flags: str, width: int | None, prec: int | None) -> str:
    if conv in "ouxX":
        value &= (1 << 64) - 1
    if conv in "di" or conv == "u":
        digits = str(abs(value))
    elif conv == "o":
        digits = format(value, "o")
    elif conv == "x":
        digits = format(value, "x")
    else:
        digits = format(value, "X")
    if prec is not None:
        if prec == 0 and value == 0:
            digits = ""
        digits = digits.rjust(prec, "0")
    prefix = ""
    if conv in "di":
        if value < 0:
            prefix = "-"
        elif "+" in flags:
            prefix = "+"
        elif " " in flags:
            prefix = " "
    elif "#" in flags:
        if conv == "o" and not digits.startswith("0"):
            prefix = "0"
        elif conv in "xX" and value != 0:
            prefix = "0" + conv
    if "0" in flags and "-" not in flags and prec is None and width is not None:
        digits = digits.rjust(width - len(prefix), "0")
    return _pad(prefix + digits, flags, width)


def _float_format(value: float, conv: str, flags: str, width: int | None, prec: int | None) -> str:
    spec = "".join(c for c in flags if c in "-+ #0")
    if math.isinf(value) or math.isnan(value):
        spec = spec.replace("0", "")
    text = ("%" + spec + (str(width) if width is not None else "") +
            ("." + str(prec) if prec is not None else "") + conv) % value
    return text


def _format_once(sh: Interp, fmt: str, args: _Args, out: list[str]) -> bool:
    """Apply `fmt` once; returns False if \\c stopped output."""
    pos = 0
    n = len(fmt)
    while pos < n:
        pct = fmt.find("%", pos)
        bs = fmt.find("\\", pos)
        if pct < 0 and bs < 0:
            out.append(fmt[pos:])
            return True
        if bs >= 0 and (pct < 0 or bs < pct):
            out.append(fmt[pos:bs])
            m = _PRINTF_ESC.match(fmt, bs)
            if m is None:
                out.append("\\")
                pos = bs + 1
                continue
            if m.group(1) == "c":
                return False
            text, _ = _decode(m.group(0), _PRINTF_ESC, echo=False, quote=True,
                              utf8=sh.utf8_locale())
            out.append(text)
            pos = m.end()
            continue
        out.append(fmt[pos:pct])
        m = _SPEC.match(fmt, pct)
        if m is None:
            if pct + 1 >= n:
                out.append("%")
                pos = n
                continue
            spec = re.match(r"%[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d*))?(?:hh|h|ll|l|L|q|j|z|t)?", fmt[pct:])
            rest = fmt[pct + len(spec.group(0)):] if spec else ""
            if not rest:
                sh.error(f"printf: `{spec.group(0) if spec else '%'}': missing format character")
                args.status = 1
                raise _FormatError()
            bad = rest[0]
            sh.error(f"printf: `{bad}': invalid format character")
            args.status = 1
            raise _FormatError()
        pos = m.end()
        conv = m.group("conv")
        if conv == "%":
            out.append("%")
            continue
        flags = m.group("flags") or ""
        width_s = m.group("width")
        prec_s = m.group("prec")
        width: int | None = None
        prec: int | None = None
        if width_s == "*":
            width = args.number("d")
            if width < 0:
                flags += "-"
                width = -width
        elif width_s:
            width = int(width_s)
        if prec_s == "*":
            prec = args.number("d")
            if prec < 0:
                prec = None
        elif prec_s is not None:
            prec = int(prec_s) if prec_s else 0
        if conv.endswith("T") and conv.startswith("("):
            arg = args.next()
            tfmt = conv[1:-2] or "%X"
            if arg is None or arg == "" or arg == "-1":
                stamp = time.time()
            elif arg == "-2":
                stamp = sh.session.started_wall if hasattr(sh.session, "started_wall") else time.time()
            else:
                stamp = args.to_int(arg)
            text = time.strftime(tfmt, time.localtime(stamp))
            if prec is not None:
                text = text[:prec]
            out.append(_pad(text, flags, width))
            continue
        if conv == "s":
            arg = args.next()
            text = arg if arg is not None else ""
            if prec is not None:
                text = text[:prec]
            out.append(_pad(text, flags, width))
        elif conv == "b":
            arg = args.next() or ""
            text, stopped = _decode(arg, _ECHO_ESC, echo=True, utf8=sh.utf8_locale())
            if prec is not None:
                text = text[:prec]
            out.append(_pad(text, flags, width))
            if stopped:
                return False
        elif conv == "q":
            arg = args.next()
            text = _printf_q(arg if arg is not None else "")
            out.append(_pad(text, flags, width))
        elif conv == "c":
            arg = args.next()
            # the first byte (in any locale, as bash), or a NUL byte for an empty argument
            text = arg.encode("utf-8", "surrogateescape")[:1].decode("utf-8", "surrogateescape") \
                if arg else "\0"
            out.append(_pad(text, flags, width))
        elif conv in "diouxX":
            out.append(_int_format(args.number(conv), conv, flags, width, prec))
        elif conv in "feEgGaAF":
            out.append(_float_format(args.floating(), conv, flags, width, prec))
        elif conv == "n":
            pass
        else:
            if conv in "hlLqjzt" and pos >= n:
                sh.error(f"printf: `{m.group(0)}': missing format character")
            else:
                sh.error(f"printf: `{conv}': invalid format character")
            args.status = 1
            raise _FormatError()
    return True


class _FormatError(Exception):
    pass


_Q_SAFE = re.compile(r"[A-Za-z0-9@%+=:,./_^-]+\Z")


def _printf_q(text: str) -> str:
    if text == "":
        return "''"
    if _Q_SAFE.match(text):
        return text
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        from kshell.expand.params import quote_q

        return quote_q(text)
    out = []
    for c in text:
        if c.isalnum() or c in "@%+=:,./_^-" or ord(c) > 127:
            out.append(c)
        else:
            out.append("\\" + c)
    return "".join(out)


@builtin("printf")
def printf(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    var = None
    while args and args[0].startswith("-") and args[0] != "-":
        if args[0] == "--":
            args = args[1:]
            break
        if args[0] == "-v" and len(args) > 1:
            var = args[1]
            args = args[2:]
            continue
        if args[0].startswith("-v") and len(args[0]) > 2:
            var = args[0][2:]
            args = args[1:]
            continue
        sh.error(f"printf: {args[0]}: invalid option")
        sh.write_err("printf: usage: printf [-v var] format [arguments]\n")
        return 2
    if not args:
        sh.write_err("printf: usage: printf [-v var] format [arguments]\n")
        return 2
    fmt = args[0]
    state = _Args(sh, args[1:])
    out: list[str] = []
    try:
        while True:
            state.used = False
            if not _format_once(sh, fmt, state, out):
                break
            if not state.more() or not state.used:
                break
    except _FormatError:
        pass
    text = "".join(out)
    if var is not None:
        from kshell.exec.varops import ReadonlyError

        try:
            if "[" in var and var.endswith("]"):
                name, _, key = var[:-1].partition("[")
                sh.set_element(name, sh.element_key_text(name, key), text)
            else:
                if not sh.is_valid_name(var):
                    sh.error(f"printf: `{var}': not a valid identifier")
                    return 2
                sh.assign_scalar(var, text)
        except ReadonlyError as e:
            sh.error(f"printf: {e.name}: readonly variable")
            return 1
    else:
        sh.out(_enc(text))
    return state.status


# --------------------------------------------------------------------------- read


@builtin("read")
def read(sh: Interp, argv: list[str]) -> int:
    raw = False
    array = None
    delim = "\n"
    nchars = -1
    exact = False
    prompt = None
    timeout = None
    fd = 0
    names: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        j = 1
        while j < len(arg):
            c = arg[j]
            if c in "rs":
                if c == "r":
                    raw = True
                j += 1
                continue
            if c in "adnNptu":
                value = arg[j + 1 :]
                if not value:
                    i += 1
                    if i >= len(argv):
                        sh.error(f"read: -{c}: option requires an argument")
                        sh.write_err("read: usage: read [-ers] [-a array] [-d delim] [-i text] "
                                     "[-n nchars] [-N nchars] [-p prompt] [-t timeout] [-u fd] "
                                     "[name ...]\n")
                        return 2
                    value = argv[i]
                if c == "a":
                    array = value
                elif c == "d":
                    delim = value[:1] if value else "\0"
                elif c in "nN":
                    try:
                        nchars = int(value)
                    except ValueError:
                        sh.error(f"read: {value}: invalid number")
                        return 1
                    exact = c == "N"
                elif c == "p":
                    prompt = value
                elif c == "t":
                    try:
                        timeout = float(value)
                    except ValueError:
                        sh.error(f"read: {value}: invalid timeout specification")
                        return 1
                elif c == "u":
                    if not value.isdigit():
                        sh.error(f"read: {value}: invalid file descriptor specification")
                        return 1
                    fd = int(value)
                break
            sh.error(f"read: -{c}: invalid option")
            sh.write_err("read: usage: read [-ers] [-a array] [-d delim] [-i text] [-n nchars] "
                         "[-N nchars] [-p prompt] [-t timeout] [-u fd] [name ...]\n")
            return 2
        i += 1
    names = argv[i:]
    for name in names:
        if not sh.is_valid_name(name):
            sh.error(f"read: `{name}': not a valid identifier")
            return 1
    if prompt is not None:
        pass  # bash prints the prompt only when reading from a terminal
    stream = sh.fds.get(fd)
    if stream is None or not stream.readable:
        sh.error(f"read: read error: {fd}: Bad file descriptor")
        return 1
    if timeout is not None and timeout == 0:
        return 0
    try:
        return _read_input(sh, stream, fd, delim, nchars, exact, raw, names, array)
    except OSError as e:
        from kshell.exec.redirects import os_message

        sh.error(f"read: read error: {fd}: {os_message(e)}")
        return 1


def _read_input(sh: Interp, stream, fd: int, delim: str, nchars: int, exact: bool, raw: bool,
                names: list[str], array: str | None) -> int:
    bdelim = delim.encode("utf-8", "surrogateescape") if delim != "\0" else b"\0"
    eof = False
    if nchars >= 0:
        data = _read_chars(stream, nchars, b"" if exact else bdelim)
        if exact:
            eof = len(data.decode("utf-8", "surrogateescape")) < nchars
        else:
            eof = not data.endswith(bdelim) and len(data.decode("utf-8", "surrogateescape")) < nchars
            if data.endswith(bdelim):
                data = data[: -len(bdelim)]
        text = data.decode("utf-8", "surrogateescape")
        if not raw:
            text = _unbackslash(text)
    else:
        parts: list[str] = []
        while True:
            data = stream.read_until(bdelim)
            if not data.endswith(bdelim):
                eof = True
            else:
                data = data[: -len(bdelim)]
            chunk = data.decode("utf-8", "surrogateescape")
            if not raw:
                if chunk.endswith("\\") and not _escaped_backslash(chunk) and not eof:
                    parts.append(_mark_escapes(chunk[:-1]))
                    continue
                chunk = _mark_escapes(chunk)
            parts.append(chunk)
            break
        text = "".join(parts)
        if eof and not text:
            _assign_read(sh, names, array, [], raw)
            return 1
    if exact:
        if array is not None:
            sh.assign_array(array, [(None, text)], False)
        else:
            sh.assign_scalar(names[0] if names else "REPLY", text)
        return 1 if eof else 0
    _assign_read(sh, names, array, text, raw)
    return 1 if eof else 0


_ESC_MARK = "\x00"


def _escaped_backslash(chunk: str) -> bool:
    n = len(chunk) - len(chunk.rstrip("\\"))
    return n % 2 == 0


def _mark_escapes(text: str) -> str:
    """Backslash-escaped characters are kept literal (never split); marked with NUL."""
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(_ESC_MARK + text[i + 1])
            i += 2
            continue
        if c == "\\":
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _unbackslash(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _read_chars(stream, n: int, delim: bytes) -> bytes:
    out = bytearray()
    count = 0
    while count < n:
        b = stream.read(1)
        if not b:
            break
        if delim and b == delim:
            out += b
            break
        out += b
        if b[0] < 0x80 or b[0] >= 0xC0:
            # a lead byte: read its continuation bytes
            need = 0 if b[0] < 0x80 else (1 if b[0] < 0xE0 else 2 if b[0] < 0xF0 else 3)
            for _ in range(need):
                nb = stream.read(1)
                if not nb:
                    break
                out += nb
        count += 1
    return bytes(out)


def _assign_read(sh: Interp, names: list[str], array: str | None, text, raw: bool) -> None:
    if isinstance(text, list):
        text = ""
    ifs = sh.ifs
    if array is not None:
        fields = _split_all(text, ifs)
        sh.assign_array(array, [(None, _unmark(f)) for f in fields], False)
        return
    if not names:
        sh.assign_scalar("REPLY", _unmark(text))
        return
    values = _split_n(text, ifs, len(names))
    for idx, name in enumerate(names):
        sh.assign_scalar(name, _unmark(values[idx]) if idx < len(values) else "")


def _unmark(text: str) -> str:
    return text.replace(_ESC_MARK, "") if _ESC_MARK in text else text


def _is_sep(text: str, i: int, ifs: str) -> bool:
    return text[i] in ifs and not (i > 0 and text[i - 1] == _ESC_MARK)


def _split_all(text: str, ifs: str) -> list[str]:
    from kshell.expand.fields import ifs_split

    if not ifs:
        return [text] if text else []
    if _ESC_MARK not in text:
        fields, _, _ = ifs_split(text, ifs)
        return fields
    return _split_n(text, ifs, 1 << 30)


def _split_n(text: str, ifs: str, n: int) -> list[str]:
    """bash's read: split into at most n fields; the last takes the rest of the line with
    leading and trailing IFS whitespace removed."""
    ws = "".join(c for c in ifs if c in " \t\n")
    i = 0
    L = len(text)
    fields: list[str] = []
    while i < L and text[i] in ws and not (i > 0 and text[i - 1] == _ESC_MARK):
        i += 1
    while i < L and len(fields) < n - 1:
        start = i
        while i < L and not _is_sep(text, i, ifs):
            i += 1
        fields.append(text[start:i])
        if i >= L:
            break
        # consume one separator (with surrounding whitespace)
        while i < L and text[i] in ws and _is_sep(text, i, ifs):
            i += 1
        if i < L and text[i] in ifs and text[i] not in ws and _is_sep(text, i, ifs):
            i += 1
            while i < L and text[i] in ws and _is_sep(text, i, ifs):
                i += 1
    if i < L or len(fields) < n:
        rest = text[i:]
        # strip trailing IFS whitespace (not escaped)
        end = len(rest)
        while end > 0 and rest[end - 1] in ws and not (end > 1 and rest[end - 2] == _ESC_MARK):
            end -= 1
        rest = rest[:end]
        if n == 1 or i < L:
            # a trailing single non-whitespace separator is removed too when it ends the line
            if len(fields) == n - 1 and rest and rest[-1] in ifs and rest[-1] not in ws and \
                    not (len(rest) > 1 and rest[-2] == _ESC_MARK):
                stripped = rest[:-1]
                if not any(_is_sep(stripped, k, ifs) and stripped[k] not in ws for k in range(len(stripped))):
                    rest = stripped.rstrip(ws)
            fields.append(rest)
    return fields


def element_key_text(sh: Interp, name: str, key: str):
    return sh.element_key_text(name, key)


_ = CommandError
