"""jq: the real libjq (the `jq` PyPI binding) runs the program; this module does what the jq
command line does around it, as Debian's jq 1.6 prints it: option parsing, reading inputs from
the VFS, output formatting (1.6's number format, escapes, --indent/--tab/-S/-a), messages and
exit statuses (2 usage/IO, 3 compile, 5 runtime, -e's 1 and 4).

The binding bundles a newer libjq (1.8), whose messages are reworded here to jq 1.6's where they
differ: `Cannot index number with "a"`-style index errors, compile errors without the column and
caret, `(Unix shell quoting issues?)` after syntax errors. `env`/`$ENV` see the shell's exported
variables, never the host's. `input`/`inputs` work with -n (the remaining inputs).
Before libjq, a common subset of jq (paths, `.[]`, `select`, comparisons, string interpolation,
`add` ...; kshell/tools/data/jqfast.py) runs in Python over Python's C JSON decoder, about 3x
faster on big inputs; it gives way to libjq wherever the two might differ, so the output is the
same either way.
Known differences from the peer, from libjq itself: `error(null)` is an error where 1.6 treated
it as `empty`; `-0` prints as `0` (the binding hands integers over as ints); numbers inside
`tojson`/`tostring` are formatted by libjq 1.8 (`1e17` as `100000000000000000`, 1.6: `1e+17`).
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

import jq as libjq

from kshell.exec import devices
from kshell.tools.data import jqfast
from kshell.tools.text.textio import Output, read_all

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

USAGE_HINT = ("Use jq --help for help with command-line options,\n"
              "or see the jq manpage, or online docs  at https://stedolan.github.io/jq\n")


class _Exit(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


# --------------------------------------------------------------------------- output format


def number(x: float | int) -> str:
    """A number as jq 1.6 prints it: shortest round-trip digits, exponent form when the
    decimal point is far out (`1e+17`, `1e-05`), NaN as null, infinities as DBL_MAX."""
    if isinstance(x, bool):
        return "true" if x else "false"
    x = float(x)
    if math.isnan(x):
        return "null"
    if math.isinf(x):
        return ("-" if x < 0 else "") + "1.7976931348623157e+308"
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    sign = "-" if x < 0 else ""
    mant, _, exp = f"{abs(x):.17e}".partition("e")
    digits = repr(abs(x))
    # shortest digits and decimal point position from Python's repr
    if "e" in digits:
        m, _, e = digits.partition("e")
        ip, _, fp = m.partition(".")
        raw = (ip + fp).lstrip("0")
        decpt = int(e) + len(ip)
    else:
        ip, _, fp = digits.partition(".")
        if ip.strip("0"):
            raw = (ip + fp).lstrip("0")
            decpt = len(ip.lstrip("0"))
        else:
            stripped = fp.lstrip("0")
            decpt = -(len(fp) - len(stripped))
            raw = stripped
    raw = raw.rstrip("0") or "0"
    del mant, exp
    n = len(raw)
    if decpt <= -4 or decpt > n + 15:
        e = decpt - 1
        body = raw[0] + ("." + raw[1:] if n > 1 else "")
        return f"{sign}{body}e{'-' if e < 0 else '+'}{abs(e):02d}"
    if decpt <= 0:
        return f"{sign}0.{'0' * -decpt}{raw}"
    if decpt >= n:
        return sign + raw + "0" * (decpt - n)
    return f"{sign}{raw[:decpt]}.{raw[decpt:]}"


_ESC = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS = re.compile(r'["\\\x00-\x1f\x7f]')
_NEEDS_ASCII = re.compile(r'["\\\x00-\x1f\x7f-\U0010ffff]')


def _esc_char(m: re.Match) -> str:
    c = m.group()
    if c in _ESC:
        return _ESC[c]
    o = ord(c)
    if o > 0xFFFF:
        o -= 0x10000
        return f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}"
    return f"\\u{o:04x}"


def string(s: str, ascii_only: bool = False) -> str:
    """A string as jq writes it. Without -a, Python's C encoder escapes exactly as jq does
    (quote, backslash, \\b \\f \\n \\r \\t, other controls as \\u00XX) except for DEL,
    which jq writes as \\u007f: it does the bulk of the work, DEL is patched after."""
    if ascii_only:
        return '"' + _NEEDS_ASCII.sub(_esc_char, s) + '"'
    out = _c_string(s)
    return out.replace("\x7f", "\\u007f") if "\x7f" in out else out


_c_string = json.encoder.encode_basestring  # type: ignore[attr-defined]
_EXACT = 1 << 53  # integers up to this are their own double: number() would print str(x)


class Dumper:
    def __init__(self, indent: str | None, sort_keys: bool, ascii_only: bool) -> None:
        self.indent = indent
        self.sort_keys = sort_keys
        self.ascii_only = ascii_only

    def dump(self, v: Any) -> str:
        out: list[str] = []
        self._dump(v, out, 0)
        return "".join(out)

    def _dump(self, v: Any, out: list[str], level: int) -> None:
        t = type(v)  # the common leaves first, without number()'s general formatting
        if t is str and not self.ascii_only:
            out.append(string(v))
            return
        if t is int and -_EXACT <= v <= _EXACT:
            out.append(str(v))
            return
        if v is None:
            out.append("null")
        elif v is True:
            out.append("true")
        elif v is False:
            out.append("false")
        elif isinstance(v, str):
            out.append(string(v, self.ascii_only))
        elif isinstance(v, (int, float)):
            out.append(number(v))
        elif isinstance(v, list):
            if not v:
                out.append("[]")
                return
            out.append("[")
            ind = self.indent
            for i, item in enumerate(v):
                if i:
                    out.append(",")
                if ind is not None:
                    out.append("\n" + ind * (level + 1))
                self._dump(item, out, level + 1)
            if ind is not None:
                out.append("\n" + ind * level)
            out.append("]")
        elif isinstance(v, dict):
            if not v:
                out.append("{}")
                return
            out.append("{")
            ind = self.indent
            keys = sorted(v) if self.sort_keys else list(v)
            for i, k in enumerate(keys):
                if i:
                    out.append(",")
                if ind is not None:
                    out.append("\n" + ind * (level + 1))
                out.append(string(k, self.ascii_only))
                out.append(": " if ind is not None else ":")
                self._dump(v[k], out, level + 1)
            if ind is not None:
                out.append("\n" + ind * level)
            out.append("}")
        else:
            out.append("null")


# --------------------------------------------------------------------------- messages


def runtime_message(msg: str) -> str:
    """libjq 1.8's wording of a runtime error, as jq 1.6 says it."""
    m = re.fullmatch(r"Cannot index (\w+) with (\w+) \((.*)\)", msg, re.S)
    if m:
        if m.group(2) == "string":
            return f"Cannot index {m.group(1)} with string {m.group(3)}"
        return f"Cannot index {m.group(1)} with {m.group(2)}"
    m = re.fullmatch(r'string \((".*")\) cannot be parsed as a number', msg, re.S)
    if m:
        text = json.loads(m.group(1))
        return f"Invalid numeric literal at EOF at line 1, column {len(text)} (while parsing '{text}')"
    return msg


