"""Commands that are not builtins: executable VFS files found on $PATH (or named by a path),
and child shells (`sh FILE`, `bash -c ...`) that run in a fresh state sharing only the cwd,
exported variables and descriptors."""

from __future__ import annotations

import errno
import posixpath
import stat as st
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kfs.runtime.command_lines import lines
from kshell.core.errors import ExitSignal, FatalError
from kshell.exec import regexes
from kshell.exec.defaults import init_defaults
from kshell.exec.redirects import os_message

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

_SHELLS = frozenset({"sh", "bash", "dash", "ksh", "zsh", "k", "ksh93", "mksh", "ash"})
_X_OK = 1


def find_in_path(sh: Interp, name: str) -> tuple[str | None, bool]:
    """(path, executable): the first executable match on $PATH, else the first match, else
    None. The session's view holds K's tree and, when it delegates, the host's programs (a
    path there runs delegated). A name with a slash is looked up only among the host's
    programs: the one answer a caller cannot get from a stat of its own."""
    if "/" in name:
        return (name, True) if _host_program(sh, name) else (None, False)
    path_var = sh.get_param_or_none("PATH")
    if path_var is None:
        path_var = "/usr/local/bin:/usr/bin:/bin"
    first = None
    delegating = sh.session.delegation is not None
    for d in path_var.split(":"):
        candidate = f"{d or '.'}/{name}"
        try:
            inode = sh.fs.stat(candidate)
        except OSError:
            if delegating and _links_to_host(sh, candidate):  # a venv's bin/python -> /usr/bin/python3
                return candidate, True
            continue
        if inode.is_dir:
            continue
        if sh.fs.access(candidate, _X_OK):
            return candidate, True
        if first is None:
            first = candidate
    return first, False


def _host_program(sh: Interp, path: str) -> str | None:
    """The absolute host path when `path` names a host program this session may run."""
    host = sh.fs.host_path(path)
    if host is None or not sh.fs.access(host, _X_OK) or sh.fs.stat(host).is_dir:
        return None
    return host


def _links_to_host(sh: Interp, path: str) -> bool:
    """Whether `path` is a K symlink (dangling in K) leading to a host program the session
    delegates to: what `python3 -m venv` makes (bin/python -> python3 -> /usr/bin/python3); the
    kernel follows it in the sandbox. Delegated by the link's own path, so argv[0] stays what
    the program expects (a venv's python finds its pyvenv.cfg by it)."""
    current = k_path(sh, path)
    for hop in range(40):  # the kernel's own bound on a chain of links
        if hop and _host_program(sh, current):  # left K (after a link) for a host program
            return True
        try:
            if not sh.fs.lstat(current).is_lnk:
                return False
            target = sh.fs.readlink(current)
        except OSError:
            return False
        current = posixpath.normpath(posixpath.join(posixpath.dirname(current), target))
    return False


REFUSED = False  # judge's answer for a command that must not run


def judge(sh: Interp, argv: list[str]) -> Any:
    """Whether the command may run, by the session's rules and the image's command hooks
    (tools and programs; never the shell's own builtins): REFUSED (saying so as the command's
    error, one line naming the rule), True, or the `ask` rule a person allowed it by (what
    the command runs under that rule is not asked again). The rules judge the line and each
    line it runs that its words show (kfs.runtime.command_lines: wrappers, git's global
    options); a `deny` on any of them refuses, else an `ask` waits here for a decision."""
    rules = sh.session.rules
    hook = sh.session.command_hook
    if not rules and hook is None:
        return True

    asked = None
    for words in lines(argv, lambda name: sh.exported_env().get(name)):
        rule = rules.first(" ".join(words)) if rules else None
        if rule is None and hook is not None:  # the image's command hooks, where no rule decided
            rule = hook(words)
        if rule is None or rule.action == "allow":
            continue
        if rule.action == "deny":
            asked = rule
            break
        asked = asked or rule
    command = " ".join(argv)
    if asked is None:
        return True
    if asked.action == "ask":
        if asked in getattr(current, "approved", ()):  # run by a command allowed under the same rule
            return True
        approve = sh.session.approve
        if sh.session.preapproved == command:  # a decision applied on a resume: this once
            sh.session.preapproved = None
            return asked
        if approve is None:
            sh.write_err(f"K: {command}: needs an approval ({asked.describe()}), which this shell cannot wait for\n")
            return REFUSED
        allowed, why = approve(sh, command, asked, argv)
        if why:
            sh.write_err(f"K: {command}: {why}\n")
        return asked if allowed else REFUSED
    sh.write_err(f"K: {command}: denied by policy ({asked.describe()})\n")
    if sh.session.denied is not None:
        sh.session.denied(command, asked)
    return REFUSED


