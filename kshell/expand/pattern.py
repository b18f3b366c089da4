"""Shell patterns: matching whole strings (case, [[ == ]]) through the native core, prefix /
suffix / substring matching for `${x#p}` and `${x/p/r}` through a cached regex translation,
and pathname expansion against the VFS (dotglob, globstar, nocaseglob)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

import native

if TYPE_CHECKING:
    from kshell.expand.shell import Shell

# Everything a pattern gives a meaning to, in brackets (`-`, `!`, `^`) and in extended
# patterns (`(`, `)`, `|` and the operators), so that quoted text never takes one on.
_GLOB_SPECIAL = re.compile(r"([\\*?\[\]\-!^()|@+])")
_CLASSES = {
    "alpha": r"a-zA-Z", "digit": r"0-9", "alnum": r"a-zA-Z0-9", "upper": r"A-Z", "lower": r"a-z",
    "space": r" \t\n\r\f\v", "blank": r" \t", "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "xdigit": r"0-9A-Fa-f", "cntrl": r"\x00-\x1f\x7f", "print": r"\x20-\x7e", "graph": r"\x21-\x7e",
    "word": r"a-zA-Z0-9_",
}
POSIX_CLASSES = {k: v for k, v in _CLASSES.items() if k != "word"}  # regcomp's: `word` is bash's globs' own


def escape(text: str) -> str:
    """Quote a literal string for use inside a pattern."""
    return _GLOB_SPECIAL.sub(r"\\\1", text)


def unescape(pattern: str) -> str:
    """Quote removal on a pattern that matched nothing (the word stays as written)."""
    if "\\" not in pattern:
        return pattern
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)


def has_magic(pattern: str) -> bool:
    if "(" in pattern and has_extglob(pattern):
        return True
    return ("*" in pattern or "?" in pattern or "[" in pattern) and native.has_magic(
        pattern.encode("utf-8", "surrogateescape"))


def _b(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


_EXTGLOB = re.compile(r"(?:^|[^\\])(?:\\\\)*[@*+?!]\(")  # not after an escaping backslash


def has_extglob(pattern: str) -> bool:
    return "(" in pattern and _EXTGLOB.search(pattern) is not None


def match(pattern: str, text: str, nocase: bool = False, utf8: bool = False) -> bool:
    """Whole-string match as `case` and `[[ == ]]` do (`*` matches `/` and a leading dot). In
    a UTF-8 locale (`utf8`) `?` and a bracket match one character, not one byte."""
    if nocase or ("(" in pattern and has_extglob(pattern)) or utf8 and not (pattern.isascii() and text.isascii()):
        return bool(regex(pattern, True).fullmatch(text))
    if not ("*" in pattern or "?" in pattern or "[" in pattern or "\\" in pattern):
        return pattern == text
    return native.glob_match(_b(pattern), _b(text), False)


@lru_cache(maxsize=1024)
def regex(pattern: str, nocase: bool = False) -> re.Pattern[str]:
    """A Python regex equivalent to the shell pattern (for substring operations), with
    extended patterns (`@(a|b)`, `*(p)`, `+(p)`, `?(p)`, `!(p)`)."""
    try:
        return re.compile(_translate(pattern, 0, len(pattern), True),
                          re.IGNORECASE if nocase else 0)
    except re.error:
        return re.compile(re.escape(pattern), re.IGNORECASE if nocase else 0)


def _close_paren(pattern: str, start: int) -> int:
    depth = 0
    i = start
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_alternatives(body: str) -> list[str]:
    parts, depth, cur, i = [], 0, [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            cur.append(body[i : i + 2])
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def _translate(pattern: str, start: int, end: int, top: bool) -> str:
    out: list[str] = []
    i = start
    while i < end:
        c = pattern[i]
        if c in "@*+?!" and i + 1 < end and pattern[i + 1] == "(":
            close = _close_paren(pattern, i + 1)
            if 0 < close < end:
                body = pattern[i + 2 : close]
                alts = "|".join(_translate(a, 0, len(a), False) for a in _split_alternatives(body))
                if c == "@":
                    out.append(f"(?:{alts})")
                elif c == "*":
                    out.append(f"(?:{alts})*")
                elif c == "+":
                    out.append(f"(?:{alts})+")
                elif c == "?":
                    out.append(f"(?:{alts})?")
                else:
                    rest = _translate(pattern, close + 1, end, top)
                    out.append(rf"(?:(?!(?:{alts}){rest}\Z)(?s:.*)){rest}" if top else
                               f"(?:(?!(?:{alts})).)*")
                    return "".join(out)
                i = close + 1
                continue
        if c == "\\":
            i += 1
            out.append(re.escape(pattern[i]) if i < end else r"\\")
        elif c == "*":
            while i + 1 < end and pattern[i + 1] == "*":
                i += 1
            out.append("(?s:.*)")
        elif c == "?":
            out.append("(?s:.)")
        elif c == "[":
            cls, close = _bracket(pattern, i)
            if cls is None:
                out.append(r"\[")
            else:
                out.append(cls)
                i = close
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _bracket(pattern: str, start: int) -> tuple[str | None, int]:
    """Translate a bracket expression starting at `start`; returns (regex, index of `]`)."""
    i = start + 1
    n = len(pattern)
    negate = False
    if i < n and pattern[i] in "!^":
        negate = True
        i += 1
    items: list[str] = []
    first = True
    while i < n:
        c = pattern[i]
        if c == "]" and not first:
            body = "".join(items)
            if not body:
                return None, start
            return f"[{'^' if negate else ''}{body}]", i
        first = False
        if c == "[" and i + 1 < n and pattern[i + 1] == ":":
            end = pattern.find(":]", i + 2)
            if end > 0:
                name = pattern[i + 2 : end]
                items.append(_CLASSES.get(name, ""))
                i = end + 2
                continue
        if c == "\\" and i + 1 < n:
            i += 1
            c = pattern[i]
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            hi = pattern[i + 2]
            if hi == "\\" and i + 3 < n:
                hi = pattern[i + 3]
                i += 1
            if ord(hi) >= ord(c):
                items.append(f"{re.escape(c)}-{re.escape(hi)}")
            i += 3
            continue
        items.append(re.escape(c))
        i += 1
    return None, start


def strip_prefix(value: str, pattern: str, longest: bool, nocase: bool = False) -> str:
    rx = regex(pattern, nocase)
    n = len(value)
    order = range(n, -1, -1) if longest else range(n + 1)
    for i in order:
        if rx.fullmatch(value, 0, i):
            return value[i:]
    return value


def strip_suffix(value: str, pattern: str, longest: bool, nocase: bool = False) -> str:
    rx = regex(pattern, nocase)
    n = len(value)
    order = range(n + 1) if longest else range(n, -1, -1)
    for i in order:
        if rx.fullmatch(value, i):
            return value[:i]
    return value


def replace(value: str, pattern: str, repl: str | list[str | None], mode: str, nocase: bool = False) -> str:
    """`${x/p/r}` (mode "/"), `${x//p/r}` ("//"), `${x/#p/r}` ("/#"), `${x/%p/r}` ("/%"). A
    list `repl` is patsub_replacement's: its None pieces stand for the matched text."""
    rx = regex(pattern, nocase)
    n = len(value)

    def put(matched: str) -> str:
        return repl if isinstance(repl, str) else "".join(matched if t is None else t for t in repl)

    if mode == "/#":
        for i in range(n, -1, -1):
            if rx.fullmatch(value, 0, i):
                return put(value[:i]) + value[i:]
        return value
    if mode == "/%":
        for i in range(n + 1):
            if rx.fullmatch(value, i):
                return value[:i] + put(value[i:])
        return value
    if not pattern:
        return value
    out: list[str] = []
    pos = 0
    last = 0
    while pos < n:
        m = rx.match(value, pos)
        if m is not None and m.end() > pos:
            end = m.end()
            # bash takes the longest match at the leftmost position
            for j in range(n, end, -1):
                if rx.fullmatch(value, pos, j):
                    end = j
                    break
            out.append(value[last:pos])
            out.append(put(value[pos:end]))
            pos = last = end
            if mode == "/":
                break
            continue
        pos += 1
    out.append(value[last:])
    return "".join(out)


