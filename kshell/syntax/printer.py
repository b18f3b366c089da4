"""Syntax trees back to source text, in bash's layout (for `type f` and `declare -f`)."""

from __future__ import annotations

from kshell.syntax.ast import (
    AndOr,
    AnsiCQuoted,
    ArithCommand,
    ArithFor,
    ArithSub,
    ArrayLiteral,
    Assignment,
    Background,
    BadSubst,
    BraceGroup,
    Case,
    CommandSub,
    Cond,
    CondAnd,
    CondBinary,
    CondNot,
    CondOr,
    CondUnary,
    DoubleQuoted,
    Escaped,
    For,
    FunctionDef,
    HereDoc,
    If,
    KeyedElement,
    Literal,
    Param,
    ParamExp,
    Pipeline,
    PrefixNames,
    ProcessSub,
    Redirect,
    Select,
    SimpleCommand,
    SingleQuoted,
    Subshell,
    TildePrefix,
    While,
    Word,
)

_IND = "    "


def function_text(f: FunctionDef) -> str:
    body = f.body
    lines = [f"{f.name} () "]
    if type(body) is BraceGroup:
        text = "{ \n" + _body(body.body, 1) + "}" + _redirs(body.redirects)
    else:
        text = command_text(body, 0)
    return lines[0] + "\n" + text if type(body) is BraceGroup else lines[0] + text


def _body(commands, level: int, loop: bool = False) -> str:
    """A list one command per line, as bash's print_cmd: `;` after each but the last (a
    background command is followed on its line by the next), and after the last too in the
    body of a loop or an `if` (`loop`)."""
    out = []
    for i, c in enumerate(commands):
        text = command_text(c, level)
        last = i == len(commands) - 1
        if type(c) is Background and not last:
            out.append((_IND * level if not out or out[-1].endswith("\n") else "") + text + " ")
            continue
        lead = _IND * level if not out or out[-1].endswith("\n") else ""
        out.append(lead + text + (";" if not last or loop else "") + "\n")
    return "".join(out)


def _redirs(redirects) -> str:
    return "".join(" " + redirect_text(r) for r in redirects)


def redirect_text(r: Redirect) -> str:
    fd = f"{{{r.var}}}" if r.var is not None else "" if r.fd is None else str(r.fd)
    if type(r.target) is HereDoc:
        doc = r.target
        delim = f"'{doc.delimiter}'" if doc.quoted else doc.delimiter
        return f"{fd}{r.op} {delim}\n{doc.text}{doc.delimiter}"
    target = word_text(r.target)
    if r.op in (">&", "<&") and (target.isdigit() or target == "-"):  # bash: `1>&2`, `0<&3`, `3>&-`
        fd = fd or ("0" if r.op == "<&" else "1")
        return f"{fd}{'>&' if target == '-' else r.op}{target}"
    return f"{fd}{r.op} {target}"


def command_text(c, level: int) -> str:
    t = type(c)
    if t is SimpleCommand:
        parts = [assign_text(a) for a in c.assigns]
        parts += [assign_text(w) if type(w) is Assignment else word_text(w) for w in c.words]
        parts += [redirect_text(r) for r in c.redirects]
        return " ".join(parts)
    if t is Pipeline:
        text = " | ".join(command_text(x, level) for x in c.commands)
        if c.negated:
            text = "! " + text
        if c.timed:  # bash prints `time -p ! cmd` for `! time -p cmd` too (and `time --`)
            text = ("time -p " if c.time_posix else "time ") + text
        return text
    if t is AndOr:
        text = command_text(c.first, level)
        for op, cmd in c.rest:
            text += f" {op} {command_text(cmd, level)}"
        return text
    if t is Background:
        return command_text(c.command, level) + " &"
    if t is BraceGroup:
        return "{ \n" + _body(c.body, level + 1) + _IND * level + "}" + _redirs(c.redirects)
    if t is Subshell:
        return ("( " + (";\n" + _IND * level).join(command_text(x, level) for x in c.body) + " )"
                + _redirs(c.redirects))
    if t is If:
        return _if_text(c.clauses, c.else_body, level) + _redirs(c.redirects)
    if t is While:
        kw = "until" if c.until else "while"
        cond = "; ".join(command_text(x, level) for x in c.condition)
        return (f"{kw} {cond}; do\n" + _body(c.body, level + 1, loop=True) + _IND * level + "done"
                + _redirs(c.redirects))
    if t is For or t is Select:
        words = "" if c.words is None else " in " + " ".join(word_text(w) for w in c.words)
        return (f"{'for' if t is For else 'select'} {c.var}{words};\n{_IND * level}do\n"
                + _body(c.body, level + 1, loop=True) + _IND * level + "done" + _redirs(c.redirects))
    if t is ArithFor:
        parts = [x.text if x is not None else "" for x in (c.init, c.cond, c.step)]
        return (f"for (({parts[0]}; {parts[1]}; {parts[2]}))\n{_IND * level}do\n"
                + _body(c.body, level + 1, loop=True) + _IND * level + "done")
    if t is Case:
        out = f"case {word_text(c.word)} in \n"
        for item in c.items:
            pats = " | ".join(word_text(p) for p in item.patterns)
            out += (_IND * (level + 1) + pats + ")\n" + _body(item.body, level + 2) + _IND * (level + 1)
                    + item.terminator + "\n")
        return out + _IND * level + "esac"
    if t is FunctionDef:
        return function_text(c)
    if t is Cond:
        return "[[ " + cond_text(c.expr) + " ]]"
    if t is ArithCommand:
        return f"(({c.arith.text}))"
    return "?"


