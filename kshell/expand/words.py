"""Word expansion in bash's order: brace, tilde, parameter/arithmetic/command substitution,
field splitting, pathname expansion, quote removal.

    expand_words(sh, words) -> list[str]    command words: every stage
    expand_string(sh, word) -> str          assignment values, redirection targets, here-docs
    expand_pattern(sh, word) -> str         case / [[ == ]] / ${x#p}: quoted parts escaped
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import native
from kshell.core.errors import AbortCommand, CommandError
from kshell.expand import pattern as pat
from kshell.expand.fields import EXP, LIT, QUO, Fields, field_pattern, field_text
from kshell.expand.params import WordExpanders, expand_param, expand_prefix_names
from kshell.limits import LimitExceeded
from kshell.syntax.ast import (
    AnsiCQuoted,
    ArithSub,
    Assignment,
    BadSubst,
    CommandSub,
    DoubleQuoted,
    Escaped,
    Literal,
    Param,
    ParamExp,
    PrefixNames,
    ProcessSub,
    SingleQuoted,
    TildePrefix,
    Word,
)
from kshell.syntax.parts import param, tilde_word
from kshell.syntax.printer import word_text

if TYPE_CHECKING:
    from kshell.expand.shell import Shell

_CONST = 0
_GENERAL = 1
_PARAM = 2
_DQ_SIMPLE = 3
_ARITH = 4
_SPECIAL_PARAMS = frozenset("@*")

_plans: dict[int, tuple[Word, int, object]] = {}


def _plan(word: Word) -> tuple[int, object]:
    hit = _plans.get(id(word))
    if hit is not None and hit[0] is word:
        return hit[1], hit[2]
    kind, data = _classify(word)
    if len(_plans) > 100000:
        _plans.clear()
    _plans[id(word)] = (word, kind, data)
    return kind, data


def _classify(word: Word) -> tuple[int, object]:
    parts = word.parts
    if _brace_candidate(word):
        return _GENERAL, None
    if len(parts) == 1:
        p = parts[0]
        t = type(p)
        if t is Literal:
            text = p.text
            if not _magic(text):
                return _CONST, text
        elif t is SingleQuoted or t is Escaped or t is AnsiCQuoted:
            return _CONST, p.text
        elif t is Param and p.name not in _SPECIAL_PARAMS:
            return _PARAM, p.name
        elif t is ArithSub:
            return _ARITH, p.arith
        elif t is DoubleQuoted and len(p.parts) == 1 and type(p.parts[0]) is ArithSub:
            return _ARITH, p.parts[0].arith
        elif t is DoubleQuoted and all(
            type(q) is Literal or (type(q) is Param and q.name not in _SPECIAL_PARAMS) for q in p.parts
        ):
            return _DQ_SIMPLE, tuple((type(q) is Param, q.text if type(q) is Literal else q.name)
                                     for q in p.parts)
    return _GENERAL, None


def _magic(text: str) -> bool:
    """Could this unquoted text be a glob pattern? (`[` needs a later `]`.)"""
    if "*" in text or "?" in text or "(" in text:
        return True
    i = text.find("[")
    return i >= 0 and text.find("]", i + 1) > 0


def _brace_candidate(word: Word) -> bool:
    has_open = has_close = False
    for p in word.parts:
        if type(p) is Literal:
            if "{" in p.text:
                has_open = True
            if "}" in p.text:
                has_close = True
    return has_open and has_close


def expand_words(sh: Shell, words) -> list[str]:
    out: list[str] = []
    for word in words:
        if type(word) is Assignment:
            out.append(sh.assignment_arg(word))
            continue
        kind, data = _plan(word)
        if kind == _CONST:
            out.append(data)  # type: ignore[arg-type]
        elif kind == _DQ_SIMPLE:
            out.append("".join(sh.get_param(text) if is_param else text
                               for is_param, text in data))  # type: ignore[union-attr]
        elif kind == _ARITH:
            value = str(sh.eval_arith(data))  # type: ignore[arg-type]
            ifs = sh.ifs
            if ifs == " \t\n" or not any(c in ifs for c in value):
                out.append(value)
            else:
                _expand_general(sh, word, out)
        elif kind == _PARAM:
            value = sh.get_param(data)  # type: ignore[arg-type]
            if not value:
                continue
            ifs = sh.ifs
            if ifs == " \t\n" and " " not in value and "\t" not in value and "\n" not in value:
                if _magic(value) and not sh.noglob:
                    out.extend(_glob_field([(value, EXP)], sh))
                else:
                    out.append(value)
            else:
                _expand_general(sh, word, out)
        else:
            _expand_general(sh, word, out)
    return out


def expand_word(sh: Shell, word: Word) -> list[str]:
    return expand_words(sh, (word,))


def _expand_general(sh: Shell, word: Word, out: list[str]) -> None:
    for w in brace_words(sh, word):
        b = Fields(sh.ifs)
        expand_parts(sh, w.parts, b, False)
        for pieces, magic in b.result():
            if magic and not sh.noglob:
                out.extend(_glob_field(pieces, sh))
            else:
                out.append(field_text(pieces))


def _glob_field(pieces: list[tuple[str, int]], sh: Shell) -> list[str]:
    pattern = field_pattern(pieces)
    if not _magic(pattern) or not pat.has_magic(pattern):
        return [field_text(pieces)]
    matches = pat.glob_paths(sh, pattern)
    if matches:
        return matches
    opts = sh.shopts
    if "failglob" in opts:
        sh.error(f"no match: {field_text(pieces)}")
        raise AbortCommand(1)
    if "nullglob" in opts:
        return []
    return [field_text(pieces)]  # the word as it was: a backslash from `$v` stays


# --------------------------------------------------------------------------- braces

_braced: dict[int, tuple[Word, list[Word], str | None]] = {}
_PLACEHOLDER = 0xF0000  # plane-15 private use: stands for a non-literal part during braces


def brace_words(sh: Shell, word: Word) -> list[Word]:
    if not _brace_candidate(word):
        return [word]
    hit = _braced.get(id(word))
    if hit is None or hit[0] is not word:
        hit = _brace_expand(sh, word)
        if len(_braced) > 10000:
            _braced.clear()
        _braced[id(word)] = hit
    if hit[2] is not None:
        sh.error(hit[2])
        raise AbortCommand(1)
    return hit[1]


def _brace_expand(sh: Shell, word: Word) -> tuple[Word, list[Word], str | None]:
    template: list[str] = []
    others: list[object] = []
    for p in word.parts:
        if type(p) is Literal:
            template.append(p.text)
        else:
            template.append(chr(_PLACEHOLDER + len(others)))
            others.append(p)
    raw = "".join(template).encode("utf-8", "surrogateescape")
    try:
        expanded = native.brace_expand(raw, sh.limits.brace_words)
    except native.BraceLimitError as e:
        raise LimitExceeded(f"brace expansion: too many words (limit {e.limit})") from None
    except ValueError as e:
        raise LimitExceeded(str(e)) from None
    from_range = "\\" not in raw.decode("utf-8", "surrogateescape")  # else: the source's own
    words: list[Word] = []
    error = None
    for item in expanded:
        parts, bad = _brace_parts(item.decode("utf-8", "surrogateescape"), others, from_range)
        error = error or bad
        words.append(Word(tuple(parts)))  # type: ignore[arg-type]
    return word, words, error


_NAME_CHARS = re.compile(r"[A-Za-z0-9_]*")


def _brace_parts(text: str, others: list[object], from_range: bool) -> tuple[list[object], str | None]:
    """One brace-expanded word back in parts, read as bash reads its brace-expanded source
    text: a bare `$name` takes the name characters that now follow it (`{$a,b}_c`: `$a_c`);
    a tilde prefix is found anew. With `from_range`, a backslash (only a character range such
    as `{Z..a}` makes one) quotes the next character, and a backquote that does not end the
    word opens a command substitution that never closes: the error message is returned."""
    parts: list[object] = []
    buf: list[str] = []
    for c in text:
        if ord(c) >= _PLACEHOLDER:
            if buf:
                parts.append(Literal("".join(buf)))
                buf = []
            parts.append(others[ord(c) - _PLACEHOLDER])
        else:
            buf.append(c)
    if buf:
        parts.append(Literal("".join(buf)))
    out: list[object] = []
    for k, p in enumerate(parts):
        if type(p) is not Literal:
            out.append(p)
            continue
        t = p.text
        prev = out[-1] if out else None
        if type(prev) is Param and prev.bare:
            n = _NAME_CHARS.match(t).end()  # type: ignore[union-attr]
            if n:
                out[-1] = param(prev.name + t[:n], True)
                t = t[n:]
        if from_range and "`" in t:
            j = t.index("`")
            if j < len(t) - 1 or k < len(parts) - 1:
                rest = t[j:] + word_text(Word(tuple(parts[k + 1:])))  # type: ignore[arg-type]
                return out, f'bad substitution: no closing "`" in {rest}'
        while from_range and "\\" in t:
            j = t.index("\\")
            if j:
                out.append(Literal(t[:j]))
            out.append(Escaped(t[j + 1 : j + 2]))
            t = t[j + 2 :]
        if t:
            out.append(Literal(t))
    if out and type(out[0]) is Literal and out[0].text.startswith("~"):
        out = tilde_word(out)  # a brace can produce a tilde prefix (bash: braces first)
    return out, None


# --------------------------------------------------------------------------- parts


def expand_parts(sh: Shell, parts, b: Fields, quoted: bool) -> None:
    for part in parts:
        t = type(part)
        if t is Literal:
            b.add(part.text, QUO if quoted else LIT)
        elif t is SingleQuoted or t is Escaped or t is AnsiCQuoted:
            b.add(part.text, QUO)
        elif t is DoubleQuoted:
            inner = part.parts
            if not _has_at(inner):
                b.force()
            expand_parts(sh, inner, b, True)
        elif t is Param:
            name = part.name
            if name == "@" or name == "*":
                values = sh.positional_list()
                if quoted and name == "*":
                    b.add(sh.ifs_join(values), QUO)
                else:
                    b.add_list(values, quoted, name == "*")
                continue
            value = sh.get_param(name)
            if quoted:
                b.add(value, QUO)
            else:
                b.add_split(value)
        elif t is ParamExp:
            expand_param(sh, part, b, quoted, WORDS)
        elif t is TildePrefix:
            b.add(sh.tilde(part.user), QUO)
        elif t is ArithSub:
            value = str(sh.eval_arith(part.arith))
            if quoted:
                b.add(value, QUO)
            else:
                b.add_split(value)
        elif t is CommandSub:
            value = sh.command_substitution(part)
            if quoted:
                b.add(value, QUO)
            else:
                b.add_split(value)
        elif t is ProcessSub:
            b.add(sh.process_substitution(part), QUO)
        elif t is PrefixNames:
            expand_prefix_names(sh, part, b, quoted)
        elif t is BadSubst:
            sh.error(f"{part.text}: bad substitution")
            raise AbortCommand(1)
        else:  # pragma: no cover
            raise CommandError(f"cannot expand {t.__name__}")


def _has_at(parts) -> bool:
    for p in parts:
        t = type(p)
        if t is Param and p.name == "@":
            return True
        if t is ParamExp and (p.name == "@" or p.subscript == "@" or p.subscript == "*"):
            return True
        if t is PrefixNames and p.at:
            return True
    return False


def expand_string(sh: Shell, word: Word) -> str:
    """One string, no splitting or globbing (assignment values, here-docs, [[ operands])."""
    kind, data = _plan(word)
    if kind == _CONST:
        return data  # type: ignore[return-value]
    if kind == _PARAM:
        return sh.get_param(data)  # type: ignore[arg-type]
    if kind == _ARITH:
        return str(sh.eval_arith(data))  # type: ignore[arg-type]
    if kind == _DQ_SIMPLE:
        return "".join(sh.get_param(text) if is_param else text
                       for is_param, text in data)  # type: ignore[union-attr]
    b = Fields("")
    expand_parts_nosplit(sh, word.parts, b)
    fields = b.result()
    if len(fields) == 1:
        return field_text(fields[0][0])
    return " ".join(field_text(f) for f, _ in fields)


def expand_parts_nosplit(sh: Shell, parts, b: Fields) -> None:
    """As expand_parts, with unquoted expansions kept whole (assignment context)."""
    for part in parts:
        t = type(part)
        if t is Param and part.name not in _SPECIAL_PARAMS:
            b.add(sh.get_param(part.name), QUO)
        elif t is Literal:
            b.add(part.text, QUO)
        else:
            expand_parts(sh, (part,), b, True)


def expand_pattern(sh: Shell, word: Word, trace: str = "") -> str:
    """A pattern: unquoted text keeps its pattern characters, quoted text matches literally.
    `trace` gives it as set -x shows it: "glob" escapes every quoted character, "regex" the
    quoted characters special in an ERE (bash's quote_string_for_globbing)."""
    parts = word.parts
    if len(parts) == 1 and type(parts[0]) is Literal:
        return parts[0].text
    pieces = pattern_pieces(sh, word)
    if trace:
        escape = _trace_escape_regex if trace == "regex" else _trace_escape_glob
        return "".join(escape(text) if kind == QUO else text for text, kind in pieces)
    return field_pattern(pieces)


def pattern_pieces(sh: Shell, word: Word) -> list[tuple[str, int]]:
    """A pattern word (case, `[[ == ]]`, `[[ =~ ]]`, `${x#p}`) expanded to one string in
    pieces that say whether they were quoted: nothing is split, a `@` list is joined with a
    space and a `*` list with IFS's first character, as bash does."""
    b = Fields("", sh.ifs[:1])
    expand_parts(sh, word.parts, b, False)
    return [piece for pieces, _ in b.result() for piece in pieces]


_ERE_CHARS = frozenset(".[\\()*+?{|^$")


def _trace_escape_glob(text: str) -> str:
    return "".join("\\" + c for c in text)


def _trace_escape_regex(text: str) -> str:
    return "".join("\\" + c if c in _ERE_CHARS else c for c in text)


def expand_arith_text(sh: Shell, word: Word) -> str:
    """The text of an arithmetic expression after `$` expansions (quotes removed)."""
    return expand_string(sh, word)


WORDS = WordExpanders(expand_parts, expand_string, expand_pattern, pattern_pieces)  # for params
