"""The awk compiler: the parse tree becomes Python closures, once, so running a rule is a chain
of direct calls (no tree walking per record)."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from kshell.tools.awk.values import (
    UNINIT,
    AwkFatal,
    LazyArray,
    StrNum,
    Uninit,
    compare,
    field,
    format_printf,
    is_num,
    str_to_num,
    to_bool,
    to_num,
    to_str,
)

if TYPE_CHECKING:
    from kshell.tools.awk.runtime import Runtime


class Next(Exception):
    pass


class NextFile(Exception):
    pass


class Exit(Exception):
    def __init__(self, status: int | None) -> None:
        self.status = status


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Return(Exception):
    def __init__(self, value) -> None:
        self.value = value


_SPECIAL_VARS = {"NF"}
GAWK_ONLY_VARS = frozenset({"IGNORECASE", "FIELDWIDTHS", "FPAT", "BINMODE", "LINT", "TEXTDOMAIN", "PROCINFO"})


class Compiler:
    def __init__(self, rt: Runtime, funcs: dict) -> None:
        self.rt = rt
        self.funcs = funcs
        self.compiled: dict[str, tuple] = {}
        self.locals: dict[str, int] | None = None

    # ---------------------------------------------------------------- statements

    def block(self, node) -> object:
        stmts = [self.stmt(s) for s in node[1]]
        if len(stmts) == 1:
            return stmts[0]

        def run() -> None:
            for s in stmts:
                s()
        return run

    def stmt(self, node):
        k = node[0]
        checkpoint = self.rt.checkpoint
        if k == "block":
            return self.block(node)
        if k == "expr":
            return self.expr(node[1])
        if k in ("print", "printf"):
            return self.print_(node)
        if k == "if":
            cond = self.cond(node[1])
            then = self.stmt(node[2])
            other = self.stmt(node[3]) if node[3] is not None else None
            if other is None:
                def run_if() -> None:
                    if cond():
                        then()
                return run_if

            def run_ifelse() -> None:
                if cond():
                    then()
                else:
                    other()
            return run_ifelse
        if k == "while":
            cond = self.cond(node[1])
            body = self.stmt(node[2])

            def run_while() -> None:
                n = 0
                while cond():
                    n += 1
                    if not n & 1023:
                        checkpoint()
                    try:
                        body()
                    except Break:
                        break
                    except Continue:
                        continue
            return run_while
        if k == "do":
            body = self.stmt(node[1])
            cond = self.cond(node[2])

            def run_do() -> None:
                n = 0
                while True:
                    n += 1
                    if not n & 1023:
                        checkpoint()
                    try:
                        body()
                    except Break:
                        break
                    except Continue:
                        pass
                    if not cond():
                        break
            return run_do
        if k == "for":
            init = self.stmt(node[1]) if node[1] else None
            cond = self.cond(node[2]) if node[2] else (lambda: True)
            step = self.stmt(node[3]) if node[3] else None
            body = self.stmt(node[4])

            def run_for() -> None:
                if init is not None:
                    init()
                n = 0
                while cond():
                    n += 1
                    if not n & 1023:
                        checkpoint()
                    try:
                        body()
                    except Break:
                        break
                    except Continue:
                        pass
                    if step is not None:
                        step()
            return run_for
        if k == "forin":
            setter = self.setter(("var", node[1]))
            arr = self.array(node[2])
            body = self.stmt(node[3])

            def run_forin() -> None:
                a = arr()
                for n, key in enumerate(list(a), 1):
                    if not n & 1023:
                        checkpoint()
                    if key not in a:
                        continue
                    setter(key)
                    try:
                        body()
                    except Break:
                        break
                    except Continue:
                        pass
            return run_forin
        if k == "break":
            def run_break() -> None:
                raise Break
            return run_break
        if k == "continue":
            def run_continue() -> None:
                raise Continue
            return run_continue
        if k == "next":
            def run_next() -> None:
                raise Next
            return run_next
        if k == "nextfile":
            def run_nextfile() -> None:
                raise NextFile
            return run_nextfile
        if k == "exit":
            value = self.expr(node[1]) if node[1] is not None else None

            def run_exit() -> None:
                raise Exit(int(to_num(value())) & 0xFF if value is not None else None)
            return run_exit
        if k == "return":
            value = self.expr(node[1]) if node[1] is not None else (lambda: UNINIT)

            def run_return() -> None:
                raise Return(value())
            return run_return
        if k == "delete":
            arr = self.array(node[1])
            if node[2] is None:
                def run_delete_all() -> None:
                    arr().clear()
                return run_delete_all
            key = self.subscript(node[2])

            def run_delete() -> None:
                arr().pop(key(), None)
            return run_delete
        raise AwkFatal(f"{k} not supported")

    def print_(self, node):
        rt = self.rt
        kind, args, dest = node
        fns = [self.expr(a) for a in args]
        target = None
        if dest is not None:
            op = dest[0]
            name = self.expr(dest[1])

            def target() -> object:
                return rt.output(op, to_str(name(), rt.convfmt()))
        if kind == "printf":
            fmt = fns[0]
            rest = fns[1:]

            def text() -> str:
                return format_printf(to_str(fmt(), rt.convfmt()), [f() for f in rest], rt.convfmt())
        elif not fns:
            def text() -> str:
                return rt.get_record() + rt.vars["ORS"]
        elif all(_const_field(a) is not None for a in args):
            texts = [self.field_text(_const_field(a)) for a in args]
            vs = rt.vars
            if len(texts) == 1:
                t0 = texts[0]

                def text() -> str:
                    return t0() + vs["ORS"]
            else:
                def text() -> str:
                    return vs["OFS"].join([t() for t in texts]) + vs["ORS"]
        elif len(fns) == 1:
            f0 = fns[0]

            def text() -> str:
                v = f0()
                return (v if type(v) is not float else rt.out_str(v)) + rt.vars["ORS"]
        else:
            def text() -> str:
                vs = rt.vars
                return vs["OFS"].join([v if type(v) is not float else rt.out_str(v)
                                       for v in [f() for f in fns]]) + vs["ORS"]
        if target is None:  # rt.write, inlined
            pending = rt.pending
            drain = rt.drain
            one = _const_field(args[0]) if kind == "print" and len(args) == 1 else None
            if one:
                j = one - 1
                vs = rt.vars

                def run_print_field() -> None:
                    f = rt.fields
                    if f is None:
                        f = rt.split()
                    pending.append((f[j] if j < len(f) else "") + vs["ORS"])
                    if len(pending) >= 512:
                        drain()
                return run_print_field

            def run_print() -> None:
                pending.append(text())
                if len(pending) >= 512:
                    drain()
            return run_print

        def run_print_to() -> None:
            s = text()
            target().write(s)
        return run_print_to

    # ---------------------------------------------------------------- expressions

    def cond(self, node):
        if node[0] == "regex":
            regex = self.rt.regex(node[1])
            rt = self.rt
            return lambda: regex.search(rt.get_record()) is not None
        if node[0] == "cmp":
            rt = self.rt
            a = self.expr(node[2])
            b = self.expr(node[3])
            test = _CMP[node[1]]
            if node[3][0] == "num":  # `NR > 1`: a number on the right
                y = node[3][1]

                def cmp_num_cond() -> bool:
                    x = a()
                    if type(x) is float:
                        return test((x > y) - (x < y))
                    return test(compare(x, y, rt.convfmt()))
                return cmp_num_cond

            def cmp_cond() -> bool:
                x = a()
                y = b()
                if type(x) is float and type(y) is float:
                    return test((x > y) - (x < y))
                return test(compare(x, y, rt.convfmt()))
            return cmp_cond
        f = self.expr(node)
        return lambda: to_bool(f())

    def subscript(self, subs):
        rt = self.rt
        if len(subs) == 1:
            node = subs[0]
            while node[0] == "group":
                node = node[1]
            if node[0] == "field" and node[1][0] == "num" and int(node[1][1]) > 0:
                j = int(node[1][1]) - 1

                def field_key() -> str:  # the field's own text, as str(field(text)) is
                    f = rt.fields
                    if f is None:
                        f = rt.split()
                    return f[j] if j < len(f) else ""
                return field_key
            f = self.expr(subs[0])

            def key() -> str:
                v = f()
                t = type(v)
                if t is float:
                    i = int(v)
                    return str(i) if i == v else rt.key_str(v)
                return str(v) if t is not str else v
            return key
        fs = [self.expr(s) for s in subs]
        return lambda: rt.vars["SUBSEP"].join(to_str(f(), rt.convfmt()) for f in fs)

    def array(self, name: str):
        rt = self.rt
        if self.locals is not None and name in self.locals:
            idx = self.locals[name]

            def local_array() -> dict:
                frame = rt.frame
                a = frame[idx]
                if type(a) is dict:
                    return a
                if type(a) is LazyArray:
                    d: dict = {}
                    if a.setter is not None:
                        a.setter(d)
                    frame[idx] = d
                    return d
                if type(a) is Uninit:
                    d = {}
                    frame[idx] = d
                    return d
                raise AwkFatal(f"attempt to use scalar parameter `{name}' as an array")
            return local_array
        if name in self.funcs:
            raise AwkFatal(f"attempt to use function `{name}' as an array")
        vars_ = rt.vars

        def global_array() -> dict:
            a = vars_.get(name)
            if type(a) is dict:
                return a
            if a is None or type(a) is Uninit:
                d: dict = {}
                vars_[name] = d
                return d
            raise AwkFatal(f"attempt to use scalar `{name}' as an array")
        return global_array

    def getter(self, name: str):
        rt = self.rt
        if self.locals is not None and name in self.locals:
            idx = self.locals[name]

            def local() -> object:
                v = rt.frame[idx]
                if type(v) is dict:
                    raise AwkFatal(f"attempt to use array `{name}' in a scalar context")
                return v
            return local
        if name == "NF":
            return rt.get_nf
        vars_ = rt.vars

        def glob() -> object:
            v = vars_.get(name, UNINIT)
            if type(v) is dict:
                raise AwkFatal(f"attempt to use array `{name}' in a scalar context")
            return v
        return glob

    def setter(self, target):
        """A function storing a value into an lvalue; returns the value."""
        rt = self.rt
        k = target[0]
        if k == "var":
            name = target[1]
            if self.locals is not None and name in self.locals:
                idx = self.locals[name]

                def set_local(v) -> object:
                    if type(rt.frame[idx]) is dict:
                        raise AwkFatal(f"attempt to use array `{name}' in a scalar context")
                    rt.frame[idx] = v
                    return v
                return set_local
            if name in ("NF", "FS", "RS", "CONVFMT", "OFMT", "SUBSEP", "OFS", "ORS"):
                return lambda v: rt.set_special(name, v)
            if name in GAWK_ONLY_VARS:  # they would change gawk's behaviour: refuse, never ignore
                raise AwkFatal(f"`{name}' is a gawk extension that this awk does not support")
            vars_ = rt.vars

            def set_global(v) -> object:
                if type(vars_.get(name)) is dict:
                    raise AwkFatal(f"attempt to use array `{name}' in a scalar context")
                vars_[name] = v
                return v
            return set_global
        if k == "index":
            arr = self.array(target[1])
            key = self.subscript(target[2])

            def set_elem(v) -> object:
                arr()[key()] = v
                return v
            return set_elem
        if k == "field":
            idx = self.expr(target[1])

            def set_field(v) -> object:
                rt.set_field(int(to_num(idx())), v)
                return v
            return set_field
        raise AwkFatal("invalid assignment target")

    def field_text(self, i: int):
        """Field i's text as print shows it (the field's own text; "" past NF)."""
        rt = self.rt
        if i == 0:
            return rt.get_record
        j = i - 1

        def text() -> str:
            f = rt.fields
            if f is None:
                f = rt.split()
            return f[j] if j < len(f) else ""
        return text

    def num_expr(self, node):
        """An expression's value as a number, or None when no faster than to_num(expr()):
        a constant field is converted straight from its text (to_num(field(t)) is
        str_to_num(t))."""
        if node[0] == "group":
            return self.num_expr(node[1])
        if node[0] == "field" and node[1][0] == "num" and int(node[1][1]) > 0:
            rt = self.rt
            j = int(node[1][1]) - 1

            def num_field() -> float:
                f = rt.fields
                if f is None:
                    f = rt.split()
                if j < len(f):
                    t = f[j]
                    return float(t) if t.isdigit() and t.isascii() else str_to_num(t)
                return 0.0
            return num_field
        return None

    def assign_op_fast(self, op: str, target, val, value_node):
        """`x OP= v` on a global variable, or `a[k] OP= v` with a side-effect-free subscript:
        the variable (array and key) looked up once; the same order and results as the
        general getter-then-setter path."""
        rt = self.rt
        fn = _ARITH[op]
        num = self.num_expr(value_node)
        if num is not None:
            val = num
        if target[0] == "var":
            name = target[1]
            if (self.locals is not None and name in self.locals) or name in _NOT_PLAIN \
                    or name in GAWK_ONLY_VARS or name in self.funcs:
                return None
            vars_ = rt.vars

            def assign_global() -> object:
                v = val()
                cur = vars_.get(name, UNINIT)
                t = type(cur)
                if t is dict:
                    raise AwkFatal(f"attempt to use array `{name}' in a scalar context")
                r = fn(cur if t is float else to_num(cur), v if type(v) is float else to_num(v))
                vars_[name] = r
                return r
            if op == "+":
                def add_global() -> object:
                    v = val()
                    cur = vars_.get(name, UNINIT)
                    t = type(cur)
                    if t is dict:
                        raise AwkFatal(f"attempt to use array `{name}' in a scalar context")
                    r = (cur if t is float else to_num(cur)) + (v if type(v) is float else to_num(v))
                    vars_[name] = r
                    return r
                return add_global
            return assign_global
        if target[0] == "index" and all(_pure(s) for s in target[2]):
            arr = self.array(target[1])
            key = self.subscript(target[2])

            def assign_elem() -> object:
                v = val()
                a = arr()
                k = key()
                cur = a.get(k)
                r = fn(0.0 if cur is None else cur if type(cur) is float else to_num(cur),
                       v if type(v) is float else to_num(v))
                a[k] = r
                return r
            return assign_elem
        return None

    def lvalue_get(self, target):
        if target[0] == "var":
            return self.getter(target[1])
        return self.expr(target)

    def expr(self, node):
        rt = self.rt
        k = node[0]
        if k == "num":
            v = node[1]
            return lambda: v
        if k == "str":
            s = node[1]
            return lambda: s
        if k == "regex":
            regex = rt.regex(node[1])
            return lambda: 1.0 if regex.search(rt.get_record()) else 0.0
        if k == "group":
            return self.expr(node[1])
        if k == "var":
            return self.getter(node[1])
        if k == "index":
            arr = self.array(node[1])
            key = self.subscript(node[2])

            def get_elem() -> object:
                a = arr()
                kv = key()
                v = a.get(kv)
                if v is None:
                    a[kv] = v = UNINIT
                return v
            return get_elem
        if k == "field":
            inner = node[1]
            if inner[0] == "num":
                i = int(inner[1])
                if i == 0:
                    return rt.get_record_value
                if i < 0:
                    return lambda: rt.get_field(i)
                j = i - 1

                def const_field() -> object:
                    f = rt.fields
                    if f is None:
                        f = rt.split()
                    return field(f[j]) if j < len(f) else UNINIT
                return const_field
            idx = self.expr(inner)
            return lambda: rt.get_field(int(to_num(idx())))
        if k == "assign":
            op, target, value = node[1], node[2], node[3]
            setter = self.setter(target)
            val = self.expr(value)
            if op == "=":
                def assign() -> object:
                    v = val()
                    if type(v) is LazyArray:
                        v = UNINIT
                    return setter(v)
                return assign
            fn = _ARITH[op[:-1]]
            fast = self.assign_op_fast(op[:-1], target, val, value)
            if fast is not None:
                return fast
            get = self.lvalue_get(target)

            def assign_op() -> object:
                v = val()
                return setter(fn(to_num(get()), to_num(v)))
            return assign_op
        if k == "cond":
            c = self.cond(node[1])
            a = self.expr(node[2])
            b = self.expr(node[3])
            return lambda: a() if c() else b()
        if k == "or":
            a = self.cond(node[1])
            b = self.cond(node[2])
            return lambda: 1.0 if a() or b() else 0.0
        if k == "and":
            a = self.cond(node[1])
            b = self.cond(node[2])
            return lambda: 1.0 if a() and b() else 0.0
        if k == "not":
            a = self.cond(node[1])
            return lambda: 0.0 if a() else 1.0
        if k == "neg":
            a = self.expr(node[1])
            return lambda: -to_num(a())
        if k == "pos":
            a = self.expr(node[1])
            return lambda: to_num(a())
        if k == "in":
            arr = self.array(node[2])
            key = self.subscript(node[1])
            return lambda: 1.0 if key() in arr() else 0.0
        if k == "match":
            neg = node[1]
            left = self.expr(node[2])
            right = node[3]
            if right[0] == "regex":
                regex = rt.regex(right[1])
                if neg:
                    return lambda: 0.0 if regex.search(to_str(left(), rt.convfmt())) else 1.0
                return lambda: 1.0 if regex.search(to_str(left(), rt.convfmt())) else 0.0
            dyn = self.expr(right)

            def dyn_match() -> float:
                s = to_str(left(), rt.convfmt())
                found = rt.dyn_regex(dyn()).search(s) is not None
                return 1.0 if found != neg else 0.0
            return dyn_match
        if k == "cmp":
            op = node[1]
            a = self.expr(node[2])
            b = self.expr(node[3])
            test = _CMP[op]

            def cmp() -> float:
                x = a()
                y = b()
                if type(x) is float and type(y) is float:
                    return 1.0 if test((x > y) - (x < y)) else 0.0
                return 1.0 if test(compare(x, y, rt.convfmt())) else 0.0
            return cmp
        if k == "concat":
            parts = []

            def flat(n) -> None:
                if n[0] == "concat":
                    flat(n[1])
                    flat(n[2])
                else:
                    parts.append(self.expr(n))
            flat(node)

            def concat() -> str:
                cf = rt.convfmt()
                return "".join([v if type(v) is not float else to_str(v, cf) for v in [p() for p in parts]])
            return concat
        if k == "bin":
            fn = _ARITH[node[1]]
            na = self.num_expr(node[2])
            nb = self.num_expr(node[3])
            a = na or self.expr(node[2])
            b = nb or self.expr(node[3])
            if na is not None and nb is not None:
                return lambda: fn(a(), b())
            if na is not None:
                return lambda: fn(a(), to_num(b()))
            if nb is not None:
                return lambda: fn(to_num(a()), b())
            return lambda: fn(to_num(a()), to_num(b()))
        if k in ("preinc", "postinc"):
            delta = node[1]
            target = node[2]
            setter = self.setter(target)
            get = self.lvalue_get(target)
            if k == "preinc":
                return lambda: setter(to_num(get()) + delta)

            def postinc() -> float:
                v = to_num(get())
                setter(v + delta)
                return v
            return postinc
        if k == "call":
            return self.call(node)
        if k == "builtin":
            from kshell.tools.awk.builtins import builtin
            return builtin(self, node)
        if k == "getline":
            var = self.setter(node[1]) if node[1] is not None else None
            return lambda: rt.getline_main(var)
        if k == "fgetline":
            var = self.setter(node[1]) if node[1] is not None else None
            src = self.expr(node[2])
            return lambda: rt.getline_file(to_str(src(), rt.convfmt()), var)
        if k == "pgetline":
            cmd = self.expr(node[1])
            var = self.setter(node[2]) if node[2] is not None else None
            return lambda: rt.getline_cmd(to_str(cmd(), rt.convfmt()), var)
        raise AwkFatal(f"{k} not supported")

    def call(self, node):
        rt = self.rt
        name, args = node[1], node[2]
        if name not in self.funcs:
            raise AwkFatal(f"function `{name}' not defined")
        params, _ = self.funcs[name]
        if len(args) > len(params):
            raise AwkFatal(f"function `{name}' called with more arguments than declared")
        argfns = []
        for a in args:
            if a[0] == "var":
                argfns.append(self.ref_arg(a[1]))
            else:
                argfns.append(self.expr(a))
        nparams = len(params)
        compiled = self.compiled
        nargs = len(args)
        if name not in compiled:
            compiled[name] = [None]
            saved = self.locals
            self.locals = {p: i for i, p in enumerate(params)}
            body = self.stmt(self.funcs[name][1])
            self.locals = saved
            compiled[name][0] = body
        cell = compiled[name]

        def call() -> object:
            frame = [f() for f in argfns]
            if nargs < nparams:
                frame.extend(Uninit("") for _ in range(nparams - nargs))
                for i in range(nargs, nparams):
                    frame[i].num = 0.0
            saved = rt.frame
            rt.frame = frame
            rt.depth += 1
            if rt.depth > 1000:
                raise AwkFatal("function call nesting too deep")
            try:
                cell[0]()
            except Return as r:
                v = r.value
                return UNINIT if type(v) is dict else v
            finally:
                rt.frame = saved
                rt.depth -= 1
            return UNINIT
        return call

    def ref_arg(self, name: str):
        """A bare name as an argument: arrays by reference, an uninitialized variable as an
        array-to-be (LazyArray), anything else by value."""
        rt = self.rt
        if self.locals is not None and name in self.locals:
            idx = self.locals[name]

            def local_ref() -> object:
                frame = rt.frame
                v = frame[idx]
                if type(v) is Uninit or type(v) is LazyArray:
                    lazy = LazyArray("")
                    lazy.num = 0.0

                    def store(d, frame=frame, old=v) -> None:
                        frame[idx] = d
                        if type(old) is LazyArray and old.setter is not None:
                            old.setter(d)
                    lazy.setter = store
                    return lazy
                return v
            return local_ref
        if name == "NF":
            return rt.get_nf
        vars_ = rt.vars

        def global_ref() -> object:
            v = vars_.get(name, UNINIT)
            if type(v) is Uninit:
                lazy = LazyArray("")
                lazy.num = 0.0

                def store(d) -> None:
                    vars_[name] = d
                lazy.setter = store
                return lazy
            return v
        return global_ref


# variables whose assignment does more than store (the setter's special cases)
_NOT_PLAIN = frozenset({"NF", "FS", "RS", "CONVFMT", "OFMT", "SUBSEP", "OFS", "ORS"})
_PURE = frozenset({"num", "str", "var", "field", "group", "concat"})


def _const_field(node) -> int | None:
    """i for `$i` with a constant i >= 0 (in parentheses or not), else None."""
    while node[0] == "group":
        node = node[1]
    if node[0] == "field" and node[1][0] == "num" and node[1][1] >= 0 and node[1][1] == int(node[1][1]):
        return int(node[1][1])
    return None


def _pure(node) -> bool:
    """Whether evaluating an expression twice is the same as once (no side effects)."""
    k = node[0]
    if k not in _PURE:
        return False
    if k == "field" or k == "group":
        return _pure(node[1])
    if k == "concat":
        return _pure(node[1]) and _pure(node[2])
    return True


def _div(a: float, b: float) -> float:
    if b == 0.0:
        raise AwkFatal("division by zero attempted", 2)
    return a / b


def _mod(a: float, b: float) -> float:
    if b == 0.0:
        raise AwkFatal("division by zero attempted in `%'", 2)
    return math.fmod(a, b)


def _pow(a: float, b: float) -> float:
    try:
        return float(a ** b) if not (a < 0 and b != int(b)) else math.nan
    except OverflowError:
        return math.inf
    except ZeroDivisionError:
        return math.inf


_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": _div,
          "%": _mod, "^": _pow, "**": _pow}
_CMP = {"<": lambda c: c < 0, "<=": lambda c: c <= 0, ">": lambda c: c > 0, ">=": lambda c: c >= 0,
        "==": lambda c: c == 0, "!=": lambda c: c != 0}

__all__ = ["Compiler", "Next", "NextFile", "Exit", "StrNum", "is_num", "re"]
