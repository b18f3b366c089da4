"""Byte dumps as agents read binary data: od (GNU coreutils 9.1), xxd (vim 9.0's, "2022-01-14")
and hexdump/hd (util-linux 2.38), each ported from its C source so that its output, messages
and statuses are the real tool's byte for byte (in the C locale).

The three disagree on nearly everything, so each keeps its own parser: od is GNU getopt with
xstrtoumax numbers; xxd matches options by their first two letters, reads numbers with strtol
and exits 1 (usage), 2 (input), 3 (output), 4 (seek) or 255; hexdump's default output is a
format string run by the same engine as -e. They share how operands are read: od and hexdump
read theirs as one stream (`_Input`), and a VFS file seeks (xxd -s, hexdump -s) where a pipe
cannot (xxd then reads its way forward; hexdump fails with ESPIPE, as on Linux).

Not supported: xxd -E (EBCDIC), hexdump's colors (-L is accepted; `_L[...]` in a format is
skipped as when colors are off) and fractional sizes (`-n 1.5K`).
"""

from __future__ import annotations

import errno
import math
import os
import re
import string
import struct
from collections.abc import Callable, Iterator
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from kshell.core.printf import float_format as _float_format
from kshell.core.printf import int_format as _int_format
from kshell.core.printf import pad as _pad
from kshell.exec import devices
from kshell.exec.streams import FileReader, InStream
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.quoting import locale_quote
from kshell.tools.text.textio import Output, message, open_stream

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_PRINTABLE = bytes(c if 32 <= c < 127 else 46 for c in range(256))  # isprint in the C locale, else '.'
_ULONG = (1 << 64) - 1


def _strtol(text: str, base: int = 0) -> tuple[int, int]:
    """C's strtol: the number at the start of `text` (after blanks and a sign; base 0 reads 0x..
    as hex and 0.. as octal) and the index after it (0 when there is none)."""
    i, n = 0, len(text)
    while i < n and text[i] in " \t\n\v\f\r":
        i += 1
    negative = i < n and text[i] == "-"
    if i < n and text[i] in "+-":
        i += 1
    if base in (0, 16) and text[i:i + 2] in ("0x", "0X") and text[i + 2:i + 3] and text[i + 2] in string.hexdigits:
        i, base = i + 2, 16
    elif base == 0:
        base = 8 if text[i:i + 1] == "0" else 10
    start, value = i, 0
    while i < n and text[i].isascii() and text[i].isalnum() and int(text[i], 36) < base:
        value = value * base + int(text[i], 36)
        i += 1
    if i == start:
        return 0, 0
    return (-value if negative else value), i


def _signed(value: int, bits: int = 64) -> int:
    """`value` as a C signed integer of `bits` bits holds it (a cast, wrapping around)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _strtol_long(text: str) -> int:
    """strtol: out of range, a long's largest or smallest value."""
    return max(min(_strtol(text)[0], (1 << 63) - 1), -(1 << 63))


def _read_some(stream: InStream) -> bytes:
    """Whatever the stream has (at least a byte unless at its end)."""
    read_some = getattr(stream, "read_some", None)
    return read_some() if read_some is not None else stream.read(1 << 16)


def _lseek(stream: InStream, offset: int) -> bool:
    """lseek(2) to `offset` from the start: a VFS file moves; a device reads its way there (Linux
    lets /dev/zero and /dev/null seek); a pipe, a FIFO or standard input from either cannot."""
    if isinstance(stream, FileReader):
        stream.seek(offset)
        return True
    if isinstance(stream, (devices.ZeroSource, devices.FullDevice, devices.RandomSource, devices.NullStream)):
        while offset > 0 and (chunk := stream.read(min(offset, 1 << 16))):
            offset -= len(chunk)
        return True
    return False


def _size(stream: InStream) -> int | None:
    """A regular VFS file's size, the only one lseek and fstat can go by."""
    if isinstance(stream, FileReader):
        inode = stream.handle.getattr()
        if inode.is_reg:
            return inode.size
    return None


class _Input:
    """Operands read as one stream (od, hexdump): each opened when the one before ends, one that
    does not open reported (`prog: NAME: error`) and passed over. `opened` runs on each that
    opens, and returns False to move on to the next (hexdump's -s over a whole file)."""

    def __init__(self, sh: ToolContext, prog: str, names: list[str], stdin_name: str) -> None:
        self.sh = sh
        self.prog = prog
        self.names = names or ["-"]
        self.stdin_name = stdin_name
        self.index = 0
        self.stream: InStream | None = None
        self.owned = False
        self.name = ""
        self.buf = b""
        self.pos = 0
        self.failed = self.read_failed = False  # an operand that did not open; one that did not read
        self.opened_any = False
        self.opened: Callable[[], bool] | None = None

    def report(self, name: str, e: OSError) -> None:
        self.sh.write_err(f"{self.prog}: {self.stdin_name if name == '-' else name}: {message(e)}\n")

    def open_next(self) -> bool:
        self.close()
        while self.index < len(self.names):
            name = self.names[self.index]
            self.index += 1
            try:
                self.stream, self.owned = open_stream(self.sh, name)
            except OSError as e:
                self.report(name, e)
                self.failed = True
                continue
            self.name = name
            self.opened_any = True
            if self.opened is None or self.opened():
                return True
            self.close()
        return False

    def close(self) -> None:
        if self.stream is not None and self.owned:
            self.stream.close()
        self.stream = None
        self.buf, self.pos = b"", 0

    def _fill(self) -> bool:
        """More bytes of the current operand in the buffer; False at its end (or a read error,
        reported: od and hexdump go on with the next operand)."""
        assert self.stream is not None
        self.sh.session.cancel.check()
        try:
            chunk = _read_some(self.stream)
        except OSError as e:
            self.report(self.name, e)
            self.read_failed = True
            chunk = b""
        self.buf, self.pos = chunk, 0
        return bool(chunk)

    def read(self, n: int) -> bytes:
        """Up to `n` bytes, fewer only at the end of the last operand."""
        parts = []
        while n > 0 and self.stream is not None:
            if self.pos >= len(self.buf) and not self._fill():
                self.open_next()
                continue
            piece = self.buf[self.pos:self.pos + n]
            self.pos += len(piece)
            n -= len(piece)
            parts.append(piece)
        return b"".join(parts)

    def skip(self, n: int) -> int:
        """Pass over `n` bytes (seeking in a file when it can); what is left at the end of all input."""
        while n > 0 and self.stream is not None:
            held = len(self.buf) - self.pos
            size = _size(self.stream)
            if held:
                take = min(n, held)
                self.pos += take
                n -= take
            elif size is not None:
                left = max(size - self.stream.tell(), 0)  # type: ignore[attr-defined]
                if n <= left:
                    self.stream.seek(self.stream.tell() + n)  # type: ignore[attr-defined]
                    return 0
                n -= left
                self.open_next()
            elif not self._fill():
                self.open_next()
        return n

    def give_back(self) -> None:
        """Leave the unread rest of standard input to the next command (od -N reads no more than it shows)."""
        if self.stream is not None and not self.owned and self.pos < len(self.buf):
            self.stream.unread(self.buf[self.pos:])
            self.buf = b""


# ------------------------------------------------------------------------------------------ od