def compile_message(msg: str) -> str:
    """A 1.8 compile error (`at <top-level>, line L, column C:` + source line + caret) as 1.6
    prints it: the line, then spaces up to the error's column."""
    out: list[str] = []
    lines = msg.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"(jq: error: .*) at (<[^>]*>|\S+), line (\d+), column (\d+):$", line)
        if m and i + 1 < len(lines):
            text = m.group(1)
            if "syntax error" in text:
                text = text.replace("unexpected end of file", "unexpected $end")
                text += " (Unix shell quoting issues?)"
            src = lines[i + 1][4:] if lines[i + 1].startswith("    ") else lines[i + 1]
            out.append(f"{text} at {m.group(2)}, line {m.group(3)}:")
            out.append(src + " " * (int(m.group(4)) - 1))
            i += 2
            if i < len(lines) and lines[i].strip().startswith("^"):
                i += 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


# --------------------------------------------------------------------------- inputs


def _values(text: str) -> tuple[list[Any], list[int], str | None]:
    """The JSON texts in `text` parsed by libjq: (values, line of each for messages, the parse
    error message or None)."""
    values: list[Any] = []
    err = None
    try:
        for v in libjq.compile(".").input_text(text):
            values.append(v)
    except ValueError as e:
        err = str(e)
    # lines as jq reports them: newlines consumed up to one character past each value
    lines: list[int] = []
    dec = json.JSONDecoder()
    pos = 0
    n = len(text)
    for _ in values:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        try:
            _, end = dec.raw_decode(text, pos)
        except ValueError:
            end = n
        pos = end
        nl = text.find("\n", max(end - 1, 0))  # jq 1.6 feeds its parser whole lines
        lines.append(text.count("\n", 0, nl + 1) if nl >= 0 else text.count("\n"))
    return values, lines, err


# --------------------------------------------------------------------------- the fast path

