"""printf's number and padding conversions (%d %i %o %u %x %X with flags, width and precision,
the float ones, and the space padding of a field), as the printf builtin and hexdump's -e
formats both print them: one module below both."""

from __future__ import annotations

import math


def pad(text: str, flags: str, width: int | None) -> str:
    if width is None or len(text) >= width:
        return text
    if "-" in flags:
        return text.ljust(width)
    return text.rjust(width)


def int_format(value: int, conv: str, flags: str, width: int | None, prec: int | None) -> str:
    if conv in "ouxX":
        value &= (1 << 64) - 1
    if conv in "di" or conv == "u":
        digits = str(abs(value))
    elif conv == "o":
        digits = format(value, "o")
    elif conv == "x":
        digits = format(value, "x")
    else:
        digits = format(value, "X")
    if prec is not None:
        if prec == 0 and value == 0:
            digits = ""
        digits = digits.rjust(prec, "0")
    prefix = ""
    if conv in "di":
        if value < 0:
            prefix = "-"
        elif "+" in flags:
            prefix = "+"
        elif " " in flags:
            prefix = " "
    elif "#" in flags:
        if conv == "o" and not digits.startswith("0"):
            prefix = "0"
        elif conv in "xX" and value != 0:
            prefix = "0" + conv
    if "0" in flags and "-" not in flags and prec is None and width is not None:
        digits = digits.rjust(width - len(prefix), "0")
    return pad(prefix + digits, flags, width)


def float_format(value: float, conv: str, flags: str, width: int | None, prec: int | None) -> str:
    spec = "".join(c for c in flags if c in "-+ #0")
    if math.isinf(value) or math.isnan(value):
        spec = spec.replace("0", "")
        if math.isnan(value) and math.copysign(1.0, value) < 0:  # C shows a NaN's sign: -nan
            return pad("-" + ("NAN" if conv.isupper() else "nan"), flags, width)
    text = ("%" + spec + (str(width) if width is not None else "") +
            ("." + str(prec) if prec is not None else "") + conv) % value
    return text
