"""The awk compiler: the parse tree becomes the source of one Python function per BEGIN, main
loop, END and awk function, compiled once with compile(). A rule is then straight-line
Python (no tree walk and no call per node), where

- a global that nothing else can see (analysis.Program.hoistable) lives in a Python local of
  the body using it, stored back to rt.vars when the body ends and around the reads of the
  main input (command-line assignments);
- NR and FNR are Python floats of the main loop when no getline or function touches them;
- the fields of a record are cut once into the local F, fast when FS is one character or
  white space, and a field's number is converted once per record however often it is used;
- `next` is a `continue` of the record loop; awk's break and continue are Python's;
- when nothing in the record loop reads rt (no call, no rt.* in its code), $0 is the local
  `rec`, each record is not stored into rt (the last one is, when the loop ends), FNR is NR
  plus an offset, and a record is cut only as far as the highest constant field read;
- then the record loop has a second, columnar copy: for a batch cut by a one-character or
  white-space FS, one C call (Runtime.columns) cuts every record and converts the fields the
  rules read as numbers, and the loop zips those columns instead.

Values are as in values.py (float, str, StrNum, Uninit, LazyArray, dict); every expression's
code knows whether it is surely a number or a string, so conversions are written only where
needed. Semantics follow the runtime's (runtime.py) and gawk's: left-to-right evaluation,
the right-hand side of an assignment first, a subscript or field index evaluated once.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from kshell.tools.awk import analysis, builtins, helpers
from kshell.tools.awk.analysis import GAWK_ONLY_VARS, NOT_PLAIN, Program, const_field, is_safe, ungroup
from kshell.tools.awk.code import DEAD, NUM, STR, UNKNOWN, Code, Fields, Scope, meet
from kshell.tools.awk.expressions import Expressions, arith_src, field_num_lines, field_num_src
from kshell.tools.awk.helpers import Exit, Next, NextFile
from kshell.tools.awk.values import AwkFatal

if TYPE_CHECKING:
    from collections.abc import Callable

    from kshell.tools.awk.runtime import Runtime

__all__ = ["Exit", "Next", "NextFile", "compile_program", "GAWK_ONLY_VARS"]


class Compiler(Expressions):
    """Writes the program's source; `compile_program` runs it once to get the functions."""

    def __init__(self, rt: Runtime, funcs: dict, prog: Program, split: int = 0) -> None:
        self.rt = rt
        self.funcs = funcs
        self.prog = prog
        self.lines: list[str] = []
        self.depth = 1
        self.regexes: list[str] = []  # regex sources, R0, R1, ...
        self.consts: list[object] = []  # non-literal constants, K0, K1, ...
        self.compiled: dict[str, str] = {}  # awk function -> Python name, once compiled
        self.pending_funcs: list[str] = []
        self.scope = Scope("begin", {}, {}, {})
        self.fields = UNKNOWN
        self.pure = False
        self.want_f = False
        self.want_nums: set[int] = set()
        self.inline = False
        self.floats: frozenset[str] = frozenset()
        self.split = split
        self.heights: dict[int, int] = {}
        self.split_defs: list[str] = []

    def emit(self, line: str) -> None:
        indent = "    " * self.depth
        if self.split_defs:  # the functions this line calls come first
            self.lines.extend(indent + d for d in self.split_defs)
            self.split_defs.clear()
        self.lines.append(indent + line)

    # ------------------------------------------------------------------ the program

    def program(self, begins: list, ends: list, rules: list) -> str:
        """The factory's source: `_program(rt, R, K)` returns the functions (begin, main, end)
        given the runtime, the compiled regexes (R0, R1, ...) and the other constants."""
        body_begin = self.body_function("_begin", "begin", begins)
        body_end = self.body_function("_end", "end", ends)
        body_main = self.main_function(rules)
        while self.pending_funcs:
            self.function(self.pending_funcs.pop())
        out = ["def _program(rt, R, K):",
               "    V = rt.vars",
               "    P = rt.pending",
               "    drain = rt.drain",
               "    checkpoint = rt.checkpoint"]
        out += [f"    R{i} = R[{i}]" for i in range(len(self.regexes))]
        out += [f"    K{i} = K[{i}]" for i in range(len(self.consts))]
        out += self.lines
        out.append(f"    return {body_begin}, {body_main}, {body_end}")
        return "\n".join(out) + "\n"

    def start_function(self, header: str, scope: Scope) -> None:
        self.scope = scope
        self.fields = UNKNOWN
        self.floats = frozenset()
        self.depth = 1
        self.emit(header)
        self.depth = 2

    def hoist(self, body_uses: analysis.Uses) -> dict[str, str]:
        return {n: f"g_{n}" for n in sorted(body_uses.names()) if self.prog.hoistable(n)}

    @staticmethod
    def stable(scope: Scope, nodes: list) -> frozenset[str]:
        """The hoisted globals that `nodes` never assign anything but a number (Scope.stable)."""
        strings: set[str] = set()
        for n in nodes:
            strings |= analysis.string_targets(n)
        return frozenset(scope.hoisted) - strings

    def load_hoisted(self) -> None:
        for name, local in self.scope.hoisted.items():
            self.emit(f"{local} = V[{name!r}]")

    def store_hoisted(self) -> None:
        for name, local in self.scope.hoisted.items():
            self.emit(f"V[{name!r}] = {local}")
        if self.scope.nr_local:
            self.emit("V['NR'] = NR")
            self.emit("V['FNR'] = FNR")

    def body_function(self, name: str, kind: str, blocks: list) -> str | None:
        """BEGIN or END: their blocks in order, in one function (None when there are none)."""
        if not blocks:
            return None
        scope = Scope(kind, {}, self.hoist(analysis.uses(blocks)), {})
        scope.stable = self.stable(scope, blocks)
        self.start_function(f"def {name}():", scope)
        self.load_hoisted()
        if scope.hoisted:
            self.emit("try:")
            self.depth += 1
        self.emit("pass")
        for b in blocks:
            self.stmt(b)
        if scope.hoisted:
            self.depth -= 1
            self.emit("finally:")
            self.depth += 1
            self.store_hoisted()
        return name

    def main_function(self, rules: list) -> str:
        """The loop over the records: batches of records cut from the input at once, each
        record run through the rules."""
        prog = self.prog
        a = prog.all_uses
        rule_nodes = [p for r in rules for p in r if p is not None]
        rule_uses = analysis.uses(rule_nodes)
        nr_local = not a.getline_any and not ({"NR", "FNR"} & (a.assigned | a.bare | prog.func_uses.names()))
        ro = {} if a.getline_main else {
            n: f"s_{n}" for n in ("OFS", "ORS", "CONVFMT", "OFMT", "SUBSEP") if n not in a.assigned}
        single = a.getline_main or "RS" in a.assigned  # records must be cut one at a time
        fast_split = "FS" not in a.assigned
        scope = Scope("main", {}, self.hoist(rule_uses), ro, nr_local, fast_split)
        scope.rec_same = not any(analysis.changes_record(r) for r in rule_nodes)
        scope.stable = self.stable(scope, rule_nodes)
        scope.sampled = fast_split and not single  # a batch of one record: no sample
        self.start_function("def _main():", scope)
        self.emit("rec = _fd = None")
        ranges = [i for i, (pat, _) in enumerate(rules) if pat is not None and pat[0] == "range"]
        for i in ranges:
            self.emit(f"_rg{i} = False")
        self.load_hoisted()
        if nr_local:
            self.emit("NR = V['NR']")
            self.emit("FNR = V['FNR']")
        self.emit("try:")
        self.depth += 1
        self.emit("while True:")
        self.depth += 1
        self.store_hoisted()
        self.emit(f"_batch = rt.next_batch({single})")
        self.emit("if _batch is None:")
        self.emit("    break")
        self.load_hoisted()
        if nr_local:
            self.emit("NR = V['NR']")
            self.emit("FNR = V['FNR']")
            self.emit("if type(NR) is not float:")  # it is incremented before any rule reads it
            self.emit("    NR = to_num(NR)")
            self.emit("if type(FNR) is not float:")
            self.emit("    FNR = to_num(FNR)")
        for name, local in ro.items():
            self.emit(f"{local} = V[{name!r}]")
        if fast_split:
            self.emit("_sep = rt.char_sep()")
        fd_at = len(self.lines)
        self.emit(_LOOP)
        self.depth += 1
        body_at = len(self.lines)
        if nr_local:
            self.emit("NR += 1.0")
            self.emit("FNR += 1.0")
        else:
            self.emit("V['NR'] = to_num(V['NR']) + 1.0")
            self.emit("V['FNR'] = to_num(V['FNR']) + 1.0")
        self.emit("rt.record = rec")
        self.emit("rt.fields = None")
        catch = any(self.may_jump(p) or self.may_jump(act) for p, act in rules)
        if catch:
            self.emit("try:")
            self.depth += 1
        self.emit("pass")
        scope.in_records = True
        self.fields = Fields("fresh")
        self.floats = frozenset()
        for i, (pattern, action) in enumerate(rules):
            self.rule(i, pattern, action)
        scope.in_records = False
        if catch:
            self.depth -= 1
            self.emit("except Next:")
            self.emit("    pass")
            self.emit("except NextFile:")
            self.emit("    rt.end_file()")
            self.emit("    break")
        self.depth -= 1
        # the record loop's body is lines[body_at:]: trimmed first, then lines put before it
        rt_free = self.rt_free(body_at, not rule_uses.calls)
        cuts = self.partial_split(body_at) if rt_free else 0
        if cuts and scope.sampled:
            self.columnar(fd_at, cuts)
        fnr_free = nr_local and self.count_free(body_at, fd_at)
        if scope.sampled:
            loop_at = next(i for i in range(fd_at, len(self.lines)) if self.lines[i].strip() == _LOOP)
            self.sample_fields(loop_at, sorted(scope.num_fields))
        self.depth -= 2
        self.emit("finally:")
        self.depth += 1
        if fnr_free:
            self.emit("if _fd is not None:")
            self.emit("    FNR = NR + _fd")
        if rt_free:
            self.emit("if rec is not None:")
            self.emit("    rt.record = rec")
            self.emit("    rt.fields = None")
        self.store_hoisted()
        self.emit("pass")
        return "_main"

    # the record loop's lines that keep rt's record and FNR current for anything reading them
    _RT_STORES = ("rt.record = rec", "rt.fields = None", "rt.fields = F")
    # reads of rt that leave the record and the fields alone: FS; the main input's end
    # (nextfile's handler, which then leaves the batch)
    _RT_OTHER = ("F = rt.cut(rec)", "rt.end_file()")

    def rt_free(self, body_at: int, no_calls: bool) -> bool:
        """Drop the record loop's stores of each record and its fields into rt when nothing in
        the loop reads rt (every field and $0 read is of the locals F and rec): `_main`'s
        `finally` stores the last record instead, for END and whatever runs after."""
        body = self.lines[body_at:]
        kept = [line for line in body if line.strip() not in self._RT_STORES]
        if not no_calls or any(_RT.search(line) for line in kept if line.strip() not in self._RT_OTHER):
            return False
        self.lines[body_at:] = kept
        return True

    def partial_split(self, body_at: int) -> int:
        """When the rules read only fields 1..J+1 by constant index (never NF, $NF, a field
        by variable, nor F as a whole; F is local, rt never sees it), cut each record at most
        J+1 times: F[0..J] are those fields, a last element holds the rest, and `_nf > j`
        still tells whether field j+1 exists for every j <= J. Returns J+1 (0: not done)."""
        body = self.lines[body_at:]
        top = -1
        for line in body:
            text = line.strip()
            if text in _SPLIT_LINES:
                continue
            top = max([top, *map(int, _F_INDEX.findall(text))])
            if _F_OTHER.search(_F_ALLOWED.sub("", text)):
                return 0
        if top < 0:
            return 0
        cuts = top + 1
        partial = {a.strip(): b.strip() for a, b in zip(cut_lines(""), cut_lines("", cuts))}
        for i in range(body_at, len(self.lines)):
            line = self.lines[i]
            text = line.lstrip()
            self.lines[i] = line[: len(line) - len(text)] + partial.get(text, text)
        return cuts

    def columnar(self, for_at: int, cuts: int) -> None:
        """A second copy of the record loop, run for a batch when rt.columns cuts it (a
        one-character or white-space FS, not a short batch): one C call (native.awk_columns)
        gives each record's fields as the rules read them, numbers and texts, and the loop
        zips them instead of cutting and converting record by record. `for_at`: the loop's
        `for`, its body after it (partial_split done: fields read only as F[j], `_nf > j`)."""
        body = self.lines[for_at + 1 :]
        got = _columns_body(body, cuts)
        if got is None:
            return
        col_body, nums, texts, want_nf = got
        head = self.lines[for_at]
        ind = head[: len(head) - len(head.lstrip())]
        names = ["rec", *(f"_n{j}" for j in nums), *(f"_s{j}" for j in texts), *(["_nf"] if want_nf else [])]
        self.lines[for_at:] = [
            f"{ind}_cols = rt.columns(_batch, _sep, {cuts}, {tuple(nums)}, {tuple(texts)}, {want_nf})",
            f"{ind}if _cols is not None:",
            f"{ind}    for {', '.join(names)} in zip(*_cols):",
            *(f"    {line}" for line in col_body),
            f"{ind}else:",
            f"    {head}",
            *(f"    {line}" for line in body),
        ]

    def sample_fields(self, for_at: int, fields: list[int]) -> None:
        """Before each batch's loop: which numeric fields to look up in SMALL_NUMBERS first
        (field_num_lines' `adaptive`), from a sample of the batch's records."""
        ind = self.lines[for_at][: len(self.lines[for_at]) - len(self.lines[for_at].lstrip())]
        self.lines[for_at:for_at] = [f"{ind}_u{j} = small_share(_batch, _sep, {j})" for j in fields]

    def count_free(self, body_at: int, for_at: int) -> bool:
        """Drop the record loop's FNR += 1.0 when nothing in it reads FNR: it is NR plus the
        difference `_fd` (constant within a batch, which is one file's), set back from it
        after the batch and in `finally`."""
        body = self.lines[body_at:]  # the `FNR += 1.0` of each copy of the loop (columnar)
        if any(_FNR.search(line) and line.strip() != "FNR += 1.0" for line in body):
            return False
        self.lines[body_at:] = [line for line in body if line.strip() != "FNR += 1.0"]
        ind = self.lines[for_at][: len(self.lines[for_at]) - len(self.lines[for_at].lstrip())]
        self.lines.insert(for_at, f"{ind}_fd = FNR - NR")
        self.emit("FNR = NR + _fd")
        self.emit("_fd = None")
        return True

    @staticmethod
    def may_jump(node) -> bool:
        """Whether running `node` may raise Next or NextFile: it holds a next (one in a loop
        cannot be a `continue`), a nextfile or a call (a function may say next)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if not isinstance(n, tuple) or not n:
                continue
            if n[0] in ("call", "next", "nextfile"):
                return True
            for part in n[1:]:
                if isinstance(part, tuple):
                    stack.append(part)
                elif isinstance(part, list):
                    stack.extend(p for p in part if isinstance(p, tuple))
        return False

    def rule(self, i: int, pattern, action) -> None:
        if pattern is not None and pattern[0] == "range":
            self.range_rule(i, pattern[1], pattern[2], action)
            return
        if pattern is None:
            self.action(action)
            return
        test = self.condition_prelude(pattern)
        before, floats = self.fields, self.floats
        self.emit(f"if {test}:")
        self.depth += 1
        self.emit("pass")
        self.action(action)
        self.depth -= 1
        self.join(before, floats)

    def range_rule(self, i: int, start, stop, action) -> None:
        """`start, stop`: while active the stop test runs first (the record still matches);
        otherwise a start that matches also runs the stop test on the same record."""
        matched = self.temp("_m")
        self.fields = UNKNOWN
        self.floats = frozenset()  # its pieces are compiled in turn but run in branches
        self.emit(f"if _rg{i}:")
        self.depth += 1
        self.emit(f"{matched} = True")
        self.emit(f"if {self.condition_prelude(stop)}:")
        self.emit(f"    _rg{i} = False")
        self.depth -= 1
        self.emit("else:")
        self.depth += 1
        self.fields = UNKNOWN
        self.floats = frozenset()
        self.emit(f"{matched} = {self.condition_prelude(start)}")
        self.emit(f"if {matched}:")
        self.depth += 1
        self.emit(f"_rg{i} = not {self.condition_prelude(stop)}")
        self.depth -= 2
        self.fields = UNKNOWN
        self.floats = frozenset()
        self.emit(f"if {matched}:")
        self.depth += 1
        self.emit("pass")
        self.action(action)
        self.depth -= 1
        self.fields = UNKNOWN
        self.floats = frozenset()

    def action(self, action) -> None:
        if action is None:
            self.emit(f"P.append({self.record()} + {self.special('ORS')})")
            self.emit("if len(P) >= 512:")
            self.emit("    drain()")
        else:
            self.stmt(action)

    def function(self, name: str) -> None:
        params, body = self.funcs[name]
        locals_ = {p: f"p_{p}" for p in params}
        scope = Scope("func", locals_, {}, {})
        self.start_function(f"def {self.compiled[name]}({', '.join(locals_.values())}):", scope)
        for p in self.bare_params(body, params):
            self.emit(f"def _store_{p}(d):")
            self.emit(f"    nonlocal p_{p}")
            self.emit(f"    p_{p} = d")
        self.emit("rt.depth += 1")
        self.emit("try:")
        self.depth += 1
        self.emit("if rt.depth > 1000:")
        self.emit("    raise AwkFatal('function call nesting too deep')")
        self.stmt(body)
        self.depth -= 1
        self.emit("finally:")
        self.emit("    rt.depth -= 1")
        self.emit("return UNINIT")

    @staticmethod
    def bare_params(body, params: list[str]) -> list[str]:
        """The parameters passed bare to calls in `body` (a callee may make them arrays)."""
        found = analysis.uses([body]).bare
        return [p for p in params if p in found]

    # ------------------------------------------------------------------ statements

    def stmt(self, node) -> None:
        k = node[0]
        if k == "block":
            for s in node[1]:
                self.stmt(s)
            return
        if k == "if":
            test = self.condition_prelude(node[1])
            self.emit(f"if {test}:")
            before, floats = self.fields, self.floats
            self.depth += 1
            self.emit("pass")
            self.stmt(node[2])
            self.depth -= 1
            after, after_floats = self.fields, self.floats
            self.fields, self.floats = before, floats
            if node[3] is not None:
                self.emit("else:")
                self.depth += 1
                self.emit("pass")
                self.stmt(node[3])
                self.depth -= 1
            self.join(after, after_floats)
            return
        if k in ("while", "do", "for", "forin"):
            self.loop(node)
            return
        if k in ("break", "continue"):
            # outside a loop they are errors that end the program, as before
            self.emit(k if self.scope.loops else f"raise {k.capitalize()}()")
            self.fields = DEAD
            return
        if k == "next":
            scope = self.scope
            self.emit("continue" if scope.in_records and not scope.loops else "raise Next()")
            self.fields = DEAD
            return
        if k == "nextfile":
            self.emit("raise NextFile()")
            self.fields = DEAD
            return
        if k in ("exit", "return"):
            self.simple(node, lambda: self.exit_return(node))
            self.fields = DEAD
            return
        self.simple(node, lambda: self.simple_body(node))

    def join(self, other: Fields, other_floats: frozenset[str]) -> None:
        """Where two paths meet: what both know (a path never taken knows everything)."""
        if self.fields.state == "dead":
            self.floats = other_floats
        elif other.state != "dead":
            self.floats &= other_floats
        self.fields = meet(self.fields, other)

    def simple(self, node, body: Callable[[], None]) -> None:
        """Compile a statement without inner statements: its field reads come from F when it
        cannot change the record (F made valid by a prelude written before it)."""
        self.floats -= analysis.string_targets(node)
        pure = not analysis.changes_record(node)
        mark = len(self.lines)
        saved = (self.pure, self.want_f, self.want_nums)
        self.pure, self.want_f, self.want_nums = pure, False, set()
        try:
            body()
            self.insert_prelude(mark)
        finally:
            wanted_f = self.want_f
            self.pure, self.want_f, self.want_nums = saved
        if not pure:
            self.fields = UNKNOWN
        elif wanted_f and self.fields.state != "valid":
            self.fields = Fields("valid")

    def condition_prelude(self, node) -> str:
        """A test (if, a pattern) as a Python bool, its prelude written first."""
        out: list[str] = []
        self.simple(node, lambda: out.append(self.cond(node)))
        return out[0]

    def insert_prelude(self, mark: int) -> None:
        """Before the statement at lines[mark:]: make F valid and compute the field numbers
        the statement wants (a pure statement only)."""
        if not self.pure or not (self.want_f or self.want_nums):
            return
        pre: list[str] = []
        ind = "    " * self.depth
        state = self.fields
        if state.state == "fresh" and self.scope.fast_split:
            pre += cut_lines(ind)
            state = Fields("valid")
        elif state.state == "fresh":
            pre += [f"{ind}F = rt.split()",
                    f"{ind}_nf = len(F)"]
            state = Fields("valid")
        elif state.state != "valid":
            pre += [f"{ind}F = rt.fields",
                    f"{ind}if F is None:",
                    f"{ind}    F = rt.split()",
                    f"{ind}_nf = len(F)"]
            state = Fields("valid")
        for j in sorted(self.want_nums - state.nums):
            adaptive = self.scope.in_records and self.scope.sampled
            if adaptive:
                self.scope.num_fields.add(j)
            pre += field_num_lines(j, ind, adaptive)
        self.fields = Fields("valid", state.nums | frozenset(self.want_nums))
        self.lines[mark:mark] = pre

    def simple_body(self, node) -> None:
        k = node[0]
        if k == "expr":
            self.expr_stmt(node[1])
        elif k in ("print", "printf"):
            self.print_(node)
        elif k == "delete":
            arr = self.array(node[1])
            if node[2] is None:
                self.emit(f"{arr}.clear()")
            else:
                key = self.subscript(node[2])
                self.emit(f"{arr}.pop({key}, None)")
        else:
            raise AwkFatal(f"{k} not supported")

    def exit_return(self, node) -> None:
        if node[0] == "exit":
            if node[1] is None:
                self.emit("raise Exit(None)")
            else:
                self.emit(f"raise Exit(int({self.num(node[1])}) & 0xFF)")
            return
        value = self.expr(node[1]).src if node[1] is not None else "UNINIT"
        if self.scope.kind == "func":
            self.emit(f"return {value}")
        else:
            self.emit(f"raise Return({value})")

    def loop(self, node) -> None:
        k = node[0]
        scope = self.scope
        entry = self.fields
        pure = not analysis.changes_record(node)
        head = entry if pure and entry.state == "valid" else UNKNOWN
        self.fields = head
        if k == "for" and node[1] is not None:  # the init runs once, before: it counts
            self.fields = UNKNOWN if not pure else entry
            self.stmt(node[1])
            self.fields = head
        # a variable the loop assigns only numbers stays a number if it was one
        floats = self.floats = self.floats - analysis.string_targets(node)
        scope.loops += 1
        n = self.temp("_c")
        self.emit(f"{n} = 0")
        if k == "forin":
            arr = self.temp("_a")
            self.emit(f"{arr} = {self.array(node[2])}")
            key = self.temp("_k")
            self.emit(f"for {key} in list({arr}):")
            self.depth += 1
            self.count(n)
            self.emit(f"if {key} not in {arr}:")
            self.emit("    continue")
            self.assign_stmt(("var", node[1]), Code(key, STR, safe=True))
            self.stmt(node[3])
        elif k == "while":
            self.emit(f"while {self.inline_cond(node[1])}:")
            self.depth += 1
            self.count(n)
            self.stmt(node[2])
        elif k == "do":
            first = self.temp("_f")
            self.emit(f"{first} = True")
            self.emit(f"while {first} or {self.inline_cond(node[2])}:")
            self.depth += 1
            self.emit(f"{first} = False")
            self.count(n)
            self.stmt(node[1])
        else:
            _, _, cond, step, body = node
            test = self.inline_cond(cond) if cond is not None else "True"
            if step is not None and analysis.has_loop_control(body, ("continue",)):
                first = self.temp("_f")
                self.emit(f"{first} = True")
                self.emit("while True:")
                self.depth += 1
                self.emit(f"if not {first}:")
                self.depth += 1
                self.stmt(step)
                self.fields, self.floats = head, floats
                self.depth -= 1
                self.emit(f"{first} = False")
                self.emit(f"if not ({test}):")
                self.emit("    break")
                self.count(n)
                self.stmt(body)
            else:
                self.emit(f"while {test}:")
                self.depth += 1
                self.count(n)
                self.stmt(body)
                if step is not None:
                    self.fields, self.floats = head, floats
                    self.stmt(step)
        self.depth -= 1
        scope.loops -= 1
        self.fields, self.floats = head, floats

    def count(self, n: str) -> None:
        """Every 1024th iteration: Ctrl-C, `timeout` and the wall time (runtime.checkpoint)."""
        self.emit(f"{n} += 1")
        self.emit(f"if not {n} & 1023:")
        self.emit("    checkpoint()")

    def inline_cond(self, node) -> str:
        """A loop's test, evaluated in the loop's own line: no prelude; F only if the loop
        head keeps it valid."""
        saved = (self.pure, self.want_f, self.want_nums, self.inline)
        self.pure = self.fields.state == "valid" and not analysis.changes_record(node)
        self.want_f, self.want_nums, self.inline = False, set(), True
        try:
            return self.cond(node)
        finally:
            self.pure, self.want_f, self.want_nums, self.inline = saved

    def expr_stmt(self, node) -> None:
        while node[0] == "group":
            node = node[1]
        k = node[0]
        if k == "assign":
            op, target, value = node[1], node[2], node[3]
            if op == "=":
                self.assign_stmt(target, self.expr(value), plain=True)
            else:
                self.augment_stmt(op[:-1], target, value)
            return
        if k in ("preinc", "postinc"):
            self.augment_stmt("+", node[2], ("num", node[1]))
            return
        code = self.expr(node)
        self.emit(code.src if not code.safe else "pass")

    # ------------------------------------------------------------------ printing

    def print_(self, node) -> None:
        kind, args, dest = node
        if kind == "printf":
            text = self.formatted(args)
        elif not args:
            text = f"{self.record()} + {self.special('ORS')}"
        else:
            parts = [self.out_str(a) for a in args]
            if len(parts) == 1:
                text = f"{parts[0]} + {self.special('ORS')}"
            elif len(parts) <= 4:
                ofs = self.special("OFS")
                if ofs.startswith("V["):
                    t = self.temp()
                    text = f"{f' + {t} + '.join(parts)} + {self.special('ORS')}"
                    text = f"({t} := {ofs}, {text})[1]"
                else:
                    text = f"{f' + {ofs} + '.join(parts)} + {self.special('ORS')}"
            else:
                text = f"{self.special('OFS')}.join(({', '.join(parts)})) + {self.special('ORS')}"
        if dest is None:
            self.emit(f"P.append({text})")
            self.emit("if len(P) >= 512:")
            self.emit("    drain()")
            return
        t = self.temp()
        self.emit(f"{t} = {text}")  # the text first, then the destination's name
        self.emit(f"rt.output({dest[0]!r}, {self.str_(dest[1])}).write({t})")

    def out_str(self, node) -> str:
        """An expression as print writes it (a number through OFMT)."""
        j = const_field(node)
        if j is not None:
            return self.text_of_field(j)
        return self.as_str(self.expr(node), "OFMT")

    # ------------------------------------------------------------------ assignments

    def assign_stmt(self, target, value: Code, plain: bool = False) -> None:
        """`target = value` as statements (value first, then the target's parts)."""
        if plain and value.lazy:
            value = Code(f"unlazy({value.src})")
        k = target[0]
        while k == "group":
            target = target[1]
            k = target[0]
        if k == "var":
            name = target[1]
            scope = self.scope
            local = scope.params.get(name)
            if local is not None:
                t = self.temp()
                self.emit(f"{t} = {value.src}")
                self.emit(f"if type({local}) is dict:")
                self.emit(f"    scalar_fatal({name!r})")
                self.emit(f"{local} = {t}")
                return
            self.check_settable(name)
            if name in NOT_PLAIN:
                self.emit(f"rt.set_special({name!r}, {value.src})")
                return
            local = scope.hoisted.get(name)
            if local is not None:
                self.emit(f"{local} = {value.src}")
                self.floats = self.floats | {name} if value.kind == NUM else self.floats - {name}
                return
            if self.may_be_array(name):
                t = self.temp()
                self.emit(f"{t} = {value.src}")
                self.emit(f"if type(V[{name!r}]) is dict:")
                self.emit(f"    scalar_fatal({name!r})")
                self.emit(f"V[{name!r}] = {t}")
                return
            self.emit(f"V[{name!r}] = {value.src}")
            return
        if k == "index":
            t = self.temp()
            self.emit(f"{t} = {value.src}")
            self.emit(f"{self.array(target[1])}[{self.subscript(target[2])}] = {t}")
            return
        if k == "field":
            self.emit(f"rt.store_field({value.src}, {self.field_index(target)})")
            return
        raise AwkFatal("invalid assignment target")

    def augment_stmt(self, op: str, target, value_node) -> None:
        """`target op= value` (and ++, --) as statements: the value first, then the target's
        subscript or index once; a missing element counts as 0."""
        while target[0] == "group":
            target = target[1]
        k = target[0]
        v = self.num(value_node)
        plain = ungroup(value_node)
        if not (is_safe(plain) or plain[0] == "var" and plain[1] in self.scope.hoisted):
            t = self.temp()
            self.emit(f"{t} = {v}")
            v = t
        if k == "var":
            name = target[1]
            scope = self.scope
            local = scope.params.get(name) or scope.hoisted.get(name)
            if local is not None and name not in NOT_PLAIN:
                if name in scope.stable and name not in self.floats and op in ("+", "-", "*"):
                    # a str (StrNum, Uninit) or dict fails float's operator: TypeError
                    self.emit("try:")
                    self.emit(f"    {local} = {local} {op} {v}")
                    self.emit("except TypeError:")
                    self.emit(f"    {local} = to_num({local}) {op} {v}")
                else:
                    cur = self.as_num(self.x_var(target))
                    self.emit(f"{local} = {arith_src(op, cur, v)}")
                if name in scope.hoisted:
                    self.floats |= {name}
                return
            if scope.nr_local and name in ("NR", "FNR"):  # not assigned: never happens
                raise AssertionError(name)
            self.check_settable(name)
            cur = self.as_num(self.x_var(target))  # an array fails here, before any store
            if name in NOT_PLAIN:
                self.emit(f"rt.set_special({name!r}, {arith_src(op, cur, v)})")
            else:
                self.emit(f"V[{name!r}] = {arith_src(op, cur, v)}")
            return
        if k == "index":
            a, key, c = self.temp("_a"), self.temp("_k"), self.temp()
            self.emit(f"{a} = {self.array(target[1])}")
            self.emit(f"{key} = {self.subscript(target[2])}")
            self.emit(f"{c} = {a}.get({key}, 0.0)")  # a missing element counts as 0
            cur = f"({c} if type({c}) is float else to_num({c}))"
            self.emit(f"{a}[{key}] = {arith_src(op, cur, v)}")
            return
        if k == "field":
            self.emit(f"rt.augment_field({v}, {self.field_index(target)}, {op!r})")
            return
        raise AwkFatal("invalid assignment target")


def cut_lines(ind: str, cuts: int = 0) -> list[str]:
    """The prelude that cuts a fresh record of the main loop into F, by the batch's `_sep`
    (Runtime.char_sep): at most `cuts` times when cuts > 0 (partial_split)."""
    most = f", {cuts}" if cuts else ""
    return [f"{ind}if _sep:",
            f"{ind}    F = rec.split(_sep{most}) if rec else []",
            f"{ind}elif _sep is None or not rec.isprintable():",
            f"{ind}    F = rt.cut(rec)",
            f"{ind}else:",
            f"{ind}    F = rec.split(None{most})" if cuts else f"{ind}    F = rec.split()",
            f"{ind}rt.fields = F",
            f"{ind}_nf = len(F)"]


def _columns_body(body: list[str], cuts: int) -> tuple[list[str], list[int], list[int], bool] | None:
    """The record loop's body for Compiler.columnar: its cut prelude and field number preludes
    (field_num_lines) dropped, since the zip binds `_n<j>` (field j+1's number), `_s<j>` (its
    text) and `_nf` (min(NF, cuts + 1)) for each record. Returns (the body, the j of the
    numbers, of the texts, whether `_nf` is read), or None when some line reads the fields
    in a way this does not rewrite (then the loop has no columnar copy)."""
    cut = [line.strip() for line in cut_lines("", cuts) if line.strip() not in Compiler._RT_STORES]
    nums: set[int] = set()
    texts: set[int] = set()
    out: list[str] = []
    i = 0
    while i < len(body):
        text = body[i].strip()
        if text == cut[0]:
            if [line.strip() for line in body[i : i + len(cut)]] != cut:
                return None
            i += len(cut)
            continue
        m = _NF_TEST.fullmatch(text)
        if m:
            j = int(m.group(1))
            prelude = [line.strip() for line in field_num_lines(j, "", True)]
            if [line.strip() for line in body[i : i + len(prelude)]] == prelude:
                nums.add(j)
                i += len(prelude)
                continue
        line = body[i]
        if "_sv" in line:
            for j in range(cuts):
                inline = f"({field_num_src(j)})"
                if inline in line:
                    nums.add(j)
                    line = line.replace(inline, f"_n{j}")
        line = _F_TEXT.sub(lambda m: f"_s{m.group(1) or 0}", line)
        line = _F_ITEM.sub(lambda m: f"_s{m.group(1)}", line).replace("if F else", "if _nf else")
        texts.update(int(j) for j in _S_NAME.findall(line))
        if _F_OTHER_NAME.search(line) or not {int(j) for j in _N_NAME.findall(line)} <= nums:
            return None
        out.append(line)
        i += 1
    want_nf = any(_NF_NAME.search(line) for line in out)
    return out, sorted(nums), sorted(texts), want_nf


NAMESPACE = {**helpers.NAMESPACE, **builtins.NAMESPACE}
_RT = re.compile(r"\brt\b")
_LOOP = "for rec in _batch:"  # the record loop's head (the general copy's, with columnar)
# partial_split: the prelude's lines, the reads of F and _nf it allows, and any other use
_SPLIT_LINES = frozenset(line.strip() for line in cut_lines(""))
_F_INDEX = re.compile(r"\bF\[(\d+)\]")
_F_ALLOWED = re.compile(r"\bF\[\d+\]|\bif F else\b|\b_nf > \d+")
_F_OTHER = re.compile(r"\bF\b|\b_nf\b")
_FNR = re.compile(r"\bFNR\b")
# _columns_body: a field number prelude's test, a field's text, any other read of F, the locals
_NF_TEST = re.compile(r"if _nf > (\d+):")
_F_TEXT = re.compile(r"\(F\[(\d+)\] if _nf > \1 else ''\)|\(F\[0\] if F else ''\)")
_F_ITEM = re.compile(r"\bF\[(\d+)\]")
_F_OTHER_NAME = re.compile(r"\bF\b|\b_fv\d|\b_sv\d")
_S_NAME = re.compile(r"\b_s(\d+)\b")
_N_NAME = re.compile(r"\b_n(\d+)\b")
_NF_NAME = re.compile(r"\b_nf\b")
SPLIT_HEIGHT = 8  # expressions deeper than the parser takes: cut every 8 levels (split_out)


@lru_cache(maxsize=64)
def _code(source: str):
    return compile(source, "<awk program>", "exec")


def compile_program(rt: Runtime, begins: list, ends: list, rules: list, funcs: dict):
    """(begin, main, end): the program's functions (begin/end None when absent). Every global
    it names is given its uninitialized value first, so that the code reads rt.vars[name]."""
    prog = analysis.analyse(begins, ends, rules, funcs)
    c = Compiler(rt, funcs, prog)
    source = c.program(begins, ends, rules)
    try:
        code = _code(source)
    except (SyntaxError, RecursionError, MemoryError) as e:
        if isinstance(e, SyntaxError) and "nested" not in str(e):
            raise
        c = Compiler(rt, funcs, prog, split=SPLIT_HEIGHT)
        code = _code(c.program(begins, ends, rules))
    for name in prog.all_uses.names():
        rt.vars.setdefault(name, helpers.UNINIT)
    ns = dict(NAMESPACE)
    exec(code, ns)
    regexes = [rt.regex(src) for src in c.regexes]
    return ns["_program"](rt, regexes, c.consts)
