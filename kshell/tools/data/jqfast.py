"""A pure-Python runner for a small, common subset of jq, used before libjq.

Why: for the everyday `jq '.items[] | select(.x > 1) | .name'` over a large file, most of the
time went into libjq 1.8 itself (its parser keeps every number literal as a decNumber), about
1.5x real jq 1.6. Python's C JSON decoder plus the program compiled once into closures does the
same work in a fraction of that.

It is a fast path only, never a second implementation to keep in step: `compile_program` accepts
only the subset below (anything else -> None, and libjq runs the program), and at run time any
case whose jq meaning is not plainly the Python one (an error, a type mix, a float turned into
text, an integer beyond 2^53 ...) raises `Fallback`, whereupon the caller discards what this
produced and runs libjq as before. So the subset's results are those libjq gives, by construction.

The subset: `.`, `.name`, `."name"`, `.[]`, `.[N]` and chains of them, `|`, `,`, `( )`, `[ ]`,
`and`/`or`, `== != < <= > >=`, `+ -`, integer, string (with `\\( )`), `true`/`false`/`null`
literals, `select(f)`, `add`, `length`, `not`, `empty`.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Fallback", "compile_program", "parse_values", "run_text"]


class Fallback(Exception):
    """This input or program needs libjq's exact behaviour (an error, an unusual type mix)."""


class _Unsupported(Exception):
    """The program uses something outside the subset."""


# A compiled filter: (function, single). A single filter's function returns its one output; any
# other returns a list of outputs. Most of the subset is single, which keeps per-value work to
# one call instead of building lists.
Filter = tuple[Callable[[Any], Any], bool]

_MAX_EXACT = 1 << 53  # beyond this, jq's doubles and Python's ints part ways


