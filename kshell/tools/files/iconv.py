"""iconv (-f -t -c -o -l -s, //TRANSLIT and //IGNORE) as glibc 2.36's, on Python's codecs.

Conversion stops at the first sequence it cannot read or write (`illegal input sequence at
position N`, the byte offset in that input; `incomplete character or shift sequence at end of
buffer` for a truncated last character), after writing what came before, status 1. -c drops
such characters silently (status 0); //IGNORE drops them and then reports the position of the
end of the input (glibc's way), status 1. //TRANSLIT writes glibc's C-locale replacements
(`EUR`, `<<`, `(C)`, `ss`, ...) and `?` for the rest; in a UTF-8 locale an accented letter
becomes its base letter, as glibc's locale tables do. Encodings are those Python knows under
glibc's names (UTF-8, ISO-8859-*, CP125x, UTF-16/32 with or without LE/BE, ASCII, ...); an
unknown one fails as glibc's: `failed to start conversion processing`.
"""

from __future__ import annotations

import codecs
import encodings.aliases
import os
import unicodedata
from typing import TYPE_CHECKING

from kshell.exec import devices
from kshell.tools.files.names import strerror
from kshell.core.options import NONE, REQUIRED, Usage, parse, tool
from kshell.tools.text.textio import read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"from-code": ("f", REQUIRED), "to-code": ("t", REQUIRED), "list": ("l", NONE), "output": ("o", REQUIRED),
         "silent": ("s", NONE), "verbose": ("verbose", NONE), "help": ("help", NONE), "version": ("V", NONE)}
# glibc's C-locale transliterations (locale/C-translit.h) for the characters agents meet
C_TRANSLIT = {
    "\u00a0": " ", "\u00a9": "(C)", "\u00ab": "<<", "\u00ad": "-", "\u00ae": "(R)", "\u00b5": "u", "\u00b8": ",",
    "\u00bb": ">>", "\u00bc": " 1/4 ", "\u00bd": " 1/2 ", "\u00be": " 3/4 ", "\u00c6": "AE", "\u00d7": "x",
    "\u00df": "ss", "\u00e6": "ae", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "--",
    "\u2015": "-", "\u2018": "'", "\u2019": "'", "\u201a": ",", "\u201b": "'", "\u201c": '"', "\u201d": '"',
    "\u201e": ",,", "\u201f": '"', "\u2020": "+", "\u2022": "o", "\u2024": ".", "\u2025": "..", "\u2026": "...",
    "\u2032": "'", "\u2033": '"', "\u2039": "<", "\u203a": ">", "\u20ac": "EUR", "\u2122": "(TM)",
    "\u2212": "-", "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
}
_NAMES = {"UCS-2": "utf-16-le", "UCS-2LE": "utf-16-le", "UCS-2BE": "utf-16-be", "UCS-4": "utf-32-be",
          "UCS-4LE": "utf-32-le", "UCS-4BE": "utf-32-be", "WCHAR_T": "utf-32-le", "UTF-16": "utf-16",
          "UTF-32": "utf-32", "ANSI_X3.4-1968": "ascii", "MACINTOSH": "mac-roman"}


class _Unsupported(Exception):
    pass


def _codec(name: str, sh: ToolContext) -> tuple[str, set[str]]:
    """(Python codec, {"TRANSLIT", "IGNORE"}) for a glibc encoding name with its suffixes."""
    base, *suffixes = name.split("//")
    flags = {s.upper() for s in suffixes if s}
    base = base.upper()
    if base in ("", "CHAR"):
        utf8 = _utf8_locale(sh)
        base = "UTF-8" if utf8 else "ASCII"
    try:
        return codecs.lookup(_NAMES.get(base, base)).name, flags
    except LookupError:
        raise _Unsupported(name) from None


def _utf8_locale(sh: ToolContext) -> bool:
    env = sh.exported_env()
    locale = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or "C"
    return "UTF-8" in locale.upper() or "UTF8" in locale.upper()