# The usual way to run a program: libjq parses the file's text and runs the program on each value
# in one pass (no Python round trip of the input). The value-by-value path below (libjq parses,
# Python holds the values, each is re-encoded for the program) differs from it only where a
# number literal is not canonical (libjq 1.8 keeps `1.000`, `1e2`, `-0`, 16+ digit integers as
# written, and `nan`/`infinity` as such, where a Python round trip normalises them), and in
# `input`/`halt`/`debug`/`stderr`, which see the stream; such texts and programs take the
# value-by-value path, as do inputs whose program fails (for the per-value messages and the
# values after a failing one).
_CANON = bytes.maketrans(b"123456789eENAIF", b"000000000..naif")  # a fraction or exponent: "0."
_SPACE = frozenset(b" \t\r\n")
_BEFORE_VALUE = frozenset(b":,[]}")  # what precedes a value in a container, white space aside
_AFTER_SCALAR = frozenset(b'"0.l')  # how a string, number, true/false/null ends, as folded
_MINUS_ZERO = re.compile(rb"-0(?!0)")
_STREAM_WORDS = ("input", "halt", "debug", "stderr")


def _value_here(t: bytes, pos: int) -> bool:
    """Whether a JSON value may start at `pos` of the folded text: at the start, after `:,[]}`
    (white space aside), or after white space that follows a top-level scalar. (Not caught: a
    top-level value written flush against the scalar before it, as in `"a"nan`.)"""
    before = pos - 1
    while before >= 0 and t[before] in _SPACE:
        before -= 1
    if before < 0 or t[before] in _BEFORE_VALUE:
        return True
    return before < pos - 1 and t[before] in _AFTER_SCALAR


def _canonical_numbers(data: bytes) -> bool:
    """Whether every number in the JSON text `data` reads back as written after a round trip
    through Python (integers of at most 15 digits, no fraction, exponent, -0, nan or infinity).
    Looks at the text with digits and case folded; a string that merely looks like such a
    number only costs the fast path."""
    t = data.translate(_CANON)
    if b"0." in t or b"0000000000000000" in t:
        return False
    for m in _MINUS_ZERO.finditer(t):
        if _value_here(t, m.start()):
            return False
    for word in (b"nan", b"inf"):
        pos = t.find(word)
        while pos >= 0:
            if _value_here(t, pos - 1 if pos and t[pos - 1] == 45 else pos):  # 45: "-"
                return False
            pos = t.find(word, pos + 3)
    return True


def _quick_results(quick: Any, raw: bytes, text: str) -> list[Any] | None:
    """All the program's results over the text's values by jqfast, or None where jqfast gives
    way (an error, a case whose jq meaning it does not take on): libjq then runs as before.
    Any exception counts as giving way, so a slip in the subset costs speed, not output."""
    try:
        return jqfast.run_text(quick, raw, text)
    except Exception:  # noqa: BLE001 - jqfast.Fallback, or anything unforeseen: libjq decides
        return None


def _fast_results(prog: Any, data: str) -> list[Any] | None:
    """All the program's results over the text's values, or None when libjq reports an error
    (the caller then takes the value-by-value path, which reports it as jq does)."""
    try:
        return prog.input_text(data).all()
    except ValueError:
        return None


# --------------------------------------------------------------------------- the command

_FLAGS = {"r": "raw", "j": "join", "c": "compact", "n": "null", "s": "slurp", "S": "sort", "e": "exit",
          "a": "ascii", "M": "mono", "R": "rawin", "h": "help"}
_LONG = {"raw-output": "raw", "join-output": "join", "compact-output": "compact", "null-input": "null",
         "slurp": "slurp", "sort-keys": "sort", "exit-status": "exit", "ascii-output": "ascii",
         "monochrome-output": "mono", "raw-input": "rawin", "tab": "tab", "help": "help"}


def jq(sh: ToolContext, argv: list[str]) -> int:
    try:
        return _jq(sh, argv)
    except _Exit as e:
        if e.message:
            sh.write_err(e.message)
        return e.status


def _usage_error(text: str) -> _Exit:
    return _Exit(f"jq: {text}\n{USAGE_HINT}", 2)


def _parse_json_arg(text: str) -> list[Any] | None:
    try:
        return libjq.compile(".").input_text(text).all()
    except ValueError:
        return None


