"""getopt: util-linux 2.38's enhanced getopt (-o -l -a -n -q -Q -s -u -T) and its compatible
form (`getopt optstring args`), parsing as glibc's getopt_long does and quoting as util-linux.

Scripts eval its output, so the text is exact: each option, its argument quoted for the chosen
shell (sh/bash: '...' with '\\'' for a quote; csh/tcsh also escape ! and whitespace), ` --`,
then the operands. A parameter error is reported in glibc's words under the -n name and the
parse goes on (status 1); getopt's own usage errors exit 2, -T exits 4.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.core.options import NONE, OPTIONAL, REQUIRED, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"alternative": ("a", NONE), "help": ("h", NONE), "longoptions": ("l", REQUIRED),
         "name": ("n", REQUIRED), "options": ("o", REQUIRED), "quiet": ("q", NONE),
         "quiet-output": ("Q", NONE), "shell": ("s", REQUIRED), "test": ("T", NONE),
         "unquoted": ("u", NONE), "version": ("V", NONE)}
_SHELLS = {"sh": False, "bash": False, "csh": True, "tcsh": True}
_USAGE = """
Usage:
 getopt <optstring> <parameters>
 getopt [options] [--] <optstring> <parameters>
 getopt [options] -o|--options <optstring> [options] [--] <parameters>
"""


def normalize(arg: str, quote: bool, csh: bool) -> str:
    """One word of the output, as util-linux's normalize()."""
    if not quote:
        return arg
    out = ["'"]
    for c in arg:
        if c == "'":
            out.append("'\\''")
        elif csh and c == "!":
            out.append("'\\!'")
        elif csh and c == "\n":
            out.append("\\n")
        elif csh and c.isspace():
            out.append(f"'\\{c}'")
        else:
            out.append(c)
    out.append("'")
    return "".join(out)


def _shorts(optstring: str) -> dict[str, int]:
    table: dict[str, int] = {}
    i = 0
    while i < len(optstring):
        c = optstring[i]
        if optstring[i + 1:i + 3] == "::":
            table[c], i = OPTIONAL, i + 3
        elif optstring[i + 1:i + 2] == ":":
            table[c], i = REQUIRED, i + 2
        else:
            table[c], i = NONE, i + 1
    return table


def _longs(specs: list[str]) -> dict[str, int]:
    table: dict[str, int] = {}
    for spec in specs:
        for name in spec.replace(" ", ",").replace("\t", ",").replace("\n", ",").split(","):
            if not name:
                continue
            if name.endswith("::"):
                table[name[:-2]] = OPTIONAL
            elif name.endswith(":"):
                table[name[:-1]] = REQUIRED
            else:
                table[name] = NONE
    return table


