"""awk's built-in functions, compiled to closures (arguments are evaluated by the caller's
closures; sub/gsub/split/match take their targets as lvalues or arrays)."""

from __future__ import annotations

import math
import random
import time
from typing import TYPE_CHECKING

from kshell.tools.awk.values import UNINIT, AwkFatal, field, format_printf, to_num, to_str

if TYPE_CHECKING:
    from kshell.tools.awk.compile import Compiler

_ARITY = {"length": (0, 1), "substr": (2, 3), "index": (2, 2), "split": (2, 4), "sub": (2, 3),
          "gsub": (2, 3), "match": (2, 3), "sprintf": (1, 999), "sin": (1, 1), "cos": (1, 1),
          "atan2": (2, 2), "exp": (1, 1), "log": (1, 1), "sqrt": (1, 1), "int": (1, 1),
          "rand": (0, 0), "srand": (0, 1), "tolower": (1, 1), "toupper": (1, 1), "system": (1, 1),
          "close": (1, 2), "fflush": (0, 1)}


def _regex_arg(c: Compiler, node):
    rt = c.rt
    if node[0] == "regex":
        regex = rt.regex(node[1])
        return lambda: regex
    f = c.expr(node)
    return lambda: rt.dyn_regex(f())


def builtin(c: Compiler, node):
    rt = c.rt
    name, args = node[1], node[2]
    lo, hi = _ARITY[name]
    if not lo <= len(args) <= hi:
        raise AwkFatal(f"{len(args)} is invalid as number of arguments for {name}")
    cf = rt.convfmt
    if name == "length":
        if not args:
            return lambda: float(len(rt.get_record()))
        a = args[0]
        if a[0] == "var":
            get = c.ref_arg(a[1])

            def length_var() -> float:
                v = get()
                if type(v) is dict:
                    return float(len(v))
                return float(len(to_str(v, cf())))
            return length_var
        f = c.expr(a)
        return lambda: float(len(to_str(f(), cf())))
    if name in ("sub", "gsub"):
        regex = _regex_arg(c, args[0])
        repl = c.expr(args[1])
        target = args[2] if len(args) > 2 else ("field", ("num", 0.0))
        if target[0] not in ("var", "index", "field"):
            get = c.expr(target)
            setter = None
        else:
            get = c.lvalue_get(target)
            setter = c.setter(target)
        glob = name == "gsub"

        def sub() -> float:
            r = regex()
            rep = to_str(repl(), cf())
            s = to_str(get(), cf())
            out, n = _substitute(r, rep, s, glob)
            if n and setter is not None:
                setter(out)
            return float(n)
        return sub
    if name == "split":
        src = c.expr(args[0])
        arr = c.array(args[1][1]) if args[1][0] == "var" else None
        if arr is None:
            raise AwkFatal("split: second argument is not an array")
        sep = _regex_arg(c, args[2]) if len(args) > 2 and args[2][0] == "regex" else (
            c.expr(args[2]) if len(args) > 2 else None)
        seps = c.array(args[3][1]) if len(args) > 3 else None
        is_re = len(args) > 2 and args[2][0] == "regex"

        def split() -> float:
            s = to_str(src(), cf())
            a = arr()
            a.clear()
            if sep is None:
                parts, between = rt.split_fs(s, rt.vars["FS"])
            elif is_re:
                parts, between = rt.split_regex(s, sep())
            else:
                parts, between = rt.split_fs(s, to_str(sep(), cf()))
            for i, p in enumerate(parts, 1):
                a[str(i)] = field(p)
            if seps is not None:
                sa = seps()
                sa.clear()
                for i, p in enumerate(between, 1):
                    sa[str(i)] = p
            return float(len(parts))
        return split
    if name == "match":
        src = c.expr(args[0])
        regex = _regex_arg(c, args[1])
        arr = c.array(args[2][1]) if len(args) > 2 else None

        def match() -> float:
            s = to_str(src(), cf())
            m = regex().search(s)
            if arr is not None:
                a = arr()
                a.clear()
            if not m:
                rt.vars["RSTART"] = 0.0
                rt.vars["RLENGTH"] = -1.0
                return 0.0
            rt.vars["RSTART"] = float(m.start() + 1)
            rt.vars["RLENGTH"] = float(m.end() - m.start())
            if arr is not None:
                for i in range(0, (m.re.groups or 0) + 1):
                    if m.group(i) is not None:
                        a[str(i)] = field(m.group(i))
                        a[f"{i}\x1cstart"] = float(m.start(i) + 1)
                        a[f"{i}\x1clength"] = float(m.end(i) - m.start(i))
            return float(m.start() + 1)
        return match
    fs = [c.expr(a) for a in args]
    if name == "substr":
        s, start = fs[0], fs[1]
        ln = fs[2] if len(fs) > 2 else None

        def substr() -> str:
            text = to_str(s(), cf())
            m = _round(to_num(start()))
            if ln is None:
                n = math.inf
            else:
                n = to_num(ln())
                if n != n:
                    return ""
                n = _round(n)
            if m < 1:
                m = 1
            if n <= 0:
                return ""
            end = len(text) if n == math.inf else m - 1 + int(n)
            return text[m - 1 : end]
        return substr
    if name == "index":
        a, b = fs

        def index() -> float:
            return float(to_str(a(), cf()).find(to_str(b(), cf())) + 1)
        return index
    if name == "sprintf":
        fmt, rest = fs[0], fs[1:]
        return lambda: format_printf(to_str(fmt(), cf()), [f() for f in rest], cf())
    if name in ("sin", "cos", "exp", "sqrt", "log", "int"):
        a = fs[0]
        fn = _MATH[name]
        return lambda: fn(to_num(a()), rt)
    if name == "atan2":
        a, b = fs
        return lambda: math.atan2(to_num(a()), to_num(b()))
    if name == "rand":
        return lambda: rt.random.random()
    if name == "srand":
        seed = fs[0] if fs else None

        def srand() -> float:
            prev = rt.seed
            rt.seed = to_num(seed()) if seed is not None else float(int(time.time()))
            rt.random = random.Random(rt.seed)
            return prev
        return srand
    if name == "tolower":
        a = fs[0]
        return lambda: to_str(a(), cf()).lower()
    if name == "toupper":
        a = fs[0]
        return lambda: to_str(a(), cf()).upper()
    if name == "system":
        a = fs[0]
        return lambda: float(rt.system(to_str(a(), cf())))
    if name == "close":
        a = fs[0]
        return lambda: float(rt.close(to_str(a(), cf())))
    if name == "fflush":
        return lambda: rt.fflush() or 0.0
    raise AwkFatal(f"{name} not supported")


