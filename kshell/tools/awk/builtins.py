"""awk's built-in functions: `builtin` writes a call's code (arguments evaluated left to right,
as the compiler's own expressions are); the functions below are what that code calls, given
the compiled code's namespace by NAMESPACE."""

from __future__ import annotations

import math
import random
import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING

from kshell.tools.awk.analysis import const_field
from kshell.tools.awk.code import NUM, STR, Code
from kshell.tools.awk.values import AwkFatal, field, to_num, to_str

if TYPE_CHECKING:
    from kshell.tools.awk.expressions import Expressions as Compiler
    from kshell.tools.awk.runtime import Runtime

_ARITY = {"length": (0, 1), "substr": (2, 3), "index": (2, 2), "split": (2, 4), "sub": (2, 3),
          "gsub": (2, 3), "match": (2, 3), "sprintf": (1, 999), "sin": (1, 1), "cos": (1, 1),
          "atan2": (2, 2), "exp": (1, 1), "log": (1, 1), "sqrt": (1, 1), "int": (1, 1),
          "rand": (0, 0), "srand": (0, 1), "tolower": (1, 1), "toupper": (1, 1), "system": (1, 1),
          "close": (1, 2), "fflush": (0, 1)}


def builtin(c: Compiler, node) -> Code:
    name, args = node[1], node[2]
    lo, hi = _ARITY[name]
    if not lo <= len(args) <= hi:
        raise AwkFatal(f"{len(args)} is invalid as number of arguments for {name}")
    cf = c.special("CONVFMT")
    if name == "length":
        if not args:
            rec = c.record()
            return Code(f"float(len({rec}))", NUM, int_src=f"len({rec})")
        if args[0][0] == "var":
            return Code(f"length_of({c.ref_arg(args[0][1])}, {cf})", NUM)
        text = c.str_(args[0])
        return Code(f"float(len({text}))", NUM, int_src=f"len({text})")
    if name in ("sub", "gsub"):
        return _sub(c, args, name == "gsub")
    if name == "split":
        if args[1][0] != "var":
            raise AwkFatal("split: second argument is not an array")
        src = c.str_(args[0])
        arr = c.array(args[1][1])
        if len(args) < 3:
            sep = "None, False"
        elif args[2][0] == "regex":
            sep = f"{c.regex(args[2][1])}, True"
        else:
            sep = f"{c.str_(args[2])}, False"
        seps = c.array(args[3][1]) if len(args) > 3 else "None"
        return Code(f"split_into(rt, {src}, {arr}, {sep}, {seps})", NUM)
    if name == "match":
        src = c.str_(args[0])
        regex = _regex(c, args[1])
        arr = c.array(args[2][1]) if len(args) > 2 else "None"
        return Code(f"match_into(rt, {src}, {regex}, {arr})", NUM)
    if name == "substr":
        length = c.num(args[2]) if len(args) > 2 else "None"
        return Code(f"substr({c.str_(args[0])}, {c.num(args[1])}, {length})", STR)
    if name == "index":
        return Code(f"float({c.str_(args[0])}.find({c.str_(args[1])}) + 1)", NUM)
    if name == "sprintf":
        return Code(c.formatted(args), STR)
    if name in ("sin", "cos", "exp", "sqrt", "log", "int"):
        return Code(f"math_{name}({c.num(args[0])}, rt)", NUM)
    if name == "atan2":
        return Code(f"math_atan2({c.num(args[0])}, {c.num(args[1])})", NUM)
    if name == "rand":
        return Code("rt.random.random()", NUM)
    if name == "srand":
        return Code(f"srand(rt, {c.num(args[0]) if args else 'None'})", NUM)
    if name in ("tolower", "toupper"):
        return Code(f"{c.str_(args[0])}.{name[2:]}()", STR)
    if name == "system":
        return Code(f"float(rt.system({c.str_(args[0])}))", NUM)
    if name == "close":
        return Code(f"float(rt.close({c.str_(args[0])}))", NUM)
    if name == "fflush":
        return Code("(rt.fflush() or 0.0)", NUM)
    raise AwkFatal(f"{name} not supported")


def _regex(c: Compiler, node) -> str:
    if node[0] == "regex":
        return c.regex(node[1])
    return f"rt.dyn_regex({c.expr(node).src})"


def _sub(c: Compiler, args: list, glob: bool) -> Code:
    """sub/gsub: the regex, the replacement, then the target (its subscript or index once);
    the target is assigned only when something was replaced."""
    regex = _regex(c, args[0])
    repl = c.str_(args[1])
    target = args[2] if len(args) > 2 else ("field", ("num", 0.0))
    while target[0] == "group":
        target = target[1]
    r = c.temp()
    k = target[0]
    if k == "index":
        a, key, v = c.temp("_a"), c.temp("_k"), c.temp()
        cur = (f"({v} if ({v} := ({a} := {c.array(target[1])}).get({key} := {c.subscript(target[2])}))"
               f" is not None else {a}.setdefault({key}, UNINIT))")
        store = f"store_item({r}[0], {a}, {key})"
    elif k == "field":
        j = const_field(target)
        if j is not None:  # the text itself, not a value made of it
            cur = "rt.record" if j == 0 else f"rt.field_text({j - 1})"
            store = f"rt.store_field({r}[0], {j})"
        else:
            i = c.temp("_i")
            cur = f"rt.get_field({i} := {c.field_index(target)})"
            store = f"rt.store_field({r}[0], {i})"
    elif k == "var":
        cur = c.expr(target).src
        store = c.assign_expr(target, Code(f"{r}[0]", STR)).src
    else:
        cur = c.expr(target).src
        store = "None"
    text = f"to_str({cur}, {c.special('CONVFMT')})"
    return Code(f"(0.0 if not ({r} := substitute({regex}, {repl}, {text}, {glob}))[1]"
                f" else ({store}, float({r}[1]))[1])", NUM)


