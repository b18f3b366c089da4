"""`[[ text =~ pattern ]]`: the pattern as bash hands it to glibc's regcomp(REG_EXTENDED),
translated to the `regex` module's syntax, to be matched leftmost-longest (its POSIX flag).

Bash builds the regular expression from the expanded word: an unquoted part as it is, a
quoted part with a backslash before each character special to an ERE, except inside a
bracket expression, where a quoted character is copied as it is (`["^"a]` negates).
glibc then reads it without REG_NEWLINE: `.` and `[^a]` match a newline and `$` is the
end of the text only. What glibc refuses (`a{`, `*a`, `(a`, `[b-a]`, `[[:foo:]]`, `\\1`
before its group ends) is an `EreError`: status 2, BASH_REMATCH untouched. glibc's
extensions stay: `\\<` `\\>` `\\b` `\\B` `\\w` `\\W` `\\s` `\\S` `` \\` `` `\\'`, back-references
(to a group closed before them in their own branch: glibc refuses `(a)|\\1`).

Two of glibc's matching rules need more than a translation. Its DFA takes a newline the match
itself consumes as a line boundary: `^` holds after it and `$` before it (`b.^a` and `b$.a`
match `b<newline>a`), while a match cannot start after a newline at `^` nor end before one at
`$`. Where the text has a newline and the pattern an anchor, LineSearch tries each start with
`^` as "the text's start, or after a newline past the match's start" and checks that a `$`
met before a newline is not where the match ends; and as glibc checks the groups' path with
`$` at the text's end only, a pattern with a group does not match so at a `$`. And glibc does not repeat a group once more
on nothing after it has matched something (`(a*)+` on `aa` leaves `aa` in the group, where the
`regex` module's last, empty, iteration leaves nothing): `groups` drops such an iteration.
"""

from __future__ import annotations

from typing import Any

from kshell.expand.pattern import POSIX_CLASSES as CLASSES

_ERE_SPECIAL = frozenset(".[\\()*+?{|^$")  # what bash backslashes in a quoted part
_DUP_MAX = 32767  # glibc's RE_DUP_MAX
_ESCAPES = {"w": r"\w", "W": r"\W", "s": r"\s", "S": r"\S", "b": r"\b", "B": r"\B",
            "<": r"\m", ">": r"\M", "`": r"\A", "'": r"\Z"}


class EreError(Exception):
    """A pattern glibc's regcomp refuses."""


def bash_regex(pieces: list[tuple[str, bool]]) -> str:
    """The ERE bash compiles for a `=~` word, from its (text, quoted) pieces."""
    out: list[str] = []
    chars = [(c, quoted) for text, quoted in pieces for c in text]
    i, n = 0, len(chars)
    while i < n:
        c, quoted = chars[i]
        if quoted:
            out.append("\\" + c if c in _ERE_SPECIAL else c)
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            out.append(c + chars[i + 1][0])
            i += 2
            continue
        if c == "[":
            end = _bracket_end([ch for ch, _ in chars], i + 1)
            if end > 0:  # its characters as they are, quoted or not
                out.extend(ch for ch, _ in chars[i:end])
                i = end
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _bracket_end(s: list[str] | str, i: int) -> int:
    """Index after the `]` closing the bracket expression whose body starts at s[i], or -1."""
    n = len(s)
    if i < n and s[i] == "^":
        i += 1
    if i < n and s[i] == "]":
        i += 1
    while i < n:
        c = s[i]
        if c == "]":
            return i + 1
        if c == "[" and i + 1 < n and s[i + 1] in ":.=":
            kind = s[i + 1]
            j = i + 2
            while j + 1 < n and not (s[j] == kind and s[j + 1] == "]"):
                j += 1
            if j + 1 >= n:
                return -1
            i = j + 2
            continue
        i += 1
    return -1


_LOOKS_BACK = {"^": r"\A", "`": r"\A", "<": r"(?<!\w)", ">": r"(?<=\w)"}  # see _Parser.anchor
_HAT_LINES = r"(?:\A|(?!\G)(?<=\n))"  # the text's start, or after a newline the match took
_DOLLAR_LINES = r"(?:\Z|(?=\n))"  # the end, or before a newline (the match must take it)
_DOLLAR_NEWLINE = r"(?=\n)"  # before a newline, never at the end of the part tried