def _round(x: float) -> int:
    if x != x:
        return 0
    if x in (math.inf, -math.inf):
        return int(math.copysign(1 << 62, x))
    return int(x)


def _log(x: float, rt) -> float:
    if x < 0:
        rt.warn(f"log: received negative argument {rt.out_str(x)}")
        return -math.nan
    if x == 0:
        return -math.inf
    return math.log(x)


def _sqrt(x: float, rt) -> float:
    if x < 0:
        rt.warn(f"sqrt: called with negative argument {rt.out_str(x)}")
        return -math.nan
    return math.sqrt(x)


def _exp(x: float, rt) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        rt.warn(f"exp: argument {rt.out_str(x)} is out of range")
        return math.inf


def _int(x: float, rt) -> float:
    if x != x or x in (math.inf, -math.inf):
        return x
    return float(int(x))


_MATH = {"sin": lambda x, rt: math.sin(x), "cos": lambda x, rt: math.cos(x), "exp": _exp,
         "sqrt": _sqrt, "log": _log, "int": _int}


def _substitute(regex, rep: str, s: str, glob: bool) -> tuple[str, int]:
    """sub/gsub: `&` is the match, `\\&` a literal ampersand, `\\\\` a backslash."""
    parts: list[str | None] = []
    lit: list[str] = []
    i = 0
    while i < len(rep):
        ch = rep[i]
        if ch == "\\" and i + 1 < len(rep) and rep[i + 1] in "&\\":
            lit.append(rep[i + 1])
            i += 2
            continue
        if ch == "&":
            parts.append("".join(lit))
            lit.clear()
            parts.append(None)
        else:
            lit.append(ch)
        i += 1
    parts.append("".join(lit))
    plain = len(parts) == 1
    out: list[str] = []
    pos = 0
    n = 0
    prev_end = -1
    for m in regex.finditer(s):
        st, en = m.span()
        if st == en and st == prev_end:
            continue
        prev_end = en
        out.append(s[pos:st])
        if plain:
            out.append(parts[0])
        else:
            g = m.group()
            out.append("".join(g if p is None else p for p in parts))
        pos = en
        n += 1
        if not glob:
            break
    if not n:
        return s, 0
    out.append(s[pos:])
    return "".join(out), n


__all__ = ["builtin", "UNINIT"]
