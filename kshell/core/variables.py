"""Shell variables: one flat table of what is visible now, plus a stack of saved entries for
function-local variables (bash's dynamic scoping), so a lookup is one dict access.

A value is a str (scalar), a dict[int, str] (indexed array, sparse) or a dict[str, str]
(associative array), or None for a variable declared but not set (`declare x`; with the ARRAY
or ASSOC flag, `declare -a x` / `local -A x`: an array declared but never assigned, which bash
treats as unset: `set -u` rejects `${#x[@]}`, `declare -p` prints no `=()`). A name reference
(`declare -n r=x`, flag NAMEREF) holds a `NameRef`: the name of its target.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EXPORT = 1
READONLY = 2
INTEGER = 4
ARRAY = 8
ASSOC = 16
LOWER = 32
UPPER = 64
NAMEREF = 128

# in the order bash prints them (`declare -p`, `${x@a}`)
FLAG_LETTERS = (("a", ARRAY), ("A", ASSOC), ("i", INTEGER), ("n", NAMEREF), ("r", READONLY),
                ("x", EXPORT), ("l", LOWER), ("u", UPPER))


class NameRef(str):
    """The value of a name reference: its target's name (`x`, or an element `a[1]`). Not a
    plain str, so that the fast paths that return a scalar (`type(value) is str`) skip it."""

    __slots__ = ()


class Var:
    __slots__ = ("value", "flags")

    def __init__(self, value: str | dict | None, flags: int = 0) -> None:
        self.value = value
        self.flags = flags

    def copy(self) -> Var:
        value = self.value
        return Var(dict(value) if type(value) is dict else value, self.flags)

    def is_array(self) -> bool:
        return type(self.value) is dict


class Computed(Var):
    """A read-only variable whose value the shell's state makes at each read (SHELLOPTS and
    BASHOPTS: the options on now). `owner` is the shell it reads; a subshell's copy is bound
    to the subshell (Variables.rebind), so that its own `set -o` shows in its own copy."""

    __slots__ = ("compute", "owner")

    def __init__(self, compute: Callable[[Any], str], owner: Any, flags: int = READONLY) -> None:
        self.compute = compute
        self.owner = owner
        self.flags = flags

    @property  # type: ignore[override]
    def value(self) -> str:
        return self.compute(self.owner)

    @value.setter
    def value(self, _value: object) -> None:
        """Never changed: every assignment is refused first as to a readonly variable."""

    def copy(self) -> Computed:
        return Computed(self.compute, self.owner, self.flags)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled without its shell (a worker's snapshot of the variables): the shell that
        loads it binds it again (Variables.rebind)."""
        return Computed, (self.compute, None, self.flags)


def _bash_hash(key: str) -> int:
    """bash's hash_string (FNV-1, 32 bits) of the key's bytes, each a signed char as in C."""
    h = 2166136261
    for b in key.encode("utf-8", "surrogateescape"):
        h = (h * 16777619) & 0xFFFFFFFF
        h ^= b if b < 0x80 else b | 0xFFFFFF00
    return h


def assoc_order(value: dict) -> list:
    """An associative array's keys in the order bash walks them: its hash table's buckets in
    turn (1024 to start, four times as many whenever the entries reach twice the buckets),
    each bucket newest first. The dict keeps insertion order, and an unset key set again goes
    to the end there as to the head of its bucket in bash, so replaying the insertions
    rebuilds bash's table; only unsets before a growth can make the replay grow later than
    bash did."""
    keys = list(value)
    if len(keys) < 2:
        return keys
    if len(keys) <= 2048:  # never grew: a stable sort keeps newest first within a bucket
        return sorted(reversed(keys), key=lambda k: _bash_hash(k) & 1023)
    size = 1024
    buckets: dict[int, list] = {}  # bucket -> its keys, the head (newest) last
    for count, key in enumerate(keys):
        if count >= size * 2:
            size *= 4
            grown: dict[int, list] = {}
            for index in sorted(buckets):
                for old in reversed(buckets[index]):
                    grown.setdefault(_bash_hash(old) & (size - 1), []).append(old)
            buckets = grown
        buckets.setdefault(_bash_hash(key) & (size - 1), []).append(key)
    return [key for index in sorted(buckets) for key in reversed(buckets[index])]


