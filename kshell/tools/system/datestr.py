"""GNU date's free-form date strings (`date -d`, `touch -d`), after gnulib's parse-datetime:
items in any order, each a calendar date (`2024-01-05`, `1/5/2024`, `5 Jan 2024`, `Jan 5, 2024`,
`5-Jan-2024`, `20240105`), a time of day (`10:30[:05[.5]]`, `3pm`, with a `+0530`/`-08:00` offset),
a zone (`UTC`, `Z`, `EST`, `UTC+2`, a leading `TZ="Area/City"`), a day of the week (`monday`,
`next friday`, `last tue`), a relative item (`2 days ago`, `+1 week`, `next month`, `third day`,
`tomorrow`, `yesterday`, `now`), or a bare number (a year after a date, else HHMM); or `@SECONDS`.

As GNU: a date or a day of the week without a time means midnight, relative items alone keep
the time of now; a day of the week counts only without a date; years, months and days are added
to the calendar fields (Jan 31 + 1 month is Mar 2), hours and smaller to the instant.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

_MONTHS = {name: i for i, names in enumerate(
    (("january",), ("february",), ("march",), ("april",), ("may",), ("june",), ("july",), ("august",),
     ("september", "sept"), ("october",), ("november",), ("december",)), 1) for name in names}
_DAYS = {"sunday": 6, "monday": 0, "tuesday": 1, "tues": 1, "wednesday": 2, "wednes": 2, "thursday": 3,
         "thur": 3, "thurs": 3, "friday": 4, "saturday": 5}
_UNITS = {"year": "year", "month": "month", "fortnight": "fortnight", "week": "week", "day": "day",
          "hour": "hour", "minute": "minute", "min": "minute", "second": "second", "sec": "second"}
_SHIFTS = {"tomorrow": 1, "yesterday": -1, "today": 0, "now": 0}
_ORDINALS = {"last": -1, "this": 0, "next": 1, "first": 1, "third": 3, "fourth": 4, "fifth": 5,
             "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12}
_ZONES = {"gmt": 0, "ut": 0, "utc": 0, "z": 0, "wet": 0, "west": 60, "bst": 60, "art": -180, "brt": -180,
          "brst": -120, "nst": -210, "ndt": -150, "ast": -240, "adt": -180, "clt": -240, "clst": -180,
          "est": -300, "edt": -240, "cst": -360, "cdt": -300, "mst": -420, "mdt": -360, "pst": -480,
          "pdt": -420, "akst": -540, "akdt": -480, "hst": -600, "hast": -600, "hadt": -540, "sst": -720,
          "wat": 60, "cet": 60, "cest": 120, "met": 60, "mez": 60, "mest": 120, "mesz": 120, "eet": 120,
          "eest": 180, "cat": 120, "sast": 120, "eat": 180, "msk": 180, "msd": 240, "ist": 330, "sgt": 480,
          "kst": 540, "jst": 540, "gst": 600, "nzst": 720, "nzdt": 780}
_TOKEN = re.compile(r"\s+|\([^)]*\)|-(?=[a-z])|(?P<num>[+-]?\s*\d+)(?:\.(?P<frac>\d+))?"
                    r"|(?P<word>[a-z]+\.?)|(?P<ch>[:/,])")


class _Num:
    __slots__ = ("value", "digits", "signed", "frac")

    def __init__(self, text: str, frac: str | None) -> None:
        digits = text.lstrip("+-").strip()
        self.value = int(text.replace(" ", "").replace("\t", ""))
        self.digits = len(digits)
        self.signed = text[0] in "+-"
        self.frac = frac


def _tokens(text: str) -> list[object]:
    out: list[object] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(text)
        pos = m.end()
        if m.group("num") is not None:
            out.append(_Num(m.group("num"), m.group("frac")))
        elif m.group("word") is not None:
            out.append(_word(m.group("word").rstrip(".")))
        elif m.group("ch") is not None:
            out.append(m.group("ch"))
    return out


def _word(w: str) -> tuple[str, object]:
    """A word's class and value, names taken whole or by their first three letters."""
    if w in ("am", "a.m"):
        return ("merid", 0)
    if w in ("pm", "p.m"):
        return ("merid", 12)
    if w == "ago":
        return ("ago", -1)
    if w == "dst":
        return ("dst", 60)
    if w == "t":
        return ("t", None)
    if w in _SHIFTS:
        return ("shift", _SHIFTS[w])
    if w in _ORDINALS:
        return ("ordinal", _ORDINALS[w])
    if w in _ZONES:
        return ("zone", _ZONES[w])
    unit = w[:-1] if w.endswith("s") and w[:-1] in _UNITS else w
    if unit in _UNITS:
        return ("unit", _UNITS[unit])
    for table, kind in ((_MONTHS, "month"), (_DAYS, "day")):
        if w in table:
            return (kind, table[w])
        if len(w) == 3:
            for name, value in table.items():
                if name.startswith(w):
                    return (kind, value)
    raise ValueError(w)


