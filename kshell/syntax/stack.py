"""How much of Python's recursion limit is left: the parsers size their nesting limits from it,
so deep input is a ShellSyntaxError ("maximum nesting depth exceeded"), never RecursionError."""

from __future__ import annotations

import sys


def headroom() -> int:
    """Frames that may still be pushed before RecursionError, from the caller's frame."""
    depth = 0
    frame = sys._getframe(1)
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return sys.getrecursionlimit() - depth


def nesting_limit(cap: int, frames_per_level: int, reserve: int = 80) -> int:
    """The nesting depth a recursive parser may allow from here: at most `cap`."""
    return max(1, min(cap, (headroom() - reserve) // frames_per_level))
