"""bc's numbers: exact decimals (an int and a scale) with POSIX bc's rules for each result's scale,
truncating as bc does, and its digits in any obase (the machine breaks long lines)."""

from __future__ import annotations

from dataclasses import dataclass


class BcError(Exception):
    """A runtime error in bc's words (`Divide by zero`, `Square root of a negative number`);
    `func` is the function it happened in (None: the main program)."""

    func: str | None = None


@dataclass(frozen=True, slots=True)
class Num:
    """value = n / 10**scale."""

    n: int
    scale: int = 0

    def at(self, scale: int) -> int:
        """The value scaled to `scale` digits, truncated toward zero."""
        if scale >= self.scale:
            return self.n * 10 ** (scale - self.scale)
        d = 10 ** (self.scale - scale)
        q = abs(self.n) // d
        return q if self.n >= 0 else -q

    def rescale(self, scale: int) -> Num:
        return Num(self.at(scale), scale)

    def is_zero(self) -> bool:
        return self.n == 0

    def truth(self) -> bool:
        return self.n != 0

    def sign(self) -> int:
        return (self.n > 0) - (self.n < 0)

    def to_int(self) -> int:
        return self.at(0)

    def length(self) -> int:
        """bc's length(): significant digits (the scale's digits count; leading zeros do not)."""
        if self.n == 0:
            return max(self.scale, 1) if self.scale else 1
        digits = len(str(abs(self.n)))
        return max(digits, self.scale)


ZERO = Num(0)
ONE = Num(1)


def _cmp(a: Num, b: Num) -> int:
    s = max(a.scale, b.scale)
    x, y = a.at(s), b.at(s)
    return (x > y) - (x < y)


def compare(a: Num, b: Num) -> int:
    return _cmp(a, b)


def add(a: Num, b: Num) -> Num:
    s = max(a.scale, b.scale)
    return Num(a.at(s) + b.at(s), s)


def sub(a: Num, b: Num) -> Num:
    s = max(a.scale, b.scale)
    return Num(a.at(s) - b.at(s), s)


def mul(a: Num, b: Num, scale: int) -> Num:
    full = Num(a.n * b.n, a.scale + b.scale)
    return full.rescale(min(a.scale + b.scale, max(scale, a.scale, b.scale)))


def div(a: Num, b: Num, scale: int) -> Num:
    if b.n == 0:
        raise BcError("Divide by zero")
    # a/b at `scale`: (a.n * 10^(scale + b.scale - a.scale)) / b.n, truncated
    num = a.n * 10 ** (scale + b.scale)
    den = b.n * 10 ** a.scale
    q = abs(num) // abs(den)
    return Num(q if (num >= 0) == (den >= 0) else -q, scale)


def mod(a: Num, b: Num, scale: int) -> Num:
    if b.n == 0:
        raise BcError("Modulo by zero")
    q = div(a, b, scale)
    return sub(a, mul(q, b, max(scale + b.scale, a.scale))).rescale(max(scale + b.scale, a.scale))


def power(a: Num, b: Num, scale: int, warn) -> Num:
    if b.scale and b.n % 10 ** b.scale:
        warn("non-zero scale in exponent")
    e = b.to_int()
    if e == 0:
        return ONE
    if e < 0:
        pos = Num(a.n ** -e, a.scale * -e)
        return div(ONE, pos, scale)
    result_scale = min(a.scale * e, max(scale, a.scale))
    return Num(a.n ** e, a.scale * e).rescale(result_scale)


def sqrt(a: Num, scale: int) -> Num:
    if a.n < 0:
        raise BcError("Square root of a negative number")
    s = max(scale, a.scale)
    # floor(sqrt(a * 10^(2s)))
    import math

    return Num(math.isqrt(a.at(2 * s)), s)


def negate(a: Num) -> Num:
    return Num(-a.n, a.scale)


def parse_number(text: str, ibase: int) -> Num:
    """A constant as bc reads it in `ibase` (a single digit keeps its own value; a digit above
    the base is taken at its value, as GNU bc)."""
    whole, _, frac = text.partition(".")
    if len(text) == 1 and text.isalnum():
        return Num(int(text, 16))
    n = 0
    for c in whole:
        n = n * ibase + int(c, 16)
    if not frac:
        return Num(n)
    # the fraction: as many decimal digits as given digits
    num, den = 0, 1
    for c in frac:
        num = num * ibase + int(c, 16)
        den *= ibase
    s = len(frac)
    value = Num(n * den + num, 0)
    return div(value, Num(den), s)


def digits_of(n: int, base: int) -> list[int]:
    if n == 0:
        return [0]
    out = []
    while n:
        n, r = divmod(n, base)
        out.append(r)
    return out[::-1]


def format_num(a: Num, obase: int) -> str:
    """A number as bc prints it: `-.5`, `3.140`, `0`; other bases digit by digit (bases above 16
    as space-separated decimal groups)."""
    neg = a.n < 0
    whole, frac = divmod(abs(a.n), 10 ** a.scale)
    if obase == 10:
        if a.n == 0:
            return "0"
        text = str(whole) if whole or not a.scale else ""
        if a.scale:
            text += "." + str(frac).rjust(a.scale, "0")
        return ("-" if neg else "") + text

    def digit(d: int, space: bool = True) -> str:
        """One digit: a letter up to base 16, else a zero-padded decimal group after a space
        (none before the first digit of a fraction, as GNU bc)."""
        if obase <= 16:
            return "0123456789ABCDEF"[d]
        width = len(str(obase - 1))
        return (" " if space else "") + str(d).rjust(width, "0")

    text = "".join(digit(d) for d in digits_of(whole, obase)) if whole or not a.scale else ""
    if a.scale:
        text += "."
        f = Num(frac, a.scale)
        limit = 10 ** a.scale
        place = 1
        while place < limit:
            prod = f.n * obase
            d, rest = divmod(prod, 10 ** a.scale)
            text += digit(d, space=not text.endswith("."))
            f = Num(rest, a.scale)
            place *= obase
    if a.n == 0:
        text = digit(0)
    return ("-" if neg else "") + text