def _if_text(clauses, else_body, level: int) -> str:
    """`if`, with each `elif` as bash keeps it: an `if` nested in the `else`."""
    clause = clauses[0]
    cond = "; ".join(command_text(x, level) for x in clause.condition)
    out = f"if {cond}; then\n" + _body(clause.body, level + 1, loop=True)
    if len(clauses) > 1:
        out += _IND * level + "else\n" + _IND * (level + 1) + _if_text(clauses[1:], else_body, level + 1) + ";\n"
    elif else_body is not None:
        out += _IND * level + "else\n" + _body(else_body, level + 1, loop=True)
    return out + _IND * level + "fi"


def cond_text(node) -> str:
    if node.grouped:
        return f"( {_cond_term_text(node)} )"
    return _cond_term_text(node)


def _cond_term_text(node) -> str:
    t = type(node)
    if t is CondUnary:
        return f"{node.op} {word_text(node.operand)}"
    if t is CondBinary:
        return f"{word_text(node.left)} {node.op} {word_text(node.right)}"
    if t is CondNot:
        return "! " + cond_text(node.expr)
    if t is CondAnd:
        return f"{cond_text(node.left)} && {cond_text(node.right)}"
    if t is CondOr:
        return f"{cond_text(node.left)} || {cond_text(node.right)}"
    return "?"


def assign_text(a: Assignment) -> str:
    op = "+=" if a.append else "="
    sub = f"[{word_text(a.subscript)}]" if a.subscript is not None else ""
    if type(a.value) is ArrayLiteral:
        items = []
        for el in a.value.elements:
            if type(el) is KeyedElement:
                items.append(f"[{word_text(el.key)}]={word_text(el.value)}")
            else:
                items.append(word_text(el))
        return f"{a.name}{sub}{op}({' '.join(items)})"
    return f"{a.name}{sub}{op}{word_text(a.value)}"


def word_text(w: Word) -> str:
    return "".join(part_text(p) for p in w.parts)


def part_text(p) -> str:
    t = type(p)
    if t is Literal:
        return p.text
    if t is Escaped:
        return "\\" + p.text
    if t is SingleQuoted:
        return "'" + p.text + "'"
    if t is AnsiCQuoted:
        return quote_q(p.text)
    if t is DoubleQuoted:
        return '"' + "".join(part_text(x) if type(x) is not Literal else
                             x.text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
                             for x in p.parts) + '"'
    if t is TildePrefix:
        return "~" + p.user
    if t is Param:
        return "$" + p.name if len(p.name) == 1 or p.name.isidentifier() else "${" + p.name + "}"
    if t is ParamExp:
        inner = ("#" if p.length else "") + ("!" if p.indirect else "") + p.name
        if p.subscript is not None:
            inner += "[" + (p.subscript if isinstance(p.subscript, str) else word_text(p.subscript)) + "]"
        if p.op:
            inner += p.op
            if p.arg is not None:
                inner += word_text(p.arg)
            if p.arg2 is not None:
                inner += ("/" if p.op.startswith("/") else ":") + word_text(p.arg2)
        return "${" + inner + "}"
    if t is PrefixNames:
        return "${!" + p.prefix + ("@" if p.at else "*") + "}"
    if t is BadSubst:
        return p.text
    if t is CommandSub:
        if p.program is None:
            return "$( )"
        return "$(" + "; ".join(command_text(c, 0) for c in p.program.commands) + ")"
    if t is ArithSub:
        return "$((" + p.arith.text + "))"
    if t is ProcessSub:
        return p.direction + "(" + "; ".join(command_text(c, 0) for c in p.program.commands) + ")"
    return ""


