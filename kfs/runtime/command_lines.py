"""The command lines a command rule judges for one argv: the line itself; the command a wrapper
runs (`nice curl`, `stdbuf -oL curl`, `env -i curl`, `timeout 5 curl`, `xargs curl`,
`find . -exec curl {} ;` ...), found by reading the wrapper's own options as GNU coreutils,
findutils and util-linux read them; and git's line without git's global options
(`git push origin` from `git --no-pager -C d push origin`).

The K shell judges all these lines before the command starts (kshell.exec.scripts.judge). A
wrapper K runs itself (its env, timeout, xargs, find) judges its command again, with its real
arguments, when it runs it; one delegated to the host (`nice`, `stdbuf`, `/usr/bin/env`) runs
it out of K's sight: only what is judged here stands between a rule and the host's program. So
an option K does not know makes every later word a possible start of the command (judged too:
more than the wrapper runs, never less).
"""

from __future__ import annotations

from collections.abc import Callable

NO, REQUIRED, OPTIONAL = 0, 1, 2
_STANDARD = {"help": NO, "version": NO}  # what every GNU program takes; both exit at once
MAX_LINES = 64  # lines judged for one argv; past that, every suffix of what is left is judged

Getenv = Callable[[str], "str | None"]


class _Exits(Exception):
    """The wrapper stops without running a command (--help, --version, a missing argument)."""


class _Unknown(Exception):
    """An option the table does not know, ending before words[index]."""

    def __init__(self, index: int) -> None:
        self.index = index


def _short_spec(spec: str) -> dict[str, int]:
    """getopt's option string ("n:", "e::") as {letter: NO | REQUIRED | OPTIONAL}."""
    found, i = {}, 0
    while i < len(spec):
        colons = len(spec[i + 1:]) - len(spec[i + 1:].lstrip(":"))
        found[spec[i]] = min(colons, 2)
        i += 1 + colons
    return found


def _long_name(name: str, longs: dict[str, int]) -> str:
    """The long option `name` names, exactly or as getopt_long's unambiguous prefix."""
    if name in longs:
        return name
    matches = [n for n in longs if n.startswith(name)]
    if len(matches) != 1:
        raise _Unknown(-1)
    return matches[0]


Options = list[tuple[str, "str | None"]]


def _option(words: list[str], i: int, short: dict[str, int], longs: dict[str, int]) -> tuple[Options, int]:
    """The options in words[i] (an option word, not `--`), each with its value (perhaps the next
    word), and the index after them, as getopt_long reads them."""
    word = words[i]
    if word.startswith("--"):
        name, eq, value = word[2:].partition("=")
        try:
            full = _long_name(name, longs)
        except _Unknown:
            raise _Unknown(i + 1) from None
        kind = longs[full]
        if full in _STANDARD:
            raise _Exits
        if kind == NO:
            if eq:
                raise _Exits  # "option '--x' doesn't allow an argument"
            return [(full, None)], i + 1
        if eq or kind == OPTIONAL:
            return [(full, value if eq else None)], i + 1
        if i + 1 >= len(words):
            raise _Exits
        return [(full, words[i + 1])], i + 2
    found: Options = []
    for j in range(1, len(word)):
        kind = short.get(word[j])
        if kind is None:
            raise _Unknown(i + 1)
        if kind == NO:
            found.append((word[j], None))
            continue
        rest = word[j + 1:]
        if rest or kind == OPTIONAL:
            found.append((word[j], rest or None))
            return found, i + 1
        if i + 1 >= len(words):
            raise _Exits
        found.append((word[j], words[i + 1]))
        return found, i + 2
    return found, i + 1


def _options(words: list[str], i: int, short: dict[str, int], longs: dict[str, int]) -> tuple[Options, int]:
    """Every option from words[i] on, in getopt_long's `+` order (the first operand ends them,
    `--` too), and the index of the first operand."""
    found: Options = []
    while i < len(words):
        word = words[i]
        if word == "--":
            return found, i + 1
        if not word.startswith("-") or word == "-":
            break
        opts, i = _option(words, i, short, longs)
        found += opts
    return found, i


def _getopt(spec: str, longs: dict[str, int], operands: int = 0) -> Callable[[list[str], Getenv], list[list[str]]]:
    """A wrapper that takes options (getopt `spec`, `longs`), then `operands` words of its own
    (timeout's DURATION), then the command it runs."""
    short = _short_spec(spec)
    longs = {**longs, **_STANDARD}

    def inner(argv: list[str], getenv: Getenv) -> list[list[str]]:
        _, i = _options(argv, 1, short, longs)
        return [argv[i + operands:]] if i + operands < len(argv) else []

    return inner