_OD_LONG = {"address-radix": ("address-radix", REQUIRED), "endian": ("endian", REQUIRED),
            "format": ("format", REQUIRED), "output-duplicates": ("output-duplicates", NONE),
            "read-bytes": ("read-bytes", REQUIRED), "skip-bytes": ("skip-bytes", REQUIRED),
            "strings": ("strings", OPTIONAL), "traditional": ("traditional", NONE), "width": ("width", OPTIONAL),
            "help": ("help", NONE), "version": ("version", NONE)}
_OD_SHORT = {"address-radix": "A", "format": "t", "output-duplicates": "v", "read-bytes": "N",
             "skip-bytes": "j", "strings": "S", "width": "w"}
_OD_OLD = {"a": "a", "b": "o1", "c": "c", "D": "u4", "d": "u2", "e": "fD", "F": "fD", "f": "fF", "H": "x4",
           "X": "x4", "i": "dI", "I": "dL", "L": "dL", "l": "dL", "O": "o4", "B": "o2", "o": "o2", "s": "d2",
           "h": "x2", "x": "x2"}
_OD_WIDTH = {"o": {1: 3, 2: 6, 4: 11, 8: 22}, "x": {1: 2, 2: 4, 4: 8, 8: 16}, "d": {1: 4, 2: 6, 4: 11, 8: 20},
             "u": {1: 3, 2: 5, 4: 10, 8: 20}, "f": {4: 15, 8: 24, 16: 29}, "a": {1: 3}, "c": {1: 3}}
_OD_SIZES = {"C": 1, "S": 2, "I": 4, "L": 8, "F": 4, "D": 8}  # sizeof char ... long, float, double
_NAMES = ("nul soh stx etx eot enq ack bel bs ht nl vt ff cr so si dle dc1 dc2 dc3 dc4 nak syn etb can em sub "
          "esc fs gs rs us sp").split()
_OD_CHARS = {0: "\\0", 7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}
# xstrtoumax's multiplier suffixes: a power of the base (1024, or 1000 with a `B`), or a factor
_POWERS = {"k": 1, "K": 1, "M": 2, "m": 2, "G": 3, "g": 3, "T": 4, "P": 5, "E": 6, "Z": 7, "Y": 8}
_FACTORS = {"b": 512, "B": 1024, "c": 1, "w": 2}
_OD_MULTIPLIERS = "bEGKkMmPTYZ0"


class _OdType:
    """One -t type: its kind (a c d f o u x), bytes per value, field width, `z` trailer, padding."""

    __slots__ = ("kind", "size", "width", "trailer", "pad")

    def __init__(self, kind: str, size: int, trailer: bool) -> None:
        self.kind = kind
        self.size = size
        self.width = _OD_WIDTH[kind][size]
        self.trailer = trailer
        self.pad = 0


def _xstrtoumax(text: str, base: int, suffixes: str) -> tuple[int, str | None]:
    """gnulib's xstrtoumax: (value, None) or (0, "invalid" | "invalid suffix in" | "too large")."""
    body = text.lstrip(" \t\n\v\f\r")
    if body.startswith("-"):
        return 0, "invalid"
    value, end = _strtol(text, base)
    if not end:
        if not (suffixes and body and body[0] in suffixes):
            return 0, "invalid"
        value, end = 1, len(text) - len(body)
    error = None
    if end < len(text):
        c = text[end]
        if not suffixes or c not in suffixes:
            return 0, "invalid suffix in"
        step, scale = 1, 1024
        if "0" in suffixes:
            if text[end + 1:end + 3] == "iB":
                step = 3
            elif text[end + 1:end + 2] in ("B", "D"):
                step, scale = 2, 1000
        value *= _FACTORS[c] if c in _FACTORS else scale ** _POWERS[c]
        if end + step < len(text):
            error = "invalid suffix in"
    if value > _ULONG:
        return 0, "too large"
    return value, error


def _od_number(key: str, text: str, base: int, suffixes: str) -> int:
    value, error = _xstrtoumax(text, base, suffixes)
    if error is not None:
        option = f"--{key}" if len(key) > 1 else f"-{key}"
        if error == "too large":
            raise Fail(f"{option} argument '{text}' too large")
        raise Fail(f"{error} {option} argument '{text}'")
    return value


def _od_types(text: str) -> list[_OdType]:
    """The types of one -t string; a bad one raises Fail with od's message."""
    specs = []
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        if c in ("d", "o", "u", "x", "f"):
            letter = text[i:i + 1]
            digits = re.match(r"[0-9]*", text[i:]).group()  # type: ignore[union-attr]
            if letter and letter in ("FDL" if c == "f" else "CSIL"):
                size = 16 if letter == "L" and c == "f" else _OD_SIZES[letter]
                i += 1
            elif not digits:
                size = 8 if c == "f" else 4
            else:
                i += len(digits)
                size = int(digits)
                if size > _ULONG:
                    raise Fail(f"invalid type string {locale_quote(text)}")
                if size not in _OD_WIDTH["f" if c == "f" else "o"]:
                    what = "floating point" if c == "f" else "integral"
                    raise Fail(f"invalid type string {locale_quote(text)};\n"
                               f"this system doesn't provide a {size}-byte {what} type")
        elif c in ("a", "c"):
            size = 1
        else:
            raise Fail(f"invalid character '{c}' in type string {locale_quote(text)}")
        trailer = text[i:i + 1] == "z"
        i += trailer
        specs.append(_OdType(c, size, trailer))
    return specs


def _od_value(spec: _OdType, data: bytes, order: str) -> str:
    kind = spec.kind
    if kind == "a":
        c = data[0] & 0x7F
        return "del" if c == 127 else _NAMES[c] if c <= 32 else chr(c)
    if kind == "c":
        c = data[0]
        return _OD_CHARS.get(c) or (chr(c) if 32 <= c < 127 else f"{c:03o}")
    if kind == "f":
        return _float_text(data if order == "little" else data[::-1])
    value = int.from_bytes(data, order, signed=kind == "d")
    if kind in "du":
        return str(value)
    return format(value, f"0{spec.width}{kind}")


# ftoastr: the shortest %g that reads back to the same value, from FLT_DIG/DBL_DIG/LDBL_DIG digits
# (1 below the smallest normal) up to the precision bound
_FLOATS = {4: ("<f", 6, 9, 2.0 ** -126), 8: ("<d", 15, 17, 2.0 ** -1022)}


def _float_text(data: bytes) -> str:
    """A little-endian float, double or x87 long double as od prints it."""
    if len(data) == 16:
        return _long_double_text(data)
    code, dig, bound, smallest = _FLOATS[len(data)]
    (x,) = struct.unpack(code, data)
    if math.isnan(x):
        return "-nan" if data[-1] & 0x80 else "nan"

    def same(text: str) -> bool:
        try:
            return struct.pack(code, float(text)) == data
        except OverflowError:
            return False

    return _shortest(lambda prec: "%.*g" % (prec, x), same, 1 if abs(x) < smallest else dig, bound)


def _shortest(fmt: Callable[[int], str], same: Callable[[str], bool], first: int, bound: int) -> str:
    prec = first
    while True:
        text = fmt(prec)
        if prec >= bound or same(text):
            return text
        prec += 1


