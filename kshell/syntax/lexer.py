"""Command-mode tokens: words, operators, redirections, newlines and end of input.

The lexer is pulled by the parser one token at a time (one token of lookahead), so the parser
can switch modes (`[[ ]]`, `=~` regexes, `((`) between tokens. Positions index the original
source; line numbers are computed from them. As in bash, input that does not end in a newline
gets one, so `for` alone is an error "near unexpected token `newline'".
"""

from __future__ import annotations

import re
from bisect import bisect_right

from kshell.syntax.ast import ArrayLiteral, KeyedElement, Literal, Word
from kshell.syntax.errors import ParseWarning, ShellSyntaxError
from kshell.syntax.expansions import ExpansionReader
from kshell.syntax.heredoc import HeredocReader
from kshell.syntax.parts import tilde_word
from kshell.syntax.stack import nesting_limit
from kshell.syntax.words import CTX_WORD, WordReader

MAX_DEPTH = 48  # nested commands and substitutions (bash scripts rarely exceed 10)
FRAMES_PER_LEVEL = 10  # Python frames one nesting level may take (measured worst: ~9.4)

WORD = "WORD"
NEWLINE = "newline"
EOF = "EOF"
REDIR = "REDIR"

_SKIP = re.compile(r"(?:[ \t]+|\\\n|#[^\n]*)*")
_REDIR_OP = re.compile(r"<<<|<<-|<<|<&|<>|<|>>|>&|>\||>")
_VARNAME_FD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_ELEMENT_SKIP = re.compile(r"(?:[ \t\n]+|\\\n|#[^\n]*)*")
_NEEDS_QUOTE = re.compile(r"[\x00-\x1f\x7f]")
_PLAIN_WORD = re.compile(r"[^ \t\n|&;<>()$`\\\"']+")
_SIMPLE_END = frozenset(" \t\n;|&)")
_WORDS: dict[str, Word] = {}  # plain words are immutable: share them
_NAME_BRACKET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
_ASSIGN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?\+?=", re.DOTALL)
_DECLARATIONS = frozenset({"declare", "typeset", "local", "export", "readonly"})
_CASE_ENDS = frozenset({";;", ";&", ";;&"})


class Token:
    """One token. `text` is the source text (what bash names in "near unexpected token")."""

    __slots__ = ("end", "kind", "start", "text")
    word: Word
    array: ArrayLiteral | None
    op: str
    fd: int | None

    def __init__(self, kind: str, start: int, end: int, text: str) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.text = text

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r})"


class WordToken(Token):
    """A WORD; `array` is set for `name=(...)`, which is only valid as an assignment."""

    __slots__ = ("array", "paren", "word")

    def __init__(self, start: int, end: int, text: str, word: Word,
                 array: ArrayLiteral | None = None, paren: int = -1) -> None:
        self.kind = WORD
        self.start = start
        self.end = end
        self.text = text
        self.word = word
        self.array = array
        self.paren = paren  # where the `(` of `name=(...)` is


class RedirToken(Token):
    """A redirection operator with its optional descriptor number, or the variable name of
    `{var}>` (`var`)."""

    __slots__ = ("fd", "op", "var")


_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\x1b": "\\E", "\f": "\\f", "\n": "\\n",
              "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def quote_token(text: str) -> str:
    """bash shows a token with control characters as $'...' (its ansic_quote)."""
    if _NEEDS_QUOTE.search(text) is None:
        return text
    # bash's words carry CTLESC (\x01) before \x01 and \x7f bytes; its message shows it
    text = text.replace("\x01", "\x01\x01").replace("\x7f", "\x01\x7f")
    out = "".join(_C_ESCAPES.get(c, f"\\{ord(c):03o}") if c < " " or c == "\x7f" else
                  "\\" + c if c in "\\'" else c for c in text)
    return f"$'{out}'"


