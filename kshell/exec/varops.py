"""Variable access for the interpreter: special parameters, scalars, arrays, attributes and
assignment rules (readonly, integer, case attributes), as a mixin of `Interp`."""

from __future__ import annotations

import random
import re
import time
from typing import TYPE_CHECKING

from kshell.exec.errors import AbortCommand
from kshell.exec.variables import (
    ARRAY,
    ASSOC,
    EXPORT,
    FLAG_LETTERS,
    INTEGER,
    LOWER,
    NAMEREF,
    READONLY,
    UPPER,
    NameRef,
    Var,
)
from kshell.expand import arith, charset
from kshell.syntax.ast import Word

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class ReadonlyError(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class VarOps:
    """Mixin: needs `vars`, `positional`, `dollar0`, `last_status`, `opts`."""

    # ------------------------------------------------------------------ reading

    def is_valid_name(self, name: str) -> bool:
        return _NAME_RE.match(name) is not None

    def get_param_or_none(self: Interp, name: str) -> str | None:
        var = self.vars.table.get(name)
        if var is not None:
            value = var.value
            if type(value) is str:
                return value
            if value is None:
                return None
            if type(value) is NameRef:
                return self.deref(value)
            return value.get(0 if var.flags & ASSOC == 0 else "0")
        return self.special_param(name)

    # ------------------------------------------------------------------ name references

    def ref_target(self: Interp, name: str) -> str | None:
        """Where the name reference `name` leads, through chains of them: a variable name or
        an element (`a[1]`); `name` itself when it is not a reference; None for a cycle."""
        table = self.vars.table
        for _ in range(16):
            var = table.get(name)
            if var is None or type(var.value) is not NameRef:
                return name
            name = var.value
        return None

    def lookup_through_ref(self: Interp, name: str) -> Var | None:
        """The variable `name` stands for (the target's, for a reference), or None."""
        table = self.vars.table
        var = table.get(name)
        if var is not None and var.flags & NAMEREF and type(var.value) is NameRef:
            return table.get(self.ref_base(name))
        return var

    def ref_base(self: Interp, name: str) -> str:
        """The array a name (maybe a reference) stands for in `${name[...]}`-like uses."""
        target = self.ref_target(name)
        return name if target is None else target.partition("[")[0]

    def deref(self: Interp, ref: str) -> str | None:
        """The value a reference's target name `ref` stands for (None: unset)."""
        target = self.ref_target(ref)
        if target is None:
            return None
        if target.endswith("]") and "[" in target:
            base, _, key = target[:-1].partition("[")
            return self.get_element_text(base, key)
        return self.get_param_or_none(target)

    def get_param(self: Interp, name: str) -> str:
        """`$name` as text ("" when unset; `set -u` makes that an error)."""
        var = self.vars.table.get(name)
        if var is not None:
            value = var.value
            if type(value) is str:
                return value
            if value is not None:
                got = self.deref(value) if type(value) is NameRef else value.get(
                    0 if var.flags & ASSOC == 0 else "0")
                if got is not None:
                    return got
        else:
            special = self.special_param(name)
            if special is not None:
                return special
        if "u" in self.opts:
            from kshell.expand.params import _unbound

            _unbound(self, name)
        return ""

    def special_param(self: Interp, name: str) -> str | None:
        c = name[0]
        if "0" <= c <= "9":
            if name == "0":
                return self.dollar0
            index = int(name)
            pos = self.positional
            return pos[index - 1] if index <= len(pos) else None
        if c == "?":
            return str(self.last_status)
        if c == "#":
            return str(len(self.positional))
        if c == "@" or c == "*":
            return " ".join(self.positional) if self.positional else None
        if c == "$":
            return str(self.session.pid)
        if c == "!":
            return str(self.last_bg) if self.last_bg else None
        if c == "-":
            return self.option_flags()
        if c == "_":
            return self.last_arg if name == "_" else None
        if name == "RANDOM":
            return str(self.session.random.randrange(32768))
        if name == "LINENO":
            return str(self.lineno)
        if name == "SECONDS":
            return str(int(time.monotonic() - self.session.started))
        if name == "EPOCHSECONDS":
            return str(int(time.time()))
        if name == "EPOCHREALTIME":
            return f"{time.time():.6f}"
        if name == "BASHPID":
            return str(self.pid)
        if name == "FUNCNAME":
            return self.funcnames[-1] if self.funcnames else None
        if name == "PIPESTATUS":
            return str(self.pipestatus[0])
        if name == "BASH_SUBSHELL":
            return str(self.subshell)
        if name == "SRANDOM":
            return str(random.getrandbits(32))
        return None

    def utf8_locale(self: Interp) -> bool:
        """Whether the locale's character set is UTF-8, as bash decides it from LC_ALL, then
        LC_CTYPE, then LANG. Otherwise (none set, C, POSIX, other sets) the shell works in
        bytes: `${#x}` counts them, `${x:1:1}` and `?` take one, `\\u00e9` stays an escape."""
        table = self.vars.table
        for name in ("LC_ALL", "LC_CTYPE", "LANG"):
            var = table.get(name)
            if var is not None and type(var.value) is str and var.value:
                value = var.value.lower()
                return "utf-8" in value or "utf8" in value
        return False

    def positional_list(self: Interp) -> list[str]:
        return list(self.positional)

    @property
    def ifs(self: Interp) -> str:
        var = self.vars.table.get("IFS")
        if var is None or type(var.value) is not str:
            return " \t\n"
        return var.value

    def ifs_join(self: Interp, values: list[str]) -> str:
        var = self.vars.table.get("IFS")
        sep = " " if var is None or type(var.value) is not str else var.value[:1]
        return sep.join(values)

    def variable_names(self: Interp) -> list[str]:
        return [n for n, v in self.vars.table.items() if v.value is not None or v.flags]

    def arith_var(self: Interp, name: str) -> int:
        var = self.vars.table.get(name)
        if var is not None:
            value = var.value
            if type(value) is not str:
                if value is None:
                    value = ""
                elif type(value) is NameRef:
                    value = self.deref(value) or ""
                else:
                    value = value.get(0 if var.flags & ASSOC == 0 else "0", "")
            if value.isdigit() and value.isascii() and (value[0] != "0" or len(value) == 1):
                return int(value) if len(value) < 19 else arith.wrap(int(value))
            return arith.value_of(self, value)
        special = self.special_param(name)
        if special is None:
            if "u" in self.opts:
                from kshell.expand.params import _unbound

                _unbound(self, name)
            return 0
        return arith.value_of(self, special)

    # ------------------------------------------------------------------ arrays

    def array_values(self: Interp, name: str) -> list[str]:
        var = self.vars.table.get(name)
        if var is not None and var.flags & NAMEREF:
            return self.array_values(self.ref_base(name)) if type(var.value) is NameRef else []
        if var is None:
            if name == "FUNCNAME":
                return list(reversed(self.funcnames))
            if name == "PIPESTATUS":
                return [str(s) for s in self.pipestatus]
            return []
        value = var.value
        if value is None:
            return []
        if type(value) is str:
            return [value]
        if var.flags & ASSOC:
            return list(value.values())
        return [value[k] for k in sorted(value)]

    def array_keys(self: Interp, name: str) -> list[str]:
        var = self.vars.table.get(name)
        if var is not None and var.flags & NAMEREF and type(var.value) is NameRef:
            return self.array_keys(self.ref_base(name))
        if var is None or var.value is None:
            return []
        value = var.value
        if type(value) is str:
            return ["0"]
        if var.flags & ASSOC:
            return list(value)
        return [str(k) for k in sorted(value)]

    def subscript_key(self: Interp, name: str, text: str, index_fn) -> str | int:
        """The key for `name[text]` in arithmetic: assoc arrays take the text as is."""
        var = self.lookup_through_ref(name)
        if var is not None and var.flags & ASSOC:
            return text
        if index_fn is not None:
            return index_fn(self)
        return self.eval_arith_text(text, discard=True)

    def element_key(self: Interp, name: str, sub: Word) -> str | int:
        from kshell.expand.words import expand_string

        var = self.lookup_through_ref(name)
        if var is not None and var.flags & ASSOC:
            return expand_string(self, sub)
        text = expand_string(self, sub)
        return self.eval_arith_text(text, discard=True)

    def element_key_text(self: Interp, name: str, text: str) -> str | int:
        var = self.lookup_through_ref(name)
        if var is not None and var.flags & ASSOC:
            return text
        return self.eval_arith_text(text, discard=True)

    def get_element_word(self: Interp, name: str, sub: Word) -> str | None:
        return self.get_element(name, self.element_key(name, sub))

    def get_element_text(self: Interp, name: str, text: str) -> str | None:
        var = self.lookup_through_ref(name)
        if var is not None and var.flags & ASSOC:
            return self.get_element(name, text)
        return self.get_element(name, self.eval_arith_text(text, discard=True))

    def get_element(self: Interp, name: str, key: str | int) -> str | None:
        var = self.vars.table.get(name)
        if var is not None and var.flags & NAMEREF and type(var.value) is NameRef:
            return self.get_element(self.ref_base(name), key)
        if var is None:
            if name == "FUNCNAME" and isinstance(key, int):
                names = list(reversed(self.funcnames))
                return names[key] if -len(names) <= key < len(names) else None
            if name == "PIPESTATUS" and isinstance(key, int):
                codes = self.pipestatus
                return str(codes[key]) if -len(codes) <= key < len(codes) else None
            if key == 0 or key == "0":
                return self.special_param(name)
            return None
        value = var.value
        if value is None:
            return None
        if type(value) is str:
            return value if key == 0 else None
        if var.flags & ASSOC:
            return value.get(str(key))
        if key < 0:  # type: ignore[operator]
            if not value:
                return None
            key = max(value) + 1 + key  # type: ignore[operator]
        return value.get(key)

    def set_element(self: Interp, name: str, key: str | int, text: str, append: bool = False) -> None:
        table = self.vars.table
        var = table.get(name)
        if var is not None and var.flags & NAMEREF and type(var.value) is NameRef:
            self.set_element(self.ref_base(name), key, text, append)
            return
        if var is None:
            var = table[name] = Var({}, ARRAY)
        if var.flags & READONLY:
            self.readonly_error(name)
        value = var.value
        if type(value) is not dict:
            var.value = value = {} if value is None else {0: value}
            var.flags |= ARRAY
        if var.flags & ASSOC:
            key = str(key)
        else:
            if not isinstance(key, int):
                key = self.eval_arith_text(str(key), discard=True)
            if key < 0:
                orig = key
                key = (max(value) + 1 + key) if value else key
                if key < 0:
                    self.error(f"{name}[{orig}]: bad array subscript")
                    raise AbortCommand(1)
        if append:
            text = (value.get(key) or "") + text
        text = self._convert(var, text, value.get(key) if append else None)
        value[key] = text

    # ------------------------------------------------------------------ assignment

    def readonly_error(self: Interp, name: str) -> None:
        raise ReadonlyError(name)

    def _convert(self: Interp, var: Var, text: str, old: str | None = None) -> str:
        flags = var.flags
        if flags & INTEGER:
            text = str(self.eval_arith_text(text, discard=True))
        if flags & UPPER:
            text = charset.upper(text, text.isascii() or self.utf8_locale())
        elif flags & LOWER:
            text = charset.lower(text, text.isascii() or self.utf8_locale())
        return text

    def assign_scalar(self: Interp, name: str, text: str, append: bool = False) -> None:
        """`name=text` (or +=): honours readonly, integer and case attributes."""
        table = self.vars.table
        var = table.get(name)
        if var is None:
            if len(text) > self.limits.variable_bytes:
                self.variable_too_big(name)
            table[name] = Var(text)
            if name in _HOOKED:
                self.var_hook(name)
            return
        if var.flags:
            if var.flags & NAMEREF:
                self.assign_through_ref(name, var, text, append)
                return
            if var.flags & READONLY:
                self.readonly_error(name)
            if var.flags & INTEGER:
                if append:
                    text = str(self.arith_var(name) + self.eval_arith_text(text, discard=True))
                    append = False
                else:
                    text = str(self.eval_arith_text(text, discard=True))
            if var.flags & UPPER:
                text = charset.upper(text, text.isascii() or self.utf8_locale())
            elif var.flags & LOWER:
                text = charset.lower(text, text.isascii() or self.utf8_locale())
        value = var.value
        if type(value) is dict:
            key = "0" if var.flags & ASSOC else 0
            if append:
                text = value.get(key, "") + text
            value[key] = text
            return
        if append and value:
            var.value = None  # keep one reference so += extends in place
            value += text
            text = value
        if len(text) > self.limits.variable_bytes:
            var.value = value if not append else None
            self.variable_too_big(name)
        var.value = text
        if name in _HOOKED:
            self.var_hook(name)

    def assign_through_ref(self: Interp, name: str, var: Var, text: str, append: bool) -> None:
        """`ref=text`: assigns the target; a reference without one takes `text` as its
        target's name (`declare -n r; r=x`)."""
        if type(var.value) is not NameRef:
            if var.flags & READONLY:
                self.readonly_error(name)
            var.value = NameRef(text)
            return
        target = self.ref_target(name)
        if target is None:
            self.error(f"{name}: circular name reference")
            raise AbortCommand(1)
        if target.endswith("]") and "[" in target:
            base, _, key = target[:-1].partition("[")
            self.set_element(base, self.element_key_text(base, key), text, append)
        else:
            self.assign_scalar(target, text, append)

    def variable_too_big(self: Interp, name: str) -> None:
        from kshell.limits import LimitExceeded

        raise LimitExceeded(f"{name}: value exceeds the variable size limit of "
                            f"{self.limits.variable_bytes} bytes")

    def var_hook(self: Interp, name: str) -> None:
        if name == "PWD":
            pass
        elif name == "OPTIND":
            self.getopts_pos = 1

    def assign_array(self: Interp, name: str, items: list[tuple[str | None, str]], append: bool,
                     assoc: bool | None = None) -> None:
        table = self.vars.table
        var = table.get(name)
        if var is not None and var.flags & NAMEREF and type(var.value) is NameRef:
            self.assign_array(self.ref_base(name), items, append, assoc)
            return
        if var is not None and var.flags & READONLY:
            self.readonly_error(name)
        if var is None:
            var = table[name] = Var(None, ASSOC if assoc else ARRAY)
        is_assoc = bool(var.flags & ASSOC)
        old = var.value
        if append and type(old) is dict:
            value = old
        elif append and type(old) is str:
            value = {0: old}
        else:
            value = {}
        if not is_assoc:
            var.flags |= ARRAY
            nxt = (max(value) + 1) if value else 0
            for key, text in items:
                if key is not None:
                    nxt = self.eval_arith_text(key, discard=True)
                    if nxt < 0:
                        nxt += (max(value) + 1) if value else 0
                value[nxt] = self._convert(var, text)
                nxt += 1
        else:
            pending: str | None = None
            for key, text in items:
                if key is None:  # bash 5.1+: a list without subscripts is key value pairs
                    if pending is None:
                        pending = text
                    else:
                        value[pending] = self._convert(var, text)
                        pending = None
                    continue
                value[key] = self._convert(var, text)
            if pending is not None:
                value[pending] = ""

        var.value = value

    def unset_var(self: Interp, name: str, follow: bool = True) -> bool:
        """`unset name`; a name reference unsets its target (`follow`), or itself (unset -n)."""
        var = self.vars.table.get(name)
        if var is None:
            return True
        if follow and type(var.value) is NameRef:
            target = self.ref_target(name)
            if target is None or target.endswith("]"):
                return True
            return self.unset_var(target)
        if var.flags & READONLY:
            self.error(f"unset: {name}: cannot unset: readonly variable")
            return False
        if self.vars.frames and name in self.vars.frames[-1]:
            var.value = None
            var.flags &= ~(ARRAY | ASSOC)
            return True
        del self.vars.table[name]
        return True

    def attr_letters(self: Interp, name: str) -> str:
        var = self.vars.table.get(name)
        if var is None:
            return ""
        return "".join(letter for letter, flag in FLAG_LETTERS if var.flags & flag)

    def exported_env(self: Interp) -> dict[str, str]:
        out = {}
        for name, var in self.vars.table.items():
            if var.flags & EXPORT and type(var.value) is str:
                out[name] = var.value
        return out

    def init_env(self: Interp, env: dict[str, str]) -> None:
        for name, value in env.items():
            if _NAME_RE.match(name):
                self.vars.table[name] = Var(value, EXPORT)


_HOOKED = frozenset({"OPTIND"})
