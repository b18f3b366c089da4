"""POSIX regexes for sed and awk: the text tools' BRE/ERE translation, adjusted to what these two
tools mean. `.` and `[^...]` match a newline (a pattern space or record may hold several lines),
and `$` matches only at the very end (Python's `$` also matches before a final newline)."""

from __future__ import annotations

import re

from kshell.exec import regexes
from kshell.tools.text.regex import RegexError, translate

__all__ = ["RegexError", "compile_posix", "adjust"]


def adjust(src: str, multiline: bool = False) -> str:
    """Rewrite a translated pattern: dots and negated classes that exclude newline include it,
    and an end anchor matches at the end of the text only (unless `multiline`)."""
    out: list[str] = []
    i = 0
    n = len(src)
    while i < n:
        c = src[i]
        if c == "\\" and i + 1 < n:
            out.append(src[i : i + 2])
            i += 2
            continue
        if c == "[":
            j = i + 1
            while j < n and src[j] != "]":
                j += 2 if src[j] == "\\" else 1
            cls = src[i : j + 1]
            if cls.startswith("[^") and cls.endswith("\\n]"):
                cls = cls[:-3] + "]"
                if cls == "[^]":
                    cls = "[\\s\\S]"
            out.append(cls)
            i = j + 1
            continue
        if c == "$" and not multiline:
            out.append(r"\Z")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def compile_posix(pattern: str, extended: bool, icase: bool = False, multiline: bool = False) -> regexes.Compiled:
    """Compile a POSIX regex (over latin-1 text, one char per byte); RegexError with GNU's words."""
    src, _ = translate(pattern, extended)
    flags = re.ASCII | (re.IGNORECASE if icase else 0) | (re.MULTILINE if multiline else 0)
    try:
        return regexes.compile(adjust(src, multiline), flags)
    except regexes.error as e:
        raise RegexError(f"Invalid regular expression: {e}") from None
