"""The compiler's small types: the code of an expression with what is known of its value,
what is known of the record's fields at a point of the generated code, and the function
being generated."""

from __future__ import annotations

from dataclasses import dataclass, field

NUM, STR, ANY = "num", "str", "any"

@dataclass(frozen=True)
class Code:
    """A Python expression and what is known of its value."""

    src: str
    kind: str = ANY  # NUM: a float; STR: a plain string (compares as one); ANY: any awk value
    lazy: bool = False  # may be a LazyArray (a parameter's value), which `=` turns into ""
    safe: bool = False  # evaluating it has no effect and cannot fail (a constant, a local)
    int_src: str | None = None  # the same number as a Python int (NF, length): printed as is


@dataclass(frozen=True)
class Fields:
    """What the generated code knows of the record's fields at a point.

    fresh: the record was just read (rt.fields is None, rt.record is `rec`);
    valid: the local F is rt.fields, _nf its length, and _n<j> holds field j+1's number for
        j in `nums`;
    unknown: neither; dead: the point is never reached (after next, exit, break...)."""

    state: str
    nums: frozenset[int] = frozenset()


UNKNOWN = Fields("unknown")
DEAD = Fields("dead")


def meet(a: Fields, b: Fields) -> Fields:
    if a.state == "dead":
        return b
    if b.state == "dead":
        return a
    if a.state == b.state == "valid":
        return Fields("valid", a.nums & b.nums)
    if a.state == b.state == "fresh":
        return a
    return UNKNOWN


@dataclass
class Scope:
    """One generated function: BEGIN, the main loop, END or an awk function."""

    kind: str  # "begin", "main", "end", "func"
    params: dict[str, str]  # an awk function's parameters -> Python locals
    hoisted: dict[str, str]  # globals kept in Python locals
    ro: dict[str, str]  # special variables the program never assigns, read once per batch
    nr_local: bool = False  # NR and FNR are the locals NR, FNR
    fast_split: bool = False  # a fresh record is cut with the batch's `_sep`
    temps: int = 0
    loops: int = 0  # awk loops around the point being compiled
    in_records: bool = False  # inside the record loop (`next` may be a `continue`)
    # hoisted globals this body assigns only numbers: once a float, a float for good, so
    # `x += v` tries the float sum and converts only when that fails (once, at first)
    stable: frozenset[str] = frozenset()
    rec_same: bool = False  # no rule changes $0: in the record loop, $0 is the local `rec`
    sampled: bool = False  # the record loop samples each batch (values.small_share)
    num_fields: set[int] = field(default_factory=set)  # fields whose number the record loop computes
