"""Sizes shown in units, as gnulib's human.c does for GNU ls (and du, df): the
`--block-size=SIZE` argument (and the LS_BLOCK_SIZE, BLOCK_SIZE, BLOCKSIZE variables) read as
human_options reads it, and a count turned into the text such a unit prints.

SIZE is a number with an optional unit (`K`, `M`, ... powers of 1024, `KB`, `MB`, ... of 1000,
`KiB` as `K`): a number of such units is printed without a suffix. A unit without a number
(`K`, `MB`, `KiB`) prints the unit after each count (`4K`, `5kB`). `human-readable` and `si` (or
a prefix of them) scale each count to its own unit, as -h and --si. Counts are rounded up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kfs.format import human_size

_POWERS = {c: i for i, c in enumerate("kmgtpezy", 1)}
_LETTERS = "KMGTPEZY"
_UINTMAX = 2**64 - 1


@dataclass(frozen=True)
class Units:
    """How counts are shown: `block` bytes a unit; `auto` scales each count (-h, --si) in
    powers of `base`; `suffix` prints the unit after the count (`K`, and `B` or `iB` after it
    when `bytes_suffix`)."""

    block: int = 1
    auto: bool = False
    suffix: bool = False
    base: int = 1024
    bytes_suffix: bool = False

    def show(self, amount: int, from_block: int = 1) -> str:
        """`amount` units of `from_block` bytes in these units (gnulib's human_readable,
        rounding up)."""
        if self.auto:
            return human_size(amount * from_block, si=self.base == 1000)
        value = math.ceil(amount * from_block / self.block) if amount else 0
        if self.block % from_block == 0 and amount:  # exact integers, no float rounding
            value = -(-amount // (self.block // from_block))
        text = str(value)
        if not self.suffix:
            return text
        exponent, power = 0, 1
        while power < self.block and exponent < len(_LETTERS):
            power *= self.base
            exponent += 1
        if exponent:
            text += "k" if exponent == 1 and self.base == 1000 else _LETTERS[exponent - 1]
        if self.bytes_suffix:
            text += ("i" if self.base == 1024 and exponent else "") + "B"
        return text


HUMAN = Units(auto=True)
SI = Units(auto=True, base=1000)


class BlockSizeError(ValueError):
    """SIZE refused: `kind` is GNU's xstrtol error (invalid, suffix, too large)."""

    def __init__(self, spec: str, kind: str) -> None:
        super().__init__(spec)
        self.spec = spec
        self.kind = kind

    def message(self, option: str = "--block-size") -> str:
        """GNU's xstrtol_fatal text, e.g. `invalid suffix in --block-size argument '1X'`."""
        if self.kind == "suffix":
            return f"invalid suffix in {option} argument '{self.spec}'"
        if self.kind == "large":
            return f"{option} argument '{self.spec}' too large"
        return f"invalid {option} argument '{self.spec}'"


def parse_block_size(spec: str) -> Units:
    """human_options(SPEC): the Units a --block-size argument names; BlockSizeError if none."""
    text = spec[1:] if spec.startswith("'") else spec  # digit grouping: none in K's locales
    for name, units in (("human-readable", HUMAN), ("si", SI)):
        if text and name.startswith(text):  # argmatch takes an unambiguous prefix
            return units
    digits = len(text) - len(text.lstrip("0123456789"))
    if text[:1] in ("-", "+") or (not digits and (not text or text[0].lower() not in _POWERS)):
        raise BlockSizeError(spec, "invalid")
    number = int(text[:digits]) if digits else 1
    rest = text[digits:]
    base = 1024
    if rest:
        letter = rest[0].lower()
        if letter not in _POWERS:
            raise BlockSizeError(spec, "suffix")
        tail = rest[1:]
        if tail == "iB":
            tail = ""
        elif tail in ("B", "D"):
            base, tail = 1000, ""
        if tail:
            raise BlockSizeError(spec, "suffix")
        number *= base ** _POWERS[letter]
    if number > _UINTMAX:
        raise BlockSizeError(spec, "large")
    if number == 0:
        raise BlockSizeError(spec, "invalid")
    shown = not digits  # a unit alone prints itself after each count
    return Units(block=number, suffix=shown, base=base if shown else 1024,
                 bytes_suffix=shown and text.endswith("B"))
