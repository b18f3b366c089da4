"""What the compiler needs to know about a whole awk program before it writes any code: which
names are used how (scalar, array, passed bare), what each function touches, which
expressions may change the record, and so which globals a rule body may keep in Python
locals without anything else seeing them stale."""

from __future__ import annotations

from dataclasses import dataclass, field

# variables the runtime itself reads or writes by name: they always live in rt.vars
SPECIAL = frozenset({"NR", "FNR", "NF", "FS", "OFS", "ORS", "RS", "SUBSEP", "CONVFMT", "OFMT",
                     "RSTART", "RLENGTH", "FILENAME", "ENVIRON", "ARGV", "ARGC"})
# those whose assignment does more than store (runtime.set_special)
NOT_PLAIN = frozenset({"NF", "FS", "RS", "CONVFMT", "OFMT", "SUBSEP", "OFS", "ORS"})
GAWK_ONLY_VARS = frozenset({"IGNORECASE", "FIELDWIDTHS", "FPAT", "BINMODE", "LINT", "TEXTDOMAIN", "PROCINFO"})
# built-ins whose arguments at these positions are arrays (split's 2nd and 4th, match's 3rd)
ARRAY_ARGS = {"split": (1, 3), "match": (2,)}
# ... and whose argument at this position is an lvalue they may assign (sub, gsub)
TARGET_ARGS = {"sub": 2, "gsub": 2}


@dataclass
class Uses:
    """How one body (a rule set, BEGIN, END or a function) uses names, and what it may do."""

    scalars: set[str] = field(default_factory=set)  # read or assigned as scalars
    arrays: set[str] = field(default_factory=set)  # used as arrays
    bare: set[str] = field(default_factory=set)  # passed bare (to a function, to length)
    assigned: set[str] = field(default_factory=set)  # assigned (=, op=, ++, getline var, sub target...)
    calls: set[str] = field(default_factory=set)  # user functions called
    getline_main: bool = False  # plain `getline` or `getline var`: reads the main input
    getline_any: bool = False  # any getline form

    def names(self) -> set[str]:
        return self.scalars | self.arrays | self.bare

    def merge(self, other: Uses) -> None:
        self.scalars |= other.scalars
        self.arrays |= other.arrays
        self.bare |= other.bare
        self.assigned |= other.assigned
        self.calls |= other.calls
        self.getline_main |= other.getline_main
        self.getline_any |= other.getline_any


def uses(nodes: list, params: frozenset[str] = frozenset()) -> Uses:
    """The global uses of statements and expressions (`params`: the function's locals)."""
    u = Uses()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n is None or not isinstance(n, tuple) or not n:
            continue
        k = n[0]
        if k == "var":
            if n[1] not in params:
                u.scalars.add(n[1])
            continue
        if k == "index":
            if n[1] not in params:
                u.arrays.add(n[1])
            stack.extend(n[2])
            continue
        if k == "in":
            if n[2] not in params:
                u.arrays.add(n[2])
            stack.extend(n[1])
            continue
        if k == "forin":
            if n[1] not in params:
                u.scalars.add(n[1])
                u.assigned.add(n[1])
            if n[2] not in params:
                u.arrays.add(n[2])
            stack.append(n[3])
            continue
        if k == "delete":
            if n[1] not in params:
                u.arrays.add(n[1])
            if n[2] is not None:
                stack.extend(n[2])
            continue
        if k == "call":
            u.calls.add(n[1])
            for a in n[2]:
                if a[0] == "var":
                    if a[1] not in params:
                        u.bare.add(a[1])
                else:
                    stack.append(a)
            continue
        if k == "builtin":
            name, args = n[1], n[2]
            arrays = ARRAY_ARGS.get(name, ())
            for i, a in enumerate(args):
                if i in arrays and a[0] == "var":
                    if a[1] not in params:
                        u.arrays.add(a[1])
                elif name == "length" and a[0] == "var":
                    if a[1] not in params:
                        u.bare.add(a[1])
                else:
                    if TARGET_ARGS.get(name) == i:
                        _assigned(u, a, params)
                    stack.append(a)
            continue
        if k in ("assign", "preinc", "postinc"):
            _assigned(u, n[2], params)
        elif k in ("getline", "fgetline", "pgetline"):
            u.getline_any = True
            u.getline_main |= k == "getline"
            target = n[1] if k != "pgetline" else n[2]
            if target is not None:
                _assigned(u, target, params)
        for part in n[1:]:
            if isinstance(part, tuple):
                stack.append(part)
            elif isinstance(part, list):
                stack.extend(p for p in part if isinstance(p, tuple))
    return u


def _assigned(u: Uses, target: tuple, params: frozenset[str]) -> None:
    if target[0] == "var" and target[1] not in params:
        u.assigned.add(target[1])


def ungroup(node):
    while node[0] == "group":
        node = node[1]
    return node


def const_field(node) -> int | None:
    """i for `$i` with a constant i >= 0 (in parentheses or not), else None."""
    while node[0] == "group":
        node = node[1]
    if node[0] == "field":
        inner = node[1]
        while inner[0] == "group":
            inner = inner[1]
        if inner[0] == "num" and inner[1] >= 0 and inner[1] == int(inner[1]):
            return int(inner[1])
    return None


def is_safe(node) -> bool:
    """Whether evaluating `node` can neither fail nor change anything (so it may come after
    what it should precede)."""
    while node[0] == "group":
        node = node[1]
    return node[0] in ("num", "str") or const_field(node) is not None


