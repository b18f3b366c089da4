"""Pure-Python twin of the native core: same signatures, same results, written for clarity.

It is the oracle of tests/native/test_differential.py and is never used as a silent fallback
for the C build. Each function documents the rule; the C code follows it step by step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from native import BraceLimitError

__all__ = [
    "BraceLimitError",
    "awk_columns",
    "awk_number",
    "brace_expand",
    "glob_filter",
    "glob_match",
    "has_magic",
    "is_within",
    "normalize",
    "split",
]

# ---- paths --------------------------------------------------------------------------------


def _walk(parts: list[bytes], path: bytes) -> None:
    """Apply the components of `path` to the absolute path held as a component list."""
    for comp in path.split(b"/"):
        if comp in (b"", b"."):
            continue
        if comp == b"..":
            if parts:
                parts.pop()
            continue
        parts.append(comp)


def normalize(path: bytes, cwd: bytes = b"/", home: bytes = b"/") -> bytes:
    """Absolute lexical form of path: `~`/`~/` -> home, relative -> joined to cwd."""
    parts: list[bytes] = []
    if path.startswith(b"/"):
        _walk(parts, path)
    elif path == b"~" or path.startswith(b"~/"):
        _walk(parts, home)
        _walk(parts, path[1:])
    else:
        _walk(parts, cwd)
        _walk(parts, path)
    return b"/" + b"/".join(parts)


def split(path: bytes) -> list[bytes]:
    """Components without empty ones and `.`; `..` kept."""
    return [comp for comp in path.split(b"/") if comp not in (b"", b".")]


def is_within(path: bytes, root: bytes) -> bool:
    """normalize(path) is normalize(root) or below it."""
    p, r = normalize(path), normalize(root)
    return r == b"/" or p == r or p.startswith(r + b"/")


# ---- glob ---------------------------------------------------------------------------------

_CLASSES = {
    b"alnum": lambda c: _isalpha(c) or _isdigit(c),
    b"alpha": lambda c: _isalpha(c),
    b"ascii": lambda c: c < 0x80,
    b"blank": lambda c: c in (0x20, 0x09),
    b"cntrl": lambda c: c < 0x20 or c == 0x7F,
    b"digit": lambda c: _isdigit(c),
    b"graph": lambda c: 0x21 <= c <= 0x7E,
    b"lower": lambda c: 0x61 <= c <= 0x7A,
    b"print": lambda c: 0x20 <= c <= 0x7E,
    b"punct": lambda c: 0x21 <= c <= 0x7E and not (_isalpha(c) or _isdigit(c)),
    b"space": lambda c: c == 0x20 or 0x09 <= c <= 0x0D,
    b"upper": lambda c: 0x41 <= c <= 0x5A,
    b"word": lambda c: _isalpha(c) or _isdigit(c) or c == 0x5F,
    b"xdigit": lambda c: _isdigit(c) or 0x61 <= c <= 0x66 or 0x41 <= c <= 0x46,
}


def _isalpha(c: int) -> bool:
    return 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A


def _isdigit(c: int) -> bool:
    return 0x30 <= c <= 0x39


def _dequote(name: bytes) -> bytes:
    """Drop backslashes, keeping the byte after each (bash allows quoted class names)."""
    out = bytearray()
    i = 0
    while i < len(name):
        if name[i] == 0x5C:
            i += 1
            if i == len(name):
                break
        out.append(name[i])
        i += 1
    return bytes(out)


def _collsym(p: bytes, i: int) -> tuple[int, int]:
    """`[.x.]` with i at the '.': (index after `.]` or end of pattern, byte or -1)."""
    at = _at(p)
    i += 1
    k = 0
    while at(i + k) != 0 and not (at(i + k) == 0x2E and at(i + k + 1) == 0x5D):
        k += 1
    if at(i + k) == 0:
        return i + k, -1
    return i + k + 2, (p[i] if k == 1 else -1)


def _at(p: bytes):
    """Byte reader that yields 0 past the end, as C strings do in bash."""
    n = len(p)
    return lambda i: p[i] if i < n else 0


def _bracket(p: bytes, i: int, test: int) -> int | None:
    """Match `test` against the bracket expression whose body starts at p[i]; the index after
    it, or None. An unterminated expression is a literal '[' (returns i iff test is '[')."""
    at = _at(p)
    savep = i
    lit = savep if test == 0x5B else None
    neg = False
    if at(i) in (0x21, 0x5E):  # ! ^
        neg = True
        i += 1
    c = at(i)
    i += 1
    matched = False
    while True:
        isrange = False
        cstart = c
        if c == 0x5B and at(i) == 0x3D and at(i + 2) == 0x3D and at(i + 3) == 0x5D:  # [=c=]
            ec = at(i + 1)
            i += 4
            if test == ec:
                i += 1
                matched = True
                break
            c = at(i)
            i += 1
            if c == 0:
                return lit
            continue
        if c == 0x5B and at(i) == 0x3A:  # [:class:]
            close = i + 1
            hit = False
            while at(close) != 0 and not (at(close) == 0x3A and at(close + 1) == 0x5D):
                close += 1
            if at(close) != 0:
                cls = _CLASSES.get(_dequote(p[i + 1 : close]))
                hit = cls is not None and cls(test)
                i = close + 2
            if hit:
                i += 1
                matched = True
                break
            c = at(i)
            i += 1
            if c == 0:
                return lit
            if c == 0x5D:
                break
            continue
        if c == 0x5B and at(i) == 0x2E:  # [.c.]
            i, v = _collsym(p, i)
            cstart = test + 1 if v < 0 else v
        if c == 0x5C:
            if at(i) == 0:
                return None
            cstart = at(i)
            i += 1
        cend = cstart
        if c == 0:
            return lit
        c = at(i)
        i += 1
        if c == 0:
            return lit
        if c == 0x2D and at(i) != 0x5D:  # a range
            e = at(i)
            i += 1
            if e == 0x5C:
                e = at(i)
                i += 1
            if e == 0:
                return None
            cend = e
            if e == 0x5B and at(i) == 0x2E:
                i, v = _collsym(p, i)
                cend = test - 1 if v < 0 else v
            c = at(i)
            i += 1
            if cstart > cend:  # inverted: matches nothing
                if c == 0x5D:
                    break
                continue
            isrange = True
        if not isrange and test == cstart:
            matched = True
            break
        if isrange and cstart <= test <= cend:
            matched = True
            break
        if c == 0x5D:
            break
    if not matched:
        return i if neg else None

    # Skip the rest of the expression, still watching for a missing ']'.
    brchr = None
    brcnt = 1
    i -= 1
    c = at(i)
    while brcnt > 0:
        if c == 0:
            return lit
        oc = c
        c = at(i)
        i += 1
        if c == 0x5B and at(i) in (0x3D, 0x3A, 0x2E):
            brcnt += 1
            brchr = i
            i += 1
            c = at(i)
            if c == 0:
                return lit
        elif c == 0x5D and brcnt > 1 and brchr is not None and oc == at(brchr):
            brcnt -= 1
            brchr = None
        elif c == 0x5D and (brchr is None or at(brchr) != 0x2E):
            brcnt = 0
        elif c == 0x5C:
            if at(i) == 0:
                return None
            i += 1
    return None if neg else i


def _element(p: bytes, i: int, ch: int) -> int | None:
    """Match the non-star element at p[i] against byte ch: the next index or None."""
    c = p[i]
    if c == 0x3F:  # ?
        return i + 1
    if c == 0x5C:  # backslash
        if i + 1 == len(p):
            return i + 1 if ch == 0x5C else None
        return i + 2 if ch == p[i + 1] else None
    if c == 0x5B:
        return _bracket(p, i + 1, ch)
    return i + 1 if ch == c else None


def glob_match(pattern: bytes, name: bytes, period: bool = True) -> bool:
    """Greedy `*` with one backtrack point (the latest star), elements as in bash."""
    p, s = pattern, name
    if period and s[:1] == b"." and not (p[:1] == b"." or p[:2] == b"\\."):
        return False
    pi = si = 0
    star_p: int | None = None
    star_s = 0
    while True:
        if pi < len(p):
            if p[pi] == 0x2A:
                pi += 1
                star_p, star_s = pi, si
                continue
            if si < len(s):
                r = _element(p, pi, s[si])
                if r is not None:
                    pi, si = r, si + 1
                    continue
        elif si == len(s):
            return True
        if star_p is None or star_s >= len(s):
            return False
        star_s += 1
        pi, si = star_p, star_s


def glob_filter(pattern: bytes, names: list[bytes], period: bool = True) -> list[bytes]:
    """The matching names in input order."""
    return [name for name in names if glob_match(pattern, name, period)]


def has_magic(pattern: bytes) -> bool:
    """An unescaped `*`, `?` or `[`."""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == 0x5C:
            i += 2
            continue
        if c in (0x2A, 0x3F, 0x5B):
            return True
        i += 1
    return False


# ---- brace expansion ----------------------------------------------------------------------

MAX_NEST = 200
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_INT_MAX = 2**31 - 1


def _brace_ws(c: int) -> bool:
    return c in (0, 0x20, 0x09, 0x0A)


def _skip_subst(t: bytes, i: int) -> int:
    """Index of the ')' closing a command/process substitution whose body starts at i, or
    len(t) (a lexical approximation: quotes, backslashes, nesting)."""
    n = len(t)
    depth = 1
    while i < n:
        c = t[i]
        if c == 0x5C:
            i += 2
            continue
        if c in (0x27, 0x22):
            i += 1
            while i < n and t[i] != c:
                if c == 0x22 and t[i] == 0x5C:
                    i += 1
                i += 1
            i += 1
            continue
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n


def _gobble(t: bytes, i: int, satisfy: int) -> tuple[int, int]:
    """From i, find `satisfy` at brace level 0 outside quotes (for '}' only after a ',' or
    `..` at level 0): (its index, it) or (len(t), 0)."""
    n = len(t)
    at = _at(t)
    level = 0
    pass_next = False
    commas = 0 if satisfy == 0x7D else 1
    quoted = 0
    while i < n:
        c = t[i]
        if pass_next:
            pass_next = False
            i += 1
            continue
        if c == 0x5C and quoted in (0, 0x22, 0x60):
            pass_next = True
            i += 1
            continue
        if c == 0x24 and at(i + 1) == 0x7B and quoted != 0x27:  # ${
            pass_next = True
            i += 1
            if quoted == 0:
                level += 1
            continue
        if quoted:
            if c == quoted:
                quoted = 0
            if quoted == 0x22 and c == 0x24 and at(i + 1) == 0x28:
                i = _skip_subst(t, i + 2) + 1
                continue
            i += 1
            continue
        if c in (0x22, 0x27, 0x60):
            quoted = c
            i += 1
            continue
        if c in (0x24, 0x3C, 0x3E) and at(i + 1) == 0x28:  # $( <( >(
            i = _skip_subst(t, i + 2) + 1
            continue
        if c == satisfy and level == 0 and commas > 0:
            if (
                c == 0x7B
                and (i == 0 or _brace_ws(t[i - 1]))
                and (_brace_ws(at(i + 1)) or at(i + 1) == 0x7D)
            ):
                i += 1
                continue
            return i, c
        if c == 0x7B:
            level += 1
        elif c == 0x7D and level:
            level -= 1
        elif (
            satisfy == 0x7D
            and level == 0
            and (c == 0x2C or (c == 0x2E and at(i + 1) == 0x2E and at(i + 2) != satisfy))
        ):
            commas += 1  # a ',' or a `..` at the outer level makes a '}' count
        i += 1
    return n, 0


def _parse_int(s: bytes, i: int) -> tuple[int, int, bool]:
    """strtoimax on s[i:]: (index after the digits or i itself, value, overflowed)."""
    st = i
    n = len(s)
    while i < n and (s[i] == 0x20 or 0x09 <= s[i] <= 0x0D):
        i += 1
    neg = False
    if i < n and s[i] in (0x2B, 0x2D):
        neg = s[i] == 0x2D
        i += 1
    j = i
    while j < n and _isdigit(s[j]):
        j += 1
    if j == i:
        return st, 0, False
    v = -int(s[i:j]) if neg else int(s[i:j])
    if v < _INT64_MIN or v > _INT64_MAX:
        return j, (_INT64_MIN if neg else _INT64_MAX), True
    return j, v, False


class _Seq:
    """A valid bash sequence: start, increment, element count, kind and zero-pad width."""

    __slots__ = ("count", "incr", "kind", "start", "width")

    def __init__(self, start: int, incr: int, count: int, kind: str, width: int) -> None:
        self.start, self.incr, self.count, self.kind, self.width = start, incr, count, kind, width

    def item(self, k: int) -> bytes:
        v = self.start + k * self.incr
        if self.kind == "char":
            return bytes([v])
        if self.kind == "zint":
            v = (v + 2**31) % 2**32 - 2**31  # bash prints these through an int
            return b"%0*d" % (self.width, v)
        return b"%d" % v


def _seqterm(a: bytes) -> _Seq | None:
    """The sequence `a` (the inside of a group without a comma) denotes, or None."""
    k = a.find(b"..")
    if k < 0:
        return None
    lhs, rhs = a[:k], a[k + 2 :]
    if not lhs or not rhs:
        return None

    lt = None
    ep, lv, er = _parse_int(lhs, 0)
    if ep != 0 and not er:
        while ep < len(lhs) and lhs[ep] in (0x20, 0x09):
            ep += 1
        if ep == len(lhs):
            lt = "int"
    if lt is None and len(lhs) == 1 and _isalpha(lhs[0]):
        lt = "char"

    rt = None
    rv = 0
    if _isdigit(rhs[0]) or (rhs[0] in (0x2B, 0x2D) and len(rhs) > 1 and _isdigit(rhs[1])):
        ep, rv, er = _parse_int(rhs, 0)
        if not er and (ep == len(rhs) or rhs[ep] == 0x2E):
            rt = "int"
    elif _isalpha(rhs[0]) and (len(rhs) == 1 or rhs[1] == 0x2E):
        rt = "char"
        ep = 1
    if lt is None or rt is None or lt != rt:
        return None
    oep = ep
    incr = 1
    er = False
    if ep + 2 < len(rhs) and rhs[ep] == 0x2E and rhs[ep + 1] == 0x2E:
        ep, incr, er = _parse_int(rhs, ep + 2)
    if ep != len(rhs) or er:
        return None

    width = 0
    kind = lt
    if lt == "char":
        lv, rv, width = lhs[0], rhs[0], 1
    else:
        ll, rl = len(lhs), oep
        if ll > 1 and lhs[0] == 0x30:
            width, kind = ll, "zint"
        if ll > 2 and lhs[:2] == b"-0":
            width, kind = ll, "zint"
        if rl > 1 and rhs[0] == 0x30 and width < rl:
            width, kind = rl, "zint"
        if rl > 2 and rhs[:2] == b"-0" and width < rl:
            width, kind = rl, "zint"
        if kind == "zint":
            width = max(width, ll, rl)

    if incr == 0:
        incr = 1
    if lv > rv and incr > 0:
        incr = -incr
    elif lv < rv and incr < 0:
        if incr == _INT64_MIN:
            return None
        incr = -incr
    diff = rv - lv
    if diff < _INT64_MIN + 3 or diff > _INT64_MAX - 2:
        return None
    steps = abs(diff) // abs(incr)
    if steps > _INT_MAX - 3:
        return None
    return _Seq(lv, incr, steps + 1, kind, width)


def _has_comma(a: bytes) -> bool:
    """bash's test for a separating comma: backslashes are the only quoting it sees."""
    j = 0
    while j < len(a):
        if a[j] == 0x5C:
            j += 2
            continue
        if a[j] == 0x2C:
            return True
        j += 1
    return False


