"""Recursive-descent parser for bash's command grammar, producing `kshell.syntax.ast` nodes.

Reserved words are recognised only where a command may start (and `in`/`do`/`esac` where the
grammar expects them); errors are ShellSyntaxError with bash's wording and line numbers.
`Parser.parse_line` returns one line's worth of commands at a time, which is how bash reads
and runs a script: commands before a syntax error on a later line still run.
"""

from __future__ import annotations

import re
from functools import lru_cache

from kshell.syntax.ast import (
    AndOr,
    Assignment,
    Background,
    Command,
    FunctionDef,
    Literal,
    Pipeline,
    Program,
    Redirect,
    SimpleCommand,
    Word,
)
from kshell.syntax.compound import COMPOUND, CompoundParser
from kshell.syntax.errors import ParseWarning, ShellSyntaxError
from kshell.syntax.lexer import (
    EOF,
    FRAMES_PER_LEVEL,
    MAX_DEPTH,
    NEWLINE,
    REDIR,
    WORD,
    Token,
)
from kshell.syntax.parts import EMPTY_WORD, split_assignment, tilde_assignment
from kshell.syntax.stack import nesting_limit

# Words that end a compound list where a command could start, and operators that do.
_CLOSERS = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "}", ")", ";;", ";&",
                      ";;&"})
# Reserved words that can never start a command.
_CANNOT_START = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "}", "in", "]]",
                           "!"})
_UNSUPPORTED = frozenset({"coproc"})
# Tokens after `;` or `&` that are certainly an error (bash then reads pending here-docs).
_ERROR_AFTER_LIST = (_CANNOT_START - {"!"}) | _CLOSERS
_DECLARATIONS = frozenset({"declare", "typeset", "local", "export", "readonly"})
_TILDE_ARG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


