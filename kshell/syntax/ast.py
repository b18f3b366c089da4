"""The K shell syntax tree: small frozen value classes produced by `kshell.syntax.parse`.

Words keep their quoting structure (a tuple of parts) so that expansion can tell quoted from
unquoted text; commands carry the line they start on so that errors can say `line N`.
Nothing here evaluates anything: expansion and execution live in later stages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kfs.values import field, value_class

if TYPE_CHECKING:
    from kshell.syntax.errors import ParseWarning, ShellSyntaxError

_node = value_class(frozen=True, slots=True)
"""The decorator of every node: a frozen, slotted value class."""


# --------------------------------------------------------------------------- word parts


@_node
class Literal:
    """Unquoted text. Glob characters and brace-expansion text are kept as is: expansion decides.
    Inside `DoubleQuoted` and here-document bodies the text is quoted by its context."""

    text: str


@_node
class Escaped:
    """Backslash-quoted characters (`\\x` outside quotes): a quoted literal."""

    text: str


@_node
class SingleQuoted:
    """'...' text: a quoted literal."""

    text: str


@_node
class AnsiCQuoted:
    """$'...' with escapes already decoded. Bytes >= 0x80 from \\xHH or octal escapes are lone
    surrogates (surrogateescape), so `encode('utf-8', 'surrogateescape')` restores the byte."""

    text: str


@_node
class DoubleQuoted:
    """"..." (also $"..."): its parts are expanded but never split or globbed."""

    parts: tuple[Part, ...]


@_node
class TildePrefix:
    """`~` or `~user` at the start of a word, or after `=` / an unquoted `:` in an assignment."""

    user: str


@_node
class Param:
    """`$x`, `${x}`, `$1`, `${10}`, `$@`, `$*`, `$#`, `$?`, `$$`, `$!`, `$-`, `$0`.

    `bare`: written `$x`, without braces, so that text a brace expansion puts right after it
    goes on with the name, as it does in bash, which expands braces in the source text
    (`{$a,b}_c` is `$a_c b_c`). Not part of equality."""

    name: str
    bare: bool = field(default=False, compare=False)


@_node
class ParamExp:
    """A braced parameter expansion with a subscript, a prefix (`#`, `!`) or an operator.

    - `subscript`: None, "@" or "*" (whole array), or the index Word for `${a[i]}`.
    - `length`: `${#x}` / `${#a[@]}`; `indirect`: `${!x}` (with subscript "@"/"*": `${!a[@]}`
      lists the keys, as in bash).
    - `op`: "" or one of `:- - := = :? ? :+ +` (arg = operand word), `# ## % %%` (arg = pattern),
      `/ // /# /%` (arg = pattern, arg2 = replacement or None), `:` (arg = offset word, arg2 =
      length word or None), `^ ^^ , ,,` (arg = pattern or None), `@X` for transforms (`@Q`...).
    Operand words are parsed words; offsets and lengths are arithmetic text for the expander.
    """

    name: str
    subscript: Word | str | None = None
    length: bool = False
    indirect: bool = False
    op: str = ""
    arg: Word | None = None
    arg2: Word | None = None


@_node
class PrefixNames:
    """`${!prefix*}` (at=False) or `${!prefix@}` (at=True)."""

    prefix: str
    at: bool


@_node
class BadSubst:
    """A `${...}` that bash accepts when parsing but rejects when expanding: the expander must
    report `bash: <text>: bad substitution` (status 1) when it reaches it."""

    text: str


@_node
class CommandSub:
    """`$(...)` or `` `...` ``. Backtick bodies are parsed when the script is parsed, but, as in
    bash, a syntax error inside them is reported only when the substitution runs: then
    `program` is None and `error` holds it (line numbers relative to the backtick body)."""

    program: Program | None
    backtick: bool = False
    error: ShellSyntaxError | None = None


@_node
class ArithSub:
    """`$((...))` (or the legacy `$[...]`)."""

    arith: ArithExpr


@_node
class ProcessSub:
    """`<(...)` (direction "<") or `>(...)` (direction ">")."""

    direction: str
    program: Program


Part = (Literal | Escaped | SingleQuoted | AnsiCQuoted | DoubleQuoted | TildePrefix | Param
        | ParamExp | PrefixNames | BadSubst | CommandSub | ArithSub | ProcessSub)


@_node
class Word:
    """One shell word: a sequence of parts, concatenated after expansion."""

    parts: tuple[Part, ...]


@_node
class ArithExpr:
    """An arithmetic expression. `text` is the source between the parentheses; `word` is the
    same text parsed for `$` expansions (bash expands the text first, then evaluates it).
    `expr` is the parsed tree when the text needs no expansion and parses cleanly; otherwise
    None, and the evaluator expands `word` and calls `kshell.syntax.arith.parse_arith` (which
    raises `ArithSyntaxError` with bash's wording) on the result."""

    text: str
    word: Word
    expr: ArithNode | None


# --------------------------------------------------------------------------- arithmetic


@_node
class ArithNum:
    value: int


@_node
class ArithVar:
    """A variable named without `$`: `x` or `a[sub]` (`subscript` is the raw text between the
    brackets; `index` its arithmetic parse, None when it does not parse, e.g. an assoc key)."""

    name: str
    subscript: str | None = None
    index: ArithNode | None = None


@_node
class ArithUnary:
    op: str  # "-" "+" "!" "~"
    operand: ArithNode


@_node
class ArithIncDec:
    op: str  # "++" or "--"
    prefix: bool
    target: ArithVar


@_node
class ArithBinary:
    """`error_token` (for / % **) is what bash prints as the error token when evaluation fails
    (division by 0, exponent less than 0)."""

    op: str  # , || && | ^ & == != < <= > >= << >> + - * / % **
    left: ArithNode
    right: ArithNode
    error_token: str = ""


@_node
class ArithAssign:
    op: str  # = *= /= %= += -= <<= >>= &= ^= |=
    target: ArithVar
    value: ArithNode
    error_token: str = ""  # for /= and %= (division by 0)


@_node
class ArithTernary:
    cond: ArithNode
    if_true: ArithNode
    if_false: ArithNode


ArithNode = (ArithNum | ArithVar | ArithUnary | ArithIncDec | ArithBinary | ArithAssign
             | ArithTernary)


# --------------------------------------------------------------------------- assignments, redirects


@_node
class KeyedElement:
    """`[key]=value` (or `[key]+=value`) inside an array literal."""

    key: Word
    value: Word
    append: bool = False


@_node
class ArrayLiteral:
    """`(x y [k]=v)` on the right of an assignment."""

    elements: tuple[Word | KeyedElement, ...]


@_node
class Assignment:
    """`name=value`, `name+=value`, `name[sub]=value`, `name=(...)`."""

    name: str
    value: Word | ArrayLiteral
    append: bool = False
    subscript: Word | None = None


@_node
class HereDoc:
    """A here-document body. `text` is the raw body (leading tabs already stripped for `<<-`).
    With a quoted delimiter `body` is one SingleQuoted part; otherwise it holds the parsed
    expansions (Literal parts are literal text: no splitting or globbing applies). As in bash,
    an error inside an unquoted body surfaces only when it is expanded: `body` is None and
    `error` holds it. Filled in by the parser when the body is read (end of the line)."""

    delimiter: str
    quoted: bool
    strip_tabs: bool
    line: int
    text: str = ""
    body: Word | None = None
    error: ShellSyntaxError | None = None


@_node
class Redirect:
    """`op` is one of `< > >> >| <> <& >& &> &>> <<< << <<-`; `fd` the explicit descriptor
    (None: 0 for input ops, 1 for output ops). For `<&`/`>&` the target word expands to a
    descriptor number, `-` (close) or, for `>&`, a file name (like `&>`). `var` is the name
    in `{var}>f`: the shell picks a free descriptor (10 or above) and assigns its number
    (with `{var}>&-`, it closes the descriptor the variable names)."""

    op: str
    fd: int | None
    target: Word | HereDoc
    var: str | None = None


# --------------------------------------------------------------------------- commands


@_node
class SimpleCommand:
    """Prefix assignments, words and redirections (in source order within each tuple).
    For declaration builtins (declare, typeset, local, export, readonly) arguments that are
    assignments (`declare a=(1 2)`, `local x=$y`) appear in `words` as `Assignment`."""

    assigns: tuple[Assignment, ...]
    words: tuple[Word | Assignment, ...]
    redirects: tuple[Redirect, ...]
    line: int


@_node
class Pipeline:
    """`a | b |& c`, optionally negated with `!`. `stderr[i]` is True when the link after
    commands[i] is `|&`. A lone `!` is a pipeline of one empty SimpleCommand.

    `timed`: the `time` reserved word stands before it (a flag, as in bash, where `! time`,
    `time !` and `time time` all make one timed pipeline); `time_posix`: `time -p` (or
    `time --`), which reports in POSIX's format. A lone `time` times an empty command."""

    commands: tuple[Command, ...]
    negated: bool
    stderr: tuple[bool, ...]
    line: int
    timed: bool = False
    time_posix: bool = False


@_node
class AndOr:
    """`first op1 c1 op2 c2 ...` with ops "&&"/"||", evaluated left to right."""

    first: Command
    rest: tuple[tuple[str, Command], ...]
    line: int


@_node
class Background:
    """`command &`."""

    command: Command
    line: int


@_node
class Subshell:
    body: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    line: int


@_node
class BraceGroup:
    body: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    line: int


@_node
class IfClause:
    condition: tuple[Command, ...]
    body: tuple[Command, ...]


@_node
class If:
    clauses: tuple[IfClause, ...]  # the `if` clause, then each `elif`
    else_body: tuple[Command, ...] | None
    redirects: tuple[Redirect, ...]
    line: int


@_node
class For:
    """`for var [in words]; do body; done`; words None means `"$@"`. `var` is the raw text:
    the interpreter checks it is a valid name (bash: "`1': not a valid identifier")."""

    var: str
    words: tuple[Word, ...] | None
    body: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    line: int


@_node
class Select:
    """`select var [in words]; do body; done`: a menu of the words on stderr, a line read into
    REPLY, var set to the word picked (or ""), body run, until EOF or `break`."""

    var: str
    words: tuple[Word, ...] | None
    body: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    line: int


@_node
class ArithFor:
    """`for ((init; cond; step))`; an empty part is None (an empty cond is true)."""

    init: ArithExpr | None
    cond: ArithExpr | None
    step: ArithExpr | None
    body: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    line: int


@_node
class While:
    """`while` (until=False) or `until` (until=True)."""

    condition: tuple[Command, ...]
    body: tuple[Command, ...]
    until: bool
    redirects: tuple[Redirect, ...]
    line: int


@_node
class CaseItem:
    patterns: tuple[Word, ...]
    body: tuple[Command, ...]
    terminator: str  # ";;", ";&", ";;&" (";;" also for the last item without one)
    line: int


@_node
class Case:
    word: Word
    items: tuple[CaseItem, ...]
    redirects: tuple[Redirect, ...]
    line: int


@_node
class FunctionDef:
    """`name() body`, `function name body`: body is a compound command whose own redirects
    apply at each call, as in bash."""

    name: str
    body: Command
    line: int


@_node
class CondUnary:
    """A test of one word. `grouped` (in every [[ ]] node) marks a term written in parentheses:
    printing keeps them; equality ignores them, as evaluation does."""

    op: str  # -f -d -e -z -n -L ... ; also "-n" for a bare word `[[ word ]]`
    operand: Word
    grouped: bool = field(default=False, compare=False)


@_node
class CondBinary:
    """`op` is one of == = != < > =~ -eq -ne -lt -le -gt -ge -nt -ot -ef. For ==, = and != the
    right word is a pattern (quoted parts match literally); for =~ a regex (likewise)."""

    op: str
    left: Word
    right: Word
    grouped: bool = field(default=False, compare=False)


@_node
class CondNot:
    expr: CondNode
    grouped: bool = field(default=False, compare=False)


@_node
class CondAnd:
    left: CondNode
    right: CondNode
    grouped: bool = field(default=False, compare=False)


@_node
class CondOr:
    left: CondNode
    right: CondNode
    grouped: bool = field(default=False, compare=False)


CondNode = CondUnary | CondBinary | CondNot | CondAnd | CondOr


@_node
class Cond:
    """`[[ expr ]]`."""

    expr: CondNode
    redirects: tuple[Redirect, ...]
    line: int


@_node
class ArithCommand:
    """`(( expr ))`."""

    arith: ArithExpr
    redirects: tuple[Redirect, ...]
    line: int


Command = (SimpleCommand | Pipeline | AndOr | Background | Subshell | BraceGroup | If | For
           | Select | ArithFor | While | Case | FunctionDef | Cond | ArithCommand)


@_node
class Program:
    """A whole script (or a command substitution body)."""

    commands: tuple[Command, ...]
    warnings: tuple[ParseWarning, ...] = ()
