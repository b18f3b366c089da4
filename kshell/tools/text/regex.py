"""POSIX regular expressions (BRE and ERE, with GNU's extensions) translated to Python's `re`,
over bytes as in the C locale. Errors carry GNU regex's messages (`Unmatched ( or \\(`)."""

from __future__ import annotations

import re

CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
    "space": r" \t\n\r\f\v", "blank": r" \t", "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "print": r"\x20-\x7e", "graph": r"\x21-\x7e", "cntrl": r"\x00-\x1f\x7f", "xdigit": "0-9A-Fa-f",
}


class RegexError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _bracket(p: str, i: int) -> tuple[str, int]:
    """Translate the bracket expression starting after `[` at p[i]; returns (class, next)."""
    n = len(p)
    negate = False
    if i < n and p[i] == "^":
        negate = True
        i += 1
    items: list[str] = []
    first = True
    prev_char: str | None = None
    while True:
        if i >= n:
            raise RegexError("Unmatched [, [^, [:, [., or [=")
        c = p[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        if c == "[" and i + 1 < n and p[i + 1] in ":=.":
            kind = p[i + 1]
            end = p.find(kind + "]", i + 2)
            if end < 0:
                raise RegexError("Unmatched [, [^, [:, [., or [=")
            name = p[i + 2 : end]
            i = end + 2
            if kind == ":":
                if name not in CLASSES:
                    raise RegexError("Invalid character class name")
                items.append(CLASSES[name])
                prev_char = None
            else:
                items.append(re.escape(name))
                prev_char = name if len(name) == 1 else None
            continue
        if c == "-" and prev_char is not None and i + 1 < n and p[i + 1] != "]":
            hi = p[i + 1]
            if hi == "[" and i + 2 < n and p[i + 2] in ".=":
                end = p.find(p[i + 2] + "]", i + 3)
                hi = p[i + 3 : end] if end > 0 else hi
                i = end + 2 if end > 0 else i + 2
            else:
                i += 2
            if ord(hi) < ord(prev_char):
                raise RegexError("Invalid range end")
            items.append("-" + re.escape(hi))
            prev_char = None
            continue
        items.append(re.escape(c) if c not in "-" else r"\-")
        prev_char = c
        i += 1
    body = "".join(items)
    if not negate:
        return f"[{body}]", i
    return f"[^{body}\\n]", i


def translate(p: str, extended: bool) -> tuple[str, list[str]]:
    """Python source for POSIX regex `p` (ERE when `extended`); also GNU's warnings."""
    out: list[str] = []
    warnings: list[str] = []
    atom_start: list[int] = []  # index in out where the last atom begins (for quantifiers)
    groups: list[int] = []  # out index of each open group
    closed = 0
    last_quant = False
    n = len(p)
    i = 0
    at_start = True  # start of the expression or of a group/alternative

    def quantify(q: str, literal: str) -> None:
        nonlocal last_quant
        if at_start or not atom_start:
            if extended:
                warnings.append(f"{literal[-1] if literal[-1] != '{' else literal} at start of expression"
                                if literal[-1] in "*?+" else "")
                if literal[-1] == "*":
                    return  # a leading * in ERE matches nothing special: GNU treats it as empty
            out.append(re.escape(literal[-1] if not extended else literal))
            atom_start.append(len(out) - 1)
            return
        if last_quant:
            start = atom_start[-1]
            out[start:] = ["(?:" + "".join(out[start:]) + ")"]
        out.append(q)
        last_quant = True

    while i < n:
        c = p[i]
        i += 1
        if c == "\\":
            if i >= n:
                raise RegexError("Trailing backslash")
            d = p[i]
            i += 1
            op = None
            if not extended and d in "(){}|+?":
                op = d
            elif d.isdigit() and d != "0":
                if int(d) > closed:
                    raise RegexError("Invalid back reference")
                atom_start.append(len(out))
                out.append("\\" + d)
                last_quant = False
                at_start = False
                continue
            elif d in "wWsSbB":
                atom_start.append(len(out))
                out.append({"s": r"[ \t\n\r\f\v]", "S": r"[^ \t\n\r\f\v]"}.get(d, "\\" + d))
                last_quant = False
                at_start = False
                continue
            elif d == "<":
                out.append(r"\b(?=\w)")
                continue
            elif d == ">":
                out.append(r"\b(?<=\w)")
                continue
            elif d == "`":
                out.append("^")
                continue
            elif d == "'":
                out.append("$")
                continue
            if op is None:
                if not (d in ".[]*^$\\/" or (extended and d in "(){}|+?")) and not d.isalnum() and False:
                    pass
                if d.isalpha() or d == "0":
                    warnings.append(f"stray \\ before {d}")
                atom_start.append(len(out))
                out.append(re.escape(d))
                last_quant = False
                at_start = False
                continue
            c = op
            special = True
        else:
            special = extended and c in "(){}|+?"
        if c == "[":
            cls, i = _bracket(p, i)
            atom_start.append(len(out))
            out.append(cls)
            last_quant = False
            at_start = False
            continue
        if c == "." :
            atom_start.append(len(out))
            out.append("[^\\n]")
            last_quant = False
            at_start = False
            continue
        if c == "*":
            quantify("*", "*")
            at_start = False
            continue
        if c == "^":
            if extended or at_start:
                out.append("^")
                continue
            atom_start.append(len(out))
            out.append(r"\^")
            last_quant = False
            continue
        if c == "$":
            if extended or i >= n or p.startswith("\\)", i) or p.startswith("\\|", i):
                out.append("$")
                continue
            atom_start.append(len(out))
            out.append(r"\$")
            last_quant = False
            at_start = False
            continue
        if special:
            if c in "+?":
                quantify(c, c)
                at_start = False
                continue
            if c == "{":
                m = re.compile(r"(\d*)(,?)(\d*)" + (r"\}" if extended else r"\\\}")).match(p, i)
                if not m:
                    if extended and not re.compile(r"\d*,?\d*").match(p, i).group():
                        atom_start.append(len(out))
                        out.append(r"\{")
                        last_quant = False
                        at_start = False
                        continue
                    if re.compile(r"\d*,?\d*\Z").match(p, i):
                        raise RegexError("Unmatched \\{")
                    raise RegexError("Invalid content of \\{\\}" if not extended else "Unmatched \\{")
                lo, comma, hi = m.groups()
                if lo and hi and int(hi) < int(lo):
                    raise RegexError("Invalid content of \\{\\}")
                if int(lo or 0) > 32767 or int(hi or 0) > 32767:
                    raise RegexError("Regular expression too big")
                i = m.end()
                quantify("{" + (lo or "0") + comma + hi + "}", p[i - len(m.group()) - 1 : i])
                at_start = False
                continue
            if c == "}":
                atom_start.append(len(out))
                out.append(r"\}")
                last_quant = False
                at_start = False
                continue
            if c == "(":
                groups.append(len(out))
                out.append("(")
                at_start = True
                last_quant = False
                continue
            if c == ")":
                if not groups:
                    if extended:
                        atom_start.append(len(out))
                        out.append(r"\)")
                        last_quant = False
                        at_start = False
                        continue
                    raise RegexError("Unmatched ) or \\)")
                start = groups.pop()
                out.append(")")
                closed += 1
                atom_start.append(start)
                del atom_start[:-1]
                atom_start[:] = [start]
                last_quant = False
                at_start = False
                continue
            if c == "|":
                out.append("|")
                at_start = True
                last_quant = False
                continue
        atom_start.append(len(out))
        out.append(re.escape(c))
        last_quant = False
        at_start = False
    if groups:
        raise RegexError("Unmatched ( or \\(")
    return "".join(out), [w for w in warnings if w]


def check_class_syntax(p: str) -> None:
    """GNU rejects `[:space:]` used outside a bracket (a common mistake)."""
    if re.search(r"(?<!\[)\[:(alpha|digit|alnum|upper|lower|space|blank|punct|print|graph|cntrl|xdigit):\]", p) \
            and not re.search(r"\[\[:", p):
        raise RegexError("character class syntax is [[:space:]], not [:space:]")