class _Parser:
    """glibc's ERE grammar, emitting the `regex` module's syntax; `hat` and `dollar` are what
    the anchors become."""

    def __init__(self, src: str, unicode: bool, hat: str = "^", dollar: str = r"\Z", inside: bool = False,
                 copies: str = "") -> None:
        self.src = src
        self.i = 0
        self.unicode = unicode
        self.groups = 0
        self.closed: set[int] = set()
        self.hat = hat
        self.dollar = dollar
        self.inside = inside  # matched in a part that ends before the text does: `\\'` never holds
        self.anchored = False  # a `^` or `$` anchor is in the pattern
        self.plural = False  # an alternation or a repetition other than {n} (glibc's has_plural_match)
        self.backrefs = False
        # how the copies glibc makes of a repeated atom are written (see lossy_source): "forward"
        # as its forward pass sees them, "walk" as its walk for the groups does; "copy-forward"
        # and "copy-walk" in such a copy; "": as written
        self.copies = copies
        self.anchors = 0  # anchors read (any of ^ $ \< \> \b \B \` \')
        self.lossy = False  # an anchor is in a copy of a repeated atom (glibc loses it there)

    def fail(self) -> EreError:
        return EreError(self.src)

    def parse(self) -> str:
        out = self.alternation(0)
        if self.i < len(self.src):  # only a `)` with no `(` stops it early
            raise self.fail()
        return out

    def alternation(self, depth: int) -> str:
        """Branches separated by `|`; a back-reference sees only the groups closed before the
        alternation and in its own branch, all of them after it (glibc's completed_bkref_map)."""
        initial = set(self.closed)
        branches = [self.branch(depth)]
        while self.i < len(self.src) and self.src[self.i] == "|":
            self.i += 1
            self.plural = True
            accumulated, self.closed = self.closed, set(initial)
            branches.append(self.branch(depth))
            self.closed |= accumulated
        return "|".join(branches)

    def branch(self, depth: int) -> str:
        src = self.src
        out: list[str] = []
        while self.i < len(src):
            c = src[self.i]
            if c == "|" or (c == ")" and depth):
                break
            start, groups_before = self.i, self.groups
            atom, quantifiable = self.atom(depth)
            count = 0
            while self.i < len(src) and (src[self.i] in "*+?" or src[self.i] == "{"):
                atom_src = src[start : self.i]  # with the repetitions before this one
                q = self.quantifier()
                if not quantifiable:
                    raise self.fail()
                if self.copies in ("forward", "walk"):
                    atom = self.forward_copies(atom_src, groups_before, atom, q)
                else:
                    atom = f"(?:{atom}){q}" if count else atom + q
                count += 1
            out.append(atom)
        return "".join(out)

    def forward_copies(self, atom_src: str, groups_before: int, atom: str, q: str) -> str:
        """`atom` repeated by `q` as glibc compiles it: the first iteration is the atom itself,
        every further one a copy (parse_dup_op), whose anchors may be lost (_Parser.anchor):
        `(^a)+` is `(^a)(a)*` to its forward pass."""
        lost = _Parser(atom_src, self.unicode, copies="copy-" + self.copies)
        lost.groups = groups_before  # a copy's groups are the atom's
        try:
            copy = lost.parse()
        except EreError:  # a back-reference to a group outside: glibc keeps a fail stack then
            self.backrefs = True
            return f"(?:{atom}){q}"
        if not lost.anchors:
            return f"(?:{atom}){q}"
        if q in ("*", "?", "{0}", "{0,}", "{0,0}", "{0,1}"):  # no copy made
            return f"(?:{atom}){q}"
        self.lossy = True
        if q == "+":
            return f"(?:{atom})(?:{copy})*"
        low, comma, high = q[1:-1].partition(",")
        lo = int(low)
        if not comma:
            return f"(?:{atom})(?:{copy}){{{lo - 1}}}"
        if lo == 0:
            return f"(?:(?:{atom})(?:{copy}){{0,{int(high) - 1}}})?"
        return f"(?:{atom})(?:{copy}){{{lo - 1},{'' if not high else int(high) - 1}}}"

    def quantifier(self) -> str:
        src = self.src
        c = src[self.i]
        self.i += 1
        if c != "{":
            self.plural = True
            return c
        end = src.find("}", self.i)
        if end < 0:
            raise self.fail()
        body = src[self.i : end]
        low, comma, high = body.partition(",")
        if not all(part == "" or part.isdigit() for part in (low, high)) or (not low and not comma):
            raise self.fail()
        lo = int(low) if low else 0
        hi = int(high) if high else None
        if lo > _DUP_MAX or (hi is not None and (hi > _DUP_MAX or hi < lo)):
            raise self.fail()
        self.i = end + 1
        self.plural = self.plural or bool(comma) and hi != lo
        if not comma:
            return f"{{{lo}}}"
        return f"{{{lo},{'' if hi is None else hi}}}"

    def atom(self, depth: int) -> tuple[str, bool]:
        """The next atom and whether a repetition may follow it."""
        src = self.src
        c = src[self.i]
        self.i += 1
        if c in "*+?{":  # a repetition with nothing before it
            raise self.fail()
        if c == "(":
            self.groups += 1
            number = self.groups
            body = self.alternation(depth + 1)
            if self.i >= len(src) or src[self.i] != ")":
                raise self.fail()
            self.i += 1
            self.closed.add(number)
            if self.copies == "copy-forward":
                return f"(?:{body})", True
            if self.copies in ("walk", "copy-walk"):  # each copy's group is the group itself
                return f"(?P<g{number}>{body})", True
            return f"({body})", True
        if c == ")":  # no `(` before it: glibc takes it as itself
            return r"\)", True
        if c in "^$":
            self.anchored = True
            return self.anchor(c, self.hat if c == "^" else self.dollar), False
        if c == ".":
            return ".", True
        if c == "[":
            return self.bracket(), True
        if c == "\\":
            if self.i >= len(src):
                raise self.fail()
            d = src[self.i]
            self.i += 1
            if d in "123456789":
                if int(d) not in self.closed:
                    raise self.fail()
                self.backrefs = True
                return f"(?:\\{d})", True  # `\\10` is \\1 then 0 to glibc
            if d in _ESCAPES:
                if d in "wWsS":
                    return _ESCAPES[d], True
                return self.anchor(d, "(?!)" if d == "'" and self.inside else _ESCAPES[d]), False
            return _literal(d), True
        return _literal(c), True

    def anchor(self, c: str, written: str) -> str:
        r"""An anchor (`^ $ < > b B \` '`, `written` as the pattern has it). In a copy of a
        repeated atom, glibc propagates no constraint into the node after it when that node is
        a copy too (calc_eclosure_iter): anything but a group's bounds or the end of its branch.
        Its forward pass then ignores the anchor; its walk for the groups meets the anchor
        node itself, kept in a state only where the part of it that looks back holds (`^`
        at the start, `\<` after a non-word character, `\>` after a word character; `\b` and
        `\B` are two anchors of which one always holds, `$` and `\'` look ahead only)."""
        if not self.copies.startswith("copy-") or (self.i < len(self.src) and self.src[self.i] in "()|"):
            return written
        self.anchors += 1
        if self.copies == "copy-forward":
            return ""
        return _LOOKS_BACK.get(c, "")

    def bracket(self) -> str:
        src = self.src
        end = _bracket_end(src, self.i)
        if end < 0:
            raise self.fail()
        i = self.i
        negate = src[i] == "^"
        i += negate
        items: list[str] = []
        prev: str | None = None  # the last single character, a range's possible start
        first = True
        while first or src[i] != "]":
            first = False
            c = src[i]
            if c == "[" and src[i + 1] in ":.=":
                kind = src[i + 1]
                close = src.index(kind + "]", i + 2)
                name = src[i + 2 : close]
                i = close + 2
                if kind == ":":
                    if name not in CLASSES:
                        raise self.fail()
                    if i < end - 1 and src[i] == "-" and src[i + 1] != "]":
                        raise self.fail()  # a range cannot start at a class
                    items.append(f"[:{name}:]" if self.unicode else CLASSES[name])
                    prev = None
                    continue
                if len(name) != 1:
                    raise self.fail()
                c = name
            else:
                i += 1
            if c == "-" and prev is not None and src[i] != "]":
                hi = src[i]
                if hi == "[" and src[i + 1] in ".=":
                    close = src.index(src[i + 1] + "]", i + 2)
                    hi = src[i + 2 : close]
                    if len(hi) != 1:
                        raise self.fail()
                    i = close + 2
                else:
                    i += 1
                if ord(hi) < ord(prev):
                    raise self.fail()
                items.append("-" + _set_char(hi))
                prev = None
                if i < end - 1 and src[i] == "-" and src[i + 1] != "]":
                    raise self.fail()  # `[a-c-e]`
                continue
            items.append(_set_char(c))
            prev = c
        self.i = end
        return ("[^" if negate else "[") + "".join(items) + "]"


