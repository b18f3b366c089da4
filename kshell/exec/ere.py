"""POSIX extended regular expressions (as `[[ =~ ]]` uses them) translated to Python's `re`."""

from __future__ import annotations

_CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "punct": "!-/:-@\\[-`{-~", "xdigit": "0-9A-Fa-f",
    "cntrl": "\\x00-\\x1f\\x7f", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e", "word": "a-zA-Z0-9_",
}


def ere_to_python(src: str) -> str:
    """Translate ERE syntax: bracket expressions with POSIX classes (where `\\` is literal),
    and escape what Python would read differently."""
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\\" and i + 1 < n:
            out.append("\\" + src[i + 1] if not src[i + 1].isalnum() else _escape_alnum(src[i + 1]))
            i += 2
            continue
        if c == "[":
            j = i + 1
            items = ["["]
            if j < n and src[j] == "^":
                items.append("^")
                j += 1
            if j < n and src[j] == "]":
                items.append("\\]")
                j += 1
            while j < n and src[j] != "]":
                if src.startswith("[:", j):
                    end = src.find(":]", j + 2)
                    if end > 0:
                        items.append(_CLASSES.get(src[j + 2 : end], ""))
                        j = end + 2
                        continue
                ch = src[j]
                if ch in "\\[":
                    items.append("\\" + ch)
                else:
                    items.append(ch)
                j += 1
            if j >= n:
                out.append("\\[")
                i += 1
                continue
            items.append("]")
            out.append("".join(items))
            i = j + 1
            continue
        if c == "{" and not (i + 1 < n and (src[i + 1].isdigit() or src[i + 1] == ",")):
            out.append("\\{")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _escape_alnum(c: str) -> str:
    if c in "wWsSbB":
        return "\\" + c
    if c.isdigit():
        return "\\" + c
    return c
