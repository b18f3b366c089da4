"""awk values: numbers are floats, strings are str (latin-1, one char per byte), and input that
looks numeric is a `StrNum` (a string that compares as a number); conversions and printf."""

from __future__ import annotations

import math
import re
from functools import lru_cache

_NUMERIC = re.compile(r"[ \t\n\r\f\v]*[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)[ \t\n\r\f\v]*\Z")
_PREFIX = re.compile(r"[ \t\n\r\f\v]*([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))")
_SPECIAL = re.compile(r"[ \t\n]*([-+])(inf|nan)", re.IGNORECASE)


class AwkFatal(Exception):
    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class StrNum(str):
    """Input text that looks like a number: compared numerically against numbers."""

    num: float


class Uninit(StrNum):
    """The value of a variable never assigned: "" and 0 at once."""


class LazyArray(Uninit):
    """An uninitialized variable passed to a function: becomes an array if the callee uses it so."""

    def __init__(self, *args: object) -> None:
        self.setter = None


UNINIT = Uninit("")
UNINIT.num = 0.0


def field(text: str):
    """A field or other input value: a StrNum when it looks numeric."""
    if text.isdigit() and text.isascii():  # the common case, without the regex
        v = StrNum(text)
        v.num = float(text)
        return v
    if _NUMERIC.match(text):
        v = StrNum(text)
        v.num = float(text)
        return v
    return text


# every string of one to three digits ("0", "07", "404") -> its number: fields that hold small
# counts, codes and sizes are looked up (one dict probe) rather than parsed (isdecimal, len, int
# and float: four calls); a miss costs one probe. 1,110 entries, built once.
SMALL_NUMBERS: dict[str, float] = {str(i).zfill(w): float(i) for w in (1, 2, 3) for i in range(10**w)}
small_number = SMALL_NUMBERS.get