class _Params:
    """glibc getopt_long(_only) over the user's parameters, collecting output words and errors."""

    def __init__(self, sh: ToolContext, name: str, optstring: str, longs: dict[str, int], *,
                 long_only: bool, quiet: bool, quote: bool, csh: bool) -> None:
        self.sh, self.name, self.longs, self.long_only = sh, name, longs, long_only
        self.quiet, self.quote, self.csh = quiet, quote, csh
        self.in_order = optstring.startswith("-")
        self.require_order = optstring.startswith("+") or sh.get_param_or_none("POSIXLY_CORRECT") is not None
        self.shorts = _shorts(optstring.lstrip("+-"))
        self.words: list[str] = []
        self.failed = False

    def error(self, message: str) -> None:
        self.failed = True
        if not self.quiet:
            self.sh.write_err(f"{self.name}: {message}\n")

    def word(self, text: str) -> str:
        return normalize(text, self.quote, self.csh)

    def run(self, args: list[str]) -> list[str]:
        """The output words; operands (after ` --`) are returned."""
        operands: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                operands.extend(args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                if self.in_order:
                    self.words.append(self.word(arg))
                    continue
                operands.append(arg)
                if self.require_order:
                    operands.extend(args[i:])
                    break
                continue
            if arg.startswith("--"):
                i = self.long(arg, arg[2:], "--", args, i)
            elif self.long_only and (len(arg) > 2 or arg[1] not in self.shorts):
                tried = self.long(arg, arg[1:], "-", args, i, fallback=arg[1] in self.shorts)
                i = self.short(arg, args, i) if tried is None else tried
            else:
                i = self.short(arg, args, i)
        return operands

    def long(self, arg: str, body: str, dash: str, args: list[str], i: int, fallback: bool = False) -> int | None:
        name, eq, value = body.partition("=")
        if name in self.longs:
            full = name
        else:
            matches = [k for k in self.longs if k.startswith(name)]
            if not matches:
                if fallback:
                    return None
                self.error(f"unrecognized option '{dash}{name}'" if dash == "--" else f"unrecognized option '{arg}'")
                return i
            if len(matches) > 1:
                shown = " ".join(f"'{dash}{k}'" for k in matches)
                self.error(f"option '{dash}{name}' is ambiguous; possibilities: {shown}")
                return i
            full = matches[0]
        mode = self.longs[full]
        if mode == NONE:
            if eq:
                self.error(f"option '{dash}{full}' doesn't allow an argument")
                return i
            self.words.append(f"--{full}")
        elif mode == REQUIRED:
            if not eq:
                if i >= len(args):
                    self.error(f"option '{dash}{full}' requires an argument")
                    return i
                value, i = args[i], i + 1
            self.words += [f"--{full}", self.word(value)]
        else:
            self.words += [f"--{full}", self.word(value if eq else "")]
        return i

    def short(self, arg: str, args: list[str], i: int) -> int:
        j = 1
        while j < len(arg):
            c = arg[j]
            j += 1
            mode = self.shorts.get(c)
            if mode is None or c == ":":
                self.error(f"invalid option -- '{c}'")
                continue
            if mode == NONE:
                self.words.append(f"-{c}")
                continue
            if j < len(arg):
                value = arg[j:]
            elif mode == REQUIRED:
                if i >= len(args):
                    self.error(f"option requires an argument -- '{c}'")
                    return i
                value, i = args[i], i + 1
            else:
                value = ""
            self.words += [f"-{c}", self.word(value)]
            break
        return i


@tool("getopt", usage_status=2)
def getopt(sh: ToolContext, argv: list[str]) -> int:
    compatible = sh.get_param_or_none("GETOPT_COMPATIBLE") is not None
    if len(argv) == 1:
        if compatible:
            sh.out(" --\n")
            return 0
        raise Usage("missing optstring argument")
    if not argv[1].startswith("-") or compatible:
        optstring = argv[1].lstrip("-+")
        params = _Params(sh, "getopt", optstring, {}, long_only=False, quiet=False, quote=False, csh=False)
        return _emit(sh, params, argv[2:], quiet_output=False)
    opts, rest = parse(argv, "ahl:n:o:qQs:TuV", _LONG, permute=False)
    keys = {k for k, _ in opts}
    if "h" in keys:
        sh.out(_USAGE)
        return 0
    if "V" in keys:
        sh.out("getopt from util-linux 2.38.1\n")
        return 0
    if "T" in keys:
        return 4
    shell = "bash"
    optstring: str | None = None
    name = "getopt"
    for k, v in opts:
        if k == "s":
            if v not in _SHELLS:
                raise Usage("unknown shell after -s or --shell argument")
            shell = v
        elif k == "o":
            optstring = v
        elif k == "n":
            name = v
    if optstring is None:
        if not rest:
            raise Usage("missing optstring argument")
        optstring = rest.pop(0)
    params = _Params(sh, name, optstring, _longs([v for k, v in opts if k == "l"]), long_only="a" in keys,
                     quiet="q" in keys, quote="u" not in keys, csh=_SHELLS[shell])
    return _emit(sh, params, rest, quiet_output="Q" in keys)


def _emit(sh: ToolContext, params: _Params, args: list[str], *, quiet_output: bool) -> int:
    operands = params.run(args)
    if not quiet_output:
        words = [*params.words, "--", *(params.word(a) for a in operands)]
        sh.out("".join(" " + w for w in words) + "\n")
    return 1 if params.failed else 0