# the tool or program running in this thread, as the rules saw it: what a write or a host an
# `ask` rule matched pauses and, on a resume, replays (kshell.worker.approvals); and the `ask`
# rules it was allowed by
current = threading.local()


def judged(sh: Interp, argv: list[str], run: Callable[[], int], *, tool: bool = True) -> int:
    """`run()` if the rules let argv run (judge), else 126; a `tool` is the command running in
    this thread meanwhile (a program's writes are its own, in its sandbox)."""
    verdict = judge(sh, argv)
    if verdict is REFUSED:
        return 126
    if verdict is True and not tool:
        return run()
    outer = getattr(current, "sh", None), getattr(current, "argv", None), getattr(current, "approved", ())
    if tool:
        current.sh, current.argv = sh, argv
    if verdict is not True:
        current.approved = (*outer[2], verdict)
    try:
        return run()
    finally:
        current.sh, current.argv, current.approved = outer


def guarded(tool: Any) -> Any:
    """A tool that asks the session's rules first (status 126 when one denies it)."""

    def run(sh: Interp, argv: list[str]) -> int:
        return judged(sh, argv, lambda: tool(sh, argv))

    return run


def run_path(sh: Interp, argv: list[str]) -> int:
    """A program or script by name or path, once the rules let it run (judge)."""
    if not sh.session.rules and sh.session.command_hook is None:
        return _run_path(sh, argv)
    return judged(sh, argv, lambda: _run_path(sh, argv), tool=False)


def k_cwd(sh: Interp) -> str:
    """The working directory as text."""
    cwd = sh.fs.cwd
    return cwd.decode("utf-8", "surrogateescape") if isinstance(cwd, bytes) else str(cwd)


def k_path(sh: Interp, name: str) -> str:
    """An absolute K path for a command named with a slash."""
    return posixpath.normpath(posixpath.join(k_cwd(sh), name))


def delegates(sh: Interp) -> bool:
    """Whether this session runs programs K does not have (kshell.delegate, handed in as the
    session's `delegation`)."""
    d = sh.session.delegation
    return d is not None and d.runs_programs


def run_program(sh: Interp, argv: list[str], shown: str) -> int:
    """Run `argv` (argv[0] a host program path, or a K file's absolute path) through the
    session's delegation; none: bash's `command not found`."""
    d = sh.session.delegation
    if d is None:
        sh.error(f"{shown}: command not found")
        return 127
    return d.run(sh, argv, shown)


