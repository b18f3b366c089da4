"""bash's `fc` on the shell's history list (kshell.builtins.history: in K, as in a
non-interactive bash, only `history -s` and `history -r` put commands there).

`fc -l` lists a range, `fc -s [pat=rep] [command]` runs a command again (printed to standard
error first, and put in place of the list's last entry, as bash does outside an interactive
shell), and `fc [-e ename] [first [last]]` writes the range to a file in /tmp, runs the editor
on it ($FCEDIT, $EDITOR, else vi: a missing editor fails as a missing command does, and nothing
runs) and then runs what the file holds.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from kshell.builtins import Usage, builtin, getopt, legal_number
from kshell.builtins.flow import eval_builtin
from kshell.exec import redirects as redir
from kshell.expand import pattern

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_USAGE = "fc [-e ename] [-lnr] [first] [last] or fc -s [pat=rep] [command]"


def _find(sh: Interp, entries: list[str], spec: str) -> int | None:
    """bash's fc_gethnum: a history number (negative: back from the end), clamped to the list,
    or the latest command that starts with `spec`; an index, None when nothing matches."""
    n = legal_number(spec)
    if n is not None:
        i = len(entries) + n if n < 0 else n - 1
        return max(0, min(i, len(entries) - 1))
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].startswith(spec):
            return i
    return None


def _run(sh: Interp, command: str) -> int:
    """Print the command, put it in place of the last entry, and run it on the current line."""
    sh.write_err(command if command.endswith("\n") else command + "\n")
    entries = sh.session.history
    if entries:
        entries[-1] = command.rstrip("\n")
    return eval_builtin(sh, ["eval", command])


@builtin("fc")
def fc(sh: Interp, argv: list[str]) -> int:
    words = argv[1:]
    # a negative history number ends the options (bash's fc looks for `-DIGIT` first)
    cut = next((i for i, w in enumerate(words) if w[:1] == "-" and w[1:2].isdigit()), len(words))
    try:
        opts, args = getopt(sh, "fc", words[:cut], "e:lnrs", _USAGE)
    except Usage:
        return 2
    args += words[cut:]
    flags = {c for c, _ in opts}
    editor = next((v for c, v in reversed(opts) if c == "e"), None)
    entries = sh.session.history
    if "s" in flags or editor == "-":
        subs = [a.split("=", 1) for a in args if "=" in a]
        rest = [a for a in args if "=" not in a]
        at = _find(sh, entries, rest[0] if rest else "-1") if entries else None
        if at is None:
            sh.error("fc: no command found")
            return 1
        command = entries[at]
        for old, new in subs:
            command = command.replace(old, new, 1)
        return _run(sh, command)
    if not entries:
        return 0
    default_first = "-16" if "l" in flags else "-1"
    first = _find(sh, entries, args[0] if args else default_first)
    last = _find(sh, entries, args[1]) if len(args) > 1 else (len(entries) - 1 if "l" in flags else first)
    if first is None or last is None:
        sh.error("fc: history specification out of range")
        return 1
    step = 1 if first <= last else -1
    chosen = list(range(first, last + step, step))
    if "r" in flags:
        chosen.reverse()
    if "l" in flags:
        for i in chosen:
            sh.out(("" if "n" in flags else str(i + 1)) + f"\t {entries[i]}\n")
        return 0
    return _edit(sh, editor, [entries[i] for i in chosen])


def _tmpdir(sh: Interp) -> str:
    """bash's get_tmpdir: $TMPDIR if it is a directory, else /tmp, /var/tmp, /usr/tmp, else `.`."""
    for d in (sh.get_param_or_none("TMPDIR"), "/tmp", "/var/tmp", "/usr/tmp"):
        if d and pattern._is_dir(sh.fs, d):
            return d.rstrip("/") or "/"
    return "."


def _edit(sh: Interp, editor: str | None, commands: list[str]) -> int:
    """Write the commands to a file, run the editor on it, then run the file's commands."""
    if editor is None:
        editor = sh.get_param_or_none("FCEDIT") or sh.get_param_or_none("EDITOR") or "vi"
    sh.session.tmp_counter += 1
    path = f"{_tmpdir(sh)}/bash-fc.{sh.pid}.{sh.session.tmp_counter}"
    try:
        sh.fs.write_file(path, "".join(c + "\n" for c in commands).encode("utf-8", "surrogateescape"))
    except OSError as e:
        sh.error(f"fc: {path}: cannot open temp file: {redir.os_message(e)}")
        return 1
    try:
        status = sh.run_command([editor, path], None)
        if status != 0:
            return 1
        try:
            text = sh.fs.read_file(path).decode("utf-8", "surrogateescape")
        except OSError as e:
            sh.error(f"fc: {path}: {redir.os_message(e)}")
            return 1
    finally:
        with contextlib.suppress(OSError):
            sh.fs.unlink(path)
    return _run(sh, text)