_MISSING = None
COMPUTED_NAMES = ("SHELLOPTS", "BASHOPTS")


Saved = list[tuple[str, Var | None]]  # what a scope shadowed: (name, entry or None)


class Variables:
    """The visible table (`table`), one dict per active function call (`frames`) holding
    the entries a `local` shadowed (None: there was none), and the prefix assignments of the
    commands running (`temps`: `x=1 f`), each with the number of frames when it was made and
    the entries it shadowed. Bash keeps both kinds as scopes: `unset x` from a function
    called inside one removes that scope's binding and reveals the one under it."""

    __slots__ = ("table", "frames", "temps")

    def __init__(self) -> None:
        self.table: dict[str, Var] = {}
        self.frames: list[dict[str, Var | None]] = []
        self.temps: list[tuple[int, Saved]] = []

    def copy(self) -> Variables:
        new = Variables()
        new.table = {name: var.copy() for name, var in self.table.items()}
        new.frames = [dict(frame) for frame in self.frames]
        new.temps = [(depth, list(saved)) for depth, saved in self.temps]
        return new

    def rebind(self, owner: Any) -> None:
        """Bind the computed variables of this (copied) table to `owner`, a subshell."""
        for name in COMPUTED_NAMES:
            var = self.table.get(name)
            if type(var) is Computed:
                var.owner = owner

    def push_frame(self) -> None:
        self.frames.append({})

    def pop_frame(self) -> None:
        frame = self.frames.pop()
        table = self.table
        for name, saved in frame.items():
            if saved is None:
                table.pop(name, None)
            else:
                table[name] = saved

    def make_local(self, name: str) -> Var | None:
        """Shadow `name` in the current function; returns the shadowed Var (or None)."""
        frame = self.frames[-1]
        old = self.table.get(name)
        if name not in frame:
            frame[name] = old
            self.table.pop(name, None)
            return old
        return None

    def is_local(self, name: str) -> bool:
        return bool(self.frames) and name in self.frames[-1]

    def push_temps(self, saved: Saved) -> None:
        """Register a command's prefix assignments (the entries they shadowed) as a scope."""
        self.temps.append((len(self.frames), saved))

    def pop_temps(self, saved: Saved) -> None:
        """The command ended: its prefix-assignment scope goes (found by identity: a scope
        copied into a subshell is a different list)."""
        temps = self.temps
        for i in range(len(temps) - 1, -1, -1):
            if temps[i][1] is saved:
                del temps[i]
                return

    def unset_binding(self, name: str, keep_locals: bool = False) -> bool:
        """`unset name` as bash's dynamic scoping has it, for a name bound in a scope:
        a local of the running function stays a local, without value or attributes; a local
        of a calling function (unless `keep_locals`: shopt localvar_unset, which treats it
        as the running function's) or a prefix assignment (`x=1 f`) is removed, revealing
        the binding under it. False when `name` is bound in no scope (a global)."""
        frames = self.frames
        frame_at = -1
        for i in range(len(frames) - 1, -1, -1):
            if name in frames[i]:
                frame_at = i
                break
        for depth, saved in reversed(self.temps):
            if depth <= frame_at:
                break
            for j, (bound, old) in enumerate(saved):
                if bound == name:
                    del saved[j]
                    if not saved:  # nothing left for the command to restore
                        self.pop_temps(saved)
                    self._reveal(name, old)
                    return True
        if frame_at < 0:
            return False
        if frame_at == len(frames) - 1 or keep_locals:
            var = self.table.get(name)
            if var is not None:
                var.value = None
                var.flags = 0
            return True
        self._reveal(name, frames[frame_at].pop(name))
        return True

    def _reveal(self, name: str, old: Var | None) -> None:
        if old is None:
            self.table.pop(name, None)
        else:
            self.table[name] = old

    def global_slot(self, name: str) -> tuple[dict, str]:
        """Where the global binding of `name` lives: the table, or the outermost frame that
        shadowed it (for `declare -g`)."""
        for frame in self.frames:
            if name in frame:
                return frame, name
        return self.table, name


class AssignArg(str):
    """A declaration argument written as an assignment (`declare a=(1 2)`, `local x=$y`)."""

    name: str
    subscript: str | None
    append: bool
    items: list | None
    value: str
