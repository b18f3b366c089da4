"""date: print a time (now, -d STRING, -r FILE) as +FORMAT, -I[TIMESPEC], -R or the C locale's
default format, in $TZ (UTC when unset) or with -u in UTC.

-d (and -f, a string a line) takes GNU's free-form date strings (kshell.tools.system.datestr).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from kshell.core.clock import zone
from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"date": ("d", REQUIRED), "file": ("f", REQUIRED), "utc": ("u", NONE), "universal": ("u", NONE),
         "iso-8601": ("I", OPTIONAL),
         "rfc-email": ("R", NONE), "reference": ("r", REQUIRED), "rfc-3339": ("rfc", REQUIRED),
         "help": ("help", NONE), "version": ("version", NONE)}
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_FULL_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_FULL_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December"]


def _offset(dt: datetime, colons: int) -> str:
    off = dt.utcoffset() or timedelta(0)
    total = int(off.total_seconds())
    sign = "-" if total < 0 else "+"
    h, rem = divmod(abs(total), 3600)
    m, s = divmod(rem, 60)
    if colons == 0:
        return f"{sign}{h:02d}{m:02d}"
    if colons == 1:
        return f"{sign}{h:02d}:{m:02d}"
    return f"{sign}{h:02d}:{m:02d}:{s:02d}"


def strftime(dt: datetime, fmt: str, ns: int = 0) -> str:
    """GNU date's conversions, with the `-`, `_`, `0`, `^` flags and %N / %:z / %s."""
    out: list[str] = []
    i = 0
    n = len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        i += 1
        flag = ""
        while i < n and fmt[i] in "-_0^#":
            flag += fmt[i]
            i += 1
        width = ""
        while i < n and fmt[i].isdigit():
            width += fmt[i]
            i += 1
        colons = 0
        while i < n and fmt[i] == ":":
            colons += 1
            i += 1
        if i >= n:
            out.append("%" + flag + width + ":" * colons)
            break
        d = fmt[i]
        i += 1
        num: tuple[int, int, str] | None = None  # (value, default width, default pad)
        text = None
        if d == "Y":
            num = (dt.year, 1, "0")
        elif d == "C":
            num = (dt.year // 100, 2, "0")
        elif d == "y":
            num = (dt.year % 100, 2, "0")
        elif d == "m":
            num = (dt.month, 2, "0")
        elif d == "d":
            num = (dt.day, 2, "0")
        elif d == "e":
            num = (dt.day, 2, " ")
        elif d == "H":
            num = (dt.hour, 2, "0")
        elif d == "k":
            num = (dt.hour, 2, " ")
        elif d == "I":
            num = ((dt.hour % 12) or 12, 2, "0")
        elif d == "l":
            num = ((dt.hour % 12) or 12, 2, " ")
        elif d == "M":
            num = (dt.minute, 2, "0")
        elif d == "S":
            num = (dt.second, 2, "0")
        elif d == "j":
            num = (dt.timetuple().tm_yday, 3, "0")
        elif d == "u":
            num = (dt.isoweekday(), 1, "0")
        elif d == "w":
            num = (dt.isoweekday() % 7, 1, "0")
        elif d == "s":
            num = (int(dt.timestamp()), 1, "0")
        elif d == "N":
            digits = f"{ns:09d}"
            text = digits[: int(width)] if width else digits
            width = ""
        elif d == "V":
            num = (dt.isocalendar()[1], 2, "0")
        elif d == "G":
            num = (dt.isocalendar()[0], 1, "0")
        elif d in "UW":
            num = (int(dt.strftime("%" + d)), 2, "0")
        elif d == "a":
            text = _DAYS[dt.weekday()]
        elif d == "A":
            text = _FULL_DAYS[dt.weekday()]
        elif d in "bh":
            text = _MONTHS[dt.month - 1]
        elif d == "B":
            text = _FULL_MONTHS[dt.month - 1]
        elif d == "p":
            text = "AM" if dt.hour < 12 else "PM"
        elif d == "P":
            text = "am" if dt.hour < 12 else "pm"
        elif d == "Z":
            text = dt.tzname() or "UTC"
        elif d == "z":
            text = _offset(dt, colons)
        elif d == "F":
            text = f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}"
        elif d == "T":
            text = f"{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
        elif d == "R":
            text = f"{dt.hour:02d}:{dt.minute:02d}"
        elif d == "D":
            text = f"{dt.month:02d}/{dt.day:02d}/{dt.year % 100:02d}"
        elif d == "c":
            text = strftime(dt, "%a %b %e %H:%M:%S %Y")
        elif d == "x":
            text = strftime(dt, "%m/%d/%y")
        elif d == "X":
            text = strftime(dt, "%H:%M:%S")
        elif d == "r":
            text = strftime(dt, "%I:%M:%S %p")
        elif d == "n":
            text = "\n"
        elif d == "t":
            text = "\t"
        elif d == "%":
            text = "%"
        else:
            out.append("%" + flag + width + ":" * colons + d)
            continue
        if num is not None:
            value, w, pad = num
            if "-" in flag:
                text = str(value)
            else:
                if "_" in flag:
                    pad = " "
                elif "0" in flag:
                    pad = "0"
                w = int(width) if width else w
                s = str(abs(value))
                text = ("-" if value < 0 else "") + s.rjust(w - (value < 0), pad)
        else:
            assert text is not None
            if "^" in flag:
                text = text.upper()
            if width and not flag.startswith("-"):
                text = text.rjust(int(width), "0" if "0" in flag else " ")
        out.append(text)
    return "".join(out)