# --------------------------------------------------------------------------- tokens

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<field>\.[A-Za-z_][A-Za-z0-9_]*)
  | (?P<num>[0-9]+(?![0-9A-Za-z_.]))
  | (?P<str>")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|\.\.|[.\[\](),|<>+\-])
""", re.X)
_STR_PART = re.compile(r'[^"\\]+|\\[nrtbf"\\]|\\\(|"')
_ESCAPES = {"\\n": "\n", "\\r": "\r", "\\t": "\t", "\\b": "\b", "\\f": "\f", '\\"': '"', "\\\\": "\\"}


class _Lexer:
    """Tokens of the program; a string literal is one token holding its parts, each text or a
    nested token list for an interpolation."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.pos = 0

    def tokens(self, until_paren: bool = False) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        depth = 0
        src = self.src
        while self.pos < len(src):
            m = _TOKEN.match(src, self.pos)
            if m is None:
                raise _Unsupported(src[self.pos])
            kind = m.lastgroup
            text = m.group()
            self.pos = m.end()
            if kind == "ws":
                continue
            if kind == "str":
                out.append(("str", self._string()))
                continue
            if kind == "op" and until_paren:
                if text == "(":
                    depth += 1
                elif text == ")":
                    if depth == 0:
                        return out
                    depth -= 1
            out.append((kind or "", text))
        if until_paren:
            raise _Unsupported("unterminated interpolation")
        return out

    def _string(self) -> list[Any]:
        parts: list[Any] = []
        src = self.src
        while True:
            m = _STR_PART.match(src, self.pos)
            if m is None:
                raise _Unsupported("string")  # \u escapes, unterminated strings: left to libjq
            self.pos = m.end()
            text = m.group()
            if text == '"':
                return parts
            if text == "\\(":
                parts.append(self.tokens(until_paren=True))
            elif text[0] == "\\":
                parts.append(_ESCAPES[text])
            else:
                parts.append(text)


# --------------------------------------------------------------------------- semantics


def _kind(v: Any) -> int:
    """jq's sort order of types: null < false < true < numbers < strings < arrays < objects;
    containers are not compared here (Fallback)."""
    if v is None:
        return 0
    if v is False:
        return 1
    if v is True:
        return 2
    t = type(v)
    if t is int or t is float:
        return 3
    if t is str:
        return 4
    raise Fallback


def _cmp_key(v: Any) -> tuple[int, Any]:
    k = _kind(v)
    if k == 3 and type(v) is int and not -_MAX_EXACT <= v <= _MAX_EXACT:
        raise Fallback
    return k, (v if k >= 3 else 0)


def _eq(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is tb and (ta is str or ta is int):
        return a == b
    return _cmp_key(a) == _cmp_key(b)


def _lt(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float) or ta is tb is str:
        return a < b
    return _cmp_key(a) < _cmp_key(b)


def _order(op: str, fa: Callable[[Any], Any], c: Any) -> Callable[[Any], bool] | None:
    """`f OP c` for a number constant c, the number case inline (`.score > 990` per item)."""
    if type(c) is not int:
        return None
    if op == ">":
        def gt(v: Any) -> bool:
            x = fa(v)
            t = type(x)
            return x > c if t is int or t is float else _lt(c, x)
        return gt
    if op == "<":
        def lt(v: Any) -> bool:
            x = fa(v)
            t = type(x)
            return x < c if t is int or t is float else _lt(x, c)
        return lt
    if op == ">=":
        def ge(v: Any) -> bool:
            x = fa(v)
            t = type(x)
            return x >= c if t is int or t is float else not _lt(x, c)
        return ge
    if op == "<=":
        def le(v: Any) -> bool:
            x = fa(v)
            t = type(x)
            return x <= c if t is int or t is float else not _lt(c, x)
        return le
    return None


def _plus(a: Any, b: Any) -> Any:
    """jq's `+`: null is the identity; numbers as doubles; strings, arrays join; objects merge."""
    if a is None:
        return b
    if b is None:
        return a
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        r = a + b
        return r if -_MAX_EXACT <= r <= _MAX_EXACT else float(a) + float(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return float(a) + float(b)
    if ta is tb and (ta is str or ta is list):
        return a + b
    if ta is dict and tb is dict:
        return {**a, **b}
    raise Fallback


def _minus(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        r = a - b
        return r if -_MAX_EXACT <= r <= _MAX_EXACT else float(a) - float(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return float(a) - float(b)
    raise Fallback


def _text(v: Any) -> str:
    """A value inside a string interpolation, where jq formats it as `tostring` does; only the
    cases where every jq prints the same (strings, small integers, null, booleans)."""
    t = type(v)
    if t is str:
        return v
    if t is int and -_MAX_EXACT <= v <= _MAX_EXACT:
        return str(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    raise Fallback


def _field(*names: str) -> Callable[[Any], Any]:
    """`.a`, or a chain `.a.b.c` as one function (chains are most of what programs index)."""
    if len(names) == 1:
        name = names[0]

        def get(v: Any) -> Any:
            if type(v) is dict:
                return v.get(name)
            if v is None:
                return None
            raise Fallback
    else:
        def get(v: Any) -> Any:
            for name in names:
                if type(v) is dict:
                    v = v.get(name)
                elif v is not None:
                    raise Fallback
            return v
    get._fields = names  # type: ignore[attr-defined]
    return get


def _index(n: int) -> Callable[[Any], Any]:
    def get(v: Any) -> Any:
        if type(v) is list:
            return v[n] if -len(v) <= n < len(v) else None
        if v is None:
            return None
        raise Fallback
    return get


def _each(v: Any) -> list[Any]:
    if type(v) is list:
        return v
    if type(v) is dict:
        return list(v.values())
    raise Fallback


def _add(v: Any) -> Any:
    if type(v) is dict:
        v = list(v.values())
    elif type(v) is not list:
        raise Fallback
    acc = None
    for x in v:
        acc = _plus(acc, x)
    return acc


def _length(v: Any) -> Any:
    t = type(v)
    if t is str or t is list or t is dict:
        return len(v)
    if v is None:
        return 0
    if t is int or t is float:
        return abs(v)
    raise Fallback


def _not(v: Any) -> bool:
    return v is None or v is False


def _identity(v: Any) -> Any:
    return v


# --------------------------------------------------------------------------- compiling


def _many(f: Filter) -> Callable[[Any], list[Any]]:
    fn, single = f
    if single:
        return lambda v: [fn(v)]
    return fn


def _guarded(cond: Callable[[Any], Any], then: Callable[[Any], Any]) -> Filter:
    """`select(cond) | then` (then single): its function is marked so that a pipe feeding it
    many values folds both into one comprehension."""
    if then is _identity:
        def fn(v: Any) -> list[Any]:
            c = cond(v)
            return [v] if c is not None and c is not False else []
    else:
        def fn(v: Any) -> list[Any]:
            c = cond(v)
            return [then(v)] if c is not None and c is not False else []
    fn._guard = (cond, then)  # type: ignore[attr-defined]
    return fn, False


def _pipe(a: Filter, b: Filter) -> Filter:
    fa, sa = a
    fb, sb = b
    if fa is _identity:
        return b
    if fb is _identity:
        return a
    fields_a, fields_b = getattr(fa, "_fields", None), getattr(fb, "_fields", None)
    if fields_a is not None and fields_b is not None:
        return _field(*fields_a, *fields_b), True
    guard_a, guard_b = getattr(fa, "_guard", None), getattr(fb, "_guard", None)
    if guard_a is not None and sb:
        cond, then = guard_a
        return _guarded(cond, fb if then is _identity else _pipe((then, True), b)[0])
    if guard_b is not None and not sa:
        cond, then = guard_b
        if then is _identity:
            return (lambda v: [x for x in fa(v) if (c := cond(x)) is not None and c is not False]), False
        return (lambda v: [then(x) for x in fa(v) if (c := cond(x)) is not None and c is not False]), False
    if sa and sb:
        return (lambda v: fb(fa(v))), True
    if sa:
        return (lambda v: fb(fa(v))), False
    if sb:
        return (lambda v: [fb(x) for x in fa(v)]), False
    return (lambda v: [y for x in fa(v) for y in fb(x)]), False


def _select(cond: Filter) -> Filter:
    fc, sc = cond
    if sc:
        return _guarded(fc, _identity)
    return (lambda v: [v for c in fc(v) if _truthy(c)]), False


def _truthy(v: Any) -> bool:
    return v is not None and v is not False


def _binary(op: Callable[[Any, Any], Any], a: Filter, b: Filter) -> Filter:
    """jq evaluates the right operand's outputs in the outer loop: `(1,2) + (10,20)` is
    11, 12, 21, 22."""
    fa, sa = a
    fb, sb = b
    if sa and sb:
        return (lambda v: op(fa(v), fb(v))), True
    ma, mb = _many(a), _many(b)
    return (lambda v: [op(x, y) for y in mb(v) for x in ma(v)]), False


def _const(value: Any) -> Filter:
    def const(v: Any) -> Any:
        return value
    const._const = (value,)  # type: ignore[attr-defined]
    return const, True


def _interpolate(parts: list[Any]) -> Filter:
    pieces: list[Any] = []
    for p in parts:
        if isinstance(p, str):
            pieces.append(p)
        else:
            f = _Parser(p).program()
            if not f[1]:
                raise _Unsupported("multi-output interpolation")
            pieces.append(f[0])
    if all(isinstance(p, str) for p in pieces):
        return _const("".join(pieces))
    if len(pieces) == 1:
        g = pieces[0]
        return (lambda v: _text(g(v))), True
    funcs = [(p if callable(p) else None, p if isinstance(p, str) else "") for p in pieces]
    return (lambda v: "".join([t if f is None else _text(f(v)) for f, t in funcs])), True


class _Parser:
    """Recursive descent over the subset, jq's precedence: `|` < `,` < `or` < `and` <
    comparisons < `+ -` < postfix terms."""

    def __init__(self, toks: list[tuple[str, Any]]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> tuple[str, Any]:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def take(self, text: str) -> bool:
        kind, t = self.peek()
        if kind in ("op", "ident") and t == text:
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.take(text):
            raise _Unsupported(f"expected {text}")

    def program(self) -> Filter:
        f = self.pipe()
        if self.i != len(self.toks):
            raise _Unsupported("trailing tokens")
        return f

    def pipe(self) -> Filter:
        left = self.comma()
        if self.take("|"):
            return _pipe(left, self.pipe())
        return left

    def comma(self) -> Filter:
        left = self.or_()
        while self.take(","):
            right = self.or_()
            ma, mb = _many(left), _many(right)
            left = (lambda v, ma=ma, mb=mb: ma(v) + mb(v)), False
        return left

    def or_(self) -> Filter:
        left = self.and_()
        while self.take("or"):
            right = self.and_()
            if not (left[1] and right[1]):
                raise _Unsupported("multi-output or")
            fa, fb = left[0], right[0]
            left = (lambda v, fa=fa, fb=fb: _truthy(fa(v)) or _truthy(fb(v))), True
        return left

    def and_(self) -> Filter:
        left = self.compare()
        while self.take("and"):
            right = self.compare()
            if not (left[1] and right[1]):
                raise _Unsupported("multi-output and")
            fa, fb = left[0], right[0]
            left = (lambda v, fa=fa, fb=fb: _truthy(fa(v)) and _truthy(fb(v))), True
        return left

    def compare(self) -> Filter:
        left = self.additive()
        kind, t = self.peek()
        if kind == "op" and t in ("==", "!=", "<", "<=", ">", ">="):
            self.i += 1
            right = self.additive()
            if right[1] and getattr(right[0], "_const", None) is not None and left[1]:
                fast = _order(t, left[0], right[0]._const[0])
                if fast is not None:
                    return fast, True
            op: Callable[[Any, Any], bool] = {
                "==": _eq, "!=": lambda a, b: not _eq(a, b), "<": _lt, ">": lambda a, b: _lt(b, a),
                "<=": lambda a, b: not _lt(b, a), ">=": lambda a, b: not _lt(a, b)}[t]
            return _binary(op, left, right)
        return left

    def additive(self) -> Filter:
        left = self.postfix()
        while True:
            if self.take("+"):
                left = _binary(_plus, left, self.postfix())
            elif self.take("-"):
                left = _binary(_minus, left, self.postfix())
            else:
                return left

    def postfix(self) -> Filter:
        f = self.term()
        while True:
            kind, t = self.peek()
            if kind == "field":
                self.i += 1
                f = _pipe(f, (_field(t[1:]), True))
            elif kind == "op" and t == "." and self.i + 1 < len(self.toks) and self.toks[self.i + 1][0] == "str":
                self.i += 1
                f = _pipe(f, self._quoted_field())
            elif kind == "op" and t == "[":
                f = _pipe(f, self._bracket())
            elif kind == "op" and t == "." and self.i + 1 < len(self.toks) and self.toks[self.i + 1] == ("op", "["):
                self.i += 1
            else:
                return f

    def _quoted_field(self) -> Filter:
        _, parts = self.toks[self.i]
        self.i += 1
        if not all(isinstance(p, str) for p in parts):
            raise _Unsupported("interpolated field name")
        return _field("".join(parts)), True

    def _bracket(self) -> Filter:
        self.expect("[")
        if self.take("]"):
            return _each, False
        kind, t = self.peek()
        if kind == "num":
            self.i += 1
            self.expect("]")
            n = int(t)
            if n >= _MAX_EXACT:
                raise _Unsupported("index")
            return _index(n), True
        if kind == "op" and t == "-" and self.i + 1 < len(self.toks) and self.toks[self.i + 1][0] == "num":
            n = -int(self.toks[self.i + 1][1])
            self.i += 2
            self.expect("]")
            if n <= -_MAX_EXACT:
                raise _Unsupported("index")
            return _index(n), True
        raise _Unsupported("bracket")

    def term(self) -> Filter:
        kind, t = self.peek()
        self.i += 1
        if kind == "field":
            return _field(t[1:]), True
        if kind == "op":
            if t == ".":
                nk, nt = self.peek()
                if nk == "str":
                    return self._quoted_field()
                return _identity, True
            if t == "(":
                f = self.pipe()
                self.expect(")")
                return f
            if t == "[":
                if self.take("]"):
                    return (lambda v: []), True
                inner = self.pipe()
                self.expect("]")
                fi, si = inner
                if si:
                    return (lambda v: [fi(v)]), True
                return (lambda v: list(fi(v))), True
            if t == "-":
                kind2, t2 = self.peek()
                if kind2 == "num":
                    self.i += 1
                    return self._number("-" + t2)
        if kind == "num":
            return self._number(t)
        if kind == "str":
            return _interpolate(t)
        if kind == "ident":
            if t in ("true", "false", "null"):
                return _const({"true": True, "false": False, "null": None}[t])
            if t == "select" and self.take("("):
                cond = self.pipe()
                self.expect(")")
                return _select(cond)
            if t == "empty":
                return (lambda v: []), False
            if self.take("("):
                raise _Unsupported(t)
            simple = {"add": _add, "length": _length, "not": _not}
            if t in simple:
                return simple[t], True
        raise _Unsupported(t)

    def _number(self, text: str) -> Filter:
        n = int(text)
        if not -_MAX_EXACT <= n <= _MAX_EXACT:
            raise _Unsupported("number")
        return _const(n)


def compile_program(program: str) -> Callable[[Any], list[Any]] | None:
    """The program as a function from one input to its list of outputs, or None when it uses
    anything outside the subset (then libjq runs it)."""
    try:
        return _many(_Parser(_Lexer(program).tokens()).program())
    except (_Unsupported, KeyError, ValueError, IndexError, RecursionError):
        return None


# --------------------------------------------------------------------------- inputs

_SKIP_SPACE = re.compile(r"[ \t\r\n]*")
# digits as 0, E as e, D as d (for \uD800), and signs deleted: one pass, then three searches
_FOLD = bytes.maketrans(b"123456789ED", b"000000000ed")
_FOLD_DELETE = b"+-"


def _reject_constant(name: str) -> Any:
    raise Fallback  # NaN/Infinity: jq's own reading of them differs


def parse_values(raw: bytes, text: str) -> list[Any]:
    """The JSON values in `text` (the decoded `raw`), read by Python's C decoder; Fallback
    wherever its reading might differ from jq's: any parse error, NaN/Infinity, integers of 16+
    digits (doubles in jq), exponents of 3+ digits (infinities, underflow: libjq clamps them),
    escaped surrogates, scalars written flush against the next value (`truefalse` is one bad
    token to jq). The textual checks also trip on strings that merely look like such numbers,
    which only costs the fast path."""
    folded = raw.translate(_FOLD, _FOLD_DELETE)
    if b"0" * 16 in folded or b"0e000" in folded or b"\\ud" in folded:
        raise Fallback
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    decode = decoder.raw_decode
    skip = _SKIP_SPACE.match
    values: list[Any] = []
    n = len(text)
    pos = skip(text, 0).end()
    while pos < n:
        try:
            value, end = decode(text, pos)
        except ValueError:
            raise Fallback from None
        values.append(value)
        pos = skip(text, end).end()
        if pos == end and pos < n and text[end - 1] not in ']}"':
            raise Fallback
    return values


def run_text(run: Callable[[Any], list[Any]], raw: bytes, text: str) -> list[Any]:
    """All the outputs of the compiled program `run` over the JSON values of `text` (the decoded
    `raw`); Fallback where libjq must decide.

    The cyclic collector is paused from parsing until the parsed values are freed: the decoder
    allocates an object per JSON value, and with the collector on, the growing tree is scanned
    over and over while it is built, then once more in full by whatever allocates next (tens of
    milliseconds each for a few MB). None of it is cyclic, and freeing it before resuming brings
    the collector's allocation count back down, so nothing is left for it to do."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        values = parse_values(raw, text)
        results = [r for v in values for r in run(v)]
        del values
        return results
    finally:
        if was_enabled:
            gc.enable()
