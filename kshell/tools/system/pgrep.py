"""pgrep and pkill (procps-ng 4.0.2) on K's process table: the session's shell and jobs and the
agent's own processes in its other sessions (what `ps` lists); never another agent's.

Matching is procps': an ERE on the process name (the program `ps` shows) or with -f on the
whole command line; -x anchors it, -i ignores case, -v negates; -u/-U/-G/-P filter; -n/-o keep
the newest/oldest (the highest/lowest pid: K's pids grow). pkill sends a virtual signal as `kill`
does (default TERM, `-SIG` first or --signal); the calling shell itself is listed by pgrep but
never signalled by pkill (a `pkill bash` would end the command line running it). Selection by
process group, session, terminal, pid file, state, age, cgroup or namespace is refused: K's
virtual processes have none of these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kfs.format import accounts
from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.exec.jobcontrol import program_name as program  # the name ps shows, one rule for both
from kshell.exec.jobs import Job, signal_number
from kshell.tools.text.regex import RegexError, translate

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"delimiter": ("d", REQUIRED), "list-name": ("l", NONE), "list-full": ("a", NONE), "inverse": ("v", NONE),
         "lightweight": ("w", NONE), "count": ("c", NONE), "full": ("f", NONE), "pgroup": ("g", REQUIRED),
         "group": ("G", REQUIRED), "ignore-case": ("i", NONE), "newest": ("n", NONE), "oldest": ("o", NONE),
         "older": ("O", REQUIRED), "parent": ("P", REQUIRED), "session": ("s", REQUIRED),
         "terminal": ("t", REQUIRED), "euid": ("u", REQUIRED), "uid": ("U", REQUIRED), "exact": ("x", NONE),
         "pidfile": ("F", REQUIRED), "logpidfile": ("L", NONE), "runstates": ("r", REQUIRED),
         "ignore-ancestors": ("A", NONE), "cgroup": ("cgroup", REQUIRED), "ns": ("ns", REQUIRED),
         "nslist": ("nslist", REQUIRED), "help": ("h", NONE), "version": ("V", NONE)}
_KILL_LONG = {**_LONG, "signal": ("signal", REQUIRED), "echo": ("e", NONE), "queue": ("q", REQUIRED)}
for _k in ("delimiter", "list-name", "list-full", "inverse", "lightweight"):
    del _KILL_LONG[_k]
_UNSUPPORTED = {"g": "--pgroup", "s": "--session", "t": "--terminal", "F": "--pidfile", "L": "--logpidfile",
                "r": "--runstates", "O": "--older", "cgroup": "--cgroup", "ns": "--ns", "nslist": "--nslist",
                "q": "--queue", "w": "--lightweight"}


_OPTIONS = """\
 -c, --count               count of matching processes
 -f, --full                use full process name to match
 -g, --pgroup <PGID,...>   match listed process group IDs
 -G, --group <GID,...>     match real group IDs
 -i, --ignore-case         match case insensitively
 -n, --newest              select most recently started
 -o, --oldest              select least recently started
 -O, --older <seconds>     select where older than seconds
 -P, --parent <PPID,...>   match only child processes of the given parent
 -s, --session <SID,...>   match session IDs
 -t, --terminal <tty,...>  match by controlling terminal
 -u, --euid <ID,...>       match by effective IDs
 -U, --uid <ID,...>        match by real IDs
 -x, --exact               match exactly with the command name
 -F, --pidfile <file>      read PIDs from file
 -L, --logpidfile          fail if PID file is not locked
 -r, --runstates <state>   match runstates [D,S,Z,...]
 -A, --ignore-ancestors    exclude our ancestors from results
 --cgroup <grp,...>        match by cgroup v2 names
 --ns <PID>                match the processes that belong to the same
                           namespace as <pid>
 --nslist <ns,...>         list which namespaces will be considered for
                           the --ns option.
                           Available namespaces: ipc, mnt, net, pid, user, uts

 -h, --help     display this help and exit
 -V, --version  output version information and exit

For more details see pgrep(1).
"""
_PGREP_ONLY = """\
 -d, --delimiter <string>  specify output delimiter
 -l, --list-name           list PID and process name
 -a, --list-full           list PID and full command line
 -v, --inverse             negates the matching
 -w, --lightweight         list all TID
"""
_PKILL_ONLY = """\
 -<sig>, --signal <sig>    signal to send (either number or name)
 -q, --queue <value>       integer value to be sent with the signal
 -e, --echo                display what is killed
"""


def usage(prog: str) -> str:
    """procps' usage text (printed for --help, and on standard error after a bad option)."""
    own = _PGREP_ONLY if prog == "pgrep" else _PKILL_ONLY
    return f"\nUsage:\n {prog} [options] <pattern>\n\nOptions:\n{own}{_OPTIONS}"


class _Criteria(Exception):
    """A selection error: procps prints it with a `Try \\`prog --help'` line, status 2."""


def _parse(sh: ToolContext, prog: str, args: list[str], short: str, long: dict) -> tuple[list, list] | None:
    """The options, or None after printing a bad option's message and the usage (status 2)."""
    try:
        return parse(args, short, long)
    except Usage as e:
        sh.write_err(f"{prog}: {e.message}\n{usage(prog)}")
        return None


def _criteria_failed(sh: ToolContext, prog: str, message: str) -> int:
    sh.write_err(f"{prog}: {message}\nTry `{prog} --help' for more information.\n")
    return 2


@dataclass(frozen=True)
class Process:
    """One row of the agent's process table as pgrep sees it."""

    pid: int
    ppid: int
    name: str
    command: str
    job: Job | None  # the session's own job (signalled directly), else another session's process