def _year(n: _Num) -> int:
    if n.digits == 2:
        return n.value + (1900 if n.value >= 69 else 2000)
    return n.value


class _Parse:
    """parse-datetime's state: what was seen, and the fields each item sets."""

    def __init__(self, toks: list[object]) -> None:
        self.t = toks
        self.i = 0
        self.ymd: list[int | None] = [None, None, None]
        self.dates = self.times = self.days = self.rels = self.zones = 0
        self.hms = (0, 0, 0, 0)
        self.zone: int | None = None  # minutes east of UTC
        self.day = (0, 0)  # (ordinal, weekday)
        self.rel = {"year": 0, "month": 0, "day": 0, "second": 0}

    def peek(self, k: int = 0) -> object:
        return self.t[self.i + k] if self.i + k < len(self.t) else None

    def kind(self, k: int = 0) -> str | None:
        tok = self.peek(k)
        if isinstance(tok, _Num):
            return "snum" if tok.signed else "num"
        if isinstance(tok, tuple):
            return tok[0]
        return tok  # type: ignore[return-value]

    def run(self) -> None:
        while self.i < len(self.t):
            self.item()
        if self.dates > 1 or self.times > 1 or self.days > 1 or self.zones > 1:
            raise ValueError("twice")

    def item(self) -> None:
        k = [self.kind(j) for j in range(5)]
        tok = self.peek()
        if isinstance(tok, _Num) and tok.frac is not None:
            raise ValueError("a fraction is only for seconds")
        if k[0] == "num" and k[1] == "snum" and k[2] == "snum" and self.peek(1).value < 0 \
                and self.peek(2).value < 0:  # ISO 8601 date
            self.set_date(_year(tok), -self.peek(1).value, -self.peek(2).value)
            self.i += 3
            if self.kind() == "t" and self.kind(1) == "num":
                self.i += 1
                self.time()
            return
        if k[0] == "num" and (k[1] == ":" or k[1] == "merid"):
            self.time()
            return
        if k[0] == "num" and k[1] == "/" and k[2] == "num":
            a, b = tok.value, self.peek(2).value
            if k[3] == "/" and k[4] == "num":
                c = self.peek(4)
                if tok.digits >= 4:
                    self.set_date(a, b, c.value)
                else:
                    self.set_date(_year(c), a, b)
                self.i += 5
            else:
                self.set_date(None, a, b)
                self.i += 3
            return
        if k[0] == "month":
            month = tok[1]
            if k[1] == "snum" and k[2] == "snum" and self.peek(1).value < 0 and self.peek(2).value < 0:
                self.set_date(_year(_abs(self.peek(2))), month, -self.peek(1).value)
                self.i += 3
            elif k[1] == "num" and k[2] == "," and k[3] == "num":
                self.set_date(_year(self.peek(3)), month, self.peek(1).value)
                self.i += 4
            elif k[1] == "num":
                self.set_date(None, month, self.peek(1).value)
                self.i += 2
            else:
                raise ValueError("month")
            return
        if k[0] == "num" and k[1] == "month":
            month = self.peek(1)[1]
            if k[2] == "num" or (k[2] == "snum" and self.peek(2).value < 0):
                self.set_date(_year(_abs(self.peek(2))), month, tok.value)
                self.i += 3
            else:
                self.set_date(None, month, tok.value)
                self.i += 2
            return
        if k[0] == "day" or (k[0] in ("ordinal", "num") and k[1] == "day"):
            if k[0] == "day":
                self.day = (0, tok[1])
                self.i += 1
            else:
                self.day = (tok[1] if k[0] == "ordinal" else tok.value, self.peek(1)[1])
                self.i += 2
            if self.kind() == ",":
                self.i += 1
            self.days += 1
            return
        if k[0] in ("ordinal", "num", "snum") and k[1] == "unit":
            count = tok[1] if k[0] == "ordinal" else tok.value
            self.i += 1
            self.relative(count)
            return
        if k[0] == "unit":
            self.relative(1)
            return
        if k[0] == "shift":
            self.rel["day"] += tok[1]
            self.rels += 1
            self.i += 1
            return
        if k[0] == "zone":
            self.i += 1
            offset = tok[1]
            if self.kind() == "dst":
                self.i += 1
                offset += 60
            elif self.kind() == "snum" and self.kind(1) != "unit":
                offset += self.offset()
            self.zone = offset
            self.zones += 1
            return
        if k[0] == "num":
            self.number(tok)
            return
        raise ValueError(str(k[0]))

    def relative(self, count: int) -> None:
        unit = self.peek()[1]
        self.i += 1
        if self.kind() == "ago":
            count = -count
            self.i += 1
        if unit == "fortnight":
            unit, count = "day", count * 14
        elif unit == "week":
            unit, count = "day", count * 7
        elif unit in ("hour", "minute"):
            count *= 3600 if unit == "hour" else 60
            unit = "second"
        self.rel[unit] += count
        self.rels += 1

    def time(self) -> None:
        h = self.peek().value
        self.i += 1
        m = s = ns = 0
        if self.kind() == ":" and self.kind(1) == "num":
            m = self.peek(1).value
            self.i += 2
            if self.kind() == ":" and self.kind(1) == "num":
                sec = self.peek(1)
                s = sec.value
                ns = int((sec.frac or "0")[:9].ljust(9, "0"))
                self.i += 2
        if self.kind() == "merid":
            if not 1 <= h <= 12:
                raise ValueError("hour")
            h = h % 12 + self.peek()[1]
            self.i += 1
        elif self.kind() == "snum":
            self.zone = self.offset()
            self.zones += 1
        if h > 23 or m > 59 or s > 59:
            raise ValueError("time")
        self.hms = (h, m, s, ns)
        self.times += 1

    def offset(self) -> int:
        """A `+HH`, `+HHMM` or `+HH:MM` correction, in minutes."""
        n = self.peek()
        self.i += 1
        sign = -1 if n.value < 0 else 1
        v = abs(n.value)
        if self.kind() == ":" and self.kind(1) == "num":
            minutes = v * 60 + self.peek(1).value
            self.i += 2
        elif n.digits <= 2:
            minutes = v * 60
        else:
            minutes = v // 100 * 60 + v % 100
        if minutes > 24 * 60:
            raise ValueError("offset")
        return sign * minutes

    def number(self, n: _Num) -> None:
        self.i += 1
        if self.dates and self.ymd[0] is None and not self.rels and (self.times or n.digits > 2):
            self.ymd[0] = n.value
        elif n.digits > 4:
            self.set_date(n.value // 10000, n.value // 100 % 100, n.value % 100)
        else:
            self.hms = (n.value, 0, 0, 0) if n.digits <= 2 else (n.value // 100, n.value % 100, 0, 0)
            if self.hms[0] > 23 or self.hms[1] > 59:
                raise ValueError("time")
            self.times += 1

    def set_date(self, y: int | None, m: int, d: int) -> None:
        self.ymd = [y, m, d]
        self.dates += 1


def _abs(n: _Num) -> _Num:
    n.value = abs(n.value)
    return n


def _shift_months(y: int, m: int, d: int, months: int, days: int) -> date:
    """mktime's normalisation of year, month and day fields out of range."""
    months = y * 12 + m - 1 + months
    y, m = divmod(months, 12)
    return date(y, m + 1, 1) + timedelta(days=d - 1 + days)


def parse(text: str, now_ns: int, tz: tzinfo) -> tuple[datetime, int]:
    """(aware datetime in `tz`, nanoseconds) for a date string; ValueError when GNU date would
    say `invalid date`."""
    s = text.strip()
    if s.startswith("@"):
        m = re.fullmatch(r"@\s*([+-]?\d+)(?:[.,](\d+))?", s)
        if not m:
            raise ValueError(text)
        whole, frac = int(m.group(1)), int((m.group(2) or "0")[:9].ljust(9, "0"))
        if whole < 0 and frac:
            whole, frac = whole - 1, 1_000_000_000 - frac
        return datetime.fromtimestamp(whole, UTC).astimezone(tz), frac
    m = re.match(r'tz="([^"]*)"', s, re.I)
    local: tzinfo = tz
    if m:
        try:
            local = ZoneInfo(m.group(1).lstrip(":")) if m.group(1) else UTC
        except (ValueError, OSError, KeyError):
            raise ValueError(text) from None
        s = s[m.end():]
    p = _Parse(_tokens(s.lower()))
    p.run()
    now = datetime.fromtimestamp(now_ns // 1_000_000_000, UTC).astimezone(local)
    y, mo, d = p.ymd
    if p.dates:
        y = now.year if y is None else y
    else:
        y, mo, d = now.year, now.month, now.day
    if p.times:
        h, mi, sec, ns = p.hms
    elif p.rels and not p.dates and not p.days:
        h, mi, sec, ns = now.hour, now.minute, now.second, now_ns % 1_000_000_000
    else:
        h = mi = sec = ns = 0
    try:
        day = date(y, mo, d)
    except (ValueError, TypeError):
        raise ValueError(text) from None
    if p.days and not p.dates:
        ordinal, weekday = p.day
        today = day.weekday()
        step = (ordinal - (ordinal > 0 and today != weekday)) * 7 + (weekday - today + 7) % 7
        day += timedelta(days=step)
    rel = p.rel
    day = _shift_months(day.year, day.month, day.day, rel["year"] * 12 + rel["month"], rel["day"])
    naive = datetime(day.year, day.month, day.day, h, mi, sec)
    if p.zone is not None:
        when = naive.replace(tzinfo=timezone(timedelta(minutes=p.zone)))
    else:
        when = naive.replace(tzinfo=local)
    when = datetime.fromtimestamp(int(when.timestamp()) + rel["second"], UTC).astimezone(tz)
    return when, ns
