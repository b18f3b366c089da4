"""Variable access for the interpreter: special parameters, scalars, arrays, attributes and
assignment rules (readonly, integer, case attributes), as a mixin of `Interp`."""

from __future__ import annotations

import functools
import re
import time
from typing import TYPE_CHECKING

import native
from kshell.core.errors import AbortCommand
from kshell.core.variables import (
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
    Saved,
    Var,
    assoc_order,
)
from kshell.expand import arith, charset
from kshell.expand.params import _unbound
from kshell.expand.words import expand_string
from kshell.limits import LimitExceeded
from kshell.syntax import Parser, ShellSyntaxError
from kshell.syntax.ast import ArrayLiteral, Assignment, KeyedElement, Literal, Word
from kshell.syntax.printer import word_text
from kshell.syntax.words import CTX_SUBSCRIPT

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ELEMENT_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[(.*)\]\Z", re.DOTALL)
_EXPANDS = re.compile(r"[$`\\\"']")


@functools.lru_cache(maxsize=512)
def _subscript_word(text: str, arith: bool) -> Word:
    """The subscript text of a name given as a string (`unset 'a[$i]'`, `declare -n r='A["k"]'`,
    `${!ref}`, `printf -v`, `test -v`) as the word bash expands it to a key: for an indexed
    array as arithmetic text (`$`, backquotes, backslashes; double quotes removed), for an
    associative one as a word (quotes removed too). Text that does not parse stays as it is."""
    reader = Parser(text)
    try:
        parts = reader.read_dq_like(0, len(text), True) if arith else \
            reader.read_unquoted(0, CTX_SUBSCRIPT)[0]
    except ShellSyntaxError:
        parts = [Literal(text)]
    return Word(tuple(parts))


def _end(value: dict) -> int:
    """One past an indexed array's highest index: where negative indices count back from."""
    return max(value) + 1 if value else 0


def split_element(text: str) -> tuple[str, str] | None:
    """`name[sub]` as (name, sub), else None."""
    m = _ELEMENT_RE.match(text)
    return (m.group(1), m.group(2)) if m is not None else None


