"""bc's machine: variables, arrays and functions with bc's dynamic scoping (a function's
parameters and autos shadow the caller's names until it returns), statements and expressions
over exact decimals, and output with GNU bc's long-number line breaks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.tools.system.bc import numbers as bcnum
from kshell.tools.system.bc.numbers import BcError, Num
from kshell.tools.system.bc.parser import Func, Parser, Quit, SyntaxErr, tokenize

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: Num) -> None:
        super().__init__()
        self.value = value


_ESCAPES = {"n": "\n", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "r": "\r", "q": '"', "\\": "\\", "e": "\\"}


def escapes(text: str) -> str:
    """GNU bc's print escapes (\\n \\t \\q ...)."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class Machine:
    """bc's state and its evaluation."""

    def __init__(self, sh: ToolContext) -> None:
        self.sh = sh
        self.vars: dict[str, Num] = {}
        self.arrays: dict[str, dict[int, Num]] = {}
        self.funcs: dict[str, Func] = {}
        self.scale = 0
        self.ibase = 10
        self.obase = 10
        self.last = bcnum.ZERO
        self.func_name = "(main)"
        self.out: list[str] = []
        self.col = 0  # the output column, for the line breaks in long numbers
        width = sh.exported_env().get("BC_LINE_LENGTH", "70")
        self.width = int(width) if width.isdigit() else 70

    def warn(self, message: str) -> None:
        self.flush()
        self.sh.write_err(f"Runtime warning (func={self.func_name}, adr=0): {message}\n")

    def flush(self) -> None:
        if self.out:
            self.sh.out("".join(self.out))
            self.out.clear()

    def show(self, value: Num) -> None:
        """A number, broken as GNU bc breaks it: a backslash-newline once width-2 characters are
        on the line and more follow (BC_LINE_LENGTH, default 70; 0 never breaks)."""
        text = bcnum.format_num(value, self.obase)
        if self.width < 3:
            self.text(text)
            return
        limit = self.width - 2
        for c in text:
            if self.col == limit:
                self.out.append("\\\n")
                self.col = 0
            self.out.append(c)
            self.col += 1

    def text(self, text: str) -> None:
        self.out.append(text)
        cut = text.rfind("\n")
        self.col = len(text) - cut - 1 if cut >= 0 else self.col + len(text)

    # ---------------------------------------------------------------- running source
    def source(self, text: str, where: str) -> bool:
        """Run a program text line by line; False once quit or halt ended bc."""
        parser = Parser(tokenize(text), funcs=self.funcs)
        while True:
            try:
                stmts = parser.chunk()
            except Quit:
                self.flush()
                return False
            except SyntaxErr as e:
                self.flush()
                self.sh.write_err(f"({where}) {e.line}: syntax error\n")
                parser.skip_line()
                continue
            if stmts is None:
                self.flush()
                return True
            try:
                self.run(stmts)
            except Quit:
                self.flush()
                return False
            except BcError as e:
                self.flush()
                self.sh.write_err(f"Runtime error (func={e.func or '(main)'}, adr=0): {e}\n")
            except (_Break, _Continue, _Return):
                pass
            self.flush()

    # ---------------------------------------------------------------- statements
    def run(self, stmts: list) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s) -> None:
        kind = s[0]
        if kind == "expr":
            value = self.eval(s[1])
            if s[1][0] != "assign":  # a bare assignment prints nothing
                self.show(value)
                self.text("\n")
                self.last = value
        elif kind == "str":
            self.text(s[1])
        elif kind == "print":
            for what, item in s[1]:
                if what == "s":
                    self.text(escapes(item))
                else:
                    value = self.eval(item)
                    self.show(value)
                    self.last = value
        elif kind == "block":
            self.run(s[1])
        elif kind == "if":
            if self.eval(s[1]).truth():
                self.stmt(s[2])
            elif s[3] is not None:
                self.stmt(s[3])
        elif kind == "while":
            while self.eval(s[1]).truth():
                try:
                    self.stmt(s[2])
                except _Break:
                    break
                except _Continue:
                    continue
        elif kind == "for":
            if s[1] is not None:
                self.eval(s[1])
            while s[2] is None or self.eval(s[2]).truth():
                try:
                    self.stmt(s[4])
                except _Break:
                    break
                except _Continue:
                    pass
                if s[3] is not None:
                    self.eval(s[3])
        elif kind == "break":
            raise _Break
        elif kind == "continue":
            raise _Continue
        elif kind == "return":
            raise _Return(bcnum.ZERO if s[1] is None else self.eval(s[1]))
        elif kind == "halt":
            raise Quit
        elif kind == "limits":
            self.text("BC_BASE_MAX     = 2147483647\nBC_DIM_MAX      = 16777215\n"
                      "BC_SCALE_MAX    = 2147483647\nBC_STRING_MAX   = 2147483647\n"
                      "MAX Exponent    = 9223372036854775807\nNumber of vars  = 32767\n")

    # ---------------------------------------------------------------- expressions
    def index(self, e) -> int:
        i = self.eval(e).to_int()
        if i < 0 or i > 16777215:
            raise BcError("Array index out of bounds")
        return i

    def get(self, target) -> Num:
        kind = target[0]
        if kind == "var":
            return self.vars.get(target[1], bcnum.ZERO)
        if kind == "elem":
            return self.arrays.setdefault(target[1], {}).get(self.index(target[2]), bcnum.ZERO)
        name = target[1]
        if name == "last":
            return self.last
        return Num({"scale": self.scale, "ibase": self.ibase, "obase": self.obase}[name])

    def put(self, target, value: Num) -> None:
        kind = target[0]
        if kind == "var":
            self.vars[target[1]] = value
            return
        if kind == "elem":
            self.arrays.setdefault(target[1], {})[self.index(target[2])] = value
            return
        name = target[1]
        if name == "last":
            self.last = value
            return
        n = value.to_int()
        if name == "scale":
            if n < 0:
                raise BcError("Scale may not be negative")
            self.scale = n
        elif name == "ibase":
            if n < 2:
                self.warn("ibase too small, set to 2")
                n = 2
            elif n > 16:
                self.warn("ibase too large, set to 16")
                n = 16
            self.ibase = n
        else:
            if n < 2:
                raise BcError("obase too small")
            self.obase = n

    def binary(self, op: str, a: Num, b: Num) -> Num:
        if op == "+":
            return bcnum.add(a, b)
        if op == "-":
            return bcnum.sub(a, b)
        if op == "*":
            return bcnum.mul(a, b, self.scale)
        if op == "/":
            return bcnum.div(a, b, self.scale)
        if op == "%":
            return bcnum.mod(a, b, self.scale)
        return bcnum.power(a, b, self.scale, self.warn)

    def eval(self, e) -> Num:
        kind = e[0]
        if kind == "num":
            return bcnum.parse_number(e[1], self.ibase)
        if kind in ("var", "elem", "special"):
            return self.get(e)
        if kind == "paren":
            return self.eval(e[1])
        if kind == "neg":
            return bcnum.negate(self.eval(e[1]))
        if kind == "bin":
            return self.binary(e[1], self.eval(e[2]), self.eval(e[3]))
        if kind == "rel":
            c = bcnum.compare(self.eval(e[2]), self.eval(e[3]))
            ok = {"<": c < 0, ">": c > 0, "<=": c <= 0, ">=": c >= 0, "==": c == 0, "!=": c != 0}[e[1]]
            return bcnum.ONE if ok else bcnum.ZERO
        if kind == "and":
            return bcnum.ONE if self.eval(e[1]).truth() and self.eval(e[2]).truth() else bcnum.ZERO
        if kind == "or":
            return bcnum.ONE if self.eval(e[1]).truth() or self.eval(e[2]).truth() else bcnum.ZERO
        if kind == "not":
            return bcnum.ZERO if self.eval(e[1]).truth() else bcnum.ONE
        if kind == "assign":
            op, target = e[1], e[2]
            value = self.eval(e[3])
            if op != "=":
                value = self.binary(op[0], self.get(target), value)
            self.put(target, value)
            return value
        if kind in ("pre", "post"):
            old = self.get(e[2])
            new = bcnum.add(old, bcnum.ONE) if e[1] == "++" else bcnum.sub(old, bcnum.ONE)
            self.put(e[2], new)
            return new if kind == "pre" else old
        if kind == "length":
            return Num(self.eval(e[1]).length())
        if kind == "call_scale":
            return Num(self.eval(e[1]).scale)
        if kind == "sqrt":
            return bcnum.sqrt(self.eval(e[1]), self.scale)
        if kind == "read":
            raise BcError("read() is not supported in K")
        if kind == "call":
            return self.call(e[1], e[2])
        raise BcError(f"unknown expression {kind}")

    def _bind(self, names: list[tuple[str, bool]], values: list) -> list[tuple[bool, str, object]]:
        """Give `names` their values; what they held before, to restore on return."""
        saved: list[tuple[bool, str, object]] = []
        for (name, is_array), value in zip(names, values, strict=True):
            table = self.arrays if is_array else self.vars
            saved.append((is_array, name, table.get(name)))
            table[name] = value  # type: ignore[index]
        return saved

    def call(self, name: str, args: list) -> Num:
        f = self.funcs.get(name)
        if f is None:
            raise BcError(f"Function {name} not defined.")
        if len(args) != len(f.params):
            raise BcError("Parameter number mismatch")
        values: list = []
        for (_, is_array), arg in zip(f.params, args, strict=True):
            if is_array != (arg[0] == "array"):
                raise BcError("Parameter type mismatch")
            values.append(dict(self.arrays.get(arg[1], {})) if is_array else self.eval(arg))
        saved = self._bind(f.params, values)
        saved += self._bind(f.autos, [{} if is_array else bcnum.ZERO for _, is_array in f.autos])
        caller, self.func_name = self.func_name, name
        try:
            self.run(f.body)
            result = bcnum.ZERO
        except _Return as r:
            result = r.value
        except BcError as e:
            e.func = e.func or name  # the innermost function names the error
            raise
        finally:
            self.func_name = caller
            for is_array, vname, old in reversed(saved):
                table = self.arrays if is_array else self.vars
                if old is None:
                    table.pop(vname, None)
                else:
                    table[vname] = old  # type: ignore[assignment]
        return result
