"""Small operations on word parts: interning, ANSI-C decoding, tilde prefixes and splitting
assignment words (`name=v`, `name[sub]+=v`, `[key]=v`) into their pieces."""

from __future__ import annotations

import re

from kshell.syntax.ast import Literal, Param, Part, TildePrefix, Word

_ANSI_ESC = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c[^\\]|.)", re.DOTALL)
_ASSIGN_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?=|\[)")
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_PARAMS: dict[str, Param] = {}
_BARE_PARAMS: dict[str, Param] = {}
EMPTY_WORD = Word(())


def param(name: str, bare: bool = False) -> Param:
    """Interned Param nodes (they are immutable and very common); `bare`: written `$name`."""
    table = _BARE_PARAMS if bare else _PARAMS
    node = table.get(name)
    if node is None:
        if len(table) > 10000:
            table.clear()
        node = table[name] = Param(name, bare)
    return node


def _byte(value: int) -> str:
    value &= 0xFF
    return chr(value) if value < 0x80 else chr(0xDC00 + value)


def unicode_char(value: int, utf8: bool, escape: str) -> str:
    """The character for a `\\u`/`\\U` escape. Outside a UTF-8 locale bash gives ASCII as
    itself and anything else as an escape (`\\u00E9`); `escape` is the text when invalid."""
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        return escape
    if value < 0x80 or utf8:
        return chr(value)
    return f"\\u{value:04X}" if value <= 0xFFFF else f"\\U{value:08X}"


def _ansi_escape(m: re.Match[str], utf8: bool = True) -> str:
    esc = m.group(1)
    c = esc[0]
    if len(esc) > 1:
        if c == "x":
            return _byte(int(esc[1:], 16))
        if c == "u" or c == "U":
            return unicode_char(int(esc[1:], 16), utf8, m.group(0))
        if c == "c":
            ch = esc[1]
            return "\x7f" if ch == "?" else chr(ord(ch.upper()) & 0x1F)
        return _byte(int(esc, 8))
    if "0" <= c <= "7":
        return _byte(int(c, 8))
    simple = _ANSI_SIMPLE.get(c)
    return simple if simple is not None else m.group(0)


def decode_ansi_c(body: str, utf8: bool = True) -> str:
    """Decode the escapes of a $'...' body as bash does; a NUL ends the string. `utf8`: the
    locale's character set is UTF-8 (else `\\u` escapes beyond ASCII stay escapes)."""
    if "\\" not in body:
        return body
    text = _ANSI_ESC.sub(_ansi_escape if utf8 else _ansi_escape_bytes, body)
    nul = text.find("\0")
    return text if nul < 0 else text[:nul]


def _ansi_escape_bytes(m: re.Match[str]) -> str:
    return _ansi_escape(m, False)


def merge_literals(parts: list[Part]) -> list[Part]:
    """Join adjacent Literal parts and drop empty ones."""
    out: list[Part] = []
    for part in parts:
        if type(part) is Literal:
            if not part.text:
                continue
            if out and type(out[-1]) is Literal:
                out[-1] = Literal(out[-1].text + part.text)  # type: ignore[union-attr]
                continue
        out.append(part)
    return out


def tilde_word(parts: list[Part]) -> list[Part]:
    """Split a leading unquoted `~user` (ended by `/` or the end of the word) into TildePrefix."""
    first = parts[0]
    text = first.text  # type: ignore[union-attr]
    slash = text.find("/")
    if "{" in (text if slash < 0 else text[:slash]):
        return parts  # `~{/src,root}`: braces come first, then each word's tilde (brace_words)
    if slash < 0:
        if len(parts) > 1:
            return parts
        return [TildePrefix(text[1:])]
    rest = text[slash:]
    return [TildePrefix(text[1:slash]), Literal(rest), *parts[1:]]


def tilde_assignment(parts: list[Part]) -> list[Part]:
    """Tilde prefixes at the start of an assignment value and after each unquoted `:`."""
    out: list[Part] = []
    last = len(parts) - 1
    for i, part in enumerate(parts):
        if type(part) is not Literal or "~" not in part.text:
            out.append(part)
            continue
        text = part.text
        at_start = i == 0
        pieces = text.split(":")
        buf = ""
        for j, piece in enumerate(pieces):
            if j:
                buf += ":"
            if piece.startswith("~") and (j or at_start):
                user, slash, tail = piece[1:].partition("/")
                if slash or j < len(pieces) - 1 or i == last:
                    if buf:
                        out.append(Literal(buf))
                        buf = ""
                    out.append(TildePrefix(user))
                    buf = slash + tail
                    continue
            buf += piece
        if buf:
            out.append(Literal(buf))
    return out


def split_assignment(parts: tuple[Part, ...] | list[Part], keyed: bool = False
                     ) -> tuple[str, list[Part] | None, bool, list[Part]] | None:
    """Split `name=v`, `name+=v`, `name[sub]=v` (or, keyed, `[sub]=v`) into (name, subscript
    parts, append, value parts); None if the word is not shaped so."""
    if not parts or type(parts[0]) is not Literal:
        return None
    text = parts[0].text  # type: ignore[union-attr]
    if keyed:
        if not text.startswith("["):
            return None
        name, j = "", 1
    else:
        m = _ASSIGN_HEAD.match(text)
        if m is None:
            return None
        name = m.group(1)
        if m.group(2) != "[":
            rest = text[m.end():]
            value = [Literal(rest)] if rest else []
            value.extend(parts[1:])
            return name, None, m.group(2) == "+=", value
        j = m.end()
    depth = 1
    sub: list[Part] = []
    for i, part in enumerate(parts):
        if type(part) is not Literal:
            sub.append(part)
            continue
        ptext = part.text
        k = j if i == 0 else 0
        start = k
        while k < len(ptext):
            c = ptext[k]
            if c == "[":
                depth += 1
            elif c == "]":
                depth -= 1
                if depth == 0:
                    after = ptext[k + 1:]
                    if after.startswith("="):
                        append, rest = False, after[1:]
                    elif after.startswith("+="):
                        append, rest = True, after[2:]
                    else:
                        return None
                    if k > start:
                        sub.append(Literal(ptext[start:k]))
                    value = [Literal(rest)] if rest else []
                    value.extend(parts[i + 1:])
                    return name, sub, append, value
            k += 1
        if len(ptext) > start:
            sub.append(Literal(ptext[start:]))
    return None
