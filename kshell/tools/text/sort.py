"""sort (-b -d -f -g -h -i -M -n -r -R -s -u -V -c -C -k -t -o -z -m), as GNU coreutils in the
C locale: keys compared in turn, then the whole line bytewise unless -s or -u."""

from __future__ import annotations

import random
import re
from collections import Counter
from itertools import chain, repeat
from operator import itemgetter
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, message, open_chunks, split_lines

if TYPE_CHECKING:
    from collections.abc import Callable

    from kshell.core.context import ToolContext

_LONG = {"ignore-leading-blanks": ("b", NONE), "dictionary-order": ("d", NONE),
         "ignore-case": ("f", NONE), "general-numeric-sort": ("g", NONE),
         "ignore-nonprinting": ("i", NONE), "month-sort": ("M", NONE),
         "human-numeric-sort": ("h", NONE), "numeric-sort": ("n", NONE),
         "random-sort": ("R", NONE), "reverse": ("r", NONE), "version-sort": ("V", NONE),
         "check": ("c", OPTIONAL), "merge": ("m", NONE), "key": ("k", REQUIRED),
         "output": ("o", REQUIRED), "stable": ("s", NONE), "field-separator": ("t", REQUIRED),
         "unique": ("u", NONE), "zero-terminated": ("z", NONE), "buffer-size": ("S", REQUIRED),
         "parallel": ("parallel", REQUIRED), "temporary-directory": ("T", REQUIRED),
         "sort": ("sort", REQUIRED), "random-source": ("random-source", REQUIRED),
         "debug": ("debug", NONE), "help": ("help", NONE), "version": ("version", NONE)}
_ORDER = "bdfghiMnRrV"
_NUM = re.compile(rb"[ \t]*(-?)(\d*)(?:\.(\d*))?")
_HUMAN = re.compile(rb"[ \t]*(-?)(\d*(?:\.\d*)?)([KMGTPEZYRQk]?)")
_GENERAL = re.compile(rb"[ \t]*([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf(?:inity)?|nan))",
                      re.IGNORECASE)