def small_share(batch: list[str], sep: str | None, j: int) -> bool:
    """Whether field j+1 of the records of a batch mostly holds small numbers, by a sample
    of up to 16 records spread over it, cut as the record loop cuts them (sep: str.split's
    one character, "" for white space, None for a regex FS: then yes). Only speed depends
    on the answer: the looked-up and the parsed number are the same."""
    if sep is None or len(batch) < 64:  # a short batch (RS "" or a regex cuts one record at a
        return True  # time): sampling would cost more than it saves
    step = max(1, len(batch) // 16)
    hits = total = 0
    for rec in batch[::step]:
        f = rec.split(sep, j + 1) if sep else rec.split(None, j + 1)
        if len(f) > j:
            total += 1
            hits += f[j] in SMALL_NUMBERS
    return hits * 2 >= total


def field_number(text: str) -> float:
    """to_num(field(text)), straight from the text: a small number from SMALL_NUMBERS, other
    digits through int (exact, and quicker than float's parse), anything else by its numeric
    prefix. The compiled code inlines this for the fields it reads (expressions.field_num_src)."""
    known = small_number(text)
    if known is not None:
        return known
    if text.isdecimal() and len(text) < 19:
        return float(int(text))
    return str_to_num(text)


def str_to_num(s: str) -> float:
    m = _PREFIX.match(s)
    if m:
        return float(m.group(1))
    m = _SPECIAL.match(s)
    if m:
        return float(m.group(1) + m.group(2))
    return 0.0


def to_num(v) -> float:
    t = type(v)
    if t is float:
        return v
    if t is StrNum or t is Uninit or t is LazyArray:
        return v.num
    if t is str:
        return str_to_num(v)
    if t is dict:
        raise AwkFatal("attempt to use array in a scalar context")
    return float(v)


def num_to_str(x: float, fmt: str) -> str:
    if x == x and x not in (math.inf, -math.inf):
        i = int(x)
        if i == x:
            return str(i)
        return fmt_number(fmt, x)
    return special(x)


def special(x: float) -> str:
    if x != x:
        return "-nan" if math.copysign(1, x) < 0 else "+nan"
    return "+inf" if x > 0 else "-inf"


def fmt_number(fmt: str, x: float) -> str:
    try:
        return fmt % x
    except (TypeError, ValueError):
        return format_printf(fmt, [x], "%.6g")


def to_str(v, convfmt: str = "%.6g") -> str:
    t = type(v)
    if t is float:
        return num_to_str(v, convfmt)
    if t is dict:
        raise AwkFatal("attempt to use array in a scalar context")
    return v


def to_bool(v) -> bool:
    t = type(v)
    if t is float:
        return v != 0.0
    if t is StrNum or t is Uninit or t is LazyArray:
        return v.num != 0.0
    if t is dict:
        raise AwkFatal("attempt to use array in a scalar context")
    return v != ""


def is_num(v) -> bool:
    t = type(v)
    return t is float or t is StrNum or t is Uninit or t is LazyArray


def compare(a, b, convfmt: str) -> int:
    if is_num(a) and is_num(b):
        x = to_num(a)
        y = to_num(b)
    else:
        x = to_str(a, convfmt)
        y = to_str(b, convfmt)
    return (x > y) - (x < y)


_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?([a-zA-Z%])")


def _ran_out(fmt: str, end: int) -> AwkFatal:
    return AwkFatal("not enough arguments to satisfy format string\n\t`" + fmt
                    + "'\n\t" + " " * (end - 1) + "^ ran out for this one")


def conv_int(v, spec: str, flags: str, width: str | None, conv: str, convfmt: str) -> str:
    x = to_num(v)
    if x != x or x in (math.inf, -math.inf):
        return ("%" + flags.replace("0", "") + (width or "") + "s") % special(x)
    return (spec + "d") % int(x)


def conv_unsigned(v, spec: str, flags: str, width: str | None, conv: str, convfmt: str) -> str:
    k = int(to_num(v))
    if k < 0:
        k += 1 << 64
    if conv == "o" and "#" in flags:
        text = (spec.replace("#", "") + "o") % k
        return text if text.lstrip(" ").startswith("0") else (spec.replace("#", "") + "s") % f"0{k:o}"
    return (spec + ("d" if conv == "u" else conv)) % k


def conv_char(v, spec: str, flags: str, width: str | None, conv: str, convfmt: str) -> str:
    if type(v) is float or type(v) is StrNum:
        k = int(to_num(v))
        ch = chr(k) if 0 <= k < 256 else chr(k & 0xFF)
    else:
        ch = to_str(v, convfmt)[:1]
    return ("%" + flags + (width or "") + "s") % ch


def conv_str(v, spec: str, flags: str, width: str | None, conv: str, convfmt: str) -> str:
    return (spec + "s") % to_str(v, convfmt)


def conv_float(v, spec: str, flags: str, width: str | None, conv: str, convfmt: str) -> str:
    x = to_num(v)
    if x != x or x in (math.inf, -math.inf):
        return ("%" + flags.replace("0", "") + (width or "") + "s") % special(x)
    return (spec + conv) % x


CONVERTERS = {**dict.fromkeys("di", conv_int), **dict.fromkeys("oxXu", conv_unsigned), "c": conv_char,
               "s": conv_str, **dict.fromkeys("eEfFgG", conv_float)}


def _spec(flags: str, width: str | None, prec: str | None) -> str:
    return "%" + flags + (width or "") + ("." + (prec or "0") if prec is not None else "")


@lru_cache(maxsize=256)
def format_plan(fmt: str) -> tuple:
    """A printf format cut once into its literal text (str) and its conversions: (converter,
    flags, width, precision, letter, where it ends in fmt, its text, the %-spec when no `*`
    makes it depend on the arguments); a `%` that starts no valid conversion makes the
    rest literal. An unknown letter has no converter: its text is copied."""
    items: list = []
    pos = 0
    n = len(fmt)
    while pos < n:
        i = fmt.find("%", pos)
        if i < 0:
            items.append(fmt[pos:])
            break
        items.append(fmt[pos:i])
        m = _SPEC.match(fmt, i)
        if not m:
            items.append(fmt[i:])
            break
        flags, width, prec, conv = m.groups()
        pos = m.end()
        if conv == "%":
            items.append("%")
            continue
        spec = None if "*" in (width, prec) else _spec(flags, width, prec)
        items.append((CONVERTERS.get(conv), flags, width, prec, conv, m.end(), m.group(), spec))
    return tuple(items)


def format_printf(fmt: str, args: list, convfmt: str) -> str:
    out: list[str] = []
    ai = 0
    nargs = len(args)
    for item in format_plan(fmt):
        if type(item) is str:
            out.append(item)
            continue
        convert, flags, width, prec, conv, end, text, spec = item
        if spec is None:
            if width == "*":
                if ai >= nargs:
                    raise _ran_out(fmt, end)
                w = int(to_num(args[ai]))
                ai += 1
                if w < 0:
                    flags += "-"
                    w = -w
                width = str(w)
            if prec == "*":
                if ai >= nargs:
                    raise _ran_out(fmt, end)
                p = int(to_num(args[ai]))
                ai += 1
                prec = str(p) if p >= 0 else None
            spec = _spec(flags, width, prec)
        if ai >= nargs:
            raise _ran_out(fmt, end)
        v = args[ai]
        ai += 1
        if convert is None:
            out.append(text)
            ai -= 1
            continue
        out.append(convert(v, spec, flags, width, conv, convfmt))
    return "".join(out)
