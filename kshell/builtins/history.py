"""history: the shell's history list, as bash keeps it in a non-interactive shell.

K's shells never read commands from a terminal, so nothing enters the list by itself (bash
records nothing either when not interactive); `history -s` adds an entry, `-c` and `-d` take
them away, `-r`/`-n` read a file into the list and `-w`/`-a` write it out, in the VFS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kshell.builtins import builtin, legal_number, numeric_arg

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_USAGE = ("history: usage: history [-c] [-d offset] [n] or history -anrw [filename] or "
          "history -ps arg [arg...]\n")
_FILE_OPTIONS = "anrw"


@builtin("history")
def history(sh: ToolContext, argv: list[str]) -> int:
    entries: list[str] = sh.session.history
    opts: dict[str, str] = {}
    args = argv[1:]
    while args and args[0].startswith("-") and len(args[0]) > 1:
        word = args.pop(0)
        if word == "--":
            break
        for i, c in enumerate(word[1:], 1):
            if c not in "acdnprsw":
                sh.error(f"history: -{c}: invalid option")
                sh.write_err(_USAGE)
                return 2
            if c == "d":
                value = word[i + 1:] or (args.pop(0) if args else None)
                if value is None:
                    sh.error("history: -d: option requires an argument")
                    sh.write_err(_USAGE)
                    return 2
                opts["d"] = value
                break
            opts[c] = ""
    if sum(c in opts for c in _FILE_OPTIONS) > 1:
        sh.error("history: cannot use more than one of -anrw")
        return 1
    if "c" in opts:
        entries.clear()
    if "d" in opts:
        offset = legal_number(opts["d"])
        position = None if offset is None else offset - 1 if offset > 0 else len(entries) + offset
        if position is None or not 0 <= position < len(entries):
            sh.error(f"history: {opts['d']}: history position out of range")
            return 1
        del entries[position]
        return 0
    if "c" in opts:
        return 0
    if "p" in opts:
        for arg in args:
            sh.out(arg + "\n")
        return 0
    if "s" in opts:
        if args:
            entries.append(" ".join(args))
        return 0
    which = next((c for c in _FILE_OPTIONS if c in opts), None)
    if which is not None:
        return _file(sh, which, args[0] if args else None, entries)
    count = len(entries)
    if args:
        n = numeric_arg(sh, "history", args)
        if n is None:
            return 1
        count = max(0, min(n, count))
    for number, line in enumerate(entries[len(entries) - count:], len(entries) - count + 1):
        sh.out(f"{number:5d}  {line}\n")
    return 0


def _file(sh: ToolContext, which: str, name: str | None, entries: list[str]) -> int:
    """-a/-w write the list to the file (created 0600, as bash's), -r/-n read it in."""
    if name is None:
        name = sh.get_param_or_none("HISTFILE")
        if name is None:
            return 0
    if not name:
        return 1
    try:
        if which in "rn":
            text = sh.fs.read_file(name).decode("utf-8", "surrogateescape")
            entries.extend(text.splitlines())
            return 0
        data = "".join(line + "\n" for line in entries).encode("utf-8", "surrogateescape")
        (sh.fs.append_file if which == "a" else sh.fs.write_file)(name, data, mode=0o600)
    except OSError:
        return 1
    return 0