def _long_double_text(data: bytes) -> str:
    mantissa = int.from_bytes(data[:8], "little")
    sign = "-" if data[9] & 0x80 else ""
    exponent = int.from_bytes(data[8:10], "little") & 0x7FFF
    if exponent == 0x7FFF or (exponent and not mantissa >> 63):  # infinities, NaNs, unnormals
        return sign + ("inf" if exponent == 0x7FFF and mantissa == 1 << 63 else "nan")
    value = Fraction(mantissa) * Fraction(2) ** (max(exponent, 1) - 16383 - 63)
    # a pseudo-denormal (exponent 0, integer bit set): glibc's printf leaves the integer bit out
    # (unless nothing else is set), the FPU's comparison counts it
    shown = value
    if not exponent and mantissa >> 63 and mantissa & ~(1 << 63):
        shown = Fraction(mantissa & ~(1 << 63)) * Fraction(2) ** -16445

    def same(text: str) -> bool:
        return _nearest_long_double(Fraction(text)) == value

    smallest = Fraction(2) ** -16382
    return sign + _shortest(lambda prec: _g_format(shown, prec), same, 1 if value < smallest else 18, 21)


def _nearest_long_double(q: Fraction) -> Fraction:
    if not q:
        return q
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if q < Fraction(2) ** e:
        e -= 1
    shift = min(63 - e, 16445)  # 64 significant bits, or fewer below the normal range
    return Fraction(round(q * Fraction(2) ** shift)) / Fraction(2) ** shift


def _g_format(q: Fraction, prec: int) -> str:
    """C's %.{prec}g of an exact non-negative value (correctly rounded, as glibc's printf is)."""
    d = Context(prec=prec, rounding=ROUND_HALF_EVEN).divide(Decimal(q.numerator), Decimal(q.denominator))
    if not d:
        return "0"
    digits = "".join(map(str, d.as_tuple().digits)).ljust(prec, "0")[:prec]
    x = d.adjusted()
    if -4 <= x < prec:
        text = digits[:x + 1] + "." + digits[x + 1:] if x >= 0 else "0." + "0" * (-x - 1) + digits
        return text.rstrip("0").rstrip(".")
    mantissa = (digits[0] + "." + digits[1:]).rstrip("0").rstrip(".")
    return f"{mantissa}e{x:+03d}"


class _OdAddress:
    """How od shows an offset: radix and zero-padded width (none for -An), with --traditional's
    `(label)` after it (or alone, in octal, under -An)."""

    def __init__(self, radix: str) -> None:
        self.base = {"d": 10, "o": 8, "x": 16, "n": 0}[radix]
        self.width = {"d": 7, "o": 7, "x": 6, "n": 0}[radix]
        self.label: int | None = None  # what to add to an offset to get its label
        self.paren_only = False

    def set_label(self, label: int) -> None:
        self.label = label
        if not self.base:
            self.base, self.width, self.paren_only = 8, 7, True

    def std(self, value: int) -> str:
        return format(value & _ULONG, {8: "o", 10: "d", 16: "x"}[self.base]).rjust(self.width, "0")

    def __call__(self, value: int, end: str) -> str:
        if self.label is not None:
            paren = f"({self.std(value + self.label)})" + end
            return paren if self.paren_only else self.std(value) + " " + paren
        return self.std(value) + end if self.base else ""


def _old_offset(text: str) -> int | None:
    """A traditional `[+]OFFSET[.][b]` operand (octal; hex with 0x; decimal with a dot), or None."""
    if not text:
        return None
    body = text[1:] if text[0] == "+" else text
    base = 10 if "." in body else 16 if body[:2] in ("0x", "0X") else 8
    value, error = _xstrtoumax(body, base, "Bb")
    return None if error else value