_MONTHS = {m: i + 1 for i, m in enumerate(
    [b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV", b"DEC"])}
_VERSION_PART = re.compile(rb"(\d+)|(\D+)")


_SAMPLE = 4096  # lines looked at to guess whether the input repeats itself


def _repeats(lines: list[bytes]) -> bool:
    """Whether a strided sample of many lines is at least half repeats."""
    n = len(lines)
    if n <= _SAMPLE:
        return False
    sample = lines[:: n // _SAMPLE]
    return len(set(sample)) * 2 <= len(sample)


def _plain_sorted(lines: list[bytes], sep: bytes, reverse: bool) -> bytes:
    """The lines in byte order (the C locale's collation, as memcmp), joined with `sep` after
    each. Equal lines are identical bytes, so when the input repeats itself (logs, words: the
    `sort | uniq -c` idiom) counting the distinct lines and sorting only those is several times
    cheaper than sorting every line, and gives the same bytes; a strided sample decides, since
    counting costs a hash per line that an input of distinct lines would not repay."""
    if not _repeats(lines):
        lines.sort(reverse=reverse)
        return sep.join(lines) + sep if lines else b""
    counts = Counter(lines)
    return b"".join([(line + sep) * counts[line] for line in sorted(counts, reverse=reverse)])


def _plain_sorted_lines(lines: list[bytes], reverse: bool) -> list[bytes]:
    """The lines in byte order as a list, counted first when they repeat (`_plain_sorted`)."""
    if not _repeats(lines):
        lines.sort(reverse=reverse)
        return lines
    counts = Counter(lines)
    return list(chain.from_iterable(repeat(line, counts[line])
                                    for line in sorted(counts, reverse=reverse)))


class _Key:
    __slots__ = ("sf", "sc", "ef", "ec", "opts", "sb", "eb")

    def __init__(self, sf: int, sc: int, ef: int, ec: int, opts: str, sb: bool, eb: bool) -> None:
        self.sf, self.sc, self.ef, self.ec, self.opts, self.sb, self.eb = sf, sc, ef, ec, opts, sb, eb


def _parse_key(spec: str, global_opts: str) -> _Key:
    m = re.match(r"(\d+)(?:\.(\d+))?([a-zA-Z]*)(?:,(\d+)(?:\.(\d+))?([a-zA-Z]*))?\Z", spec)
    if not m:
        raise Fail(f"invalid number at field start: invalid count at start of '{spec}'", 2)
    sf = int(m.group(1))
    if sf == 0:
        raise Fail(f"field number is zero: invalid field specification '{spec}'", 2)
    sc = int(m.group(2)) if m.group(2) else 1
    if m.group(2) is not None and sc == 0:
        raise Fail(f"character offset is zero: invalid field specification '{spec}'", 2)
    o1 = m.group(3) or ""
    o2 = m.group(6) or ""
    for c in o1 + o2:
        if c not in _ORDER:
            raise Fail(f"stray character in field spec: invalid field specification '{spec}'", 2)
    ef = int(m.group(4)) if m.group(4) else 0
    if m.group(4) is not None and ef == 0:
        raise Fail(f"field number is zero: invalid field specification '{spec}'", 2)
    ec = int(m.group(5)) if m.group(5) else 0
    opts = (o1 + o2).replace("b", "")
    if not (o1 + o2).replace("b", "") and not (o1 + o2):
        opts = global_opts.replace("b", "")
        sb = eb = "b" in global_opts
    else:
        sb = "b" in o1
        eb = "b" in o2
    return _Key(sf, sc, ef, ec, opts, sb, eb)


def _skipper(fields: int, tab: bytes | None, blanks: bool, last_tab: bool = True) -> re.Pattern[bytes]:
    """A regex whose match ends where GNU's begfield/limfield loop leaves its pointer after
    skipping `fields` fields: without -t a field is blanks then non-blanks; with -t it is
    non-tabs then the tab (which the last skipped field of limfield keeps unless `last_tab`).
    `blanks` adds -b's skip of the blanks that follow. One C-level match per line replaces
    splitting every line into all of its fields."""
    if tab is None:
        pattern = rb"(?:[ \t]*[^ \t]*){%d}" % fields
    else:
        t = re.escape(tab)
        other = rb"[^" + t + rb"]*"
        if last_tab or fields == 0:
            pattern = rb"(?:%s%s?){%d}" % (other, t, fields)
        else:
            pattern = rb"(?:%s%s?){%d}%s" % (other, t, fields - 1, other)
    if blanks:
        pattern += rb"[ \t]*"
    return re.compile(pattern)


def _extractor(key: _Key, tab: bytes | None) -> Callable[[bytes], bytes]:
    """The key's bytes of a line, as GNU sort's begfield and limfield find them: the start
    skips sf-1 fields (then blanks with b) and sc-1 more bytes, the end skips ef fields
    (ec = 0) or ef-1 fields (then blanks with b) and ec bytes; neither offset goes past the
    end of the line (not of the field), and an end before the start is an empty key."""
    start_at = _skipper(key.sf - 1, tab, key.sb).match
    sc = key.sc - 1
    if key.ef == 0:
        def extract(line: bytes) -> bytes:
            return line[start_at(line).end() + sc:]
        return extract
    if key.ec == 0:
        end_at = _skipper(key.ef, tab, False, last_tab=False).match
        ec = 0
    else:
        end_at = _skipper(key.ef - 1, tab, key.eb).match
        ec = key.ec

    def extract_span(line: bytes) -> bytes:
        return line[start_at(line).end() + sc : end_at(line).end() + ec]

    return extract_span


_INVERT = bytes.maketrans(b"0123456789", b"9876543210")


_ZERO = b"\x01"


def _num_key(text: bytes) -> bytes:
    """-n's key as bytes whose byte order is the numeric order, so that keys compare by one
    memcmp (no tuple, no Python __lt__): a sign byte (0 negative, 1 zero, 2 positive), the
    integer part's length in 4 bytes, its digits without leading zeros (any number of digits
    compares exactly, without int()), then the fraction without trailing zeros. A negative
    number's length and digits are inverted so that a larger magnitude sorts first, and b"\xff"
    ends it, so that a shorter fraction (smaller magnitude: -1.5 > -1.55) sorts after a longer
    one that it prefixes."""
    m = _NUM.match(text)
    neg, whole, frac = m.group(1), m.group(2).lstrip(b"0"), (m.group(3) or b"").rstrip(b"0")
    if not whole and not frac:
        return _ZERO
    if neg:
        return (b"\x00" + (0xFFFFFFFF - len(whole)).to_bytes(4, "big")
                + (whole + frac).translate(_INVERT) + b"\xff")
    return b"\x02" + len(whole).to_bytes(4, "big") + whole + frac


_FRACTION = re.compile(rb"^[ \t]*-?[0-9]*\.[0-9]*[1-9]", re.M)
_INTEGER = re.compile(rb"[ \t]*(-?[0-9]+|)[^\n]*\n")  # one match per line, back to back


def _integral(data: bytes) -> bool:
    """Whether no line has a nonzero fraction, so that whole-line -n can order the lines by
    their integer parts alone (`_integer_keys`); the regex runs only when there is a dot."""
    return b"." not in data or not _FRACTION.search(data)


def _integer_keys(data: bytes, count: int) -> list[int] | None:
    """Whole-line -n keys of `count` newline-ended lines as ints, found by one regex pass over
    the whole input rather than a Python call per line (for input that `_integral` passed). A
    line without a number is 0, as is "-" or "-0"; int() keeps its digit limit, so a huge
    number returns None, and the caller falls back to the per-line key."""
    found = _INTEGER.findall(data)
    if len(found) != count:
        return None
    try:
        return [int(x) if x else 0 for x in found]
    except ValueError:
        return None


def _general_key(text: bytes):
    m = _GENERAL.match(text)
    if not m:
        return (0, 0.0)
    v = float(m.group(1))
    if v != v:
        return (1, 0.0)
    return (2, v)


def _human_key(text: bytes):
    m = _HUMAN.match(text)
    neg, num, suffix = m.groups()
    order = " KMGTPEZYRQ".find(suffix.upper().decode()) if suffix else 0
    try:
        v = float(num) if num and num != b"." else 0.0
    except ValueError:
        v = 0.0
    if v == 0:
        return (0, 0, 0.0)
    return (-1, -order, -v) if neg else (1, order, v)


def _month_key(text: bytes):
    return _MONTHS.get(text.lstrip(b" \t")[:3].upper(), 0)


def _version_key(text: bytes):
    return [(0, int(d), b"") if d else (1, 0, s) for d, s in _VERSION_PART.findall(text)]


_DICT = re.compile(rb"[^A-Za-z0-9 \t]")
_NONPRINT = re.compile(rb"[^\x20-\x7e]")


def _transform(text: bytes, opts: str, salt: bytes):
    if "d" in opts:
        text = _DICT.sub(b"", text)
    if "i" in opts:
        text = _NONPRINT.sub(b"", text)
    if "f" in opts:
        text = text.upper()
    if "n" in opts:
        return _num_key(text)
    if "g" in opts:
        return _general_key(text)
    if "h" in opts:
        return _human_key(text)
    if "M" in opts:
        return _month_key(text)
    if "V" in opts:
        return _version_key(text)
    if "R" in opts:
        import hashlib
        return hashlib.md5(salt + text).digest()
    return text


def _converter(opts: str, salt: bytes) -> Callable[[bytes], object]:
    """`_transform` for fixed options, as the kind's own function when there is nothing
    else to do (no d, i or f), sparing a call and seven tests per key."""
    kinds = {"n": _num_key, "g": _general_key, "h": _human_key, "M": _month_key, "V": _version_key}
    if len(opts) == 1 and opts in kinds:
        return kinds[opts]
    return lambda text: _transform(text, opts, salt)


class _Rev:
    __slots__ = ("v",)

    def __init__(self, v) -> None:
        self.v = v

    def __lt__(self, other: _Rev) -> bool:
        return other.v < self.v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Rev) and self.v == other.v


@tool("sort", usage_status=2)
def sort(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "bdfghiMnRrVc::CmsuzS:T:k:o:t:", _LONG)
    global_opts = ""
    keys_spec: list[str] = []
    tab: bytes | None = None
    output = None
    check = ""
    stable = unique = zero = False
    for key, value in opts:
        if key in _ORDER and len(key) == 1:
            global_opts += key
        elif key == "k":
            keys_spec.append(value)
        elif key == "t":
            raw = value.encode("utf-8", "surrogateescape")
            if raw == b"\\0":
                raw = b"\0"
            if len(raw) != 1:
                if not raw:
                    raise Fail("empty tab", 2)
                raise Fail(f"multi-character tab '{value}'", 2)
            if tab is not None and tab != raw:
                raise Fail("incompatible tabs", 2)
            tab = raw
        elif key == "o":
            output = value
        elif key == "c":
            if value not in (None, "", "diagnose-first", "quiet", "silent"):
                raise Usage(f"invalid argument '{value}' for '--check'")
            check = "C" if value in ("quiet", "silent") else "c"
        elif key == "C":
            check = "C"
        elif key == "s":
            stable = True
        elif key == "u":
            unique = True
        elif key == "z":
            zero = True
        elif key == "sort":
            global_opts += {"general-numeric": "g", "human-numeric": "h", "month": "M",
                            "numeric": "n", "random": "R", "version": "V"}.get(value, "")
        elif key == "help":
            sh.out(b"Usage: sort [OPTION]... [FILE]...\n")
            return 0
        elif key == "version":
            sh.out(b"sort (GNU coreutils) 9.1\n")
            return 0
    kinds = [c for c in "ghMnRV" if c in global_opts]
    if len(set(kinds)) > 1:
        raise Fail(f"options '-{''.join(sorted(set(kinds)))}' are incompatible", 2)
    keys = [_parse_key(k, global_opts) for k in keys_spec]
    sep = b"\0" if zero else b"\n"
    data_parts: list[bytes] = []
    for name in files or ["-"]:
        try:
            data_parts.append(b"".join(open_chunks(sh, name)))
        except OSError as e:
            if e.errno == 21:
                raise Fail(f"read failed: {name}: {message(e)}", 2) from None
            raise Fail(f"cannot read: {name}: {message(e)}", 2) from None
        if data_parts[-1] and not data_parts[-1].endswith(sep):
            data_parts[-1] += sep
    data = b"".join(data_parts)
    lines = split_lines(data, sep)
    reverse = "r" in global_opts
    salt = random.randbytes(16) if "R" in global_opts or any("R" in k.opts for k in keys) else b""
    simple = not keys and not set(global_opts) - {"r"}
    keyfn = None
    # A reversal that covers the whole comparison (the last resort and every key) is done by
    # list.sort(reverse=True), which keeps equal keys in input order as -s wants, instead of
    # wrapping each key in _Rev, whose Python-level __lt__ made -rn some 10x slower.
    flip = not check and reverse and all("r" in k.opts for k in keys)
    if not simple:
        gopts = global_opts.replace("r", "")
        strip = "b" in gopts and not keys
        gopts = gopts.replace("b", "")

        plan = [(_extractor(k, tab), k.opts.replace("r", ""), "r" in k.opts and not flip)
                for k in keys]

        def keyfn(line: bytes) -> tuple:
            if plan:
                parts = []
                for extract, kopts, rev in plan:
                    v = extract(line)
                    if kopts:
                        v = _transform(v, kopts, salt)
                    parts.append(_Rev(v) if rev else v)
                return tuple(parts)
            v = _transform(line.lstrip(b" \t") if strip else line, gopts, salt)
            return (_Rev(v) if reverse and not flip else v,)

        # a lone key (or the whole line) needs neither a tuple nor keyfn's loop
        sortkey: Callable[[bytes], object] = keyfn
        if len(plan) == 1 and not plan[0][2]:
            extract, kopts, _ = plan[0]
            if not kopts:
                sortkey = extract
            else:
                convert = _converter(kopts, salt)
                sortkey = lambda line: convert(extract(line))  # noqa: E731
        elif not plan and not (reverse and not flip):
            convert = _converter(gopts, salt)
            sortkey = (lambda line: convert(line.lstrip(b" \t"))) if strip else convert
        if not check and _repeats(lines):
            # a key depends on its line alone: with many repeats, work it out once per
            # distinct line and let the sort look it up (a dict lookup, in C)
            distinct = list(set(lines))
            sortkey = dict(zip(distinct, map(sortkey, distinct))).__getitem__

    if check:
        return _check(sh, lines, keyfn, reverse, unique, stable, check, files[0] if files else "-")
    text: bytes | None = None
    ints = None
    if not simple and not keys and not check and not unique and sep == b"\n" \
            and "n" in global_opts and set(global_opts) <= {"n", "r", "b"} and _integral(data):
        if not stable:
            # the last resort first (the whole line, bytewise, reversed with -r), then a stable
            # sort on the numbers alone: ints compared in C beat (number, line) tuples
            data = _plain_sorted(lines, sep, reverse)
            lines = split_lines(data, sep)
        ints = _integer_keys(data, len(lines))
    if ints is not None:
        pairs = list(zip(ints, lines))
        pairs.sort(key=itemgetter(0), reverse=reverse)
        lines = list(map(itemgetter(1), pairs))
    elif simple:
        if unique:
            lines = sorted(set(lines), reverse=reverse)
        else:
            text = _plain_sorted(lines, sep, reverse)
    elif unique:
        # of equal keys the first line in input order is kept; a later copy of a line is never
        # first, so dropping copies (dict keeps first occurrences in order) changes nothing
        decorated = [(sortkey(line), line) for line in dict.fromkeys(lines)]
        decorated.sort(key=itemgetter(0), reverse=flip)
        result = []
        last = None
        for k, line in decorated:
            if last is None or k != last:
                result.append(line)
                last = k
        lines = result
    else:
        if not stable:
            # the last resort first (the whole line, bytewise, reversed with -r), then a stable
            # sort on the keys alone, rather than (key, line) tuples built and compared per line
            lines = _plain_sorted_lines(lines, reverse)
        lines.sort(key=sortkey, reverse=flip)
    if text is None:
        text = sep.join(lines) + sep if lines else b""
    if output is not None:
        try:
            devices.write_file(sh, output, text)
        except OSError as e:
            raise Fail(f"open failed: {output}: {message(e)}", 2) from None
        return 0
    out = Output(sh)
    for i in range(0, len(text), 1 << 20):
        out.write(text[i : i + (1 << 20)])
    out.flush()
    return 0


def _check(sh: ToolContext, lines: list[bytes], keyfn, reverse: bool, unique: bool, stable: bool,
           mode: str, name: str) -> int:
    def full(line: bytes):
        if keyfn is None:
            return (_Rev(line),) if reverse else (line,)
        if stable or unique:
            return keyfn(line)
        return (*keyfn(line), _Rev(line) if reverse else line)

    prev = None
    for i, line in enumerate(lines):
        k = full(line)
        if prev is not None and (k < prev or (unique and k == prev)):
            if mode == "c":
                shown = line.decode("utf-8", "surrogateescape")
                sh.write_err(f"sort: {name}:{i + 1}: disorder: {shown}\n")
            return 1
        prev = k
    return 0