def _translit(c: str, utf8: bool) -> str:
    if c in C_TRANSLIT:
        return C_TRANSLIT[c]
    if utf8:
        base = "".join(ch for ch in unicodedata.normalize("NFKD", c) if not unicodedata.combining(ch))
        if base and base != c and base.isascii():
            return base
    return "?"


def convert(data: bytes, src: str, dst: str, *, translit: bool, utf8: bool, drop: bool) -> tuple[bytes, str | None]:
    """(output, error): the converted bytes up to the first failure (with `drop`: everything,
    failures left out) and glibc's message for that failure, or None."""
    dropped = False
    try:
        text = data.decode(src)
        stop: str | None = None
    except UnicodeDecodeError as e:
        if drop:
            text, stop, dropped = data.decode(src, errors="ignore"), None, True
        else:
            text = data[:e.start].decode(src)
            truncated = e.reason in ("unexpected end of data", "truncated data") and e.end >= len(data)
            stop = ("incomplete character or shift sequence at end of buffer" if truncated
                    else f"illegal input sequence at position {e.start}")
    out = bytearray()
    start = 0
    encoder = codecs.getincrementalencoder(dst)()
    while start < len(text):
        try:
            out += encoder.encode(text[start:])
            break
        except UnicodeEncodeError as e:
            bad_at = start + e.start
            out += encoder.encode(text[start:bad_at])
            c = text[bad_at]
            if translit:
                try:
                    out += encoder.encode(_translit(c, utf8))
                    start = bad_at + 1
                    continue
                except UnicodeEncodeError:
                    pass
            if drop:
                dropped = True
                start = bad_at + 1
                continue
            position = len(text[:bad_at].encode(src))
            return bytes(out), f"illegal input sequence at position {position}"
    return bytes(out), stop if stop is not None or not dropped else ""


@tool("iconv")
def iconv(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, files = parse(argv, "f:t:lo:scV", _LONG)
    except Usage as e:  # argp's words and status
        sh.write_err(f"iconv: {e.message}\nTry `iconv --help' or `iconv --usage' for more information.\n")
        return 64
    given = dict(opts)
    if "help" in given:
        sh.out("Usage: iconv [OPTION...] [FILE...]\n")
        return 0
    if "V" in given:
        sh.out("iconv (Debian GLIBC 2.36-9+deb12u4) 2.36\n")
        return 0
    if "l" in given:
        names = sorted({a.upper().replace("_", "-") for a in encodings.aliases.aliases} | set(_NAMES))
        sh.out("".join(f"{n}//\n" for n in names))
        return 0
    try:
        src, src_flags = _codec(given.get("f", ""), sh)
        dst, dst_flags = _codec(given.get("t", ""), sh)
    except _Unsupported:
        sh.write_err("iconv: failed to start conversion processing\n")
        return 1
    del src_flags
    skip = "c" in given
    ignore = "IGNORE" in dst_flags
    status = 0
    chunks: list[bytes] = []
    target = given.get("o")
    for name in files or ["-"]:
        try:
            data = read_all(sh, name)
        except OSError as e:
            sh.write_err(f"iconv: cannot open input file `{name}': {strerror(e)}\n")
            status = 1
            continue
        out, error = convert(data, src, dst, translit="TRANSLIT" in dst_flags, utf8=_utf8_locale(sh),
                             drop=skip or ignore)
        if target is None:
            sh.out(out)  # before the error message, as glibc writes what it converted
        chunks.append(out)
        if error == "" and ignore and not skip:
            error = f"illegal input sequence at position {len(data)}"
        if error:
            sh.write_err(f"iconv: {error}\n")
            status = 1
            break
    if target is None:
        return status
    result = b"".join(chunks)
    try:
        with devices.open_file(sh, target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) as handle:
            handle.pwrite(result, 0)
    except OSError as e:
        sh.write_err(f"iconv: cannot open output file: {strerror(e)}\n")
        return 1
    return status
