"""id, whoami, hostname, uname, nproc: who and where the agent is, as the appliance presents it.

K is not the host, so uname reports the appliance's own virtual values:
  -s kernel name      `Linux`   (a Linux-like userland: scripts that branch on it take that path)
  -n node name        $HOSTNAME when set (the SSH server sets it), else `komputer`
  -r kernel release   `0.1.0-k` (the komputer version, marked K)
  -v kernel version   `#1 K shell`
  -m machine          the CPU architecture the appliance runs on (platform.machine(): binaries
                      an agent downloads must match it)
  -o operating system `GNU/Linux`
  -p -i               `unknown`, as Debian's coreutils (and left out of -a)
hostname prints the same node name. id/whoami read the shell's credential (the VFS uid/gid) and
name it from K's own user database (root and the agents, kfs.format.accounts), never the host's:
an id nobody has is printed as GNU prints it (whoami fails, id shows the bare number). nproc is
the number of CPUs available to the appliance process (OMP_NUM_THREADS overrides it and
OMP_THREAD_LIMIT caps it, as in GNU nproc).
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
from typing import TYPE_CHECKING

from kfs.format import accounts
from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

SYSNAME = "Linux"
RELEASE = "0.1.0-k"
VERSION = "#1 K shell"
OS_NAME = "GNU/Linux"
DEFAULT_HOST = "komputer"
_HELP = {"help": ("help", NONE), "version": ("version", NONE)}


def node_name(sh: ToolContext) -> str:
    return sh.get_param_or_none("HOSTNAME") or DEFAULT_HOST


@tool("whoami")
def whoami(sh: ToolContext, argv: list[str]) -> int:
    _, operands = parse(argv, "", _HELP)
    if operands:
        raise Usage(f"extra operand '{operands[0]}'")
    uid = sh.fs.cred.uid
    name = accounts(sh.fs.vfs.state).users.get(uid)
    if name is None:
        raise Fail(f"cannot find name for user ID {uid}")
    sh.out(name + "\n")
    return 0


@tool("id")
def id_(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "ugGnrz", {"user": ("u", NONE), "group": ("g", NONE), "groups": ("G", NONE),
                                            "name": ("n", NONE), "real": ("r", NONE), "zero": ("z", NONE),
                                            **_HELP})
    keys = {k for k, _ in opts}
    which = [k for k in "ugG" if k in keys]
    if len(which) > 1:
        raise Usage("cannot print \"only\" of more than one choice", hint=False)
    if not which and ({"n", "r"} & keys):
        raise Usage("cannot print only names or real IDs in default format", hint=False)
    if not which and "z" in keys:
        raise Usage("option --zero not permitted in default format", hint=False)
    name = "n" in keys
    end = "\0" if "z" in keys else "\n"
    cred = sh.fs.cred
    known = accounts(sh.fs.vfs.state)
    people: list[tuple[int, int, list[int]]] = []
    status = 0
    for user in operands or [None]:  # GNU id takes any number of users, reporting each
        if user is None:
            people.append((cred.uid, cred.gid, sorted(cred.groups - {cred.gid})))
            continue
        uid = known.uids.get(user)
        if uid is None and user.isdigit() and int(user) in known.users:  # `id 1000`, as GNU
            uid = int(user)
            user = known.users[uid]
        if uid is None:
            sh.write_err(f"id: '{user}': no such user\n")
            status = 1
            continue
        # each K account is in its own group alone: no supplementary groups
        people.append((uid, known.primary.get(user, uid), []))

    def named(table: dict[int, str], n: int, what: str) -> str:
        """The name of id `n`, or as GNU id -n: the number, an error, exit status 1."""
        nonlocal status
        found = table.get(n)
        if found is None:
            sh.write_err(f"id: cannot find name for {what} ID {n}\n")
            status = 1
            return str(n)
        return found

    def label(table: dict[int, str], n: int) -> str:
        """`1000(alice)`, or just `1000` for an id without a name, as GNU id's default format."""
        found = table.get(n)
        return f"{n}({found})" if found is not None else str(n)

    for uid, gid, groups in people:
        if which == ["u"]:
            sh.out((named(known.users, uid, "user") if name else str(uid)) + end)
        elif which == ["g"]:
            sh.out((named(known.groups, gid, "group") if name else str(gid)) + end)
        elif which == ["G"]:
            ids = [gid, *groups]
            shown = [named(known.groups, g, "group") if name else str(g) for g in ids]
            sh.out("".join(f + end for f in shown) if end == "\0" else " ".join(shown) + end)
        else:
            gs = ",".join(label(known.groups, g) for g in [gid, *groups])
            sh.out(f"uid={label(known.users, uid)} gid={label(known.groups, gid)} groups={gs}\n")
    return status


