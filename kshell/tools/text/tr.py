"""tr (-c -C -d -s -t; ranges, [:classes:], [c*n], [=c=], escapes), over bytes as GNU tr."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kshell.core.options import NONE, Fail, Usage, parse, tool
from kshell.tools.text.textio import Output, open_chunks

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"complement": ("c", NONE), "delete": ("d", NONE), "squeeze-repeats": ("s", NONE),
         "truncate-set1": ("t", NONE), "help": ("help", NONE), "version": ("version", NONE)}
_CLASSES = {
    "alpha": [c for c in range(256) if chr(c).isascii() and chr(c).isalpha()],
    "digit": list(range(48, 58)),
    "alnum": [c for c in range(256) if chr(c).isascii() and chr(c).isalnum()],
    "upper": list(range(65, 91)), "lower": list(range(97, 123)),
    "space": [32, 9, 10, 11, 12, 13], "blank": [9, 32],
    "punct": [c for c in range(33, 127) if not chr(c).isalnum()],
    "print": list(range(32, 127)), "graph": list(range(33, 127)),
    "cntrl": list(range(32)) + [127], "xdigit": list(b"0123456789ABCDEFabcdef"),
}
_ESC = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}


def _unescape(raw: bytes) -> list[tuple[int, bool]]:
    """(byte, escaped) pairs: backslash escapes decoded."""
    out = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 92 and i + 1 < len(raw):
            d = chr(raw[i + 1])
            if d in "01234567":
                m = re.match(rb"[0-7]{1,3}", raw[i + 1 :])
                digits = m.group()
                if int(digits, 8) > 255:
                    digits = digits[:2]
                out.append((int(digits, 8), True))
                i += 1 + len(digits)
                continue
            out.append((_ESC.get(d, raw[i + 1]), True))
            i += 2
            continue
        out.append((c, False))
        i += 1
    return out


class _Set:
    def __init__(self, chars: list[int], classes: list[tuple[int, str]], repeat: int | None) -> None:
        self.chars = chars
        self.classes = classes  # (position, name) for upper/lower mapping
        self.repeat = repeat  # index of a [c*] filler


def _parse_set(text: str, second: bool) -> _Set:
    items = _unescape(text.encode("utf-8", "surrogateescape"))
    chars: list[int] = []
    classes: list[tuple[int, str]] = []
    repeat = None
    i = 0
    n = len(items)
    while i < n:
        c, esc = items[i]
        if c == 91 and not esc and i + 1 < n:  # [
            nxt = items[i + 1][0]
            if nxt == 58:  # [:class:]
                j = i + 2
                name = ""
                while j + 1 < n and not (items[j][0] == 58 and items[j + 1][0] == 93):
                    name += chr(items[j][0])
                    j += 1
                if j + 1 < n:
                    if name not in _CLASSES:
                        raise Fail(f"invalid character class '{name}'")
                    classes.append((len(chars), name))
                    chars.extend(_CLASSES[name])
                    i = j + 2
                    continue
            if nxt == 61 and i + 3 < n and items[i + 3][0] == 93 and items[i + 2][0] == 61:
                chars.append(items[i + 2][0] if False else items[i + 2][0])
                chars[-1] = items[i + 2][0]
                i += 4
                continue
            if i + 2 < n and items[i + 2][0] == 42:  # [c*n]
                j = i + 3
                digits = ""
                while j < n and chr(items[j][0]).isdigit():
                    digits += chr(items[j][0])
                    j += 1
                if j < n and items[j][0] == 93:
                    if not second:
                        raise Fail("the [c*] repeat construct may not appear in string1")
                    count = int(digits, 8 if digits.startswith("0") else 10) if digits else 0
                    if count == 0:
                        repeat = len(chars)
                        chars.append(nxt)
                    else:
                        chars.extend([nxt] * count)
                    i = j + 1
                    continue
        if i + 2 < n and items[i + 1] == (45, False):
            hi = items[i + 2][0]
            if hi < c:
                raise Fail(f"range-endpoints of '{chr(c)}-{chr(hi)}' are in reverse collating sequence order")
            chars.extend(range(c, hi + 1))
            i += 3
            continue
        chars.append(c)
        i += 1
    return _Set(chars, classes, repeat)


@tool("tr")
def tr(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "cCdst", _LONG)
    comp = delete = squeeze = trunc = False
    for key, _ in opts:
        if key in ("c", "C"):
            comp = True
        elif key == "d":
            delete = True
        elif key == "s":
            squeeze = True
        elif key == "t":
            trunc = True
        elif key == "help":
            sh.out(b"Usage: tr [OPTION]... STRING1 [STRING2]\n")
            return 0
        elif key == "version":
            sh.out(b"tr (GNU coreutils) 9.1\n")
            return 0
    need = 2 if (not delete and not squeeze) or (delete and squeeze) else 1
    if not operands:
        raise Usage("missing operand")
    if len(operands) < need:
        if delete and squeeze:
            raise Usage(
                f"missing operand after '{operands[0]}'\n"
                "Two strings must be given when both deleting and squeezing repeats."
            )
        raise Usage(f"missing operand after '{operands[0]}'\nTwo strings must be given when translating.")
    maxops = 2 if not delete or squeeze else 1
    if len(operands) > maxops:
        extra = f"extra operand '{operands[maxops]}'"
        if delete and not squeeze:
            extra += "\nOnly one string may be given when deleting without squeezing repeats."
        raise Usage(extra)
    set1 = _parse_set(operands[0], False)
    chars1 = set1.chars
    if comp:
        present = set(chars1)
        chars1 = [c for c in range(256) if c not in present]
    table = None
    deletes = b""
    squeeze_set: list[int] = []
    if delete:
        deletes = bytes(sorted(set(chars1)))
        if squeeze:
            squeeze_set = _parse_set(operands[1], True).chars
    elif len(operands) == 2:
        set2 = _parse_set(operands[1], True)
        chars2 = list(set2.chars)
        if set2.repeat is not None:
            fill = max(len(chars1) - (len(chars2) - 1), 0)
            chars2[set2.repeat : set2.repeat + 1] = [chars2[set2.repeat]] * fill
        # case-class conversions [:lower:] -> [:upper:]
        if not chars2:
            raise Fail("when not truncating set1, string2 must be non-empty")
        if trunc:
            chars1 = chars1[: len(chars2)]
        elif len(chars2) < len(chars1):
            chars2 = chars2 + [chars2[-1]] * (len(chars1) - len(chars2))
        mapping = list(range(256))
        for a, b in zip(chars1, chars2):
            mapping[a] = b
        table = bytes(mapping)
        squeeze_set = chars2[: len(chars1)] if squeeze else []
        if squeeze:
            squeeze_set = set2.chars if not comp else chars2
    else:
        squeeze_set = chars1
    squeeze_rx = None
    if squeeze and squeeze_set:
        cls = b"".join(re.escape(bytes([c])) for c in sorted(set(squeeze_set)))
        squeeze_rx = re.compile(b"([" + cls + b"])\\1+")
    out = Output(sh)
    last = b""
    for chunk in open_chunks(sh, "-", 1 << 16):
        if table is not None or deletes:
            chunk = chunk.translate(table, deletes)
        if squeeze_rx is not None:
            if last and chunk[:1] == last and squeeze_rx.match(last + last):
                chunk = chunk.lstrip(last)
            chunk = squeeze_rx.sub(rb"\1", chunk)
            if chunk:
                last = chunk[-1:]
        out.write(chunk)
    out.flush()
    return 0
