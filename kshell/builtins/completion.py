"""bash's programmable completion builtins: compgen, complete, compopt (bash 5.2's complete.def
and pcomplete.c).

`compgen` generates what a completion specification would offer for a word, in bash's order:
the lists of its actions (aliases, builtins, variables, ... in pcomplete's fixed order, each
filtered by the word as a prefix), then commands, files, users, groups, services, directories,
then -G's glob, -W's words; -X removes what its pattern matches (`!` keeps them instead), -P
and -S wrap each. `complete` keeps specifications per command name (and -D, -E, -I) and
prints them as bash does, in the order of bash's hash table; `compopt` changes their options.
The K shell has no line editor that completes, so the specifications are kept and listed only.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from kshell.builtins import PROGRAMS, Usage, builtin, getopt
from kshell.builtins.help_topics import TOPICS
from kshell.builtins.vars import SHOPTS
from kshell.core.variables import ARRAY, EXPORT
from kshell.exec.jobs import SIGNALS
from kshell.exec.options import LONG_ONLY, LONG_OPTIONS
from kshell.expand import pattern
from kshell.expand.words import expand_words
from kshell.syntax import ShellSyntaxError, parse

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_COMPGEN_USAGE = ("compgen [-abcdefgjksuv] [-o option] [-A action] [-G globpat] [-W wordlist] "
                  "[-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] [word]")
_COMPLETE_USAGE = ("complete [-abcdefgjksuv] [-pr] [-DEI] [-o option] [-A action] [-G globpat] "
                   "[-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] "
                   "[name ...]")
_COMPOPT_USAGE = "compopt [-o|+o option] [-DEI] [name ...]"

LETTERS = {"a": "alias", "b": "builtin", "c": "command", "d": "directory", "e": "export",
           "f": "file", "g": "group", "j": "job", "k": "keyword", "s": "service", "u": "user",
           "v": "variable"}
_BY_ACTION = {action: letter for letter, action in LETTERS.items()}
# -A names without a letter, in the order `complete -p` prints them
_NAMED = ("arrayvar", "binding", "disabled", "enabled", "function", "helptopic", "hostname",
          "running", "setopt", "shopt", "signal", "stopped")
ACTIONS = frozenset(LETTERS.values()) | frozenset(_NAMED)
OPTIONS = ("bashdefault", "default", "dirnames", "filenames", "noquote", "nosort", "nospace",
           "plusdirs")
# bash's reserved words, in its word_token_alist order (compgen -k)
KEYWORDS = ("if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
            "do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc")
# the names bash keeps -D, -E and -I under
SPECIAL_NAMES = {"D": "_DefaultCmD_", "E": "_EmptycmD_", "I": "_InitialWorD_"}


@dataclasses.dataclass
class CompSpec:
    actions: set[str] = dataclasses.field(default_factory=set)
    options: set[str] = dataclasses.field(default_factory=set)
    globpat: str | None = None
    words: str | None = None
    prefix: str | None = None
    suffix: str | None = None
    filterpat: str | None = None
    command: str | None = None
    function: str | None = None

    def text(self, name: str) -> str:
        """The `complete` command that makes this specification (bash's print_one_completion)."""
        parts = ["complete"]
        parts += [f"-o {o}" for o in OPTIONS if o in self.options]
        parts += [f"-{c}" for c, a in LETTERS.items() if a in self.actions]
        parts += [f"-A {a}" for a in _NAMED if a in self.actions]
        for flag, value in (("-G", self.globpat), ("-W", self.words), ("-P", self.prefix),
                            ("-S", self.suffix), ("-X", self.filterpat), ("-C", self.command)):
            if value is not None:
                parts.append(f"{flag} {_quote(value)}")
        if self.function is not None:
            parts.append(f"-F {self.function}")
        special = {v: k for k, v in SPECIAL_NAMES.items()}
        parts.append(f"-{special[name]}" if name in special else name)
        return " ".join(parts)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _specs(sh: Interp) -> dict[str, CompSpec]:
    """This shell's specifications (a subshell's are a copy: Interp.fork copies the dict)."""
    return sh.completions


def _fnv(name: str) -> int:
    """bash's hash_string (FNV-1, 32 bits)."""
    h = 2166136261
    for byte in name.encode("utf-8", "surrogateescape"):
        h = (h * 16777619) & 0xFFFFFFFF
        h ^= byte
    return h


def table_order(specs: dict[str, Any]) -> list[str]:
    """The names in the order bash walks a 256-bucket table (complete's specifications, hash's
    paths): by bucket, newest first within one."""
    seq = {name: i for i, name in enumerate(specs)}
    return sorted(specs, key=lambda n: (_fnv(n) & 255, -seq[n]))


def _parse(sh: Interp, name: str, args: list[str], letters: str, usage: str) -> tuple[CompSpec, set[str], list[str]]:
    """The options of compgen or complete: a specification, the other flags (p r D E I), the
    operands. Raises Usage (status 2) after bash's message."""
    opts, rest = getopt(sh, name, args, letters + "o:A:G:W:F:C:X:P:S:", usage)
    spec = CompSpec()
    flags: set[str] = set()
    for c, value in opts:
        if c in LETTERS:
            spec.actions.add(LETTERS[c])
        elif c == "o":
            if value not in OPTIONS:
                sh.error(f"{name}: {value}: invalid option name")
                raise Usage
            spec.options.add(value)
        elif c == "A":
            if value not in ACTIONS:
                sh.error(f"{name}: {value}: invalid action name")
                raise Usage
            spec.actions.add(value)
        elif c in "GWFCXPS":
            field = {"G": "globpat", "W": "words", "F": "function", "C": "command", "X": "filterpat",
                     "P": "prefix", "S": "suffix"}[c]
            setattr(spec, field, value)
        else:
            flags.add(c)
    return spec, flags, rest


# --------------------------------------------------------------------------- generation


def _files(sh: Interp, word: str, dirs_only: bool) -> list[str]:
    """Readline's filename completion of `word`: the entries of its directory that start with
    its last component (hidden ones too, as match-hidden-files; never . and ..), sorted."""
    head, _, tail = word.rpartition("/")
    where = (head or "/") if "/" in word else "."
    try:
        names = sorted(sh.fs.readdir(where))
    except OSError:
        return []
    found = []
    for n in names:
        if n in (".", "..") or not n.startswith(tail):
            continue
        path = f"{head}/{n}" if "/" in word else n
        if dirs_only and not pattern._is_dir(sh.fs, f"{where}/{n}"):
            continue
        found.append(path)
    return found


def _etc_names(sh: Interp, path: str, sep: str | None) -> list[str]:
    """The first field of each line of a file of the session's /etc (passwd, group, services)."""
    try:
        text = sh.fs.read_file(path).decode("utf-8", "replace")
    except OSError:
        return []
    names = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line.split(sep)[0])
    return names