# A parsed word is ("cat", [nodes]); a node is ("lit", bytes), ("seq", _Seq) or
# ("alt", [words]).


def _parse_word(t: bytes, depth: int) -> tuple:
    parts: list[tuple] = []
    while True:
        i = 0
        while True:  # the first '{' that opens a complete group
            i, c = _gobble(t, i, 0x7B)
            if c == 0:
                break
            if _gobble(t, i + 1, 0x7D)[1] != 0:
                break
            i += 1
        if c == 0:
            parts.append(("lit", t))
            return ("cat", parts)
        start = i + 1
        close, _ = _gobble(t, start, 0x7D)
        amble = t[start:close]
        if not _has_comma(amble):
            seq = _seqterm(amble)
            if seq is not None:
                tack: tuple = ("seq", seq)
            elif close + 1 == len(t):
                parts.append(("lit", t))
                return ("cat", parts)
            else:
                tack = ("lit", t[start - 1 : close + 1])
        else:
            tack = _parse_amble(amble, depth + 1)
        parts.append(("lit", t[:i]))
        parts.append(tack)
        t = t[close + 1 :]
        if not t:
            return ("cat", parts)


def _parse_amble(a: bytes, depth: int) -> tuple:
    if depth > MAX_NEST:
        raise ValueError(f"brace expansion: groups nested too deeply (limit {MAX_NEST})")
    words = []
    i = start = 0
    while True:
        i, c = _gobble(a, i, 0x2C)
        words.append(_parse_word(a[start:i], depth))
        if c == 0:
            return ("alt", words)
        i += 1
        start = i


