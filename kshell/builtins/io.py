"""echo, printf (bash's full format set) and read."""

from __future__ import annotations

import math
import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING

from kshell.builtins import builtin, legal_number
from kshell.core.clock import zone
from kshell.core.printf import float_format, int_format
from kshell.core.variables import ASSOC
from kshell.exec.redirects import os_message
from kshell.exec.varops import ReadonlyError
from kshell.syntax.parts import unicode_char
from kshell.syntax.printer import quote_q

if TYPE_CHECKING:
    from collections.abc import Callable

    from kshell.exec.interp import Interp
    from kshell.exec.streams import InStream


def _enc(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------- escapes

@lru_cache(maxsize=None)
def _re(source: str, flags: int) -> re.Pattern[str]:
    """A pattern below, compiled at its first use: echo's and printf's are not needed to start
    a shell (a tenth of the imports' regular expressions)."""
    return re.compile(source, flags)


_ECHO_ESC = (r"\\(0[0-7]{0,3}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|.)", re.DOTALL)
# the format string's escapes: another backslash (\c too) is printed, and what follows is read on
_PRINTF_ESC = (r"\\([0-7]{1,3}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|"
               r"[abeEfnrtv\\\"'?xuU])", 0)
# printf %b: echo -e's escapes, and octal without the leading 0 too (\101, \0101: both "A")
_B_ESC = (r"\\(0[0-7]{0,3}|[1-7][0-7]{0,2}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|.)",
          re.DOTALL)
_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
           "t": "\t", "v": "\v", "\\": "\\"}


def _byte(v: int) -> str:
    v &= 0xFF
    return chr(v) if v < 0x80 else chr(0xDC00 + v)


def _decode(text: str, rx: re.Pattern[str], echo: bool, quote: bool = False,
            utf8: bool = True, warn: Callable[[str], None] | None = None) -> tuple[str, bool]:
    """Backslash escapes as echo -e (echo=True: octal needs a leading 0), printf %b or the
    printf format string; `utf8` is the locale's (for \\u). printf `warn`s of a \\x or \\u
    without digits (kept as it is), as bash does. Returns (text, stopped by \\c)."""
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
            if warn is not None and c in "xuU":
                warn(f"missing {'hex' if c == 'x' else 'unicode'} digit for \\{c}")
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
        text, stopped = _decode(text, _re(*_ECHO_ESC), echo=True, utf8=sh.utf8_locale())
        if stopped:
            newline = False
    if newline:
        text += "\n"
    sh.out(_enc(text))
    return 0


# --------------------------------------------------------------------------- printf

_SPEC = (r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
         r"(?P<len>hh|h|ll|l|L|q|j|z|t)?(?P<conv>[a-zA-Z%(])", re.DOTALL)
# the longest prefix strtoimax(3) / strtoumax(3) read with base 0 (blanks first: isspace)
_STRTOINT = (r"[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))", 0)
# ... and strtold(3)
_STRTOLD = (r"[ \t\n\v\f\r]*([+-]?)(?:(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
            r"(?:[pP][+-]?[0-9]+)?)|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|"
            r"(inf(?:inity)?)|(nan(?:\([0-9A-Za-z_]*\))?))", re.IGNORECASE)
_U64 = (1 << 64) - 1


def _invalid_number(sh: Interp, builtin: str, text: str) -> None:
    """bash's sh_invalidnum: a leading 0 makes it an invalid octal or hex number."""
    if text[:1] == "0" and text[1:2] in tuple("0123456789"):
        what = "invalid octal number"
    elif text[:2] == "0x":
        what = "invalid hex number"
    else:
        what = "invalid number"
    sh.error(f"{builtin}: {text}: {what}")