def _literal(c: str) -> str:
    return "\\" + c if not c.isalnum() and c != "_" and c.isascii() else c


def _set_char(c: str) -> str:
    return "\\" + c if c in "\\]^-[&|~" else c


def ere_to_regex(src: str, unicode: bool) -> str:
    """The `regex` module's source for glibc ERE `src` (compile it with DOTALL, and ASCII
    unless `unicode`); raises EreError where regcomp fails."""
    return _Parser(src, unicode).parse()


def lossy_sources(src: str, unicode: bool, lines: bool = False) -> tuple[str, str] | None:
    """When glibc loses an anchor in a copy of a repeated atom (`(^a)+`, `(\\<a|b){2}`, see
    _Parser.anchor), the patterns its forward pass and its walk for the groups match (for
    lossy_search); else None, and None with a back-reference (glibc searches further then).
    `lines`: the text has a newline, where its forward pass takes `^` and `$` as LineSearch says."""
    hat, dollar = (_HAT_LINES, _DOLLAR_LINES) if lines else ("^", r"\Z")
    forward = _Parser(src, unicode, hat, dollar, copies="forward")
    source = forward.parse()
    if not forward.lossy or forward.backrefs:
        return None
    return source, _Parser(src, unicode, hat, copies="walk").parse()


def lossy_search(forward: Any, walk: Any, text: Any) -> Any:
    """glibc's match for a pattern that loses anchors in copies (the sources of lossy_sources,
    compiled POSIX): the forward pass picks the first start and the longest end without those
    anchors; then its walk for the groups meets them, and the whole match fails unless the
    walk's pattern goes from that start to that end (`(^a)+` matches `a` in `ab`, nothing in
    `aa`; `(^a|b)+` nothing in `aab`, the `b` at its end never tried; `(\\ba|b)+` all of `ba`)."""
    m = forward.search(text)
    if m is None:
        return None
    path = walk.match(text, m.start())
    return path if path is not None and path.end() == m.end() else None