def _count(node: tuple, cap: int) -> int:
    kind = node[0]
    if kind == "lit":
        return 1
    if kind == "seq":
        return min(node[1].count, cap)
    if kind == "alt":
        return min(sum(_count(w, cap) for w in node[1]), cap)
    total = 1
    for part in node[1]:
        total = min(total * _count(part, cap), cap)
    return total


def _gen(node: tuple) -> list[bytes]:
    kind = node[0]
    if kind == "lit":
        return [node[1]]
    if kind == "seq":
        seq = node[1]
        return [seq.item(k) for k in range(seq.count)]
    if kind == "alt":
        return [word for w in node[1] for word in _gen(w)]
    acc = [b""]
    for part in node[1]:
        words = _gen(part)
        acc = [a + b for a in acc for b in words]
    return acc


def brace_expand(word: bytes, max_words: int = 10000) -> list[bytes]:
    """bash brace expansion; BraceLimitError past max_words, decided before building words."""
    if max_words < 0:
        raise ValueError("max_words must be >= 0")
    tree = _parse_word(word, 0)
    if _count(tree, max_words + 1) > max_words:
        raise BraceLimitError(max_words)
    return _gen(tree)


# ---- awk records -----------------------------------------------------------------------------

_AWK_NUMBER = re.compile(rb"[ \t\n\v\f\r]*([-+]?)(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))(?:[eE]([-+]?[0-9]+))?")
_AWK_SPECIAL = re.compile(rb"[ \t\n\v\f\r]*[-+][iInN]")
_EXACT = 1 << 53  # every integer up to it is exact as a double
_EXP_CAP = 100000  # C stops reading an exponent's digits once past it


