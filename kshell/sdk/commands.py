"""What the local and the remote session share about a command line: `env` and `cwd` given for
one command only."""

from __future__ import annotations

import re
import shlex

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def shell_word(path: str) -> str:
    """`path` quoted for the K shell, its leading `~` left to expand to the agent's home."""
    if path == "~":
        return "~"
    if path.startswith("~/"):
        return "~/" + shlex.quote(path[2:])
    return shlex.quote(path)


def scoped(command: str, env: dict[str, str] | None, cwd: str | None) -> str:
    """`command` in a subshell that first changes directory and exports `env`, as `(cd DIR &&
    VAR=v cmd)` would: the command sees them, the session's own cwd and variables stay as they
    were. The command's text is kept as it is (no `eval`), so its error messages are the same
    as when it runs alone."""
    if not env and cwd is None:
        return command
    steps = []
    if cwd is not None:
        steps.append(f"cd -- {shell_word(cwd)} || exit")
    for name, value in (env or {}).items():
        if not _ENV_NAME.match(name):
            raise ValueError(f"env: {name!r}: not a valid variable name")
        steps.append(f"export {name}={shlex.quote(value)}")
    return "(" + "\n".join(steps) + "\n" + command + "\n)"