def _hostnames(sh: Interp) -> list[str]:
    try:
        text = sh.fs.read_file(sh.get_param_or_none("HOSTFILE") or "/etc/hosts").decode("utf-8", "replace")
    except OSError:
        return []
    return [h for line in text.splitlines() for h in line.split("#", 1)[0].split()[1:]]


def _variables(sh: Interp, test=lambda var: True) -> list[str]:
    return sorted(n for n, v in sh.vars.table.items() if v.value is not None and test(v))


def _commands(sh: Interp, word: str) -> list[str]:
    """bash's command_word_completion_function: aliases, reserved words, functions, builtins,
    then the executables of $PATH (K's tools among them)."""
    found = [n for n in sorted(sh.aliases) if n.startswith(word)]
    found += [k for k in KEYWORDS if k.startswith(word)]
    found += [f for f in sorted(sh.funcs) if f.startswith(word)]
    found += [b for b in sorted(set(sh.builtins) - PROGRAMS) if b.startswith(word)]
    seen: set[str] = set()
    for d in (sh.get_param_or_none("PATH") or "").split(":"):
        for path in _files(sh, f"{d or '.'}/{word}", False):
            name = path.rsplit("/", 1)[1]
            if name in seen:
                continue
            try:
                executable = not sh.fs.stat(path).is_dir and sh.fs.access(path, 1)
            except OSError:
                executable = False
            if executable:
                seen.add(name)
                found.append(name)
    return found