@tool("od")
def od(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx", _OD_LONG)
    specs: list[_OdType] = []
    address = _OdAddress("o")
    skip, limit, width, strings = 0, None, None, None
    modern = traditional = big = False
    abbreviate = ok = True
    for key, value in opts:
        letter = _OD_SHORT.get(key, key)
        modern |= letter in ("A", "j", "N", "S", "t", "v", "w")
        if letter == "A":
            if value[:1] not in ("d", "o", "x", "n"):
                raise Fail(f"invalid output address radix '{value[:1]}'; it must be one character from [doxn]")
            address = _OdAddress(value[0])
        elif letter == "j":
            skip = _od_number(key, value, 0, _OD_MULTIPLIERS)
        elif letter == "N":
            limit = _od_number(key, value, 0, _OD_MULTIPLIERS)
        elif letter == "S":
            strings = 3 if value is None else _od_number(key, value, 0, _OD_MULTIPLIERS)
        elif letter == "w":
            width = 32 if value is None else _od_number(key, value, 10, "")
        elif letter == "v":
            abbreviate = False
        elif key == "traditional":
            traditional = True
        elif key == "endian":
            choice = [w for w in ("little", "big") if w.startswith(value)]
            if len(choice) != 1:
                raise Usage(f"{'ambiguous' if choice else 'invalid'} argument '{value}' for '--endian'\n"
                            "Valid arguments are:\n  - 'little'\n  - 'big'")
            big = choice[0] == "big"
        elif key == "help":
            sh.out("Usage: od [OPTION]... [FILE]...\n  or:  od [-abcdfilosx]... [FILE] [[+]OFFSET[.][b]]\n"
                   "  or:  od --traditional [OPTION]... [FILE] [[+]OFFSET[.][b] [+][LABEL][.][b]]\n")
            return 0
        elif key == "version":
            sh.out("od (GNU coreutils) 9.1\n")
            return 0
        else:
            try:  # every bad type is reported before od gives up
                specs += _od_types(value if letter == "t" else _OD_OLD[letter])
            except Fail as e:
                sh.write_err(f"od: {e.message}\n")
                ok = False
    if not ok:
        return 1
    if strings is not None and specs:
        raise Fail("no type may be specified when dumping strings")
    if not modern or traditional:
        files, skip, label = _od_offsets(files, skip, traditional)
        if label is not None:
            address.set_label(label - skip)
    end = None if limit is None else skip + limit
    if end is not None and end > _ULONG:
        raise Fail("skip-bytes + read-bytes is too large")
    specs = specs or _od_types("oS")
    src = _Input(sh, "od", files, "standard input")
    if not src.open_next():
        return 1
    if src.skip(skip):
        src.close()
        raise Fail("cannot skip past end of combined input")
    lcm = 1
    for spec in specs:
        lcm = lcm * spec.size // math.gcd(lcm, spec.size)
    if width is not None and (not width or width % lcm):
        sh.write_err(f"od: warning: invalid width {width}; using {lcm} instead\n")
        width = lcm
    per_block = width or (lcm * (16 // lcm) if lcm < 16 else lcm)
    line_width = max((spec.width + 1) * (per_block // spec.size) for spec in specs)
    for spec in specs:  # the padding that aligns the lines of several types
        spec.pad = line_width - spec.width * (per_block // spec.size)
    out = Output(sh)
    try:
        if strings is not None:
            _od_strings(src, out, address, skip, end, strings)
        else:
            _od_dump(src, out, specs, per_block, address, skip, end, abbreviate, "big" if big else "little")
        if end is not None:
            src.give_back()
        out.flush()
    finally:
        src.close()  # a FIFO's end too, whatever happened: its writer must not wait for this reader
    return 1 if src.failed or src.read_failed else 0


def _od_offsets(files: list[str], skip: int, traditional: bool) -> tuple[list[str], int, int | None]:
    """POSIX's `od [FILE] [[+]OFFSET[.][b]]` (and --traditional's LABEL after it): the operands
    left, the offset to start at and the label's, when the operands have them."""
    offsets = [_old_offset(f) for f in files]
    label = None
    if len(files) == 1 and (traditional or files[0][:1] == "+") and offsets[0] is not None:
        files, skip = [], offsets[0]
    elif (len(files) == 2 and (traditional or files[1][:1] in ("+", *string.digits))
          and offsets[1] is not None):
        if traditional and offsets[0] is not None:
            files, skip, label = [], offsets[0], offsets[1]
        else:
            files, skip = files[:1], offsets[1]
    elif len(files) == 3 and traditional and offsets[1] is not None and offsets[2] is not None:
        files, skip, label = files[:1], offsets[1], offsets[2]
    if traditional and len(files) > 1:
        raise Usage(f"extra operand {locale_quote(files[1])}\nod: compatibility mode supports at most one file")
    return files, skip, label


def _od_dump(src: _Input, out: Output, specs: list[_OdType], per_block: int, address: _OdAddress, offset: int,
             end: int | None, abbreviate: bool, order: str) -> None:
    """Blocks of `per_block` bytes, a line per type; a block equal to the one before is one `*`
    line (unless -v); the last block is padded with zeros to whole values; then the end offset."""
    previous = b""
    repeated = False
    while True:
        want = per_block if end is None else min(end - offset, per_block)
        data = src.read(want) if want > 0 else b""
        if not data:
            break
        block = data.ljust(per_block, b"\0")
        if abbreviate and previous and len(data) == per_block and block == previous:
            if not repeated:
                out.write(b"*\n")
            repeated = True
        else:
            repeated = False
            for i, spec in enumerate(specs):
                text = address(offset, "") if i == 0 else " " * address.width
                out.write((text + _od_fields(spec, block, len(data), per_block, order) + "\n").encode("latin-1"))
        previous = block
        offset += len(data)
        if len(data) < per_block:
            break
    out.write(address(offset, "\n").encode())


def _od_fields(spec: _OdType, block: bytes, n_bytes: int, per_block: int, order: str) -> str:
    """One line of one type: GNU spreads the type's padding over its fields."""
    size, pad = spec.size, spec.pad
    fields = per_block // size
    blank = (per_block - n_bytes) // size
    parts = []
    left = pad
    for i in range(fields, blank, -1):
        next_pad = pad * (i - 1) // fields
        k = (fields - i) * size
        parts.append(_od_value(spec, block[k:k + size], order).rjust(left - next_pad + spec.width))
        left = next_pad
    if spec.trailer:
        parts.append(" " * (blank * spec.width + pad * blank // fields) + "  >"
                     + block[:n_bytes].translate(_PRINTABLE).decode("latin-1") + "<")
    return "".join(parts)


def _od_strings(src: _Input, out: Output, address: _OdAddress, offset: int, end: int | None, least: int) -> None:
    """-S: runs of at least `least` printable characters ended by a NUL (or by the -N limit)."""
    while end is None or (end >= least and end - least > offset):
        run: bytearray | None = bytearray()
        for _ in range(least):
            c = src.read(1)
            offset += 1
            if not c:
                return
            if not 32 <= c[0] < 127:
                break
            run += c  # type: ignore[operator]
        else:
            while end is None or offset < end:
                c = src.read(1)
                offset += 1
                if not c:
                    return
                if not c[0]:
                    break
                if not 32 <= c[0] < 127:
                    run = None
                    break
                run += c  # type: ignore[operator]
            if run is not None:
                out.write(address(offset - len(run) - 1, " ").encode() + bytes(run) + b"\n")


# ----------------------------------------------------------------------------------------- xxd

_XXD_USAGE = """\
Usage:
       xxd [options] [infile [outfile]]
    or
       xxd -r [-s [-]offset] [-c cols] [-ps] [infile [outfile]]
Options:
    -a          toggle autoskip: A single '*' replaces nul-lines. Default off.
    -b          binary digit dump (incompatible with -ps,-i,-r). Default hex.
    -C          capitalize variable names in C include file style (-i).
    -c cols     format <cols> octets per line. Default 16 (-i: 12, -ps: 30).
    -E          show characters in EBCDIC. Default ASCII.
    -e          little-endian dump (incompatible with -ps,-i,-r).
    -g bytes    number of octets per group in normal output. Default 2 (-e: 4).
    -h          print this summary.
    -i          output in C include file style.
    -l len      stop after <len> octets.
    -n name     set the variable name used in C include output (-i).
    -o off      add <off> to the displayed file position.
    -ps         output in postscript plain hexdump style.
    -r          reverse operation: convert (or patch) hexdump into binary.
    -r -s off   revert with <off> added to file positions found in hexdump.
    -d          show offset in decimal instead of hex.
    -s [+][-]seek  start at <seek> bytes abs. (or +: rel.) infile offset.
    -u          use upper case hex letters.
    -v          show version: "xxd 2022-01-14 by Juergen Weigert et al.".
"""
_NORMAL, _PLAIN, _INCLUDE, _BITS, _LITTLE = range(5)
_HEX = {case: [format(b, "02" + case).encode() for b in range(256)] for case in "xX"}
_BIN = [format(b, "08b").encode() for b in range(256)]
_HEX_VALUE = {ord(c): int(c, 16) for c in "0123456789abcdefABCDEF"}
# the options that take a value, and the spelled-out names under which they take the next argument
_XXD_VALUED = {"c": "ols", "g": "roup", "o": "ffset", "s": ("kip", "eek"), "l": "en", "n": "ame"}
_XXD_TYPES = {"b": _BITS, "e": _LITTLE, "p": _PLAIN, "i": _INCLUDE}


class _XxdExit(Exception):
    def __init__(self, status: int, text: str = "") -> None:
        super().__init__(text)
        self.status = status
        self.text = text


class _Sink:
    """xxd's output: standard output, or the outfile at a position (-r patches it in place: it
    seeks over what is there, forward or back). Standard output here never seeks (a gap in a
    reverted dump is written as zeros), as when it is a pipe."""

    def __init__(self, out: Output, handle=None) -> None:
        self.out = out
        self.handle = handle
        self.pending = bytearray()
        self.at = 0

    def write(self, data: bytes) -> None:
        if self.handle is None:
            self.out.write(data)
            return
        self.pending += data
        if len(self.pending) >= 1 << 16:
            self.flush()

    def seek_by(self, delta: int) -> bool:
        if self.handle is None or self.at + len(self.pending) + delta < 0:
            return False
        self.flush()
        self.at += delta
        return True

    def flush(self) -> None:
        if self.handle is not None and self.pending:
            self.handle.pwrite(bytes(self.pending), self.at)
            self.at += len(self.pending)
            self.pending.clear()
        self.out.flush()


def xxd(sh: ToolContext, argv: list[str]) -> int:
    out = Output(sh)
    try:
        return _xxd(sh, argv, out)
    except _XxdExit as e:
        out.flush()
        if e.text:
            sh.write_err(e.text)
        return e.status


def _xxd(sh: ToolContext, argv: list[str], out: Output) -> int:
    usage = _XxdExit(1, _XXD_USAGE)
    hextype, autoskip, capitalize, decimal, revert, upper = _NORMAL, False, False, False, False, False
    cols, cols_given, group, length, seekoff, displayoff = 0, False, -1, -1, 0, 0
    relseek, negseek = True, False
    varname: str | None = None
    args = argv[1:]
    while args:  # xxd knows an option by its first two characters: -ps is -p, -cols 8 is -c 8
        pp = args[0][1:] if args[0].startswith("--") and len(args[0]) > 2 else args[0]
        letter, rest = pp[1:2], pp[2:]
        if pp == "--":
            args.pop(0)
            break
        if not pp.startswith("-") or not letter:
            break
        args.pop(0)
        if letter == "c" and rest.startswith("apitalize"):
            capitalize = True
        elif letter in _XXD_VALUED:
            attached = bool(rest) and not rest.startswith(_XXD_VALUED[letter])
            if not attached and not args:
                raise usage
            value = rest if attached else args.pop(0)
            number = _strtol_long(value)
            if letter == "c":
                cols, cols_given = _signed(number, 32), True
            elif letter == "g":
                group = _signed(number, 32)
            elif letter == "l":
                length = number
            elif letter == "n":
                varname = value
            elif letter == "o":
                if not attached and value[:1] == "+":
                    value = value[1:]
                negative = not attached and value[:1] == "-"
                displayoff = (-1 if negative else 1) * _strtol(value[negative:])[0] & _ULONG
            else:
                relseek = value[:1] == "+"
                negseek = value[relseek:relseek + 1] == "-"
                seekoff = _strtol_long(value[relseek + negseek:])
        elif letter == "v":
            raise _XxdExit(0, "xxd 2022-01-14 by Juergen Weigert et al.\n")
        elif letter == "E":
            raise _XxdExit(1, "xxd: -E (EBCDIC) is not supported\n")
        elif letter in _XXD_TYPES:
            hextype = _XXD_TYPES[letter]
        elif letter in ("a", "u", "C", "d", "r"):
            autoskip ^= letter == "a"
            upper |= letter == "u"
            capitalize |= letter == "C"
            decimal |= letter == "d"
            revert |= letter == "r"
        else:
            raise usage
    if not cols_given or (not cols and hextype != _PLAIN):
        cols = {_PLAIN: 30, _INCLUDE: 12, _BITS: 6}.get(hextype, 16)
    if group < 0:
        group = {_BITS: 1, _NORMAL: 2, _LITTLE: 4}.get(hextype, 0)
    if cols < (0 if hextype == _PLAIN else 1) or (hextype in (_NORMAL, _BITS, _LITTLE) and cols > 256):
        raise _XxdExit(1, "xxd: invalid number of columns (max. 256).\n")
    if group < 1 or group > cols:
        group = cols
    elif hextype == _LITTLE and group & (group - 1):
        raise _XxdExit(1, "xxd: number of octets per group must be a power of 2 with -e.\n")
    if len(args) > 2:
        raise usage
    infile = args[0] if args and args[0] != "-" else None
    try:
        stream, owned = open_stream(sh, infile or "-")
    except OSError as e:
        raise _XxdExit(2, f"xxd: {infile}: {message(e)}\n") from None
    sink = _Sink(out)
    try:
        if len(args) > 1 and args[1] != "-":  # -r patches its outfile: no truncation
            flags = os.O_WRONLY | os.O_CREAT | (0 if revert else os.O_TRUNC)
            try:
                sink.handle = devices.open_file(sh, args[1], flags, 0o666)
            except OSError as e:
                raise _XxdExit(3, f"xxd: {args[1]}: {message(e)}\n") from None
        if revert:
            if hextype not in (_NORMAL, _PLAIN):
                raise _XxdExit(255, "xxd: Sorry, cannot revert this type of hexdump\n")
            _xxd_revert(_xxd_bytes(sh, stream), sink, cols, hextype, -seekoff if negseek else seekoff)
            return 0
        if seekoff or negseek or not relseek:
            seekoff = _xxd_seek(sh, stream, seekoff, relseek, negseek)
        hexx = _HEX["X" if upper else "x"]
        if hextype == _INCLUDE:
            _xxd_include(sink, _xxd_blocks(sh, stream, length, 1), cols, hexx,
                         varname if varname is not None else infile, capitalize)
        elif hextype == _PLAIN:
            for block in _xxd_blocks(sh, stream, length, cols or 1):
                sink.write(b"".join(b"".join(hexx[b] for b in block[i:i + cols]) + b"\n"
                                    for i in range(0, len(block), cols)) if cols else b"".join(hexx[b] for b in block))
            if not cols:
                sink.write(b"\n")
        else:
            _xxd_lines(sink, _xxd_blocks(sh, stream, length, cols), hextype, cols, group, hexx, autoskip,
                       seekoff + displayoff, decimal)
    finally:
        sink.flush()
        if sink.handle is not None:
            sink.handle.close()
        if owned:
            stream.close()
    return 0


def _xxd_blocks(sh: ToolContext, stream: InStream, length: int, unit: int) -> Iterator[bytes]:
    """The input (its first `length` bytes with -l; all when negative) in blocks of whole
    `unit`s, but for the last. A read error ends xxd with status 2, as its getc_or_die does."""
    rest = b""
    while length:
        sh.session.cancel.check()
        try:
            chunk = stream.read(min(length, 1 << 16)) if length > 0 else _read_some(stream)
        except OSError as e:
            raise _XxdExit(2, f"xxd: {message(e)}\n") from None
        if not chunk:
            break
        length -= len(chunk) if length > 0 else 0
        data = rest + chunk
        cut = len(data) - len(data) % unit
        rest = data[cut:]
        if cut:
            yield data[:cut]
    if rest:
        yield rest


def _xxd_bytes(sh: ToolContext, stream: InStream) -> Iterator[int]:
    for block in _xxd_blocks(sh, stream, -1, 1):
        yield from block


def _xxd_seek(sh: ToolContext, stream: InStream, seekoff: int, relseek: bool, negseek: bool) -> int:
    """-s: fseek where the input can (the offset shown is where it landed), else read forward."""
    size = _size(stream)
    if size is not None:
        here = stream.tell()  # type: ignore[attr-defined]
        target = (here if relseek else size if negseek else 0) + (-seekoff if negseek else seekoff)
        if target >= 0:
            stream.seek(target)  # type: ignore[attr-defined]
            return target
    if negseek or sum(map(len, _xxd_blocks(sh, stream, seekoff, 1))) < seekoff:
        raise _XxdExit(4, "xxd: Sorry, cannot seek.\n")
    return seekoff


def _xxd_include(sink: _Sink, blocks: Iterator[bytes], cols: int, hexx: list[bytes], name: str | None,
                 capital: bool) -> None:
    ident = b""
    if name is not None:
        raw = name.encode("utf-8", "surrogateescape")
        ident = (b"__" if raw[:1].isdigit() else b"") + bytes(
            (bytes([c]).upper()[0] if capital else c) if bytes([c]).isalnum() else 95 for c in raw)
        sink.write(b"unsigned char " + ident + b"[] = {\n")
    prefix = b"0X" if hexx is _HEX["X"] else b"0x"
    count = 0
    for block in blocks:
        sink.write(b"".join((b", " if i % cols else b",\n  " if i else b"  ") + prefix + hexx[b]
                            for i, b in enumerate(block, count)))
        count += len(block)
    sink.write(b"\n" if count else b"")
    if name is not None:
        sink.write(b"};\nunsigned int " + ident + (b"_LEN" if capital else b"_len") + b" = %d;\n" % count)


def _xxd_lines(sink: _Sink, blocks: Iterator[bytes], hextype: int, cols: int, group: int, hexx: list[bytes],
               autoskip: bool, base: int, decimal: bool) -> None:
    """The normal, -b and -e dumps: each byte where xxd.c puts it in its line buffer. With -a, a
    run of three or more lines of zeros shows as its first line and `*` (xxdline())."""
    grplen = (8 if hextype == _BITS else 2) * group + 1
    text_at = 3 + (grplen * cols - 1) // group
    digits = _BIN if hextype == _BITS else hexx
    held = last = b""
    seen = 0
    start = 0

    def show(line: bytes, nonzero: int) -> None:
        nonlocal seen, held
        if not nonzero:
            if seen == 1:
                held = line
            seen += 1
            if seen > 1:
                return
        elif nonzero < 0:
            seen -= 1
        if nonzero:
            if seen == 2:
                sink.write(held)
            elif seen > 2:
                sink.write(b"*\n")
        if nonzero >= 0 or seen > 0:
            sink.write(line)
        if nonzero:
            seen = 0

    for block in blocks:
        for at in range(0, len(block), cols):
            chunk = block[at:at + cols]
            offset = (start + base) & _ULONG
            start += len(chunk)
            addr = b"%08d:" % _signed(offset) if decimal else b"%08x:" % offset
            if hextype == _LITTLE:  # byte by byte: a group swapped in a short line leaves holes
                line = bytearray(b" " * (len(addr) + text_at + grplen * (cols + group) // group + cols))
                line[:len(addr)] = addr
                for p, byte in enumerate(chunk):
                    c = len(addr) + 1 + (grplen * (p ^ (group - 1))) // group
                    line[c:c + 2] = hexx[byte]
                    line[len(addr) + text_at + p] = _PRINTABLE[byte]
                text = bytes(line[:len(addr) + text_at + len(chunk)])
            else:
                hexes = b" ".join(b"".join(digits[b] for b in chunk[g:g + group]) for g in range(0, len(chunk), group))
                text = addr + (b" " + hexes).ljust(text_at) + chunk.translate(_PRINTABLE)
            last = text + b"\n"
            show(last, int(any(chunk)) if autoskip and len(chunk) == cols else 1)
    if autoskip and start % cols == 0:
        show(last, -1)


def _xxd_revert(text: Iterator[int], sink: _Sink, cols: int, hextype: int, base_off: int) -> None:
    """huntype(): hex digits back to bytes. A normal dump's line starts with its offset (a gap
    is sought over or filled with zeros; going back is an error, status 5); two non-hex
    characters end a line's data; -p reads hex pairs anywhere, whitespace ignored."""
    ign_garb, n1, n2, p = True, -1, 0, cols
    have_off = want_off = 0

    def skip_to_eol(c: int) -> int:
        while c != 10 and c != -1:
            c = next(text, -1)
        return c

    for c in text:
        if c == 13 or (hextype == _PLAIN and c in (32, 10, 9)):
            continue
        n3, n2 = n2, n1
        n1 = _HEX_VALUE.get(c, -1)
        if n1 == -1 and ign_garb:
            continue
        ign_garb = False
        if hextype == _NORMAL and p >= cols:
            if n1 < 0:
                p = 0
            else:
                want_off = (want_off << 4) | n1
            continue
        target = base_off + want_off
        if target != have_off:
            if sink.seek_by(target - have_off):
                have_off = target
            if target < have_off:
                raise _XxdExit(5, "xxd: Sorry, cannot seek backwards.\n")
            while have_off < target:
                gap = min(target - have_off, 1 << 16)
                sink.write(bytes(gap))
                have_off += gap
        if n2 >= 0 and n1 >= 0:
            sink.write(bytes([(n2 << 4) | n1]))
            have_off += 1
            want_off += 1
            n1 = -1
            if hextype == _NORMAL:
                p += 1
                if p >= cols:
                    c = skip_to_eol(c)
        elif n1 < 0 and n2 < 0 and n3 < 0:
            c = skip_to_eol(c)
        if c == 10:
            if hextype == _NORMAL:
                want_off = 0
            p = cols
            ign_garb = True


# ------------------------------------------------------------------------------------- hexdump

_HD_LONG = {"one-byte-octal": ("b", NONE), "one-byte-char": ("c", NONE), "canonical": ("C", NONE),
            "two-bytes-decimal": ("d", NONE), "two-bytes-octal": ("o", NONE), "two-bytes-hex": ("x", NONE),
            "format": ("e", REQUIRED), "format-file": ("f", REQUIRED), "color": ("L", OPTIONAL),
            "length": ("n", REQUIRED), "skip": ("s", REQUIRED), "no-squeezing": ("v", NONE),
            "help": ("h", NONE), "version": ("V", NONE)}
_HD_OFFSET = '"%07.7_Ax\n"'
_HD_CANONICAL = ['"%08.8_Ax\n"', '"%08.8_ax  " 8/1 "%02x " "  " 8/1 "%02x " ', '"  |" 16/1 "%_p" "|\\n"']
_HD_FORMATS = {"b": '"%07.7_ax " 16/1 "%03o " "\\n"', "c": '"%07.7_ax " 16/1 "%3_c " "\\n"',
               "d": '"%07.7_ax " 8/2 "  %05u " "\\n"', "o": '"%07.7_ax " 8/2 " %06o " "\\n"',
               "x": '"%07.7_ax " 8/2 "   %04x " "\\n"', "": '"%07.7_ax " 8/2 "%04x " "\\n"'}
_HD_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_U_NAMES = _NAMES[:10] + ["lf"] + _NAMES[11:32]
_SPACE = " \t\n\v\f\r"
_FLAG_CHARS = "#-+ 0123456789"


class _Print:
    """A print unit: literal text and at most one conversion (`kind`: address, bpad, c, char,
    dbl, int, p, str, u, uint, text) with its flags, width and precision. `fast` is the same
    integer conversion as a Python format spec, where one says it alike (no `#`, no precision)."""

    __slots__ = ("kind", "text", "flags", "width", "prec", "conv", "bcnt", "nospace", "fast")

    def __init__(self, kind: str, text: str, spec: str = "", conv: str = "", bcnt: int = 0) -> None:
        m = re.match(r"([-+ #0]*)([0-9]*)(?:\.([0-9]*))?", spec)  # printf's reading of what hexdump let through
        assert m is not None
        flags = self.flags = m.group(1)
        self.kind = kind
        self.text = text
        self.width = int(m.group(2)) if m.group(2) else None
        self.prec = int(m.group(3) or 0) if m.group(3) is not None else None
        self.conv = conv
        self.bcnt = bcnt
        self.nospace = False
        self.fast = ""
        if kind in ("int", "uint", "address") and "#" not in flags and self.prec is None:
            sign = ("+" if "+" in flags else " " if " " in flags else "") if conv in "di" else ""
            self.fast = ("<" if "-" in flags else "") + sign + ("0" if "0" in flags and "-" not in flags else "") \
                + m.group(2) + {"i": "d", "u": "d"}.get(conv, conv)


class _Unit:
    """A format unit: `reps/bcnt "format"`, split into print units."""

    __slots__ = ("reps", "bcnt", "setrep", "ignore", "fmt", "prints")

    def __init__(self) -> None:
        self.reps, self.bcnt, self.setrep, self.ignore = 1, 0, False, False
        self.fmt = ""
        self.prints: list[_Print] = []


def _hd_number(text: str, i: int) -> tuple[int, int]:
    """The decimal number at text[i] and the index after it."""
    m = re.match(r"[0-9]+", text[i:])
    assert m is not None
    return int(m.group()), i + m.end()


def _hd_parse(fmt: str) -> list[_Unit]:
    """add_fmt(): a format string (a `str` of bytes as latin-1) into its units."""
    units = []
    i, n = 0, len(fmt)

    def bad() -> Fail:
        return Fail(f"bad format {{{fmt}}}")

    def blanks(j: int) -> int:
        while j < n and fmt[j] in _SPACE:
            j += 1
        return j

    while (i := blanks(i)) < n:
        unit = _Unit()
        units.append(unit)
        if fmt[i] in string.digits:
            unit.reps, i = _hd_number(fmt, i)
            if i >= n or (fmt[i] not in _SPACE and fmt[i] != "/"):
                raise bad()
            unit.setrep = True
            i = blanks(i + 1)
        if i < n and fmt[i] == "/":
            i = blanks(i + 1)
        if i < n and fmt[i] in string.digits:
            unit.bcnt, i = _hd_number(fmt, i)
            if i >= n or fmt[i] not in _SPACE:
                raise bad()
            i = blanks(i + 1)
        if i >= n or fmt[i] != '"':
            raise bad()
        close = fmt.find('"', i + 1)
        if close < 0:
            raise bad()
        unit.fmt = re.sub(r"\\(.?)", lambda m: _HD_ESCAPES.get(m.group(1), m.group(1)), fmt[i + 1:close], flags=re.S)
        i = close + 1
    return units


def _hd_block_size(units: list[_Unit]) -> int:
    """How many bytes a format string's units read (block_size())."""
    total = 0
    for unit in units:
        if unit.bcnt:
            total += unit.bcnt * unit.reps
            continue
        count = 0
        for m in re.finditer(r"%[#\-+ 0-9]*(?:\.([0-9]*))?(_[cpu]|.)?", unit.fmt, re.S):
            conv = m.group(2) or ""
            if conv[:1] in tuple("diouxX"):
                count += 4
            elif conv[:1] in tuple("efgEG"):
                count += 8
            elif conv == "s":
                count += int(m.group(1) or 0)
            elif conv in ("c", "_c", "_p", "_u"):
                count += 1
        total += count * unit.reps
    return total


def _hd_rewrite(units: list[_Unit], fs_bcnt: int, blocksize: int) -> _Unit | None:
    """rewrite_rules(): each unit's print units, with byte counts checked; the last unit repeated
    to fill the block. Returns the unit holding %_A (printed once, at the end), if any."""
    end_unit = None
    for unit in units:
        fmt, pos, nconv = unit.fmt, 0, 0
        while pos < len(fmt):
            pct = fmt.find("%", pos)
            if pct < 0:
                unit.prints.append(_Print("text", fmt[pos:]))
                break
            j = pct + 1
            prec = None
            if unit.bcnt:
                while j < len(fmt) and fmt[j] in "." + _FLAG_CHARS:
                    j += 1
            else:
                while j < len(fmt) and fmt[j] in _FLAG_CHARS:
                    j += 1
                if j < len(fmt) and fmt[j] == ".":
                    j += 1
                    if j < len(fmt) and fmt[j] in string.digits:
                        prec, j = _hd_number(fmt, j)
            cs = fmt[j:j + 1]
            after = j + 1
            kind, bcnt = _hd_conversion(unit, fmt, j, prec)
            if cs == "_":
                after = j + (3 if kind == "address" else 2)
            if kind != "address" and unit.bcnt and nconv:
                raise Fail("byte count with multiple conversion characters")
            nconv += kind != "address"
            if kind == "address":
                end_unit = unit if fmt[j + 1] == "A" else end_unit
                unit.ignore |= fmt[j + 1] == "A"
                conv = fmt[j + 2]
            else:
                conv = cs
            if fmt[after:after + 2] == "_L":  # a color unit: skipped, colors being off
                close = fmt.rfind("]", after)
                if close < 0:
                    raise Fail("bad conversion character %_L")
                after = close + 1
            unit.prints.append(_Print(kind, fmt[pos:pct], fmt[pct + 1:j], conv, bcnt))
            pos = after
        if not unit.bcnt:
            unit.bcnt = sum(p.bcnt for p in unit.prints)
    last = units[-1] if units else None
    for unit in units:
        if unit is last and fs_bcnt < blocksize and not unit.setrep and unit.bcnt:
            unit.reps += (blocksize - fs_bcnt) // unit.bcnt
        tail = unit.prints[-1].text[-1:] if unit.prints and unit.prints[-1].kind == "text" else ""
        if unit.reps > 1 and tail and tail in _SPACE:
            unit.prints[-1].nospace = True  # the last repetition leaves out the trailing blank
    return end_unit


def _hd_conversion(unit: _Unit, fmt: str, j: int, prec: int | None) -> tuple[str, int]:
    """The kind and byte count of the conversion at fmt[j], or Fail with hexdump's message."""
    cs = fmt[j:j + 1]
    count = unit.bcnt
    if cs == "c":
        if count > 1:
            raise Fail(f"bad byte count for conversion character {cs}")
        return "char", 1
    if cs and cs in "diouxX":
        if count not in (0, 1, 2, 4, 8):
            raise Fail(f"bad byte count for conversion character {cs}")
        return ("int" if cs in "di" else "uint"), count or 4
    if cs and cs in "efgEG":
        if count not in (0, 4, 8):
            raise Fail(f"bad byte count for conversion character {cs}")
        return "dbl", count or 8
    if cs == "s":
        if not count and prec is None:
            raise Fail("%s requires a precision or a byte count")
        return "str", count or prec or 0
    if cs == "_":
        sub = fmt[j + 1:j + 2]
        if sub in ("a", "A"):
            if not fmt[j + 2:j + 3] or fmt[j + 2] not in "dox":
                raise Fail(f"bad conversion character %{fmt[j:j + 3]}")
            return "address", 0
        if sub and sub in "cpu":
            if count > 1:
                raise Fail(f"bad byte count for conversion character {fmt[j:j + 2]}")
            return sub, 1
        raise Fail(f"bad conversion character %{fmt[j:j + 2]}")
    raise Fail(f"bad conversion character %{cs}")


def _hd_print(pr: _Print, block: bytes, at: int, address: int, last: bool) -> str:
    """One print unit's output (a `str` of bytes as latin-1)."""
    kind = pr.kind
    if kind == "text":
        return pr.text[:-1] if last and pr.nospace else pr.text
    if kind == "bpad":
        return pr.text + " " * (pr.width or 0)
    if kind in ("int", "uint", "address"):
        value = address if kind == "address" else int.from_bytes(block[at:at + pr.bcnt], "little",
                                                                  signed=kind == "int")
        return pr.text + (format(value, pr.fast) if pr.fast else
                          _int_format(value, pr.conv, pr.flags, pr.width, pr.prec))
    if kind == "dbl":
        (value,) = struct.unpack("<f" if pr.bcnt == 4 else "<d", block[at:at + pr.bcnt])
        return pr.text + _float_format(value, pr.conv, pr.flags, pr.width, pr.prec)
    byte = block[at]
    if kind == "str":
        end = block.find(b"\0", at)
        return pr.text + _hd_string(pr, block[at:end if end >= 0 else len(block)].decode("latin-1"))
    if kind == "c" and byte in _OD_CHARS:
        return pr.text + _hd_string(pr, _OD_CHARS[byte])
    if kind == "u" and (byte < 32 or byte == 127):
        return pr.text + _hd_string(pr, _U_NAMES[byte] if byte < 32 else "del")
    if kind == "p" or kind == "char" or 32 <= byte < 127:  # %c
        return pr.text + _pad(chr(_PRINTABLE[byte] if kind == "p" else byte), pr.flags, pr.width)
    if kind == "c":
        return pr.text + _hd_string(pr, f"{byte:03o}")
    return pr.text + _int_format(byte, "x", pr.flags, pr.width, pr.prec)  # %_u past ASCII


def _hd_string(pr: _Print, text: str) -> str:
    """%s"""
    return _pad(text if pr.prec is None else text[:pr.prec], pr.flags, pr.width)


def _hd_size(text: str, what: str) -> int:
    """util-linux's strtosize: a number (0x.. hex, 0.. octal) with K, M, G... (KiB: 1024, KB: 1000)."""
    body = text.lstrip(_SPACE)
    value, end = _strtol(text) if not body.startswith("-") else (0, 0)
    rest = text[end:]
    power = "KMGTPEZY".find(rest[:1].upper()) + 1 if rest[:1] and rest[:1] in "KMGTPEZYkmgtpezy" else 0
    scale = 1000 if rest[1:] in ("B", "b") else 1024 if rest[1:] in ("", "iB", "ib") else 0
    if not end or (rest and (not power or not scale)):
        raise Fail(f"{what}: '{text}': Invalid argument")
    value *= scale ** power if rest else 1
    if value > _ULONG:
        raise Fail(f"{what}: '{text}': Numerical result out of range")
    return value


def _hexdump(sh: ToolContext, argv: list[str], prog: str) -> int:
    opts, files = parse(argv, "bcCde:f:L::n:os:vxhV", _HD_LONG)
    parsed = [_hd_parse(f) for f in _HD_CANONICAL] if prog == "hd" else []  # format strings as bytes (latin-1)
    length, skip, squeeze = -1, 0, True
    for key, value in opts:
        if key in _HD_FORMATS:
            parsed += [_hd_parse(_HD_OFFSET), _hd_parse(_HD_FORMATS[key])]
        elif key == "C":
            parsed += [_hd_parse(f) for f in _HD_CANONICAL]
        elif key == "e":
            parsed.append(_hd_parse(value.encode("utf-8", "surrogateescape").decode("latin-1")))
        elif key == "f":
            try:
                lines = devices.read_file(sh, value).decode("latin-1").split("\n")
            except OSError as e:
                raise Fail(f"can't read {value}: {message(e)}") from None
            parsed += [_hd_parse(line) for line in lines if line.strip(_SPACE) and line.lstrip(_SPACE)[0] != "#"]
        elif key == "L":
            if value is not None and value not in ("auto", "always", "never"):
                raise Fail(f"unsupported color mode: '{value}'")
        elif key == "n":
            length = _hd_size(value, "failed to parse length")
        elif key == "s":
            skip = _hd_size(value, "failed to parse offset")
        elif key == "v":
            squeeze = False
        elif key == "h":
            sh.out(f"\nUsage:\n {prog} [options] <file>...\n\n"
                   "Display file contents in hexadecimal, decimal, octal, or ascii.\n")
            return 0
        else:
            sh.out(f"{prog} from util-linux 2.38.1\n")
            return 0
    if not parsed:
        parsed = [_hd_parse(_HD_OFFSET), _hd_parse(_HD_FORMATS[""])]
    sizes = [_hd_block_size(units) for units in parsed]
    blocksize = max(sizes, default=0)
    end_unit = None
    for units, size in zip(parsed, sizes):
        end_unit = _hd_rewrite(units, size, blocksize) or end_unit
    out = Output(sh)
    try:
        status = _hd_display(sh, prog, files, parsed, blocksize, end_unit, length, skip, squeeze, out)
    finally:
        out.flush()
    return status


def _hd_display(sh: ToolContext, prog: str, files: list[str], parsed: list[list[_Unit]], blocksize: int,
                end_unit: _Unit | None, length: int, skip: int, squeeze: bool, out: Output) -> int:
    """get() and display(): blocks of input (-s and -n applied), a block equal to the one before
    shown once and then `*` (unless -v), a short last block zero-padded; after them all, the
    end offset if a format has %_A."""
    src = _Input(sh, prog, files, "stdin")
    state = {"address": 0, "skip": skip, "length": length, "eaddress": 0}

    def doskip() -> bool:  # -s passes over whole files, then lseeks in the next one
        if not state["skip"]:
            return True
        assert src.stream is not None
        size = _size(src.stream)
        if size is not None and state["skip"] > size:
            state["skip"] -= size
            state["address"] += size
            return False
        if not _lseek(src.stream, state["skip"]):
            raise Fail(f"{'stdin' if src.name == '-' else src.name}: {os.strerror(errno.ESPIPE)}")
        state["address"] += state["skip"]
        state["skip"] = 0
        return True

    src.opened = doskip
    started = False
    previous = b""
    mode = "first" if squeeze else "all"  # then "wait" (a block shown) and "dup" (blocks hidden)

    def get() -> bytes | None:
        nonlocal started, previous, mode
        if started:
            state["address"] += blocksize
        block = b""
        while state["length"] and blocksize:
            if not started:
                started = True
                if not src.open_next() and files and not src.opened_any:
                    sh.write_err(f"{prog}: all input file arguments failed\n")
            want = blocksize - len(block)
            data = src.read(want if state["length"] < 0 else min(state["length"], want))
            if state["length"] > 0:
                state["length"] -= len(data)
            block += data
            if len(block) < blocksize:
                if not data or src.stream is None:
                    break
                continue
            if mode in ("all", "first") or block != previous:
                mode = "wait" if mode in ("dup", "first") else mode
                previous = block
                return block
            if mode == "wait":
                out.write(b"*\n")
            mode = "dup"
            state["address"] += blocksize
            block = b""
        started = True
        if not block:
            return None
        state["eaddress"] = state["address"] + len(block)
        return block.ljust(blocksize, b"\0")

    try:
        _hd_blocks(get, parsed, state, out)
    finally:
        src.close()
    final = state["eaddress"] or state["address"]
    if end_unit is not None and final:
        out.write("".join(p.text + _int_format(final, p.conv, p.flags, p.width, p.prec) if p.kind == "address"
                          else p.text if p.kind == "text" else "" for p in end_unit.prints).encode("latin-1"))
    return 1 if src.failed else 0


def _hd_blocks(get: Callable[[], bytes | None], parsed: list[list[_Unit]], state: dict[str, int],
               out: Output) -> None:
    """Each block through every format string; conversions past the end of the data print blanks."""
    while (block := get()) is not None:
        eaddress = state["eaddress"]
        parts = []
        for units in parsed:
            at, addr = 0, state["address"]
            for unit in units:
                if unit.ignore:
                    break
                for count in range(unit.reps, 0, -1):
                    for pr in unit.prints:
                        if eaddress and addr >= eaddress and pr.kind not in ("text", "bpad"):
                            pr.kind = "bpad"
                        parts.append(_hd_print(pr, block, at, addr, count == 1))
                        addr += pr.bcnt
                        at += pr.bcnt
        out.write("".join(parts).encode("latin-1"))


@tool("hexdump")
def hexdump(sh: ToolContext, argv: list[str]) -> int:
    return _hexdump(sh, argv, "hexdump")


@tool("hd")
def hd(sh: ToolContext, argv: list[str]) -> int:
    return _hexdump(sh, argv, "hd")