class Lexer(HeredocReader, ExpansionReader, WordReader):
    """Token reading over one source text, with the state bash's lexer keeps: one token of
    lookahead, pending here-documents, nesting depth, and whether an assignment may come."""

    def __init__(self, src: str, *, line0: int = 0, depth: int = 0, extglob: bool = False,
                 comsub_level: int = 0, max_depth: int = 0, utf8: bool = True,
                 aliases: dict[str, str] | None = None) -> None:
        self.src = src
        self.n = len(src)
        self.pos = 0
        self.line0 = line0
        self.depth = depth
        self.max_depth = max_depth or nesting_limit(MAX_DEPTH, FRAMES_PER_LEVEL)
        self.extglob = extglob
        self.utf8 = utf8  # the locale's character set: $'\u00e9' is é only in UTF-8
        # alias expansion (shopt expand_aliases): the table, None when off; the source spans
        # of expansions being read ([start, end, name]: an alias is not expanded in its own
        # text); where the text of an alias ending in a blank ends (the word there is checked
        # too), or -1
        self.aliases = aliases
        self.alias_spans: list[list] = []
        self.alias_next = -1
        self.comsub_level = comsub_level
        self.cond_mode = False
        # bash's assignment_acceptable(): a word here may be `name[sub]=` or `name=(...)`
        self.cmd_start = True
        # bash's command_token_position(): where an alias is expanded. As cmd_start, except
        # that a redirection after an assignment ends it (`a=1 >f ll` does not expand ll)
        self.alias_pos = True
        self.alias_after_target = False  # alias_pos for the word after a redirection's target
        self.last_assign = False  # the last word was an assignment in command position
        self.decl = False  # after a declaration builtin: `declare a=(...)` is allowed
        self.case_pattern = False  # reading case patterns: never assignment position
        self.after_redirect = False  # assignment position resumes after a redirection
        self.peeked: Token | None = None
        self.last_kind = ""
        self.eof_newline = False  # a newline was supplied at end of input
        self.pending: list = []  # here-documents waiting for their bodies
        self.warnings: list[ParseWarning] = []
        self._newlines: list[int] | None = None

    # ----------------------------------------------------------------- positions

    def line_of(self, pos: int) -> int:
        nls = self._newlines
        if nls is None:
            src = self.src
            nls = self._newlines = [m.start() for m in re.finditer("\n", src)]
        return bisect_right(nls, pos - 1) + 1 + self.line0

    def eof_line(self) -> int:
        return self.line_of(self.n) + (1 if self.eof_newline else 0)

    def line_text(self, pos: int) -> str:
        src = self.src
        start = src.rfind("\n", 0, pos) + 1
        end = src.find("\n", pos)
        return src[start:] if end < 0 else src[start:end]

    # ----------------------------------------------------------------- errors

    def eof_error(self, start: int, char: str) -> ShellSyntaxError:
        return ShellSyntaxError(self.line_of(start),
                                f"unexpected EOF while looking for matching `{char}'",
                                at_eof=True)

    def unexpected(self, tok: Token) -> ShellSyntaxError:
        """bash's report for a token the grammar cannot take here."""
        if tok.kind == EOF:
            if self.comsub_level:
                return ShellSyntaxError(self.eof_line(),
                                        "unexpected EOF while looking for matching `)'",
                                        at_eof=True)
            return ShellSyntaxError(self.eof_line(), "syntax error: unexpected end of file",
                                    at_eof=True)
        if tok.kind == NEWLINE:
            text, at = "newline", max(tok.start, 0)
            line = self.line_of(at) if tok.start < self.n else self.eof_line() - 1
            source = self.line_text(at) if tok.start < self.n else self.line_text(self.n)
        else:
            text = str(tok.fd) if tok.kind == REDIR and tok.fd is not None else tok.text
            at = tok.end
            while self.src.startswith("\\\n", at):  # bash has read past continuations
                at += 2
            if at == tok.end and not self.src.startswith("\\\n", tok.end - 2):
                at = tok.end - 1
            line = self.line_of(at)
            source = self.line_text(at)
        return ShellSyntaxError(line, f"syntax error near unexpected token `{quote_token(text)}'",
                                extra=(f"`{source}'",))

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > self.max_depth:
            raise ShellSyntaxError(self.line_of(pos), "maximum nesting depth exceeded")

    # ----------------------------------------------------------------- tokens

    def peek(self) -> Token:
        tok = self.peeked
        if tok is None:
            tok = self.peeked = self.next_token()
        return tok

    def advance(self) -> Token:
        tok = self.peeked
        if tok is None:
            return self.next_token()
        self.peeked = None
        return tok

    def next_token(self) -> Token:
        src, n = self.src, self.n
        pos = self.pos
        if pos < n:
            c = src[pos]
            if c == " ":
                pos += 1
                c = src[pos] if pos < n else ""
            if c and c in " \t#\\":
                pos = _SKIP.match(src, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            self.pos = n
            if self.last_kind != NEWLINE and not self.eof_newline and self.last_kind:
                self.eof_newline = True
                self.last_kind = NEWLINE
                self.cmd_start = self.alias_pos = True
                self.decl = False
                tok = Token(NEWLINE, n, n, "\n")
                if self.pending:
                    self.read_heredocs()
                return tok
            self.last_kind = EOF
            return Token(EOF, n, n, "")
        c = src[pos]
        if c == "\n":
            self.pos = pos + 1
            self.last_kind = NEWLINE
            self.cmd_start = self.alias_pos = True
            self.decl = False
            tok = Token(NEWLINE, pos, pos + 1, "\n")
            if self.pending:
                self.read_heredocs()
            return tok
        if c in ";&|()":
            if c == ";":
                op = ";;&" if src.startswith(";;&", pos) else src[pos:pos + 2] if src.startswith(
                    (";;", ";&"), pos) else ";"
            elif c == "&":
                if src.startswith("&>", pos):
                    return self.redirect(pos, pos, "&>>" if src.startswith("&>>", pos) else "&>",
                                         None)
                op = "&&" if src.startswith("&&", pos) else "&"
            elif c == "|":
                op = src[pos:pos + 2] if src.startswith(("||", "|&"), pos) else "|"
            else:
                op = c
            self.pos = pos + len(op)
            self.last_kind = op
            self.cmd_start = self.alias_pos = op not in _CASE_ENDS
            self.decl = False
            return Token(op, pos, self.pos, op)
        if (c == "<" or c == ">") and src[pos + 1:pos + 2] != "(":
            op = _REDIR_OP.match(src, pos).group()  # type: ignore[union-attr]
            if self.cond_mode:  # [[ ]]: < and > compare; other operators are just tokens
                self.pos = pos + len(op)
                self.last_kind = op
                return Token(op, pos, self.pos, op)
            return self.redirect(pos, pos, op, None)
        return self.read_word_token(pos)

    def redirect(self, start: int, op_start: int, op: str, fd: int | None,
                 var: str | None = None) -> Token:
        end = op_start + len(op)
        tok = RedirToken(REDIR, start, end, self.src[start:end])
        tok.op = op
        tok.fd = fd
        tok.var = var
        self.pos = end
        self.last_kind = REDIR
        self.after_redirect = self.cmd_start  # `>f a=1 cmd`: a=1 is still an assignment
        self.alias_after_target = self.alias_pos and not self.last_assign
        self.cmd_start = self.alias_pos = False
        return tok

    def read_word_token(self, pos: int) -> Token:
        src, n = self.src, self.n
        assign_pos = self.cmd_start and not self.case_pattern
        m = _PLAIN_WORD.match(src, pos)
        if self.aliases and m is not None:
            end = m.end()
            if (end >= n or src[end] in _SIMPLE_END or src[end] in "<>") and self.expand_alias(
                    pos, end, self.alias_pos and not self.case_pattern and not self.cond_mode):
                return self.next_token()
            if 0 <= self.alias_next <= pos:
                self.alias_next = -1
        target = self.last_kind == REDIR
        self.cmd_start = target and self.after_redirect
        self.alias_pos = target and self.alias_after_target
        self.last_assign = False
        if assign_pos and (m is None or "[" in m.group()):
            bracket = _NAME_BRACKET.match(src, pos)
            if bracket is not None:
                parts, end = self.read_subscripted(pos, bracket.end() - 1)
                return self.finish_word(pos, end, parts, True)
        if m is not None:  # fast path: a word of plain characters
            end = m.end()
            if end >= n or src[end] in _SIMPLE_END:
                text = m.group()
                self.pos = end
                self.last_kind = WORD
                if assign_pos:
                    self.after_first_word(text)
                word = _WORDS.get(text)
                if word is None:
                    if len(_WORDS) > 20000:
                        _WORDS.clear()
                    word = _WORDS[text] = Word(
                        tuple(tilde_word([Literal(text)])) if text[0] == "~"
                        else (Literal(text),))
                return WordToken(pos, end, text, word)
        parts, end = self.read_unquoted(pos, CTX_WORD)
        src, n = self.src, self.n
        if end < n:
            c = src[end]
            if (c == "<" or c == ">") and not self.cond_mode and src[end + 1:end + 2] != "(":
                text = src[pos:end]
                if text.isdigit() and text.isascii():
                    op = _REDIR_OP.match(src, end).group()  # type: ignore[union-attr]
                    return self.redirect(pos, end, op, int(text))
                if _VARNAME_FD.fullmatch(text):
                    op = _REDIR_OP.match(src, end).group()  # type: ignore[union-attr]
                    return self.redirect(pos, end, op, None, text[1:-1])
        return self.finish_word(pos, end, parts, assign_pos)

    def expand_alias(self, pos: int, end: int, command_pos: bool) -> bool:
        """bash's alias expansion of the plain word src[pos:end], where a command word may
        stand or after an alias ending in a blank: the alias's text replaces the word in the
        source and is read in its place."""
        name = self.src[pos:end]
        value = self.aliases.get(name)  # type: ignore[union-attr]
        if value is None or not (command_pos or 0 <= self.alias_next <= pos):
            return False
        spans = self.alias_spans = [s for s in self.alias_spans if s[1] > pos]
        if any(s[0] <= pos and s[2] == name for s in spans):
            return False  # inside its own expansion
        delta = len(value) - (end - pos)
        for span in spans:
            span[1] += delta
        spans.append([pos, pos + len(value), name])
        self.src = self.src[:pos] + value + self.src[end:]
        self.n = len(self.src)
        self._newlines = None
        self.pos = pos
        if value[-1:] in (" ", "\t"):
            self.alias_next = pos + len(value)
        elif self.alias_next > pos:
            self.alias_next += delta
        else:
            self.alias_next = -1
        return True

    def finish_word(self, pos: int, end: int, parts: list, assign_pos: bool) -> Token:
        src = self.src
        array = None
        paren = end
        if end < self.n and src[end] == "(" and (assign_pos or self.decl) and \
                _ASSIGN_WORD.fullmatch(src, pos, end):
            array, end = self.read_array(end)
            src = self.src
        if parts and type(parts[0]) is Literal and parts[0].text[:1] == "~":
            parts = tilde_word(parts)
        text = src[pos:end]
        if "\\\n" in text:  # the word as bash reads it: `don\<newline>e` is `done`
            text = text.replace("\\\n", "")
        self.pos = end
        self.last_kind = WORD
        if assign_pos:
            self.after_first_word(text)
        return WordToken(pos, end, text, Word(tuple(parts)), array, paren)

    def after_first_word(self, text: str) -> None:
        """After a word in assignment position: another assignment keeps the position; a
        declaration builtin allows array assignments in its arguments."""
        if "=" in text and _ASSIGN_WORD.match(text):
            self.cmd_start = self.alias_pos = self.last_assign = True
        elif text in _DECLARATIONS:
            self.decl = True

    def read_array(self, pos: int) -> tuple[ArrayLiteral, int]:
        """`(elem ...)` after `name=`; pos is at the `(`."""
        src, n = self.src, self.n
        start = pos
        pos += 1
        elements: list[Word | KeyedElement] = []
        while True:
            pos = _ELEMENT_SKIP.match(src, pos).end()  # type: ignore[union-attr]
            if pos >= n:
                raise self.eof_error(start, ")")
            c = src[pos]
            if c == ")":
                return ArrayLiteral(tuple(elements)), pos + 1
            if c in "|&;<>(" and not ((c == "<" or c == ">") and src[pos + 1:pos + 2] == "("):
                tok = Token(c, pos, pos + 1, c)
                raise self.unexpected(tok)
            element, pos = self.read_element(pos)
            src, n = self.src, self.n
            elements.append(element)