def _action_lists(sh: Interp, actions: set[str]) -> list[str]:
    """The candidates of the list actions, in pcomplete's order, before prefix filtering."""
    jobs = sh.session.jobs.ordered() if actions & {"job", "running", "stopped"} else []
    lists = {
        "alias": lambda: sorted(sh.aliases),
        "arrayvar": lambda: _variables(sh, lambda v: bool(v.flags & ARRAY)),
        "binding": lambda: [],
        "builtin": lambda: sorted(set(sh.builtins) - PROGRAMS),
        "disabled": lambda: sorted(sh.disabled),
        "enabled": lambda: sorted(set(sh.builtins) - PROGRAMS),
        "export": lambda: _variables(sh, lambda v: bool(v.flags & EXPORT)),
        "function": lambda: sorted(sh.funcs),
        "helptopic": lambda: list(TOPICS),
        "hostname": lambda: _hostnames(sh),
        "job": lambda: [j.text.split()[0] for j in jobs if j.text.split()],
        "keyword": lambda: list(KEYWORDS),
        "running": lambda: [j.text.split()[0] for j in jobs if j.running and j.text.split()],
        "setopt": lambda: sorted({*LONG_OPTIONS, *LONG_ONLY}),
        "shopt": lambda: list(SHOPTS),
        "signal": lambda: ["SIG" + SIGNALS[n] for n in sorted(SIGNALS) if n],
        "stopped": lambda: [j.text.split()[0] for j in jobs if j.stopped and j.text.split()],
        "variable": lambda: _variables(sh),
    }
    found: list[str] = []
    for action in ("alias", "arrayvar", "binding", "builtin", "disabled", "enabled", "export",
                   "function", "helptopic", "hostname", "job", "keyword", "running", "setopt",
                   "shopt", "signal", "stopped", "variable"):
        if action in actions:
            found += lists[action]()
    return found


def _wordlist(sh: Interp, text: str) -> list[str]:
    """-W's words: the list read with the shell's quoting, each word expanded (parameters,
    command substitution, arithmetic, tilde, braces) and split on IFS, never globbed."""
    try:
        program = parse(": " + text)
    except ShellSyntaxError:
        return []
    commands = program.commands
    if len(commands) != 1 or not hasattr(commands[0], "words"):
        return []
    saved = sh.noglob
    sh.noglob = True
    try:
        return expand_words(sh, commands[0].words[1:])
    finally:
        sh.noglob = saved


def _function_matches(sh: Interp, name: str, word: str) -> list[str]:
    """-F: the function runs with the command name (none for compgen), the word and the word
    before it; what it leaves in COMPREPLY is offered (bash's gen_shell_function_matches)."""
    func = sh.funcs.get(name)
    if func is None:
        sh.error(f"completion: function `{name}' not found")
        return []
    sh.vars.table.pop("COMPREPLY", None)
    sh.call_function(func, [name, "", word, ""])
    return list(sh.array_values("COMPREPLY"))


def generate(sh: Interp, spec: CompSpec, word: str) -> list[str]:
    """What `spec` offers for `word` (bash's gen_compspec_completions, without -C)."""
    found = [m for m in _action_lists(sh, spec.actions) if m.startswith(word)]
    if "command" in spec.actions:
        found += _commands(sh, word)
    if "file" in spec.actions:
        found += _files(sh, word, False)
    if "user" in spec.actions:
        found += [u for u in _etc_names(sh, "/etc/passwd", ":") if u.startswith(word)]
    if "group" in spec.actions:
        found += [g for g in _etc_names(sh, "/etc/group", ":") if g.startswith(word)]
    if "service" in spec.actions:
        found += [s for s in _etc_names(sh, "/etc/services", None) if s.startswith(word)]
    if "directory" in spec.actions:
        found += _files(sh, word, True)
    if spec.globpat is not None:
        found += pattern.glob_paths(sh, spec.globpat) if pattern.has_magic(spec.globpat) else \
            ([spec.globpat] if pattern.fs_exists(sh.fs, spec.globpat) else [])
    if spec.words is not None:
        found += [w for w in _wordlist(sh, spec.words) if w.startswith(word)]
    if spec.function is not None:
        found += _function_matches(sh, spec.function, word)
    if spec.filterpat is not None:
        pat = spec.filterpat
        keep = pat.startswith("!")
        if keep:
            pat = pat[1:]
        pat = pat.replace("&", word)
        found = [m for m in found if pattern.match(pat, m) == keep]
    if not found and "dirnames" in spec.options:
        found = _files(sh, word, True)
    elif not found and spec.options & {"default", "bashdefault"}:
        found = _files(sh, word, False)
    if "plusdirs" in spec.options:
        found += _files(sh, word, True)
    return [f"{spec.prefix or ''}{m}{spec.suffix or ''}" for m in found]


