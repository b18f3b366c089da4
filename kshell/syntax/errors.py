"""Syntax errors and warnings, worded exactly as bash 5.2 words them.

The interpreter prints each message as `bash: line N: <message>` (`bash: -c: line N:` for -c,
`script: line N:` for a file) and exits with status 2; `messages` holds every line bash prints
for the error (e.g. the offending source line after "near unexpected token").
"""

from __future__ import annotations

from kfs.values import value_class


class ShellSyntaxError(Exception):
    """A syntax error at `lineno`. `at_eof` is True when the error is that the input ended inside
    a construct, i.e. more input could complete it (what an interactive prompt needs to know)."""

    def __init__(self, lineno: int, message: str, *, extra: tuple[str, ...] = (),
                 at_eof: bool = False) -> None:
        super().__init__(f"line {lineno}: {message}")
        self.lineno = lineno
        self.message = message
        self.messages: tuple[str, ...] = (message, *extra)
        self.at_eof = at_eof
        self.warnings: tuple[ParseWarning, ...] = ()  # printed by bash before the error
        self.filename = ""  # of the script being parsed, when the parser was given one

    def __str__(self) -> str:
        return f"line {self.lineno}: {self.message}"

    def __reduce__(self) -> tuple:
        extra = self.messages[1:]
        return (_rebuild_syntax_error, (self.lineno, self.message, extra, self.at_eof),
                {"warnings": self.warnings, "filename": self.filename})

    def format(self, prefix: str = "bash: line {lineno}: ") -> str:
        """All lines bash prints for this error, each with `prefix` (formatted with lineno)."""
        head = prefix.format(lineno=self.lineno)
        return "".join(f"{head}{m}\n" for m in self.messages)


def _rebuild_syntax_error(lineno: int, message: str, extra: tuple[str, ...],
                          at_eof: bool) -> ShellSyntaxError:
    return ShellSyntaxError(lineno, message, extra=extra, at_eof=at_eof)


class ArithSyntaxError(Exception):
    """An arithmetic expression that bash rejects when evaluating it (status 1, not 2).
    `token` is bash's "error token": the rest of the expression from the offending token."""

    def __init__(self, expression: str, message: str, token: str) -> None:
        self.expression = expression
        self.message = message
        self.token = token
        super().__init__(expression, message, token)

    def __str__(self) -> str:
        return self.text

    @property
    def text(self) -> str:
        """`expr: message (error token is "tok")`, as bash prints after `bash: line N: `."""
        return f'{self.expression.lstrip()}: {self.message} (error token is "{self.token}")'


@value_class(frozen=True, slots=True)
class ParseWarning:
    """A non-fatal diagnostic, e.g. a here-document delimited by end of file. Bash prints it as
    `bash: line N: warning: <message>`."""

    lineno: int
    message: str