def parse_date(text: str, now_ns: int, tz: tzinfo) -> tuple[datetime, int]:
    """(aware datetime, nanoseconds) for -d STRING; ValueError when not understood."""
    from kshell.tools.system.datestr import parse as parse_string

    return parse_string(text, now_ns, tz)


@tool("date")
def date(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "d:f:uI::Rr:", _LONG)
    utc = any(k == "u" for k, _ in opts)
    tz: tzinfo = UTC if utc else zone(sh)
    fmt = "%a %b %e %H:%M:%S %Z %Y"
    chosen: list[str] = []
    now = time.time_ns()
    when: tuple[datetime, int] | None = None
    for k, v in opts:
        if k == "d":
            try:
                when = parse_date(v, now, tz)
            except (ValueError, OverflowError):
                raise Fail(f"invalid date '{v}'") from None
        elif k == "r":
            try:
                ns = sh.fs.stat(v).mtime
            except OSError as e:
                raise Fail(f"{v}: {e.strerror}") from None
            when = (datetime.fromtimestamp(ns // 1_000_000_000, tz), ns % 1_000_000_000)
        elif k == "I":
            spec = v or "date"
            forms = {"date": "%Y-%m-%d", "hours": "%Y-%m-%dT%H%:z", "minutes": "%Y-%m-%dT%H:%M%:z",
                     "seconds": "%Y-%m-%dT%H:%M:%S%:z", "ns": "%Y-%m-%dT%H:%M:%S,%N%:z"}
            full = [f for f in forms if f.startswith(spec)] if spec else []
            if len(full) != 1:
                raise Usage(f"invalid argument '{spec}' for '--iso-8601'\nValid arguments are:\n"
                            "  - 'hours'\n  - 'minutes'\n  - 'date'\n  - 'seconds'\n  - 'ns'")
            fmt = forms[full[0]]
            chosen.append("I")
        elif k == "R":
            fmt = "%a, %d %b %Y %H:%M:%S %z"
            chosen.append("R")
        elif k == "rfc":
            forms = {"date": "%Y-%m-%d", "seconds": "%Y-%m-%d %H:%M:%S%:z", "ns": "%Y-%m-%d %H:%M:%S.%N%:z"}
            full = [f for f in forms if f.startswith(v)] if v else []
            if len(full) != 1:
                raise Usage(f"invalid argument '{v}' for '--rfc-3339'")
            fmt = forms[full[0]]
            chosen.append("rfc")
    if len(chosen) > 1:
        raise Usage("multiple output formats specified", hint=False)
    if operands:
        if len(operands) > 1 or not operands[0].startswith("+"):
            op = operands[1] if operands[0].startswith("+") else operands[0]
            if operands[0].startswith("+"):
                raise Usage(f"extra operand '{op}'")
            raise Fail(f"invalid date '{op}'")
        if chosen:
            raise Usage("multiple output formats specified", hint=False)
        fmt = operands[0][1:]
    files = [v for k, v in opts if k == "f"]
    if files:
        if len(files) > 1 or any(k in ("d", "r") for k, _ in opts):
            raise Usage("the options to specify dates for printing are mutually exclusive")
        return _each_line(sh, files[0], fmt, now, tz)
    if when is None:
        when = (datetime.fromtimestamp(now // 1_000_000_000, tz), now % 1_000_000_000)
    dt, ns = when
    sh.out(strftime(dt, fmt, ns) + "\n")
    return 0


def _each_line(sh: ToolContext, source: str, fmt: str, now: int, tz: tzinfo) -> int:
    """-f FILE: each line a date string, printed in turn; an invalid one is reported and the
    status is 1 (GNU)."""
    from kshell.tools.text.textio import message, read_all

    try:
        data = read_all(sh, source)
    except OSError as e:
        raise Fail(f"{source}: {message(e)}") from None
    status = 0
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        try:
            dt, ns = parse_date(line, now, tz)
        except (ValueError, OverflowError):
            sh.write_err(f"date: invalid date '{line}'\n")
            status = 1
            continue
        sh.out(strftime(dt, fmt, ns) + "\n")
    return status
