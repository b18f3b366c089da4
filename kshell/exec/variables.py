"""Shell variables: one flat table of what is visible now, plus a stack of saved entries for
function-local variables (bash's dynamic scoping), so a lookup is one dict access.

A value is a str (scalar), a dict[int, str] (indexed array, sparse) or a dict[str, str]
(associative array), or None for a variable declared but not set (`declare x`). A name
reference (`declare -n r=x`, flag NAMEREF) holds a `NameRef`: the name of its target.
"""

from __future__ import annotations

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


_MISSING = None


class Variables:
    """The visible table (`table`) and one dict per active function call (`frames`) holding
    the entries a `local` shadowed (None: there was none)."""

    __slots__ = ("table", "frames")

    def __init__(self) -> None:
        self.table: dict[str, Var] = {}
        self.frames: list[dict[str, Var | None]] = []

    def copy(self) -> Variables:
        new = Variables()
        new.table = {name: var.copy() for name, var in self.table.items()}
        new.frames = [dict(frame) for frame in self.frames]
        return new

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

    def global_slot(self, name: str) -> tuple[dict, str]:
        """Where the global binding of `name` lives: the table, or the outermost frame that
        shadowed it (for `declare -g`)."""
        for frame in self.frames:
            if name in frame:
                return frame, name
        return self.table, name