def _char_code(text: str, utf8: bool) -> int:
    """bash's printf of `'c`: in a UTF-8 locale the code point of a valid character, else
    (and in other locales) its first byte; 0 when nothing follows the quote. Bytes that are
    not UTF-8 are held as surrogate escapes in the text and count as themselves."""
    data = _enc(text)
    if not data:
        return 0
    code = _utf8_code(data) if utf8 and data[0] >= 0x80 else None
    return data[0] if code is None else code


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
        return 0 if arg is None else self.to_int(arg, unsigned=conv in "uoxX")

    def _bad(self, arg: str) -> None:
        """POSIX: a diagnostic and status 1, but the value read so far is still printed."""
        _invalid_number(self.sh, "printf", arg)
        self.status = 1

    def to_int(self, arg: str, unsigned: bool = False) -> int:
        """A number as bash's printf reads it: `'c` or `"c` is the character's code (see
        _char_code); otherwise strtoimax, or strtoumax for %u %o %x %X, where a negative
        number wraps modulo 2^64. Leading blanks are skipped, anything after the number (a
        trailing blank too) is an error; out of range is clamped with a warning, the status
        unchanged."""
        if arg[:1] in ("'", '"'):
            return _char_code(arg[1:], self.sh.utf8_locale())
        m = _re(*_STRTOINT).match(arg)
        value = 0
        if m is not None:
            sign, hexa, octal, decimal = m.groups()
            value = int(hexa, 16) if hexa else int(octal, 8) if octal else int(decimal)
            if unsigned:
                value = _U64 + 1 if value > _U64 else -value & _U64 if sign == "-" else value
            elif sign == "-":
                value = -value
        low, high = (0, _U64) if unsigned else (-(1 << 63), (1 << 63) - 1)
        if (m.end() if m is not None else 0) != len(arg):
            self._bad(arg)
        elif not low <= value <= high:
            self.sh.error(f"printf: warning: {arg}: Numerical result out of range")
        return min(max(value, low), high)

    def floating(self) -> float:
        """A number as strtold reads it (hex, inf and nan too; `'c` a character's code), with
        to_int's errors. (Python floats are doubles: bash's long double has more digits.)"""
        arg = self.next()
        if arg is None:
            return 0.0
        if arg[:1] in ("'", '"'):
            return float(_char_code(arg[1:], self.sh.utf8_locale()))
        m = _re(*_STRTOLD).match(arg)
        if m is None:
            value = 0.0
        else:
            sign, hexa, decimal, inf, _nan = m.groups()
            value = float.fromhex(hexa) if hexa else float(decimal) if decimal else \
                math.inf if inf else math.nan
            value = -value if sign == "-" else value
        if (m.end() if m is not None else 0) != len(arg):
            self._bad(arg)
        return value


def _field(text: str, flags: str, width: int | None, prec: int | None) -> str:
    """%s %b %q %c %(..)T: bash counts the precision and the width in bytes (it cuts
    multi-byte characters), in any locale."""
    data = _enc(text)
    if prec is not None:
        data = data[:prec]
    if width is not None and len(data) < width:
        fill = b" " * (width - len(data))
        data = data + fill if "-" in flags else fill + data
    return data.decode("utf-8", "surrogateescape")


def _strftime(sh: Interp, tfmt: str, arg: int | None) -> str:
    """%(fmt)T of `arg` seconds (None or -1: now; -2: when the shell started), as bash: in
    the zone of the exported TZ (localtime(3) sees only the environment), the epoch if out of
    range, and nothing when the result needs 128 bytes or more (bash's strftime buffer)."""
    from datetime import datetime  # here, not at start-up: few scripts use %(fmt)T

    if arg is None or arg == -1:
        stamp = int(time.time())
    elif arg == -2:
        stamp = int(time.time() - (time.monotonic() - sh.session.started))
    else:
        stamp = arg
    tz = zone(sh)
    try:
        when = datetime.fromtimestamp(stamp, tz)
    except (OverflowError, ValueError, OSError):
        when = datetime.fromtimestamp(0, tz)

    def one(m: re.Match[str]) -> str:
        directive = m.group(0)
        if directive[-1] == "s":  # libc's %s would convert back in the host's zone
            return str(int(when.timestamp()))
        try:
            return when.strftime(directive)
        except ValueError:
            return directive

    # directive by directive: the text between goes through as it is (any bytes)
    text = re.sub(r"%[-_0^#]*[0-9]*[EO]?.", one, tfmt, flags=re.DOTALL)
    return "" if len(_enc(text)) >= 128 else text