def _nice(argv: list[str], getenv: Getenv) -> list[list[str]]:
    """nice: `-N`, `--N`, `-+N` (an adjustment, coreutils' obsolete form) among its options."""
    short, longs = _short_spec("n:"), {"adjustment": REQUIRED, **_STANDARD}
    i = 1
    while i < len(argv):
        word = argv[i]
        sign = word[1:2] in ("-", "+")
        if word[:1] == "-" and word[1 + sign:2 + sign].isdigit():
            i += 1
            continue
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        _, i = _option(argv, i, short, longs)
    return [argv[i:]] if i < len(argv) else []


_ENV_SHORT = _short_spec("C:iS:u:v0")
_ENV_LONG = {"ignore-environment": NO, "null": NO, "unset": REQUIRED, "chdir": REQUIRED, "default-signal": OPTIONAL,
             "ignore-signal": OPTIONAL, "block-signal": OPTIONAL, "list-signal-handling": NO, "debug": NO,
             "split-string": REQUIRED, **_STANDARD}


def _env(argv: list[str], getenv: Getenv) -> list[list[str]]:
    """env: its options (`-S STRING` split into words that take its place, as env does), `-`,
    NAME=VALUE words, then the command."""
    words = argv
    for _ in range(MAX_LINES):
        i, split = 1, None
        while i < len(words) and split is None:
            word = words[i]
            if word == "--":
                i += 1
                break
            if not word.startswith("-") or word == "-":
                break
            opts, i = _option(words, i, _ENV_SHORT, _ENV_LONG)
            split = next((v for k, v in opts if k in ("S", "split-string")), None)
        if split is None:
            break
        words = [words[0], *split_string(split, getenv), *words[i:]]
    else:
        raise _Unknown(1)
    if i < len(words) and words[i] == "-":
        i += 1
    while i < len(words) and "=" in words[i]:
        i += 1
    return [words[i:]] if i < len(words) else []


def split_string(text: str, getenv: Getenv) -> list[str]:
    """env -S's words of `text`: quotes, backslash escapes, `${NAME}` (one word's text, never
    split), `#` at a word's start and `\\c` ending it (coreutils' build_argv)."""
    words: list[str] = []
    current: list[str] | None = None
    sq = dq = False
    i = 0
    escapes = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
    while i < len(text):
        c = text[i]
        if c == "'" and not dq or c == '"' and not sq:
            if c == "'":
                sq = not sq
            else:
                dq = not dq
            current = [] if current is None else current
            i += 1
            continue
        if c in " \t\n\v\f\r" and not (sq or dq):
            if current is not None:
                words.append("".join(current))
                current = None
            i += 1
            continue
        if c == "#" and current is None and not (sq or dq):
            break
        if c == "\\" and not (sq and text[i + 1:i + 2] not in ("\\", "'")):
            i += 1
            c = text[i:i + 1]
            if c == "_" and not dq:
                if current is not None:
                    words.append("".join(current))
                    current = None
                i += 1
                continue
            if c == "c":
                if dq:
                    raise _Exits
                break
            if c == "_":
                c = " "
            elif c in escapes:
                c = escapes[c]
            elif c not in "\"#$'\\" or not c:
                raise _Exits  # "invalid sequence" / "invalid backslash at end of string"
        elif c == "$" and not sq:
            end = text.find("}", i)
            name = text[i + 2:end] if text[i + 1:i + 2] == "{" and end > 0 else ""
            if not name or not (name[0].isalpha() or name[0] == "_") or not name.replace("_", "a").isalnum() \
                    or not name.isascii():
                raise _Exits  # "only ${VARNAME} expansion is supported"
            value = getenv(name)
            if value is not None:
                current = [*(current or ()), value]
            i = end + 1
            continue
        current = [*(current or ()), c]
        i += 1
    else:
        if sq or dq:
            raise _Exits  # "no terminating quote in -S string"
    if current is not None:
        words.append("".join(current))
    return words


def _builtin(spec: str) -> Callable[[list[str], Getenv], list[list[str]]]:
    """`command` and `exec` (bash's builtins, when a wrapper runs them by name): their options,
    then the command; `command -v`/`-V` only describes it."""
    short = _short_spec(spec)

    def inner(argv: list[str], getenv: Getenv) -> list[list[str]]:
        opts, i = _options(argv, 1, short, {})
        if any(k in ("v", "V") for k, _ in opts):
            return []
        return [argv[i:]] if i < len(argv) else []

    return inner