def _jq(sh: ToolContext, argv: list[str]) -> int:
    flags: set[str] = set()
    indent = 2
    named: dict[str, Any] = {}
    program: str | None = None
    files: list[str] = []
    from_file: str | None = None
    args = argv[1:]
    i = 0
    only_files = False
    while i < len(args):
        a = args[i]
        i += 1
        if only_files or not a.startswith("-") or a == "-":
            if program is None and from_file is None:
                program = a
            else:
                files.append(a)
            continue
        if a == "--":
            only_files = True
            continue
        if a.startswith("--"):
            name = a[2:]
            if name in _LONG:
                flags.add(_LONG[name])
            elif name in ("arg", "argjson", "slurpfile", "rawfile"):
                if i + 1 >= len(args):
                    example = {"arg": "value", "argjson": "text"}.get(name, "filename")
                    what = f"two parameters (e.g. --{name} varname {example})"
                    raise _usage_error(f"--{name} takes {what}")
                var, val = args[i], args[i + 1]
                i += 2
                if name == "arg":
                    named[var] = val
                elif name == "argjson":
                    vals = _parse_json_arg(val)
                    if vals is None or len(vals) != 1:
                        raise _usage_error("invalid JSON text passed to --argjson")
                    named[var] = vals[0]
                else:
                    try:
                        data = devices.read_file(sh, val).decode("utf-8", "replace")
                    except OSError as e:
                        raise _Exit(f"jq: Bad JSON in --{name} {var} {val}: Could not open {val}: "
                                    f"{e.strerror}\n", 2) from None
                    if name == "rawfile":
                        named[var] = data
                    else:
                        vals, _, err = _values(data)
                        if err is not None:
                            raise _Exit(f"jq: Bad JSON in --{name} {var} {val}: {err.removeprefix('parse error: ')}\n",
                                        2)
                        named[var] = vals
            elif name == "indent":
                if i >= len(args):
                    raise _usage_error("--indent takes one parameter")
                try:
                    indent = int(args[i])
                except ValueError:
                    indent = 0
                i += 1
                if indent < -1 or indent > 7:
                    raise _usage_error("--indent takes a number between -1 and 7")
            elif name == "from-file":
                flags.add("fromfile")
            else:
                raise _usage_error(f"Unknown option {a}")
            continue
        for c in a[1:]:
            if c in _FLAGS:
                flags.add(_FLAGS[c])
            elif c == "f":
                flags.add("fromfile")
            else:
                raise _usage_error(f"Unknown option {a}")
    if "help" in flags:
        sh.out("Usage:\tjq [OPTIONS] FILTER [FILES...]\n")
        return 0
    if "fromfile" in flags and program is not None:
        from_file, program = program, None
        try:
            program = devices.read_file(sh, from_file).decode("utf-8", "replace")
        except OSError as e:
            raise _Exit(f"jq: error: Could not open {from_file}: {e.strerror}\n", 2) from None
    if program is None:
        program = "."
    return _run(sh, program, files, flags, indent, named)


def _compile(program: str, named: dict[str, Any], env: dict[str, str], null_inputs: list[Any] | None,
             null_error: str | None = None):
    prelude = "def env: $__k_env; "
    body = program.replace("$ENV", "$__k_env")
    args = dict(named, __k_env=env)
    if null_inputs is not None:
        prelude += ("def inputs: $__k_inputs[], if $__k_error then error($__k_error) else empty end; "
                    "def input: if ($__k_inputs|length) > 0 then $__k_inputs[0] "
                    "elif $__k_error then error($__k_error) else error(\"No more inputs\") end; ")
        args["__k_inputs"] = null_inputs
        args["__k_error"] = null_error
    try:
        return libjq.compile(prelude + body, args=args)
    except ValueError:
        pass
    try:
        libjq.compile(program, args=named)
    except ValueError as e:
        raise _Exit(compile_message(str(e)) + "\n", 3) from None
    raise _Exit("jq: error: could not compile the program\njq: 1 compile error\n", 3)