def awk_number(text: bytes) -> float | None:
    """The longest prefix `[blanks][sign](digits[.digits]|.digits)[e[sign]digits]` as m * 10^e:
    m the digits (no point) with their trailing zeros taken into m only while m stays within
    2^53, the rest into e. A number when m <= 2^53 and |e| <= 22 (then exact), 0 for a zero m
    (signed) or no prefix, None otherwise and for a sign before i or n ("+inf", "-nan")."""
    found = _AWK_NUMBER.match(text)
    if found is None:
        return None if _AWK_SPECIAL.match(text) else 0.0
    sign, whole, frac, only_frac, exp = found.groups()
    if whole is None:
        whole, frac = b"", only_frac
    frac = frac or b""
    digits = (whole + frac).lstrip(b"0")
    e = 0
    for d in (exp or b"0").lstrip(b"+-"):
        if e < _EXP_CAP:
            e = e * 10 + d - 48
    e = (-e if exp and exp.startswith(b"-") else e) - len(frac)
    if not digits:
        return -0.0 if sign == b"-" else 0.0
    bare = digits.rstrip(b"0")
    m, zeros = int(bare), len(digits) - len(bare)
    if m > _EXACT:
        return None
    while zeros and m * 10 <= _EXACT:  # the trailing zeros C keeps in m
        m, zeros, e = m * 10, zeros - 1, e - 1
    e += len(digits) - len(bare)
    if not -22 <= e <= 22:
        return None
    v = m * 10.0**e if e >= 0 else m / 10.0**-e
    return -v if sign == b"-" else v


def _awk_fields(rec: bytes, fs: int) -> list[bytes]:
    if fs < 0:
        return re.findall(rb"[^ \t\n]+", rec)
    return rec.split(bytes([fs])) if rec else []


def awk_columns(
    text: bytes, count: int, rs: int, fs: int, cuts: int, nums: Sequence[int], texts: Sequence[int],
    want_nf: bool,
) -> tuple[list[list[float]], bytes, list[int] | None, int] | None:
    """Records split at each rs byte, each cut whole into its fields, then read as asked."""
    records = text.split(bytes([rs]))
    if len(records) != count:
        return None
    numbers: list[list[float]] = [[] for _ in nums]
    parts: list[bytes] = []
    nf: list[int] = []
    for rec in records:
        fields = _awk_fields(rec, fs)
        nf.append(min(len(fields), cuts + 1))
        for column, j in zip(numbers, nums):
            v = awk_number(fields[j]) if j < len(fields) else 0.0
            column.append(float("nan") if v is None else v)
        parts += [fields[j] if j < len(fields) else b"" for j in texts]
    unread = sum(1 for column in numbers for v in column if v != v)
    return numbers, (b" " if fs < 0 else bytes([fs])).join(parts), nf if want_nf else None, unread
