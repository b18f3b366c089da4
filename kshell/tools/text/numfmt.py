"""numfmt (--from/--to none|si|iec|iec-i|auto, --suffix, --padding, --field, --format, -d,
--header, --round, --from-unit/--to-unit), as GNU coreutils 9.1.

Scaled output follows GNU's double_to_human: the value divided down below the base, one decimal
kept below 10, rounded (up, by default) at that precision, re-scaled when rounding reaches the
base. With the default blank delimiter each converted field keeps its input width (its leading
blanks included), so columns stay aligned.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, OPTIONAL, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, lines, message, open_chunks

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"from": ("from", REQUIRED), "from-unit": ("from-unit", REQUIRED), "to": ("to", REQUIRED),
         "to-unit": ("to-unit", REQUIRED), "round": ("round", REQUIRED), "suffix": ("suffix", REQUIRED),
         "padding": ("padding", REQUIRED), "field": ("field", REQUIRED), "format": ("format", REQUIRED),
         "delimiter": ("d", REQUIRED), "header": ("header", OPTIONAL), "invalid": ("invalid", REQUIRED),
         "grouping": ("grouping", NONE), "zero-terminated": ("z", NONE), "debug": ("debug", NONE),
         "help": ("help", NONE), "version": ("version", NONE)}
_SCALES = ("none", "auto", "si", "iec", "iec-i")
_ROUNDS = ("up", "down", "from-zero", "towards-zero", "nearest")
_LETTERS = "KMGTPEZY"
_NUMBER = re.compile(r"\s*(-?)([0-9]*)(\.([0-9]*))?")
EXIT_INVALID = 2


def _choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    if value in choices:
        return value
    matches = [c for c in choices if c.startswith(value)]
    if len(matches) == 1:
        return matches[0]
    valid = "".join(f"  - '{c}'\n" for c in choices)
    word = "ambiguous" if matches else "invalid"
    raise Usage(f"{word} argument '{value}' for '--{option}'\nValid arguments are:\n{valid.rstrip()}")


def _round(v: float, how: str) -> float:
    if how == "up":
        return math.ceil(v)
    if how == "down":
        return math.floor(v)
    if how == "from-zero":
        return math.ceil(v) if v >= 0 else math.floor(v)
    if how == "towards-zero":
        return math.trunc(v)
    return math.floor(v + 0.5) if v >= 0 else math.ceil(v - 0.5)


def _fields(spec: str) -> list[tuple[int, int]]:
    """--field: N, N-M, -M, N- and lists of them, as cut reads them."""
    ranges: list[tuple[int, int]] = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d*)(-?)(\d*)", part)
        if not m or (not m.group(1) and not m.group(3) and part != "-"):
            raise Fail(f"invalid field value '{spec}'" if part else "fields are numbered from 1")
        lo = int(m.group(1)) if m.group(1) else 1
        hi = (int(m.group(3)) if m.group(3) else 2**62) if m.group(2) else lo
        if lo == 0 or hi == 0:
            raise Fail("fields are numbered from 1")
        ranges.append((lo, hi))
    return ranges


class _Numfmt:
    """The options, and the conversion of one field's text."""

    def __init__(self) -> None:
        self.from_scale = self.to_scale = "none"
        self.from_unit = self.to_unit = 1
        self.rounding = "from-zero"
        self.suffix = ""
        self.padding = 0
        self.fmt: tuple[str, str, str] | None = None  # (prefix, flags/width, suffix)
        self.precision: int | None = None

    def parse_value(self, text: str) -> tuple[float, int]:
        """(value, digits after the point) of an input field, its suffix applied."""
        m = _NUMBER.match(text)
        if not m or not (m.group(2) or m.group(4)):
            raise Fail(f"invalid number: '{text}'", EXIT_INVALID)
        digits = m.group(4) or ""
        value = float((m.group(1) or "") + (m.group(2) or "0") + "." + (digits or "0"))
        rest = text[m.end():]
        if self.suffix and rest.endswith(self.suffix):
            rest = rest[: -len(self.suffix)]
        if rest:
            letter = rest[0].upper() if rest[0] in "kK" else rest[0]
            if letter not in _LETTERS:
                raise Fail(f"invalid suffix in input: '{text}'", EXIT_INVALID)
            if self.from_scale == "none":
                raise Fail(f"rejecting suffix in input: '{text}' (consider using --from)", EXIT_INVALID)
            power = _LETTERS.index(letter) + 1
            tail = rest[1:]
            if self.from_scale == "auto":
                base = 1024 if tail == "i" else 1000
                tail = tail[1:] if tail == "i" else tail
            elif self.from_scale == "iec-i":
                if tail[:1] != "i":
                    raise Fail(f"missing 'i' suffix in input: '{text}' (e.g Ki/Mi/Gi)", EXIT_INVALID)
                base, tail = 1024, tail[1:]
            else:
                base = 1000 if self.from_scale == "si" else 1024
            if tail:
                raise Fail(f"invalid suffix in input: '{text}'", EXIT_INVALID)
            value *= base**power
            digits = ""
        return value * self.from_unit, len(digits)

    def render(self, value: float, digits: int, text: str) -> str:
        value /= self.to_unit
        if self.to_scale == "none":
            if abs(value) >= 1e18 and self.precision is None:
                raise Fail(f"value too large to be converted: '{text}'", EXIT_INVALID)
            places = self.precision if self.precision is not None else digits
            shown = _round(value * 10**places, self.rounding) / 10**places
            out = f"{shown:.{places}f}"
        else:
            if abs(value) >= 1e27:
                raise Fail(f"value too large to be converted: '{text}'", EXIT_INVALID)
            base = 1000 if self.to_scale == "si" else 1024
            power = 0
            while abs(value) >= base and power < len(_LETTERS):
                value /= base
                power += 1
            adjust = self.precision if self.precision is not None else (1 if abs(value) < 10 else 0)
            value = _round(value * 10**adjust, self.rounding) / 10**adjust
            if abs(value) >= base:
                value /= base
                power += 1
            places = adjust if self.precision is not None else (1 if value != 0 and abs(value) < 10 and power else 0)
            letter = _LETTERS[power - 1] if power else ""
            if letter and self.to_scale == "iec-i":
                letter += "i"
            out = f"{value:.{places}f}{letter}"
        out += self.suffix
        if self.fmt is not None:
            prefix, spec, after = self.fmt
            width = re.sub(r"[^0-9-]|\..*", "", spec.split(".")[0].replace("'", ""))
            if width.lstrip("-").startswith("0") and not width.startswith("-"):
                body = out.rjust(int(width), "0") if out[0] != "-" else "-" + out[1:].rjust(int(width) - 1, "0")
            elif width and width != "-":
                n = int(width)
                body = out.ljust(-n) if n < 0 else out.rjust(n)
            else:
                body = out
            out = prefix + body + after
        return out


