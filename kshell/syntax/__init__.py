"""The K shell's syntax stage: source text to a typed syntax tree (`kshell.syntax.ast`).

    parse(source, filename="") -> Program        whole script; ShellSyntaxError on error
    Parser(source).parse_line() -> list | None    one line of commands at a time, as bash runs
    is_complete(source) -> bool                   does an interactive prompt need more input?
    parse_arith(text) -> ArithNode                arithmetic after expansion; ArithSyntaxError
"""

from kshell.syntax.arith import parse_arith
from kshell.syntax.errors import ArithSyntaxError, ParseWarning, ShellSyntaxError
from kshell.syntax.parser import Parser, is_complete, parse

__all__ = ["ArithSyntaxError", "ParseWarning", "Parser", "ShellSyntaxError", "is_complete",
           "parse", "parse_arith"]