# --------------------------------------------------------------------------- pathnames


def _split_pattern(pattern: str) -> list[str]:
    return pattern.split("/")


def glob_paths(sh: Shell, pattern: str) -> list[str]:
    """Pathname expansion of one pattern against the VFS, sorted (C locale byte order)."""
    opts = sh.shopts
    dotglob = "dotglob" in opts
    globstar = "globstar" in opts
    nocase = "nocaseglob" in opts
    absolute = pattern.startswith("/")
    comps = [c for c in pattern.split("/")]
    if absolute:
        comps = comps[1:]
        bases = ["/"]
        shown = [""]
    else:
        bases = [""]
        shown = [""]
    trailing = comps and comps[-1] == ""
    if trailing:
        comps = comps[:-1]
    results: list[tuple[str, str]] = list(zip(bases, shown, strict=True))  # (fs path, shown path)
    fs = sh.fs
    for idx, comp in enumerate(comps):
        last = idx == len(comps) - 1
        nxt: list[tuple[str, str]] = []
        if comp == "**" and globstar:
            for path, show in results:
                for sub in _walk_dirs(fs, path or ".", dotglob):
                    p = _join(path, sub)
                    s = _join_show(show, sub, absolute)
                    if last and not sub:
                        if show:
                            nxt.append((p, show + "/"))
                        continue
                    nxt.append((p, s))
                if last:
                    for f in _walk_all(fs, path or ".", dotglob):
                        nxt.append((_join(path, f), _join_show(show, f, absolute)))
            if last:
                nxt = [(p, s) for p, s in nxt if s and s != "/"]
            results = _dedup(nxt)
            continue
        if not has_magic(comp):
            lit = unescape(comp)
            for path, show in results:
                nxt.append((_join(path, lit), _join_show(show, lit, absolute)))
            results = nxt
            continue
        pat = comp.lower() if nocase else comp
        bpat = _b(pat)
        period = not dotglob or comp.startswith(".")
        ext = "extglob" in opts and has_extglob(comp)
        utf8 = sh.utf8_locale()  # `?` and brackets match characters, not bytes
        dots = [".", ".."] if comp.startswith(".") and "globskipdots" not in opts else []
        for path, show in results:
            try:
                entries = fs.scandir(path or ".")
            except OSError:
                continue
            names = dots + [name for name, inode in entries if last or inode.is_dir or inode.is_lnk]
            if not names:
                continue
            bnames = [_b(n.lower()) for n in names] if nocase else [_b(n) for n in names]
            rx = regex(comp, nocase) if ext or utf8 and not (comp.isascii() and all(n.isascii() for n in names)) \
                else None
            if rx is not None:
                hits = {b for n, b in zip(names, bnames, strict=True)
                        if rx.fullmatch(n) and (not n.startswith(".") or not period)}
            else:
                hits = set(native.glob_filter(bpat, bnames, period))
            for name, bname in zip(names, bnames, strict=True):
                if bname in hits:
                    if dotglob and name in (".", ".."):
                        continue
                    if not last and not _is_dir(fs, _join(path, name)):
                        continue
                    nxt.append((_join(path, name), _join_show(show, name, absolute)))
        results = nxt
        if not results:
            return []
    out = []
    for path, show in results:
        if not fs_exists(fs, path):
            continue
        if trailing:
            if not _is_dir(fs, path):
                continue
            show += "/"
        out.append(show)
    ignore = sh.get_param_or_none("GLOBIGNORE")
    if ignore:
        pats = [p for p in ignore.split(":") if p]
        out = [p for p in out if not any(native.glob_match(_b(g), _b(p), False) for g in pats)
               and p.rsplit("/", 1)[-1] not in (".", "..")]
    out.sort(key=_b)
    return out


