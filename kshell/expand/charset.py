"""The locale's character set as the expansions see it. Shell text is `str` decoded from UTF-8
with surrogate escapes; in a UTF-8 locale a character is a code point, elsewhere (C, POSIX)
it is a byte. A "byte view" is the same text with one code point per byte (latin-1), so that
lengths, offsets and patterns count bytes; `from_bytes` turns it back into shell text."""

from __future__ import annotations

_ASCII_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_ASCII_SWAP = {**_ASCII_UPPER, **_ASCII_LOWER}


def to_bytes(text: str) -> str:
    return text.encode("utf-8", "surrogateescape").decode("latin-1")


def from_bytes(view: str) -> str:
    return view.encode("latin-1").decode("utf-8", "surrogateescape")


def byte_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))


def _each(text: str, convert: str) -> str:
    """towupper(3)-style: one character for one, so a character whose case mapping is several
    (ß -> SS, ﬀ -> FF) stays as it is."""
    out = []
    for c in text:
        mapped = getattr(c, convert)()
        out.append(mapped if len(mapped) == 1 else c)
    return "".join(out)


def upper(text: str, utf8: bool) -> str:
    """Case conversion as toupper(3): outside UTF-8 only ASCII letters change."""
    if text.isascii():
        return text.upper()
    return _each(text, "upper") if utf8 else text.translate(_ASCII_UPPER)


def lower(text: str, utf8: bool) -> str:
    if text.isascii():
        return text.lower()
    return _each(text, "lower") if utf8 else text.translate(_ASCII_LOWER)


def swapcase(text: str, utf8: bool) -> str:
    if text.isascii():
        return text.swapcase()
    return _each(text, "swapcase") if utf8 else text.translate(_ASCII_SWAP)