# --------------------------------------------------------------------------- set -x

_SHELL_METAS = frozenset(" \t\n'\"\\|&;()<>!{}*[?]^$`")
_ANSI_C = {"\a": "\\a", "\b": "\\b", "\x1b": "\\E", "\f": "\\f", "\n": "\\n", "\r": "\\r",
           "\t": "\\t", "\v": "\\v", "\\": "\\\\", "'": "\\'"}


def trace_quote(text: str, utf8: bool) -> str:
    """A word as set -x shows it (bash's xtrace_print_word_list): single-quoted when it holds
    a shell metacharacter, $'...' when it holds a character the locale cannot print."""
    if not text:
        return "''"
    if _has_metas(text):
        return "'" + text.replace("'", "'\\''") + "'"
    if text.isascii() and text.isprintable():
        return text
    return ansi_c_quote(text, utf8) if _unprintable(text, utf8) else text


def trace_value(text: str, utf8: bool) -> str:
    """An assigned value as set -x shows it: as a word, but empty as nothing (`x=`)."""
    return trace_quote(text, utf8) if text else ""


def _has_metas(text: str) -> bool:
    if text[0] in "~#" or "=~" in text or ":~" in text:
        return True
    return not _SHELL_METAS.isdisjoint(text)


def _unprintable(text: str, utf8: bool) -> bool:
    for c in text:
        o = ord(c)
        if o < 32 or o == 127:
            return True
        if o > 127 and (not utf8 or 0xDC80 <= o <= 0xDCFF or not c.isprintable()):
            return True
    return False


def ansi_c_quote(text: str, utf8: bool) -> str:
    """bash's ansic_quote: $'...' with C escapes, and octal bytes for what cannot be printed
    (outside UTF-8, every byte beyond ASCII)."""
    out: list[str] = []
    for c in text:
        o = ord(c)
        esc = _ANSI_C.get(c)
        if esc is not None:
            out.append(esc)
        elif 32 <= o < 127 or (o > 127 and utf8 and not 0xDC80 <= o <= 0xDCFF and c.isprintable()):
            out.append(c)
        else:
            out.extend(f"\\{b:03o}" for b in c.encode("utf-8", "surrogateescape"))
    return "$'" + "".join(out) + "'"


def trace_source_word(w: Word) -> str:
    """A word as bash keeps it after parsing, for the traces that show words unexpanded
    (array assignments, `for` and `case` headers): $'...' is already decoded and quoted."""
    return "".join("'" + p.text.replace("'", "'\\''") + "'" if type(p) is AnsiCQuoted else part_text(p)
                   for p in w.parts)


def trace_array_literal(lit: ArrayLiteral) -> str:
    items = []
    for el in lit.elements:
        if type(el) is KeyedElement:
            items.append(f"[{trace_source_word(el.key)}]{'+' if el.append else ''}="
                         f"{trace_source_word(el.value)}")
        else:
            items.append(trace_source_word(el))
    return "(" + " ".join(items) + ")"


def quote_q(value: str) -> str:
    """bash's `${x@Q}` / `printf %q`-style single quoting."""
    if value == "":
        return "''"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        out = []
        for c in value:
            code = ord(c)
            if c == "'":
                out.append("\\'")
            elif c == "\\":
                out.append("\\\\")
            elif c == "\n":
                out.append("\\n")
            elif c == "\t":
                out.append("\\t")
            elif c == "\r":
                out.append("\\r")
            elif c == "\x1b":
                out.append("\\E")
            elif code < 32 or code == 127:
                out.append(f"\\{code:03o}")
            else:
                out.append(c)
        return "$'" + "".join(out) + "'"
    return "'" + value.replace("'", "'\\''") + "'"


def quote_dq(value: str) -> str:
    """bash's sh_double_quote, or $'...' for a value with control characters: how `declare -p`
    and `${a[@]@K}` show a value."""
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return quote_q(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`") + '"'


def assoc_key_text(key: str) -> str:
    """An associative array's key as `declare -p` and `${a[@]@K}` show it: bare unless it
    holds a shell metacharacter or is `@` or `*` (bash's assoc_to_assign)."""
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        return quote_q(key)
    return quote_dq(key) if not key or _has_metas(key) or key in ("@", "*") else key