def _parse_format(fmt: str, conv: _Numfmt) -> None:
    m = re.fullmatch(r"((?:[^%]|%%)*)%([-0']*)(\d*)(?:\.(\d*))?f((?:[^%]|%%)*)", fmt)
    if not m:
        if "%" not in fmt.replace("%%", ""):
            raise Fail(f"format '{fmt}' has no % directive")
        raise Fail(f"invalid format '{fmt}', directive must be %[0]['][-][N][.][N]f")
    flags, width = m.group(2).replace("'", ""), m.group(3)
    spec = ("-" if "-" in flags else "") + ("0" if "0" in flags and "-" not in flags else "") + width
    conv.fmt = (m.group(1).replace("%%", "%"), spec, m.group(5).replace("%%", "%"))
    if m.group(4) is not None:
        conv.precision = int(m.group(4) or 0)


@tool("numfmt")
def numfmt(sh: ToolContext, argv: list[str]) -> int:
    opts, numbers = parse(argv, "d:z", _LONG)
    conv = _Numfmt()
    fields: list[tuple[int, int]] = [(1, 1)]
    delimiter: str | None = None
    header = 0
    end = b"\n"
    for key, value in opts:
        if key == "from":
            conv.from_scale = _choice("from", value, _SCALES)
        elif key == "to":
            conv.to_scale = _choice("to", value, tuple(s for s in _SCALES if s != "auto"))
        elif key in ("from-unit", "to-unit"):
            if not value.isdigit() or int(value) == 0:
                raise Fail(f"invalid unit size: '{value}'")
            setattr(conv, key.replace("-", "_"), int(value))
        elif key == "round":
            conv.rounding = _choice("round", value, _ROUNDS)
        elif key == "suffix":
            conv.suffix = value
        elif key == "padding":
            if not re.fullmatch(r"-?\d+", value) or int(value) == 0:
                raise Fail(f"invalid padding value '{value}'")
            conv.padding = int(value)
        elif key == "field":
            fields = _fields(value)
        elif key == "format":
            _parse_format(value, conv)
        elif key == "d":
            if len(value) > 1:
                raise Fail("the delimiter must be a single character")
            delimiter = value
        elif key == "header":
            if value is not None and (not value.isdigit() or int(value) == 0):
                raise Fail(f"invalid header value '{value}'")
            header = int(value) if value is not None else 1
        elif key == "z":
            end = b"\0"
        elif key == "help":
            sh.out(b"Usage: numfmt [OPTION]... [NUMBER]...\n")
            return 0
        elif key == "version":
            sh.out(b"numfmt (GNU coreutils) 9.1\n")
            return 0
    if conv.fmt is not None and conv.padding:
        raise Fail("--padding and --format are mutually exclusive")
    out = Output(sh)

    def field(text: str, width: int) -> str:
        value, digits = conv.parse_value(text)
        shown = conv.render(value, digits, text)
        if conv.padding:
            return shown.rjust(conv.padding) if conv.padding > 0 else shown.ljust(-conv.padding)
        return shown.rjust(width)

    def convert_line(line: str) -> str:
        """The line with its selected fields converted; on a bad field, what GNU had written
        of the line (the fields before it and the blanks or delimiter leading to it) goes out
        before the error."""
        sep = delimiter if delimiter is not None else ""
        pieces = line.split(delimiter) if delimiter is not None else re.findall(r"\s*\S+|\s+$", line) or [line]
        done: list[str] = []
        for i, piece in enumerate(pieces, 1):
            if not any(lo <= i <= hi for lo, hi in fields) or (delimiter is None and not piece.strip()):
                done.append(piece)
                continue
            try:
                if delimiter is not None:
                    done.append(field(piece, 0))
                else:
                    done.append(field(piece.strip(), len(piece) if i > 1 or piece[:1].isspace() else 0))
            except Fail:
                lead = sep if done and delimiter is not None else piece[: len(piece) - len(piece.lstrip())]
                out.write((sep.join(done) + lead).encode("utf-8", "surrogateescape"))
                raise
        return sep.join(done)

    try:
        if numbers:
            for n in numbers:
                out.write((convert_line(n) + end.decode()).encode("utf-8", "surrogateescape"))
        else:
            for number, raw in enumerate(lines(open_chunks(sh, "-"), end), 1):
                text = raw[:-1] if raw.endswith(end) else raw
                line = text.decode("utf-8", "surrogateescape")
                if number <= header:
                    out.write(raw if raw.endswith(end) else raw + end)
                    continue
                out.write((convert_line(line) + end.decode()).encode("utf-8", "surrogateescape"))
    except OSError as e:
        out.flush()
        raise Fail(message(e)) from None
    except Fail:
        out.flush()
        raise
    out.flush()
    return 0