_XARGS = _getopt("0a:E:e::i::I:l::L:n:oprs:txP:d:", {
    "null": NO, "arg-file": REQUIRED, "delimiter": REQUIRED, "eof": OPTIONAL, "replace": OPTIONAL,
    "max-lines": OPTIONAL, "max-args": REQUIRED, "open-tty": NO, "interactive": NO, "no-run-if-empty": NO,
    "max-chars": REQUIRED, "verbose": NO, "show-limits": NO, "exit": NO, "max-procs": REQUIRED,
    "process-slot-var": REQUIRED})


def _xargs(argv: list[str], getenv: Getenv) -> list[list[str]]:
    """xargs: its options, then the command (the words from its input come after: unseen); no
    command is echo."""
    return _XARGS(argv, getenv) or [["echo"]]


def _find(argv: list[str], getenv: Getenv) -> list[list[str]]:
    """find: each -exec, -execdir, -ok and -okdir's command, up to its `;` (or a `+` after
    `{}`), `{}` as written."""
    found = []
    i = 1
    while i < len(argv):
        if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            start = i = i + 1
            while i < len(argv) and argv[i] != ";" and not (argv[i] == "+" and argv[i - 1] == "{}"):
                i += 1
            if i > start:
                found.append(argv[start:i])
        i += 1
    return found


WRAPPERS: dict[str, Callable[[list[str], Getenv], list[list[str]]]] = {
    "nice": _nice,
    "stdbuf": _getopt("i:o:e:", {"input": REQUIRED, "output": REQUIRED, "error": REQUIRED}),
    "env": _env,
    "timeout": _getopt("k:s:v", {"kill-after": REQUIRED, "signal": REQUIRED, "verbose": NO, "foreground": NO,
                                 "preserve-status": NO}, operands=1),
    "nohup": _getopt("", {}),
    "setsid": _getopt("cfwhV", {"ctty": NO, "fork": NO, "wait": NO}),
    "command": _builtin("pvV"),
    "exec": _builtin("cla:"),
    "xargs": _xargs,
    "find": _find,
}

# git's options before its command: those that take the next word as their value (git.c's
# handle_options); any other option word stands alone
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
                         "--attr-source"})
_GIT_COMMANDS = frozenset({"--help", "-h", "--version", "-v"})  # git runs help or version, not what follows


def git_command(argv: list[str]) -> list[str] | None:
    """`git push origin` for `git --no-pager -C d push origin` (and for `git-push origin`): the
    command git runs, with `-c alias.NAME=...` aliases on the line expanded; None when argv is
    not git or has no global option to remove."""
    name = argv[0].rsplit("/", 1)[-1]
    if name.startswith("git-") and len(name) > 4:
        return ["git", name[4:], *argv[1:]]
    if name != "git":
        return None
    i, aliases = 1, {}
    while i < len(argv) and argv[i].startswith("-") and argv[i] not in _GIT_COMMANDS:
        word = argv[i]
        if word in _GIT_VALUED:
            if word == "-c" and i + 1 < len(argv):
                key, _, value = argv[i + 1].partition("=")
                if key.lower().startswith("alias."):
                    aliases[key[6:].lower()] = value
            i += 2
        else:
            i += 1
    if i == 1:
        return None
    rest = argv[i:]
    if rest and rest[0].lower() in aliases:  # `git -c alias.p=push p`: git runs push
        value = aliases[rest[0].lower()]
        words = (value[1:] if value.startswith("!") else value).split()
        return (words if value.startswith("!") else ["git", *words]) + rest[1:]
    return ["git", *rest]


def lines(argv: list[str], getenv: Getenv = lambda name: None) -> list[list[str]]:
    """argv, then every command line it runs that its words show (through wrappers, any depth),
    each also without git's global options; `getenv`: the environment the command starts with
    (for env -S's ${NAME})."""
    found = [argv]
    todo = [argv]
    while todo:
        line = todo.pop(0)
        if len(found) >= MAX_LINES:  # a pathological nesting: judge every suffix of what is left
            found += [words[k:] for words in (line, *todo) for k in range(1, len(words))]
            break
        git = git_command(line)
        if git is not None:
            found.append(git)
            todo.append(git)
        wrapper = WRAPPERS.get(line[0].rsplit("/", 1)[-1]) if line else None
        if wrapper is None:
            continue
        try:
            inner = wrapper(line, getenv)
        except _Exits:
            inner = []
        except _Unknown as e:
            start = e.index if e.index > 0 else 1
            inner = [line[k:] for k in range(start, len(line)) if not line[k].startswith("-")]
        inner = [words for words in inner if words]
        found += inner
        todo += inner
    return found