def _run(sh: ToolContext, program: str, files: list[str], flags: set[str], indent: int,
         named: dict[str, Any]) -> int:
    status = 0
    # inputs: (values, line numbers, source name, parse error)
    sources: list[tuple[list[Any], list[int], str, str | None]] = []
    raw_in = "rawin" in flags
    fast = not raw_in and "slurp" not in flags and "null" not in flags and \
        not any(w in program for w in _STREAM_WORDS)
    # the texts left for the fast path: source index -> text
    texts: dict[int, str] = {}
    # the quickest path, before both: a common subset of jq run in Python over Python's JSON
    # decoder (jqfast), which gives way to libjq wherever the two might differ
    quick = jqfast.compile_program(program) if fast else None
    ready: dict[int, list[Any]] = {}  # source index -> the program's results, by jqfast
    for name in files or ["-"]:
        label = "<stdin>" if name == "-" else name
        try:
            raw_data = read_all(sh, name)
        except OSError as e:
            if e.errno != 21:
                sh.write_err(f"jq: error: Could not open file {name}: {e.strerror}\n")
            status = 2
            continue
        data = raw_data.decode("utf-8", "replace")
        if quick is not None:
            results = _quick_results(quick, raw_data, data)
            if results is not None:
                ready[len(sources)] = results
                sources.append(([], [], label, None))
                continue
        if fast and _canonical_numbers(raw_data):
            texts[len(sources)] = data
            sources.append(([], [], label, None))
            continue
        if raw_in:
            if "slurp" in flags:
                sources.append(([data], [data.count("\n")], label, None))
            else:
                parts = data.split("\n")
                if parts[-1] == "":
                    parts.pop()
                sources.append((parts, list(range(1, len(parts) + 1)), label, None))
        else:
            vals, lines, err = _values(data)
            sources.append((vals, lines, label, err))
    env = sh.exported_env()
    if "slurp" in flags:
        if raw_in:
            merged: list[Any] = ["".join(v for s in sources for v in s[0])]
        else:
            merged = [[v for s in sources for v in s[0]]]
        errs = [s for s in sources if s[3] is not None]
        last = sources[-1] if sources else ([], [], "<stdin>", None)
        total = sum(s[1][-1] if s[1] else 0 for s in sources)
        sources = [(merged, [total], last[2], None)] + [([], [], s[2], s[3]) for s in errs]
        if errs:
            sources = [([], [], s[2], s[3]) for s in errs]
    if "null" in flags:
        rest = [v for s in sources for v in s[0]]
        bad = next((s for s in sources if s[3] is not None), None)
        null_error = bad[3].removeprefix("parse error: ") if bad is not None and bad[3] else None
        prog = _compile(program, named, env, rest, null_error)
        where = f"{bad[2]}:{_err_line(bad[3])}" if bad is not None and bad[3] else "<unknown>"
        work = [([None], [0], where, None)]
    else:
        prog = _compile(program, named, env, None)
        work = sources
    pretty = None if "compact" in flags or indent == 0 else ("\t" if "tab" in flags else " " * max(indent, 0))
    if indent == -1 and "tab" not in flags:
        pretty = None
    dumper = Dumper(pretty, "sort" in flags, "ascii" in flags)
    raw = "raw" in flags or "join" in flags
    end = "" if "join" in flags else "\n"
    out = Output(sh)
    last_output: list[Any] = []
    for index, (values, lines, label, err) in enumerate(work):
        text = texts.get(index)
        results = ready.get(index)
        if results is None and text is not None:
            results = _fast_results(prog, text)
        if results is not None:
            for result in results:
                if raw and isinstance(result, str):
                    out.write((result + end).encode("utf-8", "surrogateescape"))
                else:
                    out.write((dumper.dump(result) + end).encode("utf-8", "surrogateescape"))
            if results:
                last_output[:] = [results[-1]]
            continue
        if text is not None:
            values, lines, err = _values(text)
        for value, line in zip(values, lines, strict=False):
            try:
                for result in prog.input_value(value):
                    last_output[:] = [result]
                    if raw and isinstance(result, str):
                        out.write((result + end).encode("utf-8", "surrogateescape"))
                    else:
                        out.write((dumper.dump(result) + end).encode("utf-8", "surrogateescape"))
            except ValueError as e:
                out.flush()
                where = label if "null" in flags else f"{label}:{line}"
                sh.write_err(_runtime_line(str(e), where))
                status = 5
        if err is not None:
            out.flush()
            sh.write_err(f"{err}\n")
            status = 4
    out.flush()
    if status:
        return status
    if "exit" in flags:
        if not last_output:
            return 4
        return 1 if last_output[0] in (None, False) else 0
    return 0


def _err_line(err: str) -> str:
    m = re.search(r"line (\d+)", err)
    return str(int(m.group(1)) - 1) if m else "0"


def _runtime_line(msg: str, where: str) -> str:
    try:
        parsed = json.loads(msg)
    except ValueError:
        parsed = msg
    if not isinstance(parsed, str) and json.dumps(parsed) == msg:
        compact = Dumper(None, False, False).dump(parsed)
        return f"jq: error (at {where}) (not a string): {compact}\n"
    return f"jq: error (at {where}): {runtime_message(msg)}\n"
