"""factor and tsort, as GNU coreutils 9.1: two small number and graph tools that build scripts
call (factor for test data, tsort to order dependencies)."""

from __future__ import annotations

import math
import random
import re
from collections import deque
from typing import TYPE_CHECKING

from kshell.core.options import NONE, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, message, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_HELP_LONG = {"help": ("help", NONE), "version": ("version", NONE)}
_SMALL_PRIMES = [p for p in range(2, 1000) if all(p % d for d in range(2, int(p**0.5) + 1))]
_UNSIGNED = re.compile(r"[ \t\n\v\f\r]*\+?([0-9]+)\Z")


def _is_prime(n: int) -> bool:
    """Miller-Rabin: the first twelve prime bases are exact below 3.3e24; beyond, 20 more
    random bases leave a composite a chance below 4^-20."""
    if n < 2:
        return False
    for p in _SMALL_PRIMES[:12]:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    rng = random.Random(n)
    bases = _SMALL_PRIMES[:12] + ([rng.randrange(2, n - 1) for _ in range(20)] if n >> 81 else [])
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _rho(n: int, cancel) -> int:
    """A nontrivial factor of the odd composite n (Pollard-Brent)."""
    rng = random.Random(n)
    while True:
        y, c, m = rng.randrange(1, n), rng.randrange(1, n), 128
        g = r = q = 1
        x = ys = y
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(m, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = math.gcd(q, n)
                k += m
            r *= 2
            cancel.check()
        if g == n:
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = math.gcd(abs(x - ys), n)
        if g != n:
            return g


def factorize(n: int, cancel) -> list[int]:
    """The prime factors of n, ascending, with multiplicity."""
    found: list[int] = []
    if n < 2:
        return found
    for p in _SMALL_PRIMES:
        while n % p == 0:
            found.append(p)
            n //= p
    todo = [n] if n > 1 else []
    while todo:
        m = todo.pop()
        if _is_prime(m):
            found.append(m)
            continue
        root = math.isqrt(m)
        if root * root == m:
            todo += [root, root]
            continue
        d = _rho(m, cancel)
        todo += [d, m // d]
    return sorted(found)


@tool("factor")
def factor(sh: ToolContext, argv: list[str]) -> int:
    opts, numbers = parse(argv, "", _HELP_LONG)
    for key, _ in opts:
        if key == "help":
            sh.out(b"Usage: factor [NUMBER]...\n")
            return 0
        if key == "version":
            sh.out(b"factor (GNU coreutils) 9.1\n")
            return 0
    out = Output(sh)
    status = 0
    if not numbers:
        try:
            numbers = read_all(sh, "-").decode("utf-8", "surrogateescape").split()
        except OSError as e:
            raise Fail(message(e)) from None
    for text in numbers:
        m = _UNSIGNED.match(text)
        if not m:
            out.flush()
            sh.write_err(f"factor: '{text}' is not a valid positive integer\n")
            status = 1
            continue
        n = int(m.group(1))
        out.write(f"{n}:{''.join(f' {p}' for p in factorize(n, sh.session.cancel))}\n".encode())
    out.flush()
    return status


class _Item:
    """A tsort item: how many predecessors remain, its successors (the latest first, as GNU
    prepends them), and the link that GNU's loop search threads through the items."""

    __slots__ = ("name", "count", "succ", "printed", "link")

    def __init__(self, name: bytes) -> None:
        self.name = name
        self.count = 0
        self.succ: list[_Item] = []
        self.printed = False
        self.link: _Item | None = None


@tool("tsort")
def tsort(sh: ToolContext, argv: list[str]) -> int:
    opts, files = parse(argv, "", _HELP_LONG)
    for key, _ in opts:
        if key == "help":
            sh.out(b"Usage: tsort [OPTION] [FILE]\n")
            return 0
        if key == "version":
            sh.out(b"tsort (GNU coreutils) 9.1\n")
            return 0
    if len(files) > 1:
        raise Usage(f"extra operand '{files[1]}'")
    name = files[0] if files else "-"
    try:
        tokens = [t for t in re.split(rb"[ \t\n]+", read_all(sh, name)) if t]
    except OSError as e:
        raise Fail(f"{name}: {message(e)}") from None
    if len(tokens) % 2:
        raise Fail(f"{name}: input contains an odd number of tokens")
    items: dict[bytes, _Item] = {}
    for t in tokens:
        if t not in items:
            items[t] = _Item(t)
    for a, b in zip(tokens[::2], tokens[1::2]):
        if a != b:
            items[b].count += 1
            items[a].succ.insert(0, items[b])
    order = [items[k] for k in sorted(items)]  # GNU walks its search tree in order
    out = Output(sh)
    remaining = len(order)
    ok = True
    while remaining:
        queue = deque(k for k in order if k.count == 0 and not k.printed)
        while queue:
            head = queue.popleft()
            out.write(head.name + b"\n")
            head.printed = True
            remaining -= 1
            for s in head.succ:
                s.count -= 1
                if s.count == 0:
                    queue.append(s)
        if remaining:
            out.flush()
            sh.write_err(f"tsort: {name}: input contains a loop:\n")
            ok = False
            search = _LoopSearch(order)
            while search.walk(sh):
                pass
    out.flush()
    return 0 if ok else 1


class _LoopSearch:
    """GNU's loop search: walk the items in order, following predecessors from the first item
    still waiting until one repeats; report that loop and drop its last relation."""

    def __init__(self, order: list[_Item]) -> None:
        self.order = order
        self.start: _Item | None = None

    def walk(self, sh: ToolContext) -> bool:
        """One walk; True while the search must walk again (no loop closed yet)."""
        for k in self.order:
            if k.count <= 0:
                continue
            if self.start is None:
                self.start = k
                continue
            for i, s in enumerate(k.succ):
                if s is not self.start:
                    continue
                if k.link is None:
                    k.link, self.start = self.start, k
                    break
                self._report(sh, k, i)
                return False
        return self.start is not None

    def _report(self, sh: ToolContext, k: _Item, i: int) -> None:
        node = self.start
        while node is not None:
            nxt = node.link
            sh.write_err("tsort: " + node.name.decode("utf-8", "surrogateescape") + "\n")
            if node is k:
                k.succ[i].count -= 1
                del k.succ[i]
                break
            node.link = None
            node = nxt
        while node is not None:
            nxt = node.link
            node.link = None
            node = nxt
        self.start = None
