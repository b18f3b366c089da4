"""Here-documents: `<<` and `<<-` bodies are read when the lexer reaches the end of the line
that holds their operators (several on one line are read in order), as bash does.

A quoted delimiter (any of ' " \\ in it) makes the body literal; otherwise the body is parsed
like double-quoted text in which `"` is ordinary. `<<-` strips leading tabs from each line and
from the delimiter line. End of input before the delimiter is a warning, not an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.syntax.ast import HereDoc, Literal, SingleQuoted, Word
from kshell.syntax.errors import ParseWarning, ShellSyntaxError

if TYPE_CHECKING:
    from kshell.syntax.ast import Part

_set = object.__setattr__  # HereDoc is frozen; its body is filled in once, right here


def remove_quotes(raw: str) -> str:
    """Quote removal on a here-document delimiter word (no expansion: `$x` stays `$x`)."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\":
            if i + 1 < n and raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
        elif c == "'":
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            out.append(raw[i + 1:j])
            i = j + 1
        elif c == '"':
            i += 1
            while i < n and raw[i] != '"':
                if raw[i] == "\\" and i + 1 < n and raw[i + 1] in '$`"\\':
                    i += 1
                out.append(raw[i])
                i += 1
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class HeredocReader:
    """Mixin of the Lexer: registers here-documents and reads their bodies."""

    src: str
    n: int
    pos: int
    depth: int
    extglob: bool
    pending: list[HereDoc]
    warnings: list[ParseWarning]
    heredoc_at_eof = False  # a body ran to end of input (an interactive prompt wants more)

    if TYPE_CHECKING:
        def line_of(self, pos: int) -> int: ...
        def read_dq_like(self, pos: int, limit: int, arith: bool) -> list[Part]: ...
        def sub_lexer(self, text: str, line0: int) -> HeredocReader: ...

    def register_heredoc(self, op: str, delimiter_text: str, line: int) -> HereDoc:
        quoted = any(c in delimiter_text for c in "'\"\\")
        doc = HereDoc(remove_quotes(delimiter_text), quoted, op == "<<-", line)
        self.pending.append(doc)
        return doc

    def read_heredocs(self) -> None:
        pending, self.pending = self.pending, []
        for doc in pending:
            self.read_heredoc(doc)

    def read_heredoc(self, doc: HereDoc) -> None:
        src, n = self.src, self.n
        pos = body_start = self.pos
        delimiter, strip, quoted = doc.delimiter, doc.strip_tabs, doc.quoted
        lines: list[str] = []
        found = False
        while pos < n:
            nl = src.find("\n", pos)
            line = src[pos:] if nl < 0 else src[pos:nl]
            pos = n if nl < 0 else nl + 1
            if not quoted:
                while line.endswith("\\") and pos < n and \
                        (len(line) - len(line.rstrip("\\"))) % 2 == 1:
                    nl = src.find("\n", pos)
                    line = line[:-1] + (src[pos:] if nl < 0 else src[pos:nl])
                    pos = n if nl < 0 else nl + 1
            if strip:
                line = line.lstrip("\t")
            if line == delimiter:
                found = True
                break
            lines.append(line)
        self.pos = pos
        if not found:
            self.heredoc_at_eof = True
            self.warnings.append(ParseWarning(
                self.line_of(max(n - 1, 0)),
                f"here-document at line {self.line_of(max(body_start - 1, 0))} delimited by "
                f"end-of-file (wanted `{delimiter}')"))
        text = "".join(line + "\n" for line in lines)
        _set(doc, "text", text)
        if quoted:
            _set(doc, "body", Word((SingleQuoted(text),)) if text else Word(()))
        elif "$" not in text and "`" not in text and "\\" not in text:
            _set(doc, "body", Word((Literal(text),)) if text else Word(()))
        else:
            sub = self.sub_lexer(text, self.line_of(body_start) - 1)
            try:
                _set(doc, "body", Word(tuple(sub.read_dq_like(0, len(text), False))))
            except ShellSyntaxError as e:
                _set(doc, "error", e)