# Debian's hostname (net-tools) prints this on standard output for --help and bad options, exit 255
_HOSTNAME_USAGE = """\
Usage: hostname [-b] {hostname|-F file}         set host name (from file)
       hostname [-a|-A|-d|-f|-i|-I|-s|-y]       display formatted name
       hostname                                 display host name

       {yp,nis,}domainname {nisdomain|-F file}  set NIS domain name (from file)
       {yp,nis,}domainname                      display NIS domain name

       dnsdomainname                            display dns domain name

       hostname -V|--version|-h|--help          print info and exit

Program name:
       {yp,nis,}domainname=hostname -y
       dnsdomainname=hostname -d

Program options:
    -a, --alias            alias names
    -A, --all-fqdns        all long host names (FQDNs)
    -b, --boot             set default hostname if none available
    -d, --domain           DNS domain name
    -f, --fqdn, --long     long host name (FQDN)
    -F, --file             read host name or NIS domain name from given file
    -i, --ip-address       addresses for the host name
    -I, --all-ip-addresses all addresses for the host
    -s, --short            short host name
    -y, --yp, --nis        NIS/YP domain name

Description:
   This command can get or set the host name or the NIS domain name. You can
   also get the DNS domain or the FQDN (fully qualified domain name).
   Unless you are using bind or NIS for host lookups you can change the
   FQDN (Fully Qualified Domain Name) and the DNS domain name (which is
   part of the FQDN) in the /etc/hosts file.
"""


@tool("hostname")
def hostname(sh: ToolContext, argv: list[str]) -> int:
    try:
        opts, operands = parse(argv, "sf", {"short": ("s", NONE), "fqdn": ("f", NONE), "long": ("f", NONE),
                                            **_HELP})
    except Usage as e:
        sh.write_err(f"hostname: {e.message}\n")
        sh.out(_HOSTNAME_USAGE)
        return 255
    if any(k == "help" for k, _ in opts):
        sh.out(_HOSTNAME_USAGE)
        return 255
    if operands:
        raise Fail("you must be root to change the host name")
    name = node_name(sh)
    if any(k == "s" for k, _ in opts):
        name = name.split(".")[0]
    sh.out(name + "\n")
    return 0


_UNAME = {"all": ("a", NONE), "kernel-name": ("s", NONE), "nodename": ("n", NONE),
          "kernel-release": ("r", NONE), "kernel-version": ("v", NONE), "machine": ("m", NONE),
          "processor": ("p", NONE), "hardware-platform": ("i", NONE), "operating-system": ("o", NONE),
          **_HELP}


@tool("uname")
def uname(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "asnrvmpio", _UNAME)
    if operands:
        raise Usage(f"extra operand '{operands[0]}'")
    keys = {k for k, _ in opts}
    if "a" in keys:
        keys |= set("snrvmo")
    if not keys:
        keys = {"s"}
    machine = platform.machine() or "unknown"
    # Debian's coreutils: processor and hardware platform are "unknown", which -a leaves out
    fields = [("s", SYSNAME), ("n", node_name(sh)), ("r", RELEASE), ("v", VERSION), ("m", machine),
              ("p", "unknown" if "p" in keys and "a" not in keys else None),
              ("i", "unknown" if "i" in keys and "a" not in keys else None), ("o", OS_NAME)]
    sh.out(" ".join(v for k, v in fields if k in keys and v is not None) + "\n")
    return 0


def _omp(value: str | None) -> int:
    """An OMP_* variable as gnulib reads it: the first of a comma list, 0 when invalid."""
    m = re.fullmatch(r"\s*(\d+)\s*(,.*)?", value or "", re.S)
    return int(m.group(1)) if m else 0


@tool("nproc")
def nproc(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "", {"all": ("all", NONE), "ignore": ("ignore", REQUIRED), **_HELP})
    if operands:
        raise Usage(f"extra operand '{operands[0]}'")
    count = os.cpu_count() or 1
    if not any(k == "all" for k, _ in opts):
        with contextlib.suppress(AttributeError, OSError):
            count = len(os.sched_getaffinity(0))
        # gnulib's num_processors: OMP_NUM_THREADS overrides, OMP_THREAD_LIMIT caps
        env = sh.exported_env()
        limit = _omp(env.get("OMP_THREAD_LIMIT"))
        threads = _omp(env.get("OMP_NUM_THREADS"))
        count = threads or count
        if limit:
            count = min(count, limit)
    for k, v in opts:
        if k == "ignore":
            if not v.isdigit():
                raise Fail(f"invalid number: '{v}'")
            count = max(1, count - int(v))
    sh.out(f"{count}\n")
    return 0