@builtin("compgen")
def compgen(sh: Interp, argv: list[str]) -> int:
    try:
        spec, _, rest = _parse(sh, "compgen", argv[1:], "abcdefgjksuv", _COMPGEN_USAGE)
    except Usage:
        return 2
    if spec.function is not None:
        sh.error("compgen: warning: -F option may not work as you expect")
    if spec.command is not None:
        sh.error("compgen: warning: -C option may not work as you expect")
    if not (spec.actions or spec.options) and all(
            v is None for v in (spec.globpat, spec.words, spec.function, spec.command)):
        return 0  # nothing asked for
    matches = generate(sh, spec, rest[0] if rest else "")
    sh.out("".join(m + "\n" for m in matches))
    return 0 if matches else 1


@builtin("complete")
def complete(sh: Interp, argv: list[str]) -> int:
    try:
        spec, flags, names = _parse(sh, "complete", argv[1:], "abcdefgjksuvprDEI", _COMPLETE_USAGE)
    except Usage:
        return 2
    specs = _specs(sh)
    names = [SPECIAL_NAMES[c] for c in "DEI" if c in flags] + names
    if "p" in flags or (not names and not (spec.actions or spec.options or "r" in flags) and
                        all(v is None for v in (spec.globpat, spec.words, spec.prefix, spec.suffix,
                                                spec.filterpat, spec.command, spec.function))):
        return _print(sh, specs, names)
    if "r" in flags:
        if not names:
            specs.clear()
            return 0
        status = 0
        for name in names:
            if specs.pop(name, None) is None:
                sh.error(f"complete: {name}: no completion specification")
                status = 1
        return status
    for name in names:
        specs[name] = dataclasses.replace(spec, actions=set(spec.actions), options=set(spec.options))
    return 0


def _print(sh: Interp, specs: dict[str, CompSpec], names: list[str]) -> int:
    if not names:
        sh.out("".join(specs[n].text(n) + "\n" for n in table_order(specs)))
        return 0
    status = 0
    for name in names:
        if name in specs:
            sh.out(specs[name].text(name) + "\n")
        else:
            sh.error(f"complete: {name}: no completion specification")
            status = 1
    return status


@builtin("compopt")
def compopt(sh: Interp, argv: list[str]) -> int:
    """`compopt [-o|+o option] [-DEI] [name ...]`: outside a completion function a name (or
    -D, -E, -I) is needed; without -o/+o it prints the options as bash's compopt does."""
    args = argv[1:]
    on: set[str] = set()
    off: set[str] = set()
    which: list[str] = []
    while args and args[0][:1] in ("-", "+") and len(args[0]) > 1:
        word = args.pop(0)
        if word == "--":
            break
        sign = word[0]
        i = 1
        while i < len(word):
            c = word[i]
            if c == "o":
                value = word[i + 1:] or (args.pop(0) if args else None)
                if value is None:
                    sh.error(f"compopt: -{c}: option requires an argument")
                    sh.write_err(f"compopt: usage: {_COMPOPT_USAGE}\n")
                    return 2
                if value not in OPTIONS:
                    sh.error(f"compopt: {value}: invalid option name")
                    return 2
                (on if sign == "-" else off).add(value)
                break
            if c in "DEI" and sign == "-":
                which.append(SPECIAL_NAMES[c])
            else:
                sh.error(f"compopt: {sign}{c}: invalid option")
                sh.write_err(f"compopt: usage: {_COMPOPT_USAGE}\n")
                return 2
            i += 1
    names = which + args
    if not names:
        sh.error("compopt: not currently executing completion function")
        return 1
    specs = _specs(sh)
    status = 0
    for name in names:
        spec = specs.get(name)
        if spec is None:
            sh.error(f"compopt: {name}: no completion specification")
            status = 1
            continue
        if not on and not off:
            shown = " ".join(("-o " if o in spec.options else "+o ") + o for o in OPTIONS)
            special = {v: k for k, v in SPECIAL_NAMES.items()}
            sh.out(f"compopt {shown} {'-' + special[name] if name in special else name}\n")
        spec.options |= on
        spec.options -= off
    return status