def processes(sh: ToolContext) -> list[Process]:
    """The session's shell, its live jobs, and the agent's processes in its other sessions."""
    tab = sh.session.jobs
    rows = [Process(sh.session.pid, 1, "bash", "bash", None)]
    mine = tab.live()
    rows += [Process(j.pid, sh.session.pid, program(j.text), j.text, j) for j in mine]
    if tab.recorder is not None:
        known = {j.pid for j in mine} | {sh.session.pid}
        rows += [Process(r["pid"], 1, program(r["cmd"]), r["cmd"], None)
                 for r in tab.recorder.others() if r["pid"] not in known]
    return sorted(rows, key=lambda p: p.pid)


def _ids(sh: ToolContext, text: str, users: bool) -> set[int]:
    known = accounts(sh.fs.vfs.state)
    table = known.uids if users else known.gids
    out = set()
    for item in text.split(","):
        if item in table:
            out.add(table[item])
        elif item.isdigit():
            out.add(int(item))
        else:
            raise Fail(f"invalid {'user' if users else 'group'} name: {item}", 2)
    return out


def _select(sh: ToolContext, prog: str, opts: list[tuple[str, str]], operands: list[str]) -> list[Process]:
    given = dict(opts)
    for key, flag in _UNSUPPORTED.items():
        if key in given:
            raise Fail(f"{flag}: K's processes have no such attribute; not supported", 2)
    if len(operands) > 1:
        raise _Criteria("only one pattern can be provided")
    criteria = [k for k in ("u", "U", "G", "P") if k in given]
    if not operands and not criteria:
        raise _Criteria("no matching criteria specified")
    pattern = None
    if operands:
        try:
            source, _ = translate(operands[0], True)
        except RegexError as e:
            raise Fail(f"regex error: {e.message}", 2) from None
        if "x" in given:
            source = f"(?:{source})\\Z"
        try:
            pattern = re.compile(source, re.I if "i" in given else 0)
        except re.error as e:
            raise Fail(f"regex error: {e}", 2) from None
    cred = sh.fs.cred
    wanted_users = [_ids(sh, given[k], True) for k in ("u", "U") if k in given]
    groups = _ids(sh, given["G"], False) if "G" in given else None
    parents = {int(p) for p in given["P"].split(",") if p.isdigit()} if "P" in given else None
    found = []
    for p in processes(sh):
        ok = all(cred.uid in users for users in wanted_users)
        ok = ok and (groups is None or cred.gid in groups)
        ok = ok and (parents is None or p.ppid in parents)
        if ok and pattern is not None:
            ok = pattern.match(p.command if "f" in given else p.name) is not None \
                if "x" in given else pattern.search(p.command if "f" in given else p.name) is not None
        if ok != ("v" in given):
            found.append(p)
    if found and "n" in given:
        found = [found[-1]]
    elif found and "o" in given:
        found = [found[0]]
    return found


@tool("pgrep", usage_status=2)
def pgrep(sh: ToolContext, argv: list[str]) -> int:
    parsed = _parse(sh, "pgrep", argv, "d:lavwcfg:G:inoO:P:s:t:u:U:xF:Lr:AhV", _LONG)
    if parsed is None:
        return 2
    opts, operands = parsed
    given = dict(opts)
    if "h" in given:
        sh.out(usage("pgrep"))
        return 0
    if "V" in given:
        sh.out("pgrep from procps-ng 4.0.2\n")
        return 0
    try:
        found = _select(sh, "pgrep", opts, operands)
    except _Criteria as e:
        return _criteria_failed(sh, "pgrep", str(e))
    if "c" in given:
        sh.out(f"{len(found)}\n")
        return 0 if found else 1
    shown = [f"{p.pid} {p.command}" if "a" in given else f"{p.pid} {p.name}" if "l" in given else str(p.pid)
             for p in found]
    if shown:
        sh.out(given.get("d", "\n").join(shown) + "\n")
    return 0 if found else 1


@tool("pkill", usage_status=2)
def pkill(sh: ToolContext, argv: list[str]) -> int:
    sig = 15
    args = list(argv)
    if len(args) > 1 and args[1].startswith("-") and len(args[1]) > 1:
        n = signal_number(args[1][1:])
        if n is not None:
            sig = n
            del args[1]
    parsed = _parse(sh, "pkill", args, "cfg:G:inoO:P:s:t:u:U:xF:Lr:AehVq:", _KILL_LONG)
    if parsed is None:
        return 2
    opts, operands = parsed
    given = dict(opts)
    if "h" in given:
        sh.out(usage("pkill"))
        return 0
    if "V" in given:
        sh.out("pkill from procps-ng 4.0.2\n")
        return 0
    if "signal" in given:
        n = signal_number(given["signal"])
        if n is None:
            raise Fail(f"Unknown signal \"{given['signal']}\".", 2)
        sig = n
    try:
        found = _select(sh, "pkill", opts, operands)
    except _Criteria as e:
        return _criteria_failed(sh, "pkill", str(e))
    tab = sh.session.jobs
    hit = 0
    for p in found:
        if p.pid == sh.session.pid:
            continue  # never the shell running this command line
        if p.job is not None:
            tab.signal(p.job, sig)
        elif tab.recorder is None or not tab.recorder.signal(p.pid, sig):
            continue
        hit += 1
        if "e" in given:
            sh.out(f"{p.name} killed (pid {p.pid})\n")
    if "c" in given:
        sh.out(f"{hit}\n")
    return 0 if hit else 1