def _run_path(sh: Interp, argv: list[str]) -> int:
    name = argv[0]
    hashed = sh.hash_table().get(name) if "/" not in name else None  # `hash -p`, or found before
    if hashed is not None:
        sh.hash_hit(name, hashed[0])
        tool = _tool_at(sh, hashed[0])
        if tool is not None:
            return regexes.running(sh.session, tool, sh, argv)
    if "/" not in name and hashed is None:
        path, executable = find_in_path(sh, name)
        if path is None:
            sh.error(f"{name}: command not found")
            return 127
        if not executable:
            sh.error(f"{path}: Permission denied")
            return 126
        sh.hash_hit(name, path)
    else:  # a path: named, or hashed (used as it is, as bash does without checkhash)
        path = name if hashed is None else hashed[0]
        try:
            inode = sh.fs.stat(path)
        except OSError as e:
            if e.errno == errno.ENOENT and _links_to_host(sh, path):  # a K link to a host program
                return run_program(sh, [k_path(sh, path), *argv[1:]], name)
            sh.error(f"{path}: {os_message(e)}")
            return 127 if e.errno in (errno.ENOENT, errno.ENOTDIR) else 126
        if inode.is_dir:
            sh.error(f"{path}: Is a directory")
            return 126
        if not st.S_ISREG(inode.mode) or not sh.fs.access(path, _X_OK):
            sh.error(f"{path}: Permission denied")
            return 126
    host = sh.fs.host_path(path)
    if host is not None:  # the host's own program, at the same path in the sandbox
        return run_program(sh, [host, *argv[1:]], name)
    if _links_to_host(sh, path):
        return run_program(sh, [k_path(sh, path), *argv[1:]], name)
    try:
        data = sh.fs.read_file(path)
    except OSError as e:
        sh.error(f"{name}: {os_message(e)}")
        return 126
    if data.startswith(b"#!"):
        line = data[2:].split(b"\n", 1)[0].decode("utf-8", "surrogateescape").strip()
        words = line.split()
        interp = words[0] if words else ""
        base = interp.rsplit("/", 1)[-1]
        extra = words[1:]
        if base == "env" and extra:
            base = extra[0].rsplit("/", 1)[-1]
            extra = extra[1:]
            interp_shown = extra[0] if extra else interp
        else:
            interp_shown = interp
        if base not in _SHELLS:
            return _delegate_file(sh, path, argv, f"{name}: {interp_shown}: bad interpreter: No such file or directory")
        return run_script_text(sh, data, path, argv[1:], shown=name)
    if b"\0" in data[:1024]:
        return _delegate_file(sh, path, argv, f"{name}: cannot execute binary file: Exec format error")
    return run_script_text(sh, data, path, argv[1:], shown=name)


def _tool_at(sh: Interp, path: str) -> Any:
    """The K tool a path in /usr/bin or /bin names (where K's tools are), or None."""
    head, _, base = path.rpartition("/")
    return sh.session.tools.get(base) if head in ("/usr/bin", "/bin") else None


def _delegate_file(sh: Interp, path: str, argv: list[str], otherwise: str) -> int:
    """A K file for another interpreter (`#!/usr/bin/env python3`) or a binary: the kernel runs
    it in the sandbox, through the mount; with no delegation, the error bash would print."""
    if not delegates(sh):
        sh.error(otherwise)
        return 126
    return run_program(sh, [k_path(sh, path), *argv[1:]], argv[0])


def child_shell(sh: Interp) -> Interp:
    """A new shell process's state: exported variables, cwd and descriptors are inherited."""
    child = type(sh)(sh.fs.clone(), sh.session, dict(sh.fds))
    child.init_env(sh.exported_env())
    child.pid = sh.session.new_pid()
    child.call_depth = sh.call_depth + 1
    child.cpu_meters = sh.cpu_meters  # a running `time` counts its threads too
    child.niceness = sh.niceness  # a new process starts at its parent's niceness
    if child.call_depth > sh.limits.recursion_depth:
        sh.error("maximum shell nesting level exceeded")
        raise ExitSignal(1)
    init_defaults(child, sh.get_param("PWD") or None)
    return child


def run_script_text(sh: Interp, data: bytes, name: str, args: list[str], shown: str,
                    options: list[str] | None = None) -> int:
    child = child_shell(sh)
    child.dollar0 = shown
    child.script_name = shown
    child.positional = list(args)
    child.dash_c = False  # a script file: no `c` in $-, and a set -u error exits with 1
    for opt in options or ():
        child.opts.add(opt)
    return run_child(child, data.decode("utf-8", "surrogateescape"), shown)


def run_child(child: Interp, source: str, filename: str,
              startup: Callable[[], None] | None = None) -> int:
    """Run a child shell's commands to its end (and its EXIT trap); `startup` first runs
    what the shell reads before them (`bash`'s rc and profile files), ending it likewise."""
    try:
        if startup is not None:
            startup()
        status = child.run_source(source, filename=filename)
    except ExitSignal as e:
        status = e.status
    except FatalError as e:
        status = e.status
    trap = child.traps.pop("EXIT", None)
    if trap:
        try:
            child.run_trap(trap, status, exit_trap=True)
        except (ExitSignal, FatalError) as e:  # `exit N` or set -e in the trap: the child's status
            status = e.status
    child.cleanup_tmp()
    return status & 0xFF