def _dedup(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen = set()
    out = []
    for item in items:
        if item[1] not in seen:
            seen.add(item[1])
            out.append(item)
    return out


def fs_exists(fs, path: str) -> bool:
    try:
        fs.lstat(path)
    except OSError:
        return False
    return True


def _is_dir(fs, path: str) -> bool:
    try:
        return fs.stat(path).is_dir
    except OSError:
        return False


def _join(base: str, name: str) -> str:
    if not base:
        return name
    if not name:
        return base
    return base + name if base.endswith("/") else base + "/" + name


def _join_show(base: str, name: str, absolute: bool) -> str:
    if not base:
        return ("/" + name) if absolute else name
    if not name:
        return base
    return base + "/" + name


def _walk_dirs(fs, top: str, dotglob: bool, rel: str = "", depth: int = 0) -> list[str]:
    """`**`: the directory itself ("") and every directory below it (not through symlinks)."""
    out = [rel]
    if depth > 64:
        return out
    try:
        entries = fs.scandir(top)
    except OSError:
        return out
    for name, inode in sorted(entries, key=lambda e: _b(e[0])):
        if not dotglob and name.startswith("."):
            continue
        if inode.is_dir:
            out.extend(_walk_dirs(fs, top.rstrip("/") + "/" + name, dotglob,
                                  f"{rel}/{name}" if rel else name, depth + 1))
    return out


def _walk_all(fs, top: str, dotglob: bool, rel: str = "", depth: int = 0) -> list[str]:
    out: list[str] = []
    if depth > 64:
        return out
    try:
        entries = fs.scandir(top)
    except OSError:
        return out
    for name, inode in sorted(entries, key=lambda e: _b(e[0])):
        if not dotglob and name.startswith("."):
            continue
        path = f"{rel}/{name}" if rel else name
        if not inode.is_dir:
            out.append(path)
        else:
            out.extend(_walk_all(fs, top.rstrip("/") + "/" + name, dotglob, path, depth + 1))
    return out