def _paren_end(fmt: str, pos: int) -> int:
    """The `, 0)` closing the `(` before `pos` (nested pairs count, as bash's %(..)T); -1 if none."""
    depth = 1
    for i in range(pos, len(fmt)):
        if fmt[i] == "(":
            depth += 1
        elif fmt[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


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
            m = _re(*_PRINTF_ESC).match(fmt, bs)
            if m is None:
                out.append("\\")
                pos = bs + 1
                continue
            text, _ = _decode(m.group(0), _re(*_PRINTF_ESC), echo=False, quote=True,
                              utf8=sh.utf8_locale(), warn=lambda text: sh.error(f"printf: {text}"))
            out.append(text)
            pos = m.end()
            continue
        out.append(fmt[pos:pct])
        m = _re(*_SPEC).match(fmt, pct)
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
            if m.end() - pct == 2:
                out.append("%")
                continue
            sh.error("printf: `%': invalid format character")  # `%5%`: only a bare %% prints %
            args.status = 1
            raise _FormatError()
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
        if conv == "(":
            close = _paren_end(fmt, pos)
            if close < 0 or fmt[close + 1 : close + 2] != "T":
                # bash warns, prints the % and goes on with the text after it
                bad = fmt[close + 1 : close + 2] if close >= 0 else ""
                sh.error(f"printf: warning: `{bad}': invalid time format specification")
                out.append("%")
                pos = pct + 1
                continue
            arg = args.next()
            text = _strftime(sh, fmt[pos:close] or "%X", None if arg is None else args.to_int(arg))
            out.append(_field(text, flags, width, prec))
            pos = close + 2
        elif conv == "s":
            arg = args.next()
            out.append(_field(arg or "", flags, width, prec))
        elif conv == "b":
            arg = args.next() or ""
            text, stopped = _decode(arg, _re(*_B_ESC), echo=False, utf8=sh.utf8_locale(),
                                    warn=lambda text: sh.error(f"printf: {text}"))
            out.append(_field(text, flags, width, prec))
            if stopped:
                return False
        elif conv == "q":
            arg = args.next()
            out.append(_field(_printf_q(arg or "", sh.utf8_locale()), flags, width, prec))
        elif conv == "c":
            arg = args.next()
            # the first byte (in any locale, as bash), or a NUL byte for an empty argument
            out.append(_field(_enc(arg)[:1].decode("utf-8", "surrogateescape") if arg else "\0",
                              flags, width, None))
        elif conv in "diouxX":
            out.append(int_format(args.number(conv), conv, flags, width, prec))
        elif conv in "feEgGaAF":
            out.append(float_format(args.floating(), conv, flags, width, prec))
        elif conv == "n":
            name = args.next()
            if name:  # the number of bytes printed so far
                if not sh.is_valid_name(name):
                    sh.error(f"printf: `{name}': not a valid identifier")
                    args.status = 1
                    raise _FormatError()
                _bind(sh, name, str(len(_enc("".join(out)))))
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


_Q_SAFE = (r"[A-Za-z0-9@%+=:./_-]+\Z", 0)
_Q_SPECIAL = frozenset(" \t\n'\"\\|&;()<>!{}*[?]^$`,")  # bash's sh_backslash_quote table


def _printf_q(text: str, utf8: bool) -> str:
    """bash's %q: shell metacharacters, quotes, glob, brace and expansion characters
    backslashed (`^` and `,` too), `#` only at the start, `~` at the start or after `=`
    or `:`; a text with control characters, or outside ASCII in a locale that is not
    UTF-8, as $'...' (those bytes in octal)."""
    if text == "":
        return "''"
    if _re(*_Q_SAFE).match(text):
        return text
    def raw(c: str) -> bool:  # a byte the locale has no character for
        return ord(c) > 127 and (not utf8 or 0xDC80 <= ord(c) <= 0xDCFF)

    if any(raw(c) for c in text):
        quoted = quote_q(text + "\x01")[:-5] + "'"  # $'...', whatever else it holds
        return "".join("".join(f"\\{b:03o}" for b in c.encode("utf-8", "surrogateescape"))
                       if raw(c) else c for c in quoted)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        return quote_q(text)
    out = []
    for i, c in enumerate(text):
        if c in _Q_SPECIAL or (c == "#" and i == 0) or (c == "~" and (i == 0 or text[i - 1] in "=:")):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


_PRINTF_USAGE = "printf: usage: printf [-v var] format [arguments]\n"


@builtin("printf")
def printf(sh: Interp, argv: list[str]) -> int:
    args = argv[1:]
    var = None
    while args and args[0].startswith("-") and args[0] != "-":
        if args[0] == "--":
            args = args[1:]
            break
        if not args[0].startswith("-v"):
            sh.error(f"printf: {args[0][:2]}: invalid option")
            sh.write_err(_PRINTF_USAGE)
            return 2
        if len(args[0]) > 2:
            var, args = args[0][2:], args[1:]
        elif len(args) > 1:
            var, args = args[1], args[2:]
        else:
            sh.error("printf: -v: option requires an argument")
            sh.write_err(_PRINTF_USAGE)
            return 2
        if not _target_ok(sh, var):  # checked first, as bash
            sh.error(f"printf: `{var}': not a valid identifier")
            return 2
    if not args:
        sh.write_err(_PRINTF_USAGE)
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
    if var is None:
        sh.out(_enc(text))
    elif not _bind(sh, var, text):
        return 1
    return state.status


# --------------------------------------------------------------------------- read

_READ_USAGE = ("read: usage: read [-ers] [-a array] [-d delim] [-i text] [-n nchars] [-N nchars] "
               "[-p prompt] [-t timeout] [-u fd] [name ...]\n")
# bash's CTLESC: marks the character after it as backslash-escaped in the text read. A NUL,
# because no NUL byte reaches that text (bash drops them: its strings are C strings).
_MARK = "\0"
_SPTABNL = " \t\n"
_ISSPACE = " \t\n\v\f\r"


def _read_count(value: str) -> int | None:
    """A -n/-N/-u value as bash's legal_number takes it (decimal, blanks around): None if not
    a number or negative."""
    count = legal_number(value)
    return count if count is not None and 0 <= count < 1 << 31 else None


def _timeout_zero(value: str) -> bool | None:
    """A -t value as bash's uconvert reads it (a sign, digits, a point and decimals, of which
    only six are looked at): None if invalid or negative, else whether it is zero (`read -t 0`
    only polls). K has no read deadline: any other timeout reads as if there were none."""
    m = re.match(r"([+-]?)([0-9]*)(?:\.([0-9]{0,6})(.*))?\Z", value, re.DOTALL)
    if m is None or (m.group(4) and len(m.group(3)) < 6):
        return None
    sign, whole, frac, beyond = m.groups()
    if sign == "-" and int(whole or "0") > 0:
        return None
    micros = int((frac or "").ljust(6, "0")) + (1 if (beyond or "")[:1] in tuple("56789") else 0)
    return int(whole or "0") == 0 and micros == 0


def _input_ready(stream: InStream) -> bool:
    """`read -t 0`: whether a read would not block, as bash's select(2) poll sees it. Only a
    pipe whose writer is still open and has sent nothing is not ready; files, here-strings
    and a pipe at its end are."""
    pipe = getattr(stream, "pipe", None)
    if pipe is None or getattr(stream, "_buf", b""):
        return True
    return bool(pipe.buf) or pipe.writer_closed


@builtin("read")
def read(sh: Interp, argv: list[str]) -> int:
    raw = False
    array: str | None = None
    delim = 0x0A
    nchars = -1
    exact = False
    poll = False
    fd = 0
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
            if c in "rse":
                raw = raw or c == "r"
                j += 1
                continue
            if c not in "adinNptu":
                sh.error(f"read: -{c}: invalid option")
                sh.write_err(_READ_USAGE)
                return 2
            value = arg[j + 1 :]
            if not value:
                i += 1
                if i >= len(argv):
                    sh.error(f"read: -{c}: option requires an argument")
                    sh.write_err(_READ_USAGE)
                    return 2
                value = argv[i]
            if c == "a":
                array = value
            elif c == "d":
                delim = _enc(value)[0] if value else 0  # the first byte, as bash
            elif c in "nN":
                count = _read_count(value)
                if count is None:
                    _invalid_number(sh, "read", value)
                    return 1
                nchars = count
                exact = exact or c == "N"
            elif c == "t":
                zero = _timeout_zero(value)
                if zero is None:
                    sh.error(f"read: {value}: invalid timeout specification")
                    return 1
                poll = zero
            elif c == "u":
                count = _read_count(value)
                if count is None:
                    sh.error(f"read: {value}: invalid file descriptor specification")
                    return 1
                fd = count
                stream = sh.fds.get(fd)
                if stream is None:
                    sh.error(f"read: {fd}: invalid file descriptor: Bad file descriptor")
                    return 1
            break  # -p prompt (shown on a terminal only) and -i text (for -e) do nothing here
        i += 1
    names = argv[i:]
    stream = sh.fds.get(fd)
    if poll:
        return 0 if stream is not None and stream.readable and _input_ready(stream) else 1
    if names and not _target_ok(sh, names[0]):
        sh.error(f"read: `{names[0]}': not a valid identifier")
        return 1
    ifs = "" if exact else sh.ifs
    readable = stream is not None and stream.readable
    if nchars == 0:  # bash reads 0 bytes (failing quietly on a bad descriptor), assigns ""
        data, eof = b"", not readable
    else:
        if not readable:
            sh.error(f"read: read error: {fd}: Bad file descriptor")
            return 1
        try:
            data, eof = _read_record(stream, -1 if exact else delim, nchars, raw, "\x01" not in ifs,
                                     sh.utf8_locale())
        except OSError as e:
            sh.error(f"read: read error: {fd}: {os_message(e)}")
            return 1
    text = data.decode("utf-8", "surrogateescape")
    ok = _assign_read(sh, names, array, text, ifs)
    return 1 if eof or not ok else 0


class _Input:
    """A stream read as bash's read takes bytes: what is available now, so a pipe whose writer
    waits for an answer does not hang; `close` gives back what was not used, so the next
    reader of the descriptor sees it (bash reads a pipe a byte at a time for that)."""

    __slots__ = ("buf", "pos", "stream")

    def __init__(self, stream: InStream) -> None:
        self.stream = stream
        self.buf = b""
        self.pos = 0

    def _fill(self) -> bool:
        if self.pos < len(self.buf):
            return True
        self.buf = self.stream.read_some()
        self.pos = 0
        return bool(self.buf)

    def byte(self) -> int:
        """The next byte, or -1 at the end of input."""
        if not self._fill():
            return -1
        self.pos += 1
        return self.buf[self.pos - 1]

    def plain(self, special: re.Pattern[bytes], limit: int) -> bytes:
        """The bytes before the next `special` one (at most `limit` when >= 0): taken in bulk."""
        if not self._fill():
            return b""
        m = special.search(self.buf, self.pos)
        end = m.start() if m is not None else len(self.buf)
        if limit >= 0:
            end = min(end, self.pos + limit)
        data = self.buf[self.pos : end]
        self.pos = end
        return data

    def close(self) -> None:
        if self.pos < len(self.buf):
            self.stream.unread(self.buf[self.pos :])
        self.buf = b""


@lru_cache(maxsize=64)
def _special_bytes(delim: int, raw: bool, utf8: bool) -> re.Pattern[bytes]:
    """The bytes the read loop must look at one by one; runs of others are copied whole."""
    chars = {0}
    if delim >= 0:
        chars.add(delim)
    if not raw:
        chars.add(0x5C)
    body = b"".join(re.escape(bytes([c])) for c in sorted(chars))
    return re.compile(b"[" + body + (b"\x80-\xff" if utf8 else b"") + b"]")


def _utf8_more(lead: int) -> int:
    """How many bytes glibc's UTF-8 mbrtowc wants after `lead` (0: invalid alone). glibc
    still takes the old 5- and 6-byte forms."""
    if 0xC2 <= lead < 0xE0:
        return 1
    if 0xE0 <= lead < 0xF0:
        return 2
    if 0xF0 <= lead < 0xF8:
        return 3
    if 0xF8 <= lead < 0xFC:
        return 4
    return 5 if 0xFC <= lead < 0xFE else 0


_UTF8_MIN = (0, 0x80, 0x800, 0x10000, 0x200000, 0x4000000)


def _utf8_code(data: bytes) -> int | None:
    """The code of the character `data` starts with as glibc decodes UTF-8: overlong forms
    and surrogates are invalid (None), values past U+10FFFF are not."""
    more = _utf8_more(data[0])
    if more == 0 or len(data) <= more:
        return None
    value = data[0] & (0x7F >> (more + 1))
    for b in data[1 : more + 1]:
        if b & 0xC0 != 0x80:
            return None
        value = value << 6 | b & 0x3F
    return None if value < _UTF8_MIN[more] or 0xD800 <= value <= 0xDFFF else value


def _read_record(stream: InStream, delim: int, nchars: int, raw: bool, mark: bool,
                 utf8: bool) -> tuple[bytes, bool]:
    """bash's read loop (read.def): the bytes up to the delimiter byte (`delim` < 0: none, for
    -N) or `nchars` characters (< 0: no limit), and whether input ended first.

    Without -r a backslash escapes the next byte, which gets a mark before it (bash's CTLESC,
    left out when IFS holds \\x01, as bash does), and a backslash-newline pair goes, whatever
    the delimiter; neither counts as a character (-n 4 of `ab\\cd` is `abcd`). NUL bytes are
    dropped; an escaped NUL ends the text, as it ends bash's C string (reading goes on to the
    delimiter). In a UTF-8 locale a byte >= 0x80 takes the bytes mbrtowc asks for after it
    into the same character, up to and including the first that is not a continuation byte,
    even a backslash or the delimiter, as bash's read_mbchar does; in other locales a
    character is a byte."""
    special = _special_bytes(delim, raw, utf8)
    inp = _Input(stream)
    out = bytearray()
    count = 0
    escaped = False  # bash's pass_next
    cut = False  # an escaped NUL ended the text
    eof = False
    try:
        while nchars < 0 or count < nchars:
            if not escaped:
                run = inp.plain(special, nchars - count if nchars >= 0 else -1)
                if run:
                    if not cut:
                        out += run
                    count += len(run)
                    continue
            c = inp.byte()
            if c < 0:
                eof = True
                break
            if escaped:
                escaped = False
                if c == 0x0A:
                    if mark and not cut:
                        out.pop()  # the mark before the backslash-newline pair
                    continue
            elif c == 0x5C and not raw:
                escaped = True
                if mark and not cut:
                    out.append(0)
                continue
            elif c == delim:
                break
            elif c == 0:
                continue
            cut = cut or c == 0
            if not cut:
                out.append(c)
            if utf8 and c >= 0x80:
                for _ in range(_utf8_more(c)):
                    b = inp.byte()
                    if b < 0:
                        break
                    cut = cut or b == 0
                    if not cut:
                        out.append(b)
                    if b & 0xC0 != 0x80:
                        break
            count += 1
    finally:
        inp.close()
    return bytes(out), eof


def _target_ok(sh: Interp, target: str) -> bool:
    """A name bash's read and printf -v assign: an identifier or NAME[SUBSCRIPT]."""
    name, bracket, rest = target.partition("[")
    if not bracket:
        return sh.is_valid_name(target)
    return sh.is_valid_name(name) and len(rest) > 1 and rest.endswith("]")


def _bind(sh: Interp, target: str, value: str) -> bool:
    """Assign a variable or an array element (`a[1]`, `m[key]`), as bash's read and printf -v
    do; a readonly variable is reported and gives False."""
    try:
        if target.endswith("]") and "[" in target:
            name, _, key = target[:-1].partition("[")
            sh.set_element(name, sh.element_key_text(name, key), value)
        else:
            sh.assign_scalar(target, value)
    except ReadonlyError as e:
        sh.error(f"{e.name}: readonly variable")
        return False
    return True


def _bind_array(sh: Interp, name: str, words: list[str]) -> bool:
    """read -a: bash's builtin_find_indexed_array, then the words from index 0. The name must
    be an identifier naming no readonly or associative array; False (reported) otherwise."""
    if not sh.is_valid_name(name):
        sh.error(f"read: `{name}': not a valid identifier")
        return False
    try:
        var = sh.lookup_through_ref(name)
        if var is not None and var.flags & ASSOC:
            sh.error(f"read: {name}: not an indexed array")
            return False
        sh.assign_array(name, [(None, w) for w in words], False)
    except ReadonlyError as e:
        sh.error(f"{e.name}: readonly variable")
        return False
    return True


def _next_word(text: str, pos: int, ifs: str) -> tuple[str | None, int]:
    """bash's get_word_from_string: the field at `pos` of the text read (a mark escapes the
    next character, which never separates) and where the next field starts; None when only
    IFS whitespace is left. IFS whitespace is space, tab and newline for the default IFS, any
    isspace() character for another IFS."""
    n = len(text)
    white = _SPTABNL if ifs == _SPTABNL else _ISSPACE
    while pos < n and text[pos] in white and text[pos] in ifs:
        pos += 1
    if pos >= n:
        return None, pos
    start = pos
    if ifs:
        while pos < n:
            c = text[pos]
            if c == _MARK:
                pos += 2
            elif c in ifs:
                break
            else:
                pos += 1
        pos = min(pos, n)
    else:
        pos = n
    word = text[start:pos]
    if pos < n:
        whitesep = text[pos] in white
        pos += 1
        while pos < n and text[pos] in _SPTABNL and text[pos] in ifs:
            pos += 1
        if pos < n and whitesep and text[pos] in ifs and text[pos] not in white:
            pos += 1
            while pos < n and text[pos] in white and text[pos] in ifs:
                pos += 1
    return word, pos


def _strip_trailing(text: str, ifs: str, escapes: bool) -> str:
    """bash's strip_trailing_ifs_whitespace, quirk included: escaped blanks at the end go too
    (but never the first character), so `read a b <<< 'a \\  \\ '` leaves b a lone \\x01."""
    i = len(text) - 1
    while i > 0 and ((text[i] in _SPTABNL and text[i] in ifs) or
                     (escapes and text[i] == _MARK and i + 1 < len(text) and text[i + 1] in _SPTABNL)):
        i -= 1
    return text[: i + 1]


def _dequote(text: str) -> str:
    """bash's dequote_string: each mark goes and the character after it stays; a text that is
    a lone mark is kept, as bash's \\x01."""
    if _MARK not in text:
        return text
    if text == _MARK:
        return "\x01"
    return re.sub("\0(.?)", r"\1", text, flags=re.DOTALL)


def _assign_read(sh: Interp, names: list[str], array: str | None, text: str, ifs: str) -> bool:
    """Split the text read over the variables as bash's read does (after read.def): each
    variable but the last takes one field; the last takes the rest of the line with trailing
    IFS whitespace removed, or just the last field when only one is left (so a trailing
    non-whitespace separator goes). -a splits it all; without names REPLY takes the text
    whole. Returns False when a name is invalid or readonly (bash stops there)."""
    if array is not None:
        words: list[str] = []
        word, pos = _next_word(text, 0, ifs)
        while word is not None:
            words.append(_dequote(word))
            word, pos = _next_word(text, pos, ifs)
        return _bind_array(sh, array, words)
    if not names:
        return _bind(sh, "REPLY", _dequote(text))
    pos = 0
    n = len(text)
    while pos < n and text[pos] in _SPTABNL and text[pos] in ifs:
        pos += 1
    last = len(names) - 1
    for k, name in enumerate(names):
        if not _target_ok(sh, name):
            sh.error(f"read: `{name}': not a valid identifier")
            return False
        if k == last and pos < n:
            word, end = _next_word(text, pos, ifs)
            value = (word or "") if end >= n else _strip_trailing(text[pos:], ifs, _MARK in text)
        elif pos < n:
            word, pos = _next_word(text, pos, ifs)
            value = word or ""
        else:
            value = ""
        if not _bind(sh, name, _dequote(value)):
            return False
    return True