class LineSearch:
    """How glibc matches an ERE with anchors against a text with newlines (see the module's
    docstring). Its DFA finds, from the first start where one exists, the longest match with
    `^` and `$` also at the newlines the match takes (`loose`; a `$` before a newline where the
    match ends does not count: `quirk_at` tells whether a match ends at a given place). Then,
    when the pattern has a group (bash asks for the groups), the path must hold with `$` at the
    text's end only (`strict`; glibc checks again what comes next, never what came before):
    with a repetition or alternation too (or a back-reference), a start whose longest match has
    no such path is given up for the next (with a back-reference, a shorter match is taken);
    with neither, the whole match fails. Sources are in the `regex` module's syntax; `search`
    gets them compiled (POSIX, DOTALL)."""

    def __init__(self, src: str, unicode: bool) -> None:
        loose = _Parser(src, unicode, _HAT_LINES, _DOLLAR_LINES)
        self.loose = loose.parse()
        self.anchored = loose.anchored
        self.groups = loose.groups
        self.plural = loose.plural
        self.backrefs = loose.backrefs
        # tried with endpos one past the end wanted: the character after it stays in view (for
        # \< \> \b), and a `$` there (before a newline the match does not take) fails
        quirk = _Parser(src, unicode, _HAT_LINES, r"(?=\n)(?!\n\Z)", inside=True).parse()
        self.quirk_at = f"(?:{quirk})(?=.\\Z)"
        self.strict = _Parser(src, unicode, _HAT_LINES).parse()

    def search(self, loose: Any, quirk_at: Any, strict: Any, text: Any) -> Any:
        """The match glibc finds in `text`, from the compiled sources of the same names."""
        n = len(text)

        def longest(start: int) -> Any:
            m = loose.match(text, start)
            if m is None or m.end() == n or text[m.end() : m.end() + 1] not in ("\n", b"\n"):
                return m  # no `$` can be where it ends
            for end in range(m.end(), start - 1, -1):
                valid = quirk_at.match(text, start, end + 1)
                if valid is not None:
                    return valid
            return None

        for start in range(n + 1):
            m = longest(start)
            if m is None:
                continue
            if not self.groups:
                return m
            path = strict.match(text, start)  # the longest with `$` at the end only: it reaches
            if path is not None and (self.backrefs or path.end() == m.end()):  # m's end if any does
                return path
            if not (self.plural or self.backrefs):
                return None
        return None


def groups(m: Any) -> list[Any]:
    """Each group's value as glibc leaves it: the last iteration's, except that an empty
    iteration right after the group's previous one (the `regex` module repeats a group once
    more on nothing, glibc does not) gives way to that one."""
    out = []
    for i in range(1, len(m.regs)):
        spans = m.spans(i)
        if len(spans) > 1 and spans[-1][0] == spans[-1][1] == spans[-2][1]:
            out.append(m.string[spans[-2][0] : spans[-2][1]])
        else:
            out.append(m.group(i))
    return out
