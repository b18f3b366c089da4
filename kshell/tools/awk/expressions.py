"""The compiler's expressions: each awk expression becomes a Python expression (`Code`),
with the conversions its context needs (a number, a string, a truth value) written only where
the value's kind is not already known. Left-to-right evaluation throughout; the value of an
assignment before its target's subscript or field index, which are evaluated once."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kshell.tools.awk import analysis, builtins
from kshell.tools.awk.analysis import GAWK_ONLY_VARS, NOT_PLAIN, const_field, ungroup
from kshell.tools.awk.code import ANY, NUM, STR, Code, Fields, Scope
from kshell.tools.awk.values import AwkFatal, format_plan

if TYPE_CHECKING:
    from kshell.tools.awk.analysis import Program
    from kshell.tools.awk.runtime import Runtime


class Expressions:
    """Expression compilation, mixed into the Compiler (which owns the state below)."""

    rt: Runtime
    funcs: dict
    prog: Program
    scope: Scope
    fields: Fields
    regexes: list[str]
    consts: list[object]
    compiled: dict[str, str]
    pending_funcs: list[str]
    pure: bool  # the statement being compiled cannot change the record: fields come from F
    want_f: bool  # ... and it reads F (its prelude makes F valid)
    want_nums: set[int]  # ... and these fields' numbers (its prelude computes _n<j>)
    inline: bool  # compiling a loop's test: no prelude, F only if the loop keeps it valid
    floats: frozenset[str]  # hoisted globals surely holding a float here
    split: int  # 0, or the height at which subexpressions become functions (split_out)
    heights: dict[int, int]  # analysis.height's memo
    split_defs: list[str]  # the functions split_out made, written before the next line

    def temp(self, prefix: str = "_t") -> str:
        self.scope.temps += 1
        return f"{prefix}{self.scope.temps}"

    def regex(self, src: str) -> str:
        self.rt.regex(src)  # an invalid regex is fatal here, before BEGIN, as before
        if src not in self.regexes:
            self.regexes.append(src)
        return f"R{self.regexes.index(src)}"

    def number(self, v: float) -> str:
        if math.isfinite(v):
            return repr(float(v))
        self.consts.append(v)
        return f"K{len(self.consts) - 1}"

    def record(self) -> str:
        """$0's text: the record loop's `rec` where no rule can change it (no read of rt then,
        which lets the loop skip storing each record in rt), else the runtime's."""
        s = self.scope
        return "rec" if s.in_records and s.rec_same else "rt.record"

    def special(self, name: str) -> str:
        local = self.scope.ro.get(name)
        return local if local is not None else f"V[{name!r}]"

    # ------------------------------------------------------------------ conversions

    def num(self, node) -> str:
        """An expression's value as a float."""
        return self.split_out(node, self.num_src(node))

    def num_src(self, node) -> str:
        while node[0] == "group":
            node = node[1]
        j = const_field(node)
        if j is not None and j > 0:
            return self.field_num(j - 1)
        code = self.expr(node)
        return self.as_num(code)

    def as_num(self, code: Code) -> str:
        if code.kind == NUM:
            return code.src
        if code.kind == STR:
            return f"str_to_num({code.src})"
        t = self.temp()
        return f"({t} if type({t} := {code.src}) is float else to_num({t}))"

    def str_(self, node) -> str:
        """An expression's value as a string (a number through CONVFMT)."""
        return self.split_out(node, self.str_src(node))

    def str_src(self, node) -> str:
        j = const_field(node)
        if j is not None:
            return self.text_of_field(j)
        return self.as_str(self.expr(node))

    def as_str(self, code: Code, fmt: str = "CONVFMT") -> str:
        """A value as a string: a number through CONVFMT (OFMT for print), an integral one
        as its digits straight away (num_to_str's first case, inline)."""
        if code.kind == STR:
            return code.src
        if code.int_src is not None:
            return f"str({code.int_src})"
        f = self.special(fmt)
        t = self.temp()
        if code.kind == NUM:
            return f"(str(int({t})) if ({t} := {code.src}).is_integer() else num_to_str({t}, {f}))"
        return (f"({t} if type({t} := {code.src}) is not float else str(int({t})) if {t}.is_integer()"
                f" else num_to_str({t}, {f}))")

    def formatted(self, args: list) -> str:
        """printf's and sprintf's text. A constant format whose conversions the arguments
        match one for one is written out here, each conversion in place (plain %s and %d
        inline); any other goes through format_printf at run time."""
        cf = self.special("CONVFMT")
        plan = format_plan(args[0][1]) if args[0][0] == "str" else None
        convs = [item for item in plan or () if type(item) is not str]
        if plan is None or len(convs) != len(args) - 1 or any(c[0] is None or c[7] is None for c in convs):
            rest = ", ".join(self.expr(a).src for a in args[1:])
            return f"format_printf({self.str_(args[0])}, [{rest}], {cf})"
        parts: list[str] = []
        values = iter(args[1:])
        for item in plan:
            if type(item) is str:
                if item:
                    parts.append(repr(item))
                continue
            _, flags, width, _, conv, _, _, spec = item
            node = next(values)
            rest = f"{spec!r}, {flags!r}, {width!r}, {conv!r}, {cf}"
            if conv == "s":
                text = self.str_(node)
                parts.append(text if spec == "%" else f"({(spec + 's')!r} % {text})")
            elif conv in "di" or conv in "eEfFgG":
                t = self.temp()
                if conv in "di":
                    fn, done = "conv_int", (f"str(int({t}))" if spec == "%" else f"{(spec + 'd')!r} % int({t})")
                else:
                    fn, done = "conv_float", f"{(spec + conv)!r} % {t}"
                parts.append(f"({done} if -INF < ({t} := {self.num(node)}) < INF else {fn}({t}, {rest}))")
            elif conv == "c":
                parts.append(f"conv_char({self.expr(node).src}, {rest})")
            else:
                parts.append(f"conv_unsigned({self.num(node)}, {rest})")
        return "(" + " + ".join(parts) + ")" if parts else "''"

    def cond(self, node) -> str:
        """An expression as a Python bool (awk truth)."""
        return self.split_out(node, self.cond_src(node))

    def cond_src(self, node) -> str:
        while node[0] == "group":
            node = node[1]
        k = node[0]
        if k == "regex":
            return f"({self.regex(node[1])}.search({self.record()}) is not None)"
        if k == "cmp":
            return self.compare(node)
        if k == "and":
            return f"({self.cond(node[1])} and {self.cond(node[2])})"
        if k == "or":
            return f"({self.cond(node[1])} or {self.cond(node[2])})"
        if k == "not":
            return f"(not {self.cond(node[1])})"
        if k == "match":
            return self.match(node)
        if k == "in":
            return f"({self.subscript(node[1])} in {self.array(node[2])})"
        if k == "num":
            return "True" if node[1] != 0.0 else "False"
        code = self.expr(node)
        if code.kind == NUM:
            return f"({code.src} != 0.0)"
        if code.kind == STR:
            return f"({code.src} != '')"
        return f"to_bool({code.src})"

    # ------------------------------------------------------------------ expressions

    def expr(self, node) -> Code:
        code = getattr(self, "x_" + node[0])(node)
        src = self.split_out(node, code.src)
        return code if src is code.src else Code(src, code.kind, code.lazy)

    def split_out(self, node, src: str) -> str:
        """With `split` set (a program whose expressions nest deeper than Python's parser
        takes: 200 parentheses), the code of every subexpression `split` levels high becomes
        a call of a function defined before the statement using it, assigning the locals
        the subexpression assigns as nonlocals."""
        if not self.split or analysis.height(node, self.heights) % self.split:
            return src
        name = self.temp("_x")
        scope = self.scope
        assigned = analysis.uses([node]).assigned
        names = sorted(filter(None, (scope.params.get(n) or scope.hoisted.get(n) for n in assigned)))
        body = [f"def {name}():"]
        if names:
            body.append(f"    nonlocal {', '.join(names)}")
        body.append(f"    return {src}")
        self.split_defs.extend(body)
        return f"{name}()"

    def x_num(self, node) -> Code:
        return Code(self.number(node[1]), NUM, safe=True)

    def x_str(self, node) -> Code:
        return Code(repr(node[1]), STR, safe=True)

    def x_regex(self, node) -> Code:
        return Code(f"(1.0 if {self.regex(node[1])}.search({self.record()}) else 0.0)", NUM)

    def x_group(self, node) -> Code:
        return self.expr(node[1])

    def x_var(self, node) -> Code:
        name = node[1]
        scope = self.scope
        local = scope.params.get(name)
        if local is not None:
            t = self.temp()
            return Code(f"({t} if type({t} := {local}) is not dict else scalar_fatal({name!r}))", lazy=True)
        if name == "NF":
            if self.pure and self.fields_ok():
                self.want_f = True
                return Code("float(_nf)", NUM, int_src="_nf")
            return Code("rt.get_nf()", NUM)
        local = scope.hoisted.get(name)
        if local is not None:
            return Code(local, NUM if name in self.floats else ANY, safe=True)
        if scope.nr_local and name in ("NR", "FNR"):
            return Code(name, NUM, safe=True)
        local = scope.ro.get(name)
        if local is not None:
            return Code(local, safe=True)
        if self.may_be_array(name):
            t = self.temp()
            return Code(f"({t} if type({t} := V[{name!r}]) is not dict else scalar_fatal({name!r}))")
        return Code(f"V[{name!r}]")

    def may_be_array(self, name: str) -> bool:
        a = self.prog.all_uses
        return name in a.arrays or name in a.bare or name in self.prog.func_uses.bare

    def x_index(self, node) -> Code:
        arr = self.array(node[1])
        key = self.subscript(node[2])
        a, k, v = self.temp("_a"), self.temp("_k"), self.temp()
        return Code(f"({v} if ({v} := ({a} := {arr}).get({k} := {key})) is not None"
                    f" else {a}.setdefault({k}, UNINIT))")

    def fields_ok(self) -> bool:
        """Whether a field read at this point may use F: in a pure statement (made valid by
        its prelude) or a loop test where the loop keeps F valid."""
        if self.inline:
            return self.fields.state == "valid"
        return True

    def x_field(self, node) -> Code:
        inner = node[1]
        while inner[0] == "group":
            inner = inner[1]
        if inner[0] == "num" and inner[1] == int(inner[1]):
            i = int(inner[1])
            if i == 0:
                return Code(f"field({self.record()})")
            if i > 0:
                j = i - 1
                if self.pure and self.fields_ok():
                    self.want_f = True
                    if j == 0:
                        return Code("(field(F[0]) if F else UNINIT)")
                    return Code(f"(field(F[{j}]) if _nf > {j} else UNINIT)")
                return Code(f"rt.get_field({i})")
        if inner == ("var", "NF") and self.pure and self.fields_ok():
            self.want_f = True
            return Code(f"(field(F[-1]) if F else field({self.record()}))")
        return Code(f"rt.get_field(int({self.num(inner)}))")

    def text_of_field(self, i: int) -> str:
        """$i's text, for i >= 0 ($0 is the record itself)."""
        return self.record() if i == 0 else self.field_text(i - 1)

    def field_text(self, j: int) -> str:
        """Field j+1's text ("" past NF), as print and concatenation show it."""
        if self.pure and self.fields_ok():
            self.want_f = True
            if j == 0:
                return "(F[0] if F else '')"
            return f"(F[{j}] if _nf > {j} else '')"
        return f"rt.field_text({j})"

    def field_num(self, j: int) -> str:
        """Field j+1's value as a number: from its text, once per record."""
        if self.pure and self.fields_ok():
            self.want_f = True
            if self.inline:
                return f"({field_num_src(j)})"
            self.want_nums.add(j)
            return f"_n{j}"
        return f"rt.field_num({j})"

    def x_assign(self, node) -> Code:
        op, target, value = node[1], node[2], node[3]
        if op == "=":
            return self.assign_expr(target, self.expr(value), plain=True)
        return self.augment_expr(op[:-1], target, value)

    def x_cond(self, node) -> Code:
        a = self.expr(node[2])
        b = self.expr(node[3])
        kind = a.kind if a.kind == b.kind else ANY
        return Code(f"({a.src} if {self.cond(node[1])} else {b.src})", kind, a.lazy or b.lazy)

    def x_or(self, node) -> Code:
        return Code(f"(1.0 if {self.cond(node)} else 0.0)", NUM)

    x_and = x_or
    x_not = x_or
    x_in = x_or

    def x_match(self, node) -> Code:
        return Code(f"(1.0 if {self.match(node)} else 0.0)", NUM)

    def x_cmp(self, node) -> Code:
        return Code(f"(1.0 if {self.compare(node)} else 0.0)", NUM)

    def x_neg(self, node) -> Code:
        return Code(f"(-{self.num(node[1])})", NUM)

    def x_pos(self, node) -> Code:
        return Code(f"(+{self.num(node[1])})", NUM)

    def x_concat(self, node) -> Code:
        parts: list = []

        def flat(n) -> None:
            if n[0] == "concat":
                flat(n[1])
                flat(n[2])
            else:
                parts.append(n)
        flat(node)
        srcs = [self.str_(p) for p in parts]
        return Code("(" + " + ".join(srcs) + ")", STR)

    def x_bin(self, node) -> Code:
        op = node[1]
        a = self.num(node[2])
        b = self.num(node[3])
        if op in ("+", "-", "*"):
            return Code(f"({a} {op} {b})", NUM)
        fn = {"/": "div", "%": "mod", "^": "power", "**": "power"}[op]
        return Code(f"{fn}({a}, {b})", NUM)

    def x_preinc(self, node) -> Code:
        return self.augment_expr("+", node[2], ("num", node[1]))

    def x_postinc(self, node) -> Code:
        return self.augment_expr("+", node[2], ("num", node[1]), post=True)

    def x_call(self, node) -> Code:
        return self.call(node)

    def x_builtin(self, node) -> Code:
        return builtins.builtin(self, node)

    def x_getline(self, node) -> Code:
        return self.getline(node[1], "rt.getline_main({})")

    def x_fgetline(self, node) -> Code:
        return self.getline(node[1], f"rt.getline_file({self.str_(node[2])}, {{}})")

    def x_pgetline(self, node) -> Code:
        return self.getline(node[2], f"rt.getline_cmd({self.str_(node[1])}, {{}})")

    def getline(self, target, reader: str) -> Code:
        """getline: the runtime's reader sets $0 itself and gives 1, 0 or -1; with a target it
        gives the record's text instead (or 0 or -1), assigned here."""
        if target is None:
            return Code(reader.format("False"), NUM)
        t = self.temp()
        store = self.assign_expr(target, Code(f"field({t})"))
        return Code(f"({t} if type({t} := {reader.format('True')}) is float else ({store.src}, 1.0)[1])", NUM)

    # ------------------------------------------------------------------ comparisons

    def compare(self, node) -> str:
        """A comparison as a Python bool: numbers as numbers (NaN compares as the runtime's
        compare does: neither less nor greater), strings as strings, others by compare()."""
        op = node[1]
        left, right = ungroup(node[2]), ungroup(node[3])
        a, b = self.expr(left), self.expr(right)
        if a.kind == NUM and b.kind == NUM:
            if op in ("==", "!=") and not (a.safe and b.safe):  # num_test reads each twice
                ta, tb = self.temp(), self.temp()
                test = f"(({ta} := {a.src}) < ({tb} := {b.src}) or {ta} > {tb})"
                return test if op == "!=" else f"(not {test})"
            return num_test(op, a.src, b.src)
        if a.kind == STR or b.kind == STR:  # a string on either side: a string comparison
            x = a.src if a.kind == STR else self.str_(left)
            y = b.src if b.kind == STR else self.str_(right)
            return f"({x} {op} {y})"
        cf = self.special("CONVFMT")
        fields = self.pure and self.fields_ok()
        j = const_field(left)
        if j and right[0] == "num" and fields:
            return self.field_vs_number(j - 1, op, b.src, field_first=True)
        j = const_field(right)
        if j and left[0] == "num" and fields:
            return self.field_vs_number(j - 1, op, a.src, field_first=False)
        if b.kind == NUM and b.safe:
            t = self.temp()
            return (f"({num_test(op, t, b.src)} if type({t} := {a.src}) is float"
                    f" else compare({t}, {b.src}, {cf}) {op} 0)")
        if a.kind == NUM and a.safe:
            t = self.temp()
            return (f"({num_test(op, a.src, t)} if type({t} := {b.src}) is float"
                    f" else compare({a.src}, {t}, {cf}) {op} 0)")
        return f"(compare({a.src}, {b.src}, {cf}) {op} 0)"

    def field_vs_number(self, j: int, op: str, num: str, field_first: bool) -> str:
        """`$i op constant`: a field of digits is that number (never NaN, nor is a constant,
        so Python's operator decides), a missing field is 0, any other goes through compare()
        as its value."""
        self.want_f = True
        s = self.temp()
        value = f"float(int({s}))"
        fast = f"({value} {op} {num})" if field_first else f"({num} {op} {value})"
        args = f"field({s}), {num}" if field_first else f"{num}, field({s})"
        slow = f"(compare({args}, {self.special('CONVFMT')}) {op} 0)"
        missing = num_test(op, "0.0", num) if field_first else num_test(op, num, "0.0")
        return (f"(({fast} if ({s} := F[{j}]).isdecimal() and len({s}) < 19 else {slow})"
                f" if _nf > {j} else {missing})")

    def match(self, node) -> str:
        neg, left, right = node[1], node[2], node[3]
        s = self.str_(left)
        if right[0] == "regex":
            test = f"{self.regex(right[1])}.search({s})"
        else:
            test = f"dyn_search(rt, {s}, {self.expr(right).src})"
        return f"({test} is None)" if neg else f"({test} is not None)"

    # ------------------------------------------------------------------ names, arrays, keys

    def array(self, name: str) -> str:
        """An expression giving the array `name` (a dict), made one if still unset."""
        scope = self.scope
        local = scope.params.get(name)
        if local is not None:
            return f"({local} if type({local}) is dict else ({local} := local_array({local}, {name!r})))"
        if name in self.funcs:
            raise AwkFatal(f"attempt to use function `{name}' as an array")
        local = scope.hoisted.get(name)
        if local is not None:
            return f"({local} if type({local}) is dict else ({local} := as_array({local}, {name!r})))"
        t = self.temp()
        return f"({t} if type({t} := V[{name!r}]) is dict else global_array(V, {name!r}))"

    def subscript(self, subs: list) -> str:
        """The key of a subscript: a string; numbers through CONVFMT (integers as such)."""
        if len(subs) == 1:
            node = subs[0]
            while node[0] == "group":
                node = node[1]
            j = const_field(node)
            if j is not None:
                return self.text_of_field(j)
            code = self.expr(node)
            if code.kind == STR:
                return code.src
            return f"key_of({code.src}, {self.special('CONVFMT')})"
        parts = [self.str_(s) for s in subs]
        return f"{self.special('SUBSEP')}.join(({', '.join(parts)},))"

    def ref_arg(self, name: str) -> str:
        """A bare name passed to a function: arrays by reference, an unset variable as a
        LazyArray the callee may make an array of, anything else by value."""
        scope = self.scope
        local = scope.params.get(name)
        if local is not None:
            return f"local_ref({local}, _store_{name})"
        if name == "NF":
            return "rt.get_nf()"
        if name in scope.hoisted:  # not hoistable when passed bare: never happens
            raise AssertionError(name)
        return f"global_ref(V, {name!r})"

    # ------------------------------------------------------------------ assignments

    def assign_expr(self, target, value: Code, plain: bool = False) -> Code:
        """`target = value` as an expression giving the value."""
        if plain and value.lazy:
            value = Code(f"unlazy({value.src})")
        while target[0] == "group":
            target = target[1]
        k = target[0]
        if k == "var":
            name = target[1]
            scope = self.scope
            local = scope.params.get(name)
            if local is not None:
                return Code(f"({local} := checked_scalar({value.src}, {local}, {name!r}))", value.kind)
            self.check_settable(name)
            if name in NOT_PLAIN:
                return Code(f"rt.set_special({name!r}, {value.src})", value.kind)
            local = scope.hoisted.get(name)
            if local is not None:
                return Code(f"({local} := {value.src})", value.kind)
            check = "True" if self.may_be_array(name) else "False"
            return Code(f"store_global({value.src}, V, {name!r}, {check})", value.kind)
        if k == "index":
            return Code(f"store_item({value.src}, {self.array(target[1])}, {self.subscript(target[2])})",
                        value.kind)
        if k == "field":
            return Code(f"rt.store_field({value.src}, {self.field_index(target)})", value.kind)
        raise AwkFatal("invalid assignment target")

    def check_settable(self, name: str) -> None:
        if name in GAWK_ONLY_VARS:  # they would change gawk's behaviour: refuse, never ignore
            raise AwkFatal(f"`{name}' is a gawk extension that this awk does not support")

    def field_index(self, target) -> str:
        inner = target[1]
        while inner[0] == "group":
            inner = inner[1]
        if inner[0] == "num" and inner[1] == int(inner[1]):
            return str(int(inner[1]))
        return f"int({self.num(inner)})"

    def augment_expr(self, op: str, target, value_node, post: bool = False) -> Code:
        """`target op= value` as an expression: the new value (the old one for x++)."""
        while target[0] == "group":
            target = target[1]
        k = target[0]
        v = self.num(value_node)
        t = self.temp()
        if k == "var":
            name = target[1]
            scope = self.scope
            local = scope.params.get(name) or scope.hoisted.get(name)
            if local is not None and name not in NOT_PLAIN:
                cur = self.as_num(self.x_var(target))
                o = self.temp()
                if post:
                    return Code(f"({t} := {v}, {o} := {cur}, {local} := {arith_src(op, o, t)})[1]", NUM)
                return Code(f"({t} := {v}, {local} := {arith_src(op, cur, t)})[1]", NUM)
            self.check_settable(name)
            cur = self.as_num(self.x_var(target))
            o = self.temp()
            if name in NOT_PLAIN:
                store = f"rt.set_special({name!r}, {arith_src(op, o, t)})"
            else:
                store = f"store_global({arith_src(op, o, t)}, V, {name!r}, False)"
            return Code(f"({t} := {v}, {o} := {cur}, {store})[{1 if post else 2}]", NUM)
        if k == "index":
            fn = f"augment_item({v}, {self.array(target[1])}, {self.subscript(target[2])}, {op!r}, {post})"
            return Code(fn, NUM)
        if k == "field":
            return Code(f"rt.augment_field({v}, {self.field_index(target)}, {op!r}, {post})", NUM)
        raise AwkFatal("invalid assignment target")

    # ------------------------------------------------------------------ calls

    def call(self, node) -> Code:
        name, args = node[1], node[2]
        if name not in self.funcs:
            raise AwkFatal(f"function `{name}' not defined")
        params, _ = self.funcs[name]
        if len(args) > len(params):
            raise AwkFatal(f"function `{name}' called with more arguments than declared")
        srcs = [self.ref_arg(a[1]) if a[0] == "var" else self.expr(a).src for a in args]
        srcs += ["UNINIT"] * (len(params) - len(args))
        if name not in self.compiled:
            self.compiled[name] = f"f_{name}"
            self.pending_funcs.append(name)
        return Code(f"{self.compiled[name]}({', '.join(srcs)})", lazy=True)