class Parser(CompoundParser):
    """A parser over one source text. `extglob`, `utf8` (the locale's character set, for
    `$'\\u...'`) and `aliases` (the alias table when expand_aliases is on, else None) may be
    changed between `parse_line` calls: bash reads `shopt -s extglob`, `LC_ALL=...` and
    `alias` before it parses the following lines."""

    def __init__(self, src: str, *, filename: str = "", line0: int = 0, depth: int = 0,
                 extglob: bool = False, comsub_level: int = 0, max_depth: int = 0,
                 utf8: bool = True, aliases: dict[str, str] | None = None) -> None:
        super().__init__(src, line0=line0, depth=depth, extglob=extglob,
                         comsub_level=comsub_level, max_depth=max_depth, utf8=utf8,
                         aliases=aliases)
        self.filename = filename

    # ----------------------------------------------------------------- entry points

    def parse_program(self) -> Program:
        commands: list[Command] = []
        while (line := self.parse_line()) is not None:
            commands.extend(line)
        return Program(tuple(commands), tuple(self.warnings))

    def parse_line(self) -> list[Command] | None:
        """The commands up to the next unquoted newline (here-documents included), or None at
        end of input. Warnings accumulate in `self.warnings` (see take_warnings); an error
        carries the warnings bash prints before it, and the parser's filename."""
        if not self.depth:
            self.max_depth = nesting_limit(MAX_DEPTH, FRAMES_PER_LEVEL)
        try:
            return self._parse_line()
        except ShellSyntaxError as e:
            e.warnings = tuple(self.warnings)
            e.filename = self.filename
            raise

    def take_warnings(self) -> list[ParseWarning]:
        """The warnings produced since the last call (for printing as lines are parsed)."""
        taken, self.warnings = self.warnings, []
        return taken

    def _parse_line(self) -> list[Command] | None:
        tok = self.peek()
        while tok.kind == NEWLINE:
            self.advance()
            tok = self.peek()
        if tok.kind == EOF:
            return None
        commands: list[Command] = []
        while True:
            cmd = self.parse_and_or()
            tok = self.peek()
            kind = tok.kind
            if kind == "&":
                self.advance()
                cmd = Background(cmd, cmd.line)
            elif kind == ";":
                self.advance()
            elif kind == NEWLINE:
                self.advance()
                commands.append(cmd)
                return commands
            elif kind == EOF:
                commands.append(cmd)
                return commands
            else:
                raise self.unexpected(tok)
            commands.append(cmd)
            tok = self.peek()
            if tok.kind == NEWLINE:
                self.advance()
                return commands
            if tok.kind == EOF:
                return commands
            if self.pending and tok.text in _ERROR_AFTER_LIST:
                raise self.error_after_heredocs(tok)

    def error_after_heredocs(self, tok: Token) -> ShellSyntaxError:
        """bash reads pending here-documents (starting right after the offending token) before
        it reports an error that follows `;` or `&` on their line; its line number shows it."""
        self.pos = tok.end
        self.read_heredocs()
        error = self.unexpected(tok)
        error.lineno = self.line_of(self.pos - 1)
        return error

    # Callbacks for the word reader and the here-document reader.

    def parse_substitution(self, pos: int) -> tuple[Program, int]:
        """The program inside `$(`, `<(` or `>(` from pos up to its `)`."""
        self.pos = pos
        self.comsub_level += 1
        saved = self.decl, self.case_pattern, self.cond_mode
        self.cmd_start, self.decl, self.case_pattern, self.cond_mode = True, False, False, False
        self.alias_pos = True
        body = self.parse_compound_list(allow_empty=True)
        tok = self.advance()
        if tok.kind != ")":
            raise self.unexpected(tok)
        self.comsub_level -= 1
        self.last_kind = WORD
        self.cmd_start = self.alias_pos = False
        self.decl, self.case_pattern, self.cond_mode = saved
        return Program(tuple(body)), tok.end

    def sub_parse(self, text: str, line0: int) -> Program:
        return Parser(text, line0=line0, depth=self.depth + 1, extglob=self.extglob,
                      max_depth=self.max_depth, utf8=self.utf8,
                      aliases=self.aliases).parse_program()

    def sub_lexer(self, text: str, line0: int) -> Parser:
        """For here-document bodies and arithmetic text, read in place of a limit: their
        command substitutions see no aliases (an expansion would move the limit)."""
        return Parser(text, line0=line0, depth=self.depth + 1, extglob=self.extglob,
                      max_depth=self.max_depth, utf8=self.utf8)

    # ----------------------------------------------------------------- lists

    def skip_newlines(self) -> Token:
        tok = self.peek()
        while tok.kind == NEWLINE:
            self.advance()
            tok = self.peek()
        return tok

    def parse_compound_list(self, allow_empty: bool = False) -> list[Command]:
        commands: list[Command] = []
        while True:
            tok = self.skip_newlines()
            if tok.text in _CLOSERS and tok.kind != REDIR:
                break
            cmd = self.parse_and_or()
            tok = self.peek()
            kind = tok.kind
            if kind == "&":
                self.advance()
                cmd = Background(cmd, cmd.line)
            elif kind == ";" or kind == NEWLINE:
                self.advance()
            else:
                commands.append(cmd)
                break
            commands.append(cmd)
        if not commands and not allow_empty:
            raise self.unexpected(tok)
        return commands

    def parse_and_or(self) -> Command:
        first = self.parse_pipeline()
        tok = self.peek()
        if tok.kind != "&&" and tok.kind != "||":
            return first
        rest: list[tuple[str, Command]] = []
        while tok.kind == "&&" or tok.kind == "||":
            self.advance()
            self.skip_newlines()
            rest.append((tok.kind, self.parse_pipeline()))
            tok = self.peek()
        return AndOr(first, tuple(rest), first.line)

    def parse_pipeline(self) -> Command:
        """A pipeline with the `!` and `time [-p] [--]` words before it, in any order (bash's
        pipeline_command rule): each `!` toggles the negation, `time` times it (`time --` is
        `time -p`, as in bash 5.2). Either alone before `;`, a newline or the end applies to
        an empty command."""
        tok = self.peek()
        negated = timed = time_posix = False
        line = 0
        while tok.kind == WORD and (tok.text == "!" or tok.text == "time"):
            line = line or self.line_of(tok.start)
            if tok.text == "!":
                negated = not negated
                self.keyword()
            else:
                timed = True
                time_posix |= self.time_options()
            tok = self.peek()
        if line and tok.kind in (";", NEWLINE, EOF):
            return Pipeline((SimpleCommand((), (), (), line),), negated, (), line, timed, time_posix)
        cmd = self.parse_command()
        tok = self.peek()
        if tok.kind != "|" and tok.kind != "|&":
            return Pipeline((cmd,), negated, (), line, timed, time_posix) if negated or timed else cmd
        commands = [cmd]
        stderr: list[bool] = []
        while tok.kind == "|" or tok.kind == "|&":
            self.advance()
            self.skip_newlines()
            stderr.append(tok.kind == "|&")
            commands.append(self.parse_command())
            tok = self.peek()
        return Pipeline(tuple(commands), negated, tuple(stderr), line or cmd.line, timed, time_posix)

    def time_options(self) -> bool:
        """Consume `time` (the current token), then `-p`, then `--`; True if either option
        was there (bash's TIMEOPT and TIMEIGN tokens, recognised only right after `time`)."""
        self.keyword()
        posix = False
        tok = self.peek()
        if tok.kind == WORD and tok.text == "-p":
            posix = True
            self.keyword()
            tok = self.peek()
        if tok.kind == WORD and tok.text == "--":
            posix = True
            self.keyword()
        return posix

    # ----------------------------------------------------------------- commands

    def parse_command(self) -> Command:
        tok = self.peek()
        kind = tok.kind
        if kind == WORD:
            text = tok.text
            handler = COMPOUND.get(text)
            if handler is not None:
                return handler(self, tok)
            if text in _CANNOT_START:
                raise self.unexpected(tok)
            if text in _UNSUPPORTED:
                raise self.unsupported(tok)
            return self.parse_simple()
        if kind == "(":
            return self.parse_paren(tok)
        if kind == REDIR:
            return self.parse_simple()
        raise self.unexpected(tok)

    def unsupported(self, tok: Token) -> ShellSyntaxError:
        return ShellSyntaxError(self.line_of(tok.start),
                                f"`{tok.text}': reserved word not supported by this shell")

    def parse_simple(self) -> SimpleCommand | FunctionDef:
        line = self.line_of(self.peek().start)
        assigns: list[Assignment] = []
        words: list[Word | Assignment] = []
        redirects: list[Redirect] = []
        declaration = False
        while True:
            tok = self.peeked or self.peek()
            kind = tok.kind
            if kind == WORD:
                self.peeked = None
                if not words:
                    assign = self.assignment(tok)
                    if assign is not None:
                        assigns.append(assign)
                        continue
                    words.append(self.plain_word(tok))
                    if not assigns and not redirects and self.peek().kind == "(":
                        return self.parse_function_after_name(tok, line)
                    declaration = tok.text in _DECLARATIONS
                elif declaration and (assign := self.assignment(tok)) is not None:
                    words.append(assign)
                else:
                    words.append(self.plain_word(tok))
            elif kind == REDIR:
                redirects.append(self.parse_redirect())
            else:
                break
        if not words and not assigns and not redirects:
            raise self.unexpected(tok)
        return SimpleCommand(tuple(assigns), tuple(words), tuple(redirects), line)

    def plain_word(self, tok: Token) -> Word:
        """The word of a token used as an ordinary word (not an assignment)."""
        if tok.array is not None:
            paren = tok.paren  # type: ignore[attr-defined]
            raise self.unexpected(Token("(", paren, paren + 1, "("))
        word = tok.word
        if "~" in tok.text and _TILDE_ARG.match(tok.text) and word.parts and \
                type(word.parts[0]) is Literal:  # type: ignore[union-attr]
            # bash expands ~ after = and : in any word that looks like an assignment
            head = _TILDE_ARG.match(tok.text).end()  # type: ignore[union-attr]
            first = word.parts[0].text  # type: ignore[union-attr]
            if len(first) >= head:
                rest = [Literal(first[head:])] if len(first) > head else []
                rest.extend(word.parts[1:])  # type: ignore[union-attr]
                word = Word((Literal(first[:head]), *tilde_assignment(rest)))
        return word  # type: ignore[return-value]

    def assignment(self, tok: Token) -> Assignment | None:
        text = tok.text
        c = text[0]
        if "=" not in text or not (c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z")):
            return None
        split = split_assignment(tok.word.parts)  # type: ignore[union-attr]
        if split is None:
            return None
        name, sub, append, value = split
        subscript = Word(tuple(sub)) if sub is not None else None
        if tok.array is not None:
            return Assignment(name, tok.array, append, subscript)
        word = Word(tuple(tilde_assignment(value))) if value else EMPTY_WORD
        return Assignment(name, word, append, subscript)

    def parse_redirect(self) -> Redirect:
        tok = self.advance()
        op = tok.op
        target = self.peek()
        if target.kind == REDIR and target.fd is not None and (op == "<&" or op == ">&"):
            # `>&3>&-`: bash takes the number as the target and lexes the operator again
            op_start = target.end - len(target.op)
            self.peeked = None
            self.pos = op_start
            self.last_kind = WORD
            return Redirect(op, tok.fd, Word((Literal(self.src[target.start:op_start]),)))
        if target.kind != WORD:
            raise self.unexpected(target)
        self.advance()
        if op == "<<" or op == "<<-":
            doc = self.register_heredoc(op, target.text, self.line_of(tok.start))
            return Redirect(op, tok.fd, doc, tok.var)
        return Redirect(op, tok.fd, self.plain_word(target), tok.var)

    def redirects(self) -> tuple[Redirect, ...]:
        tok = self.peek()
        if tok.kind != REDIR:
            return ()
        out: list[Redirect] = []
        while tok.kind == REDIR:
            out.append(self.parse_redirect())
            tok = self.peek()
        return tuple(out)

    def expect(self, word: str) -> None:
        tok = self.peek()
        if tok.kind != WORD or tok.text != word:
            raise self.unexpected(tok)
        self.keyword()

    def keyword(self) -> None:
        """Consume a reserved word: a command (or assignment) may follow it."""
        self.advance()
        self.cmd_start = self.alias_pos = True


def parse(source: str, *, filename: str = "", extglob: bool = False, utf8: bool = True,
          aliases: dict[str, str] | None = None) -> Program:
    """Parse a whole script. Raises ShellSyntaxError (bash's wording) on the first error.
    Trees are immutable, so small sources (`eval` strings, `sh -c` bodies) are cached."""
    if len(source) <= _CACHE_MAX_SOURCE and not aliases:
        try:
            return _parse_cached(source, extglob, utf8)
        except ShellSyntaxError as e:
            e.filename = filename
            raise
    return Parser(source, filename=filename, extglob=extglob, utf8=utf8,
                  aliases=aliases).parse_program()


_CACHE_MAX_SOURCE = 16384


@lru_cache(maxsize=256)
def _parse_cached(source: str, extglob: bool, utf8: bool) -> Program:
    return Parser(source, extglob=extglob, utf8=utf8).parse_program()


def is_complete(source: str) -> bool:
    """For an interactive prompt: False when more input could complete `source` (an open
    quote, compound command, here-document or trailing backslash), True otherwise (including
    when it has a syntax error that more input cannot fix)."""
    stripped = source.rstrip("\n")
    if stripped.endswith("\\") and (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1:
        return False
    parser = Parser(source)
    try:
        parser.parse_program()
    except ShellSyntaxError as e:
        return not e.at_eof
    return not parser.heredoc_at_eof