# --------------------------------------------------------------------------- run time


def length_of(v, convfmt: str) -> float:
    if type(v) is dict:
        return float(len(v))
    return float(len(to_str(v, convfmt)))


def split_into(rt: Runtime, s: str, a: dict, sep, is_regex: bool, seps: dict | None) -> float:
    """split(s, a [, sep [, seps]]): sep None is FS; a regex constant or a string otherwise."""
    a.clear()
    if sep is None:
        parts, between = rt.split_fs(s, rt.vars["FS"])
    elif is_regex:
        parts, between = rt.split_regex(s, sep)
    else:
        parts, between = rt.split_fs(s, sep)
    for i, p in enumerate(parts, 1):
        a[str(i)] = field(p)
    if seps is not None:
        seps.clear()
        for i, p in enumerate(between, 1):
            seps[str(i)] = p
    return float(len(parts))


def match_into(rt: Runtime, s: str, regex, a: dict | None) -> float:
    m = regex.search(s)
    if a is not None:
        a.clear()
    if not m:
        rt.vars["RSTART"] = 0.0
        rt.vars["RLENGTH"] = -1.0
        return 0.0
    rt.vars["RSTART"] = float(m.start() + 1)
    rt.vars["RLENGTH"] = float(m.end() - m.start())
    if a is not None:
        for i in range(0, (m.re.groups or 0) + 1):
            if m.group(i) is not None:
                a[str(i)] = field(m.group(i))
                a[f"{i}\x1cstart"] = float(m.start(i) + 1)
                a[f"{i}\x1clength"] = float(m.end(i) - m.start(i))
    return float(m.start() + 1)


def substr(text: str, start: float, length: float | None) -> str:
    m = _round(start)
    if length is None:
        n = math.inf
    else:
        if length != length:
            return ""
        n = _round(length)
    if m < 1:
        m = 1
    if n <= 0:
        return ""
    end = len(text) if n == math.inf else m - 1 + int(n)
    return text[m - 1 : end]


def _round(x: float) -> int:
    if x != x:
        return 0
    if x in (math.inf, -math.inf):
        return int(math.copysign(1 << 62, x))
    return int(x)


def srand(rt: Runtime, seed: float | None) -> float:
    prev = rt.seed
    rt.seed = seed if seed is not None else float(int(time.time()))
    rt.random = random.Random(rt.seed)
    return prev


def math_log(x: float, rt: Runtime) -> float:
    if x < 0:
        rt.warn(f"log: received negative argument {rt.out_str(x)}")
        return -math.nan
    if x == 0:
        return -math.inf
    return math.log(x)


def math_sqrt(x: float, rt: Runtime) -> float:
    if x < 0:
        rt.warn(f"sqrt: called with negative argument {rt.out_str(x)}")
        return -math.nan
    return math.sqrt(x)


def math_exp(x: float, rt: Runtime) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        rt.warn(f"exp: argument {rt.out_str(x)} is out of range")
        return math.inf


def math_int(x: float, rt: Runtime) -> float:
    if x != x or x in (math.inf, -math.inf):
        return x
    return float(int(x))


def math_sin(x: float, rt: Runtime) -> float:
    return math.sin(x)


def math_cos(x: float, rt: Runtime) -> float:
    return math.cos(x)


def math_atan2(y: float, x: float) -> float:
    return math.atan2(y, x)


@lru_cache(maxsize=256)
def _replacement(rep: str) -> tuple[str | None, ...]:
    """A sub/gsub replacement cut once into literal text and None for each `&` (the match);
    `\\&` is a literal ampersand, `\\\\` a backslash."""
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
    return tuple(parts)


def substitute(regex, rep: str, s: str, glob: bool) -> tuple[str, int]:
    """sub/gsub: s with the first (every) match of regex replaced, and how many were."""
    if type(regex) is re.Pattern and _never_empty(regex):  # awk's matches are re's: subn does it
        return regex.subn(_template(rep), s, 0 if glob else 1)
    parts = _replacement(rep)
    plain = len(parts) == 1
    out: list[str] = []
    pos = 0
    n = 0
    prev_end = -1
    for m in regex.finditer(s):
        st, en = m.span()
        if st == en and st == prev_end:  # an empty match right after a match is none in awk
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


@lru_cache(maxsize=256)
def _template(rep: str) -> str:
    """The replacement as re's template: the match as \\g<0>, backslashes doubled."""
    return "".join(r"\g<0>" if p is None else p.replace("\\", "\\\\") for p in _replacement(rep))


@lru_cache(maxsize=256)
def _never_empty(regex: re.Pattern) -> bool:
    """Whether a pattern cannot match the empty string (its narrowest match is wider than
    nothing, as re's own parser measures it); False when that cannot be told."""
    try:
        return re._parser.parse(regex.pattern, regex.flags).getwidth()[0] > 0
    except Exception:  # a parser that changed: the general way
        return False


NAMESPACE = {
    "length_of": length_of, "split_into": split_into, "match_into": match_into, "substr": substr,
    "srand": srand, "substitute": substitute, "to_str": to_str, "to_num": to_num,
    "math_log": math_log, "math_sqrt": math_sqrt, "math_exp": math_exp, "math_int": math_int,
    "math_sin": math_sin, "math_cos": math_cos, "math_atan2": math_atan2,
}