def height(node, memo: dict[int, int]) -> int:
    """The depth of the tree under `node` (1 for a leaf)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    h = 0
    for part in node[1:]:
        if isinstance(part, tuple) and part and isinstance(part[0], str):
            h = max(h, height(part, memo))
        elif isinstance(part, list):
            for p in part:
                if isinstance(p, tuple) and p and isinstance(p[0], str):
                    h = max(h, height(p, memo))
    memo[id(node)] = h + 1
    return h + 1


# built-ins whose value is always a number
NUMERIC_BUILTINS = frozenset({"length", "index", "split", "sub", "gsub", "match", "sin", "cos", "atan2",
                              "exp", "log", "sqrt", "int", "rand", "srand", "system", "close", "fflush"})


def numeric(node) -> bool:
    """Whether an expression's value is surely a number, by its form alone."""
    node = ungroup(node)
    k = node[0]
    if k in ("num", "regex", "or", "and", "not", "in", "match", "cmp", "neg", "pos", "bin", "preinc",
             "postinc", "getline", "fgetline", "pgetline"):
        return True
    if k == "assign":
        return node[1] != "=" or numeric(node[3])
    if k == "cond":
        return numeric(node[2]) and numeric(node[3])
    if k == "builtin":
        return node[1] in NUMERIC_BUILTINS
    return False


def string_targets(node) -> set[str]:
    """The variables `node` may assign something other than a number (a string, a field's
    value): `=` of a value not numeric(), getline's, sub's and for-in's targets."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, tuple) or not n:
            continue
        k = n[0]
        target = None
        if k == "assign" and n[1] == "=" and not numeric(n[3]):
            target = n[2]
        elif k in ("getline", "fgetline"):
            target = n[1]
        elif k == "pgetline":
            target = n[2]
        elif k == "builtin" and n[1] in TARGET_ARGS and len(n[2]) > 2:
            target = n[2][2]
        elif k == "forin":
            found.add(n[1])
        if target is not None:
            target = ungroup(target)
            if target[0] == "var":
                found.add(target[1])
        for part in n[1:]:
            if isinstance(part, tuple):
                stack.append(part)
            elif isinstance(part, list):
                stack.extend(p for p in part if isinstance(p, tuple))
    return found


def changes_record(node) -> bool:
    """Whether evaluating `node` may change $0 or the fields (so a field list read before it
    may be stale after): field, NF and $0 assignments, sub/gsub on a field or $0, getline
    into the record or a field, and any user function call."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, tuple) or not n:
            continue
        k = n[0]
        if k == "call":
            return True
        if k in ("assign", "preinc", "postinc") and _record_target(n[2]):
            return True
        if k in ("getline", "fgetline") and (n[1] is None or _record_target(n[1])):
            return True
        if k == "pgetline" and (n[2] is None or _record_target(n[2])):
            return True
        if k == "builtin" and n[1] in TARGET_ARGS:
            args = n[2]
            if len(args) < 3 or _record_target(args[2]):
                return True
        for part in n[1:]:
            if isinstance(part, tuple):
                stack.append(part)
            elif isinstance(part, list):
                stack.extend(p for p in part if isinstance(p, tuple))
    return False


def _record_target(target: tuple) -> bool:
    while target[0] == "group":
        target = target[1]
    return target[0] == "field" or (target[0] == "var" and target[1] == "NF")


def has_loop_control(node, kinds: tuple[str, ...]) -> bool:
    """Whether a statement holds `break`/`continue` (as `kinds` says) that would leave or
    restart the loop it is the body of (not one of a loop nested inside it)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, tuple) or not n:
            continue
        k = n[0]
        if k in kinds:
            return True
        if k in ("while", "do", "for", "forin"):
            continue
        if k == "block":
            stack.extend(n[1])
        elif k == "if":
            stack.append(n[2])
            if n[3] is not None:
                stack.append(n[3])
    return False


@dataclass
class Program:
    """Facts about the whole program (its reachable functions included)."""

    funcs: dict  # name -> (params, body)
    reachable: set[str]  # functions reachable from BEGIN, the rules and END
    func_uses: Uses  # the globals all reachable functions use, merged
    all_uses: Uses  # everything, functions included

    def hoistable(self, name: str) -> bool:
        """Whether a global may live in a Python local of a body that uses it: no function
        touches it, it is never passed bare (a callee could make it an array), it is not used
        both as a scalar and as an array (whose failure must happen where it does), and the
        runtime never reads it (command-line assignments are synced around)."""
        a = self.all_uses
        return (name not in SPECIAL and name not in GAWK_ONLY_VARS and name not in self.func_uses.names()
                and name not in a.bare and not (name in a.scalars and name in a.arrays)
                and name not in self.funcs and not a.getline_main)


def analyse(begins: list, ends: list, rules: list, funcs: dict) -> Program:
    top = uses([*begins, *ends, *(p for r in rules for p in r if p is not None)])
    reachable: set[str] = set()
    per_func: dict[str, Uses] = {}
    todo = [n for n in top.calls if n in funcs]
    while todo:
        name = todo.pop()
        if name in reachable:
            continue
        reachable.add(name)
        params, body = funcs[name]
        u = per_func[name] = uses([body], frozenset(params))
        todo.extend(n for n in u.calls if n in funcs and n not in reachable)
    func_uses = Uses()
    for u in per_func.values():
        func_uses.merge(u)
    all_uses = Uses()
    all_uses.merge(top)
    all_uses.merge(func_uses)
    return Program(funcs, reachable, func_uses, all_uses)