def field_num_src(j: int) -> str:
    """The number in field j+1 of F (0 past NF): values.field_number, inlined (it runs for
    every numeric field of every record)."""
    t, k = f"_fv{j}", f"_sv{j}"
    return (f"({k} if ({k} := small_number({t} := F[{j}])) is not None else float(int({t}))"
            f" if {t}.isdecimal() and len({t}) < 19 else str_to_num({t})) if _nf > {j} else 0.0")


def field_num_lines(j: int, ind: str, adaptive: bool = False) -> list[str]:
    """field_num_src as statements, for a prelude: the same value in `_n<j>`, a long digit
    string's overflow caught rather than its length tested (one call less per field).
    `adaptive` (the record loop): SMALL_NUMBERS is probed only while the batch's sample said
    field j+1 mostly holds small numbers (`_u<j>`, values.small_share): a miss hashes the
    field for nothing."""
    t, n = f"_fv{j}", f"_n{j}"
    probe = (f"not _u{j} or ({n} := small_number({t} := F[{j}])) is None" if adaptive
             else f"({n} := small_number({t} := F[{j}])) is None")
    lines = [f"{ind}if _nf > {j}:"]
    if adaptive:
        lines.append(f"{ind}    {t} = F[{j}]")
        probe = f"not _u{j} or ({n} := small_number({t})) is None"
    return [*lines,
            f"{ind}    if {probe}:",
            f"{ind}        try:",
            f"{ind}            {n} = float(int({t})) if {t}.isdecimal() else str_to_num({t})",
            f"{ind}        except (ValueError, OverflowError):  # past int's digits or float's range",
            f"{ind}            {n} = str_to_num({t})",
            f"{ind}else:",
            f"{ind}    {n} = 0.0"]


def num_test(op: str, a: str, b: str) -> str:
    """a op b for floats, as compare() decides it ((a > b) - (a < b) tested against 0), which
    for NaN differs from Python's operators. == and != read a and b twice: atoms only."""
    if op == ">":
        return f"({a} > {b})"
    if op == "<":
        return f"({a} < {b})"
    if op == ">=":
        return f"(not {a} < {b})"
    if op == "<=":
        return f"(not {a} > {b})"
    if op == "==":
        return f"(not ({a} < {b} or {a} > {b}))"
    return f"({a} < {b} or {a} > {b})"


def arith_src(op: str, a: str, b: str) -> str:
    if op in ("+", "-", "*"):
        return f"({a} {op} {b})"
    return f"{ {'/': 'div', '%': 'mod', '^': 'power', '**': 'power'}[op]}({a}, {b})"