class ReadonlyError(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class BadSubscript(AbortCommand):
    """An assignment to an element before the start of an indexed array (`a[-9]=x`): the
    message is printed; an assignment statement abandons the command line, as in bash
    (builtins that assign, `printf -v`, `declare`, `read`, fail with status 1 in bash)."""


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
        element = split_element(target)
        if element is not None:
            return self.get_element_text(*element)
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
            return str(self.pipestatus[0]) if self.pipestatus else None
        if name == "DIRSTACK":
            return self.directory_stack()[0]
        if name == "BASH_SUBSHELL":
            return str(self.subshell)
        if name == "SRANDOM":
            import random

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
                _unbound(self, name)
            return 0
        return arith.value_of(self, special)

    def working_directory(self: Interp) -> str:
        """The shell's logical working directory, as `pwd` prints it (bash's
        get_working_directory): $PWD while it still names the directory, else the real one."""
        pv = self.get_param_or_none("PWD")
        if pv and pv.startswith("/") and native.normalize(pv.encode("utf-8", "surrogateescape")) == self.fs.cwd:
            return pv
        return self.fs.cwd.decode("utf-8", "surrogateescape")

    def directory_stack(self: Interp) -> list[str]:
        """DIRSTACK: the working directory, then what pushd stacked (kshell.builtins.dirstack)."""
        return [self.working_directory(), *self.dirstack]

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
            if name == "DIRSTACK":
                return self.directory_stack()
            return []
        value = var.value
        if value is None:
            return []
        if type(value) is str:
            return [value]
        if var.flags & ASSOC:
            return [value[k] for k in assoc_order(value)]
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
            return assoc_order(value)
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
        var = self.lookup_through_ref(name)
        if var is not None and var.flags & ASSOC:
            return expand_string(self, sub)
        text = expand_string(self, sub)
        return self.eval_arith_text(text, discard=True)

    def element_key_text(self: Interp, name: str, text: str) -> str | int:
        """The key for `name[text]` named by a string (see `_subscript_word`): the text is
        expanded first, as bash does, then taken as is (associative) or evaluated."""
        var = self.lookup_through_ref(name)
        assoc = var is not None and bool(var.flags & ASSOC)
        if _EXPANDS.search(text) is not None:
            text = expand_string(self, _subscript_word(text, not assoc))
        return text if assoc else self.eval_arith_text(text, discard=True)

    def get_element_word(self: Interp, name: str, sub: Word) -> str | None:
        return self.get_element(name, self.element_key(name, sub))

    def get_element_text(self: Interp, name: str, text: str) -> str | None:
        return self.get_element(name, self.element_key_text(name, text))

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
            if name == "DIRSTACK" and isinstance(key, int):
                dirs = self.directory_stack()
                return dirs[key] if -len(dirs) <= key < len(dirs) else None
            if key == 0 or key == "0":
                return self.special_param(name)
            return None
        value = var.value
        if value is None:
            return None
        if type(value) is str:
            if key == 0:
                return value
            if isinstance(key, int) and key < 0:  # bash takes no negative index of a scalar
                self.error(f"{name}: bad array subscript")
            return None
        if var.flags & ASSOC:
            return value.get(str(key))
        if key < 0:  # type: ignore[operator]
            key += _end(value)  # type: ignore[operator]
            if key < 0:  # bash: an error message, and the element is unset
                self.error(f"{name}: bad array subscript")
                return None
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
        assoc = var.flags & ASSOC
        if assoc:
            key = str(key)
        else:
            if not isinstance(key, int):
                key = self.eval_arith_text(str(key), discard=True)
            if key < 0:
                end = _end(value) if type(value) is dict else int(value is not None)
                if key + end < 0:
                    self.error(f"{name}[{key}]: bad array subscript")
                    raise BadSubscript(1)
                key += end
        if type(value) is not dict:  # (`declare -a a` leaves None: no value yet)
            var.value = value = {} if value is None else {"0" if assoc else 0: value}
            if not assoc:
                var.flags |= ARRAY
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
            table[name] = Var(text, EXPORT if "a" in self.opts else 0)  # set -a exports it
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
        if "a" in self.opts:  # set -a: bash exports every variable an assignment binds
            var.flags |= EXPORT
        value = var.value
        if value is None and var.flags & (ARRAY | ASSOC):
            value = var.value = {}  # `declare -a x; x=1`: element 0
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
        self.assign_named(target, text, append)

    def assign_named(self: Interp, target: str, text: str, append: bool = False) -> None:
        """Assign to a name given as a string: `x`, or an element `a[sub]` whose subscript is
        expanded as bash does (a reference's target, `printf -v`, `read`)."""
        element = split_element(target)
        if element is None:
            self.assign_scalar(target, text, append)
        else:
            base, sub = element
            self.set_element(base, self.element_key_text(base, sub), text, append)

    def variable_too_big(self: Interp, name: str) -> None:
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
            nxt = _end(value)
            for key, text in items:
                if key is not None:
                    nxt = self.eval_arith_text(key, discard=True)
                    if nxt < 0:
                        nxt += _end(value)
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
            if target is None:
                return True
            element = split_element(target)
            return self.unset_var(target) if element is None else self.unset_element(*element)
        if var.flags & READONLY:
            self.error(f"unset: {name}: cannot unset: readonly variable")
            return False
        if not self.vars.unset_binding(name, "localvar_unset" in self.shopts):
            del self.vars.table[name]
        return True

    def unset_element(self: Interp, name: str, sub: str) -> bool:
        """`unset 'name[sub]'`: the subscript is expanded as for any name given as a string
        (`'A["k"]'`, `'a[$i]'`). `[@]`/`[*]` empty an indexed array (and are keys of an
        associative one, bash 5.2); an out-of-range negative index is an error; a scalar is
        element 0, and any other is an error."""
        var = self.lookup_through_ref(name)
        if var is None:
            return True
        base = self.ref_base(name)
        if var.flags & READONLY:
            self.error(f"unset: {base}: cannot unset: readonly variable")
            return False
        value = var.value
        if not var.flags & (ARRAY | ASSOC):
            if sub not in ("@", "*") and self.element_key_text(base, sub) == 0:
                return self.unset_var(base)
            self.error(f"unset: {base}: not an array variable")
            return False
        if value is None:
            return True
        if var.flags & ASSOC:
            key = sub if sub in ("@", "*") else self.element_key_text(base, sub)
            value.pop(key, None)  # type: ignore[union-attr]
            return True
        if sub in ("@", "*"):
            value.clear()  # type: ignore[union-attr]
            return True
        index = self.element_key_text(base, sub)
        if index < 0:  # type: ignore[operator]
            index += _end(value)  # type: ignore[operator, arg-type]
            if index < 0:  # type: ignore[operator]
                self.error(f"unset: [{sub}]: bad array subscript")
                return False
        value.pop(index, None)  # type: ignore[union-attr]
        return True

    def array_is_set(self: Interp, name: str) -> bool:
        """Whether `${#name[@]}` finds a variable under `set -u`: an empty array (`a=()`) is
        set; one only declared (`declare -a a`) or never named is not."""
        var = self.lookup_through_ref(name)
        if var is not None:
            return var.value is not None
        return bool(self.array_keys(name))

    def array_values_from(self: Interp, name: str, offset: int) -> list[str]:
        """`${name[@]:offset}` before its length applies: an indexed array's offset is an
        index (the elements from the first at or after it; a negative one counts back from
        the highest index + 1, and before 0 gives none), an associative array's a position
        counted from 1 (0 too is the first), as bash's assoc_subrange does."""
        var = self.lookup_through_ref(name)
        value = var.value if var is not None else None
        if type(value) is not dict or var.flags & ASSOC:  # type: ignore[union-attr]
            values = self.array_values(name)
            if offset > 0 and type(value) is dict:  # bash counts an associative array's from 1
                offset -= 1
            if offset < 0:
                offset += len(values)
                if offset < 0:
                    return []
            return values[offset:]
        if offset < 0:
            offset += _end(value)
            if offset < 0:
                return []
        return [value[k] for k in sorted(value) if k >= offset]

    def array_literal_text(self: Interp, lit: ArrayLiteral) -> str:
        """`(x y)` in a command's prefix assignment (`a=(x y) cmd`): bash passes it on as the
        string `(x y)`, elements expanded without splitting or globbing, single spaces."""
        items = []
        for el in lit.elements:
            if type(el) is KeyedElement:
                items.append(f"[{expand_string(self, el.key)}]{'+' if el.append else ''}="
                             f"{expand_string(self, el.value)}")
            else:
                items.append(expand_string(self, el))  # type: ignore[arg-type]
        return f"({' '.join(items)})"

    def list_to_element(self: Interp, a: Assignment) -> None:
        """`a[0]=(1 2)` (also in `declare`): bash refuses a list for an element and abandons
        the rest of the command line."""
        self.error(f"{a.name}[{word_text(a.subscript)}]: cannot assign list to array member")  # type: ignore[arg-type]
        raise AbortCommand(1)

    def prefix_values(self: Interp, assigns: tuple[Assignment, ...]) -> list[str]:
        """The values of a command's prefix assignments (`a=1 b=$a cmd`), expanded left to
        right, each seeing those before it (bash binds them one at a time); they are bound
        only while the later ones expand: the command binds them again (`_temp_assign`)."""
        if len(assigns) == 1:
            return [self._prefix_text(assigns[0])]
        values: list[str] = []
        saved: Saved = []
        self.vars.push_temps(saved)
        try:
            for a in assigns:
                values.append(self._prefix_text(a))
                if len(values) < len(assigns):
                    self.bind_temp(saved, a, values[-1], quiet=True)
        finally:
            self._restore_temp(saved)
        return values

    def _prefix_text(self: Interp, a: Assignment) -> str:
        """One prefix assignment's value as the command gets it: always a string."""
        value = a.value
        return self.array_literal_text(value) if type(value) is ArrayLiteral else \
            expand_string(self, value)

    def bind_temp(self: Interp, saved: Saved, a: Assignment, text: str, quiet: bool = False) -> None:
        """Bind one prefix assignment, exported, for the command's duration; `saved` keeps
        what the first binding of each name shadowed. A subscript or a readonly variable is
        an error (bash's message; the command runs anyway), silent when `quiet`."""
        name = a.name
        if a.subscript is not None:
            if not quiet:
                self.error(f"`{name}[{word_text(a.subscript)}]': not a valid identifier")
            return
        table = self.vars.table
        old = table.get(name)
        if old is not None and old.flags & READONLY:
            if not quiet:
                self.error(f"{name}: readonly variable")
            return
        if all(bound != name for bound, _ in saved):
            saved.append((name, old))
        table[name] = Var(text, EXPORT | (old.flags & ~(ARRAY | ASSOC) if old is not None else 0))

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
