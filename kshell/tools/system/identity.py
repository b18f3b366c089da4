"""id, whoami, hostname, uname, nproc: who and where the agent is, as the appliance presents it.

K is not the host, so uname reports the appliance's own virtual values:
  -s kernel name      `Linux`   (a Linux-like userland: scripts that branch on it take that path)
  -n node name        $HOSTNAME when set (the SSH server sets it), else `komputer`
  -r kernel release   `0.1.0-k` (the komputer version, marked K)
  -v kernel version   `#1 K shell`
  -m machine          the CPU architecture the appliance runs on (platform.machine(): binaries
                      an agent downloads must match it)
  -o operating system `GNU/Linux`
hostname prints the same node name. id/whoami read the shell's credential (the VFS uid/gid) and
name it as `ls -l` does. nproc is the number of CPUs available to the appliance process.
"""

from __future__ import annotations

import contextlib
import os
import platform
from typing import TYPE_CHECKING

from kfs.format import group_name, user_name
from kshell.tools.text.options import NONE, REQUIRED, Fail, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

SYSNAME = "Linux"
RELEASE = "0.1.0-k"
VERSION = "#1 K shell"
OS_NAME = "GNU/Linux"
DEFAULT_HOST = "komputer"
_HELP = {"help": ("help", NONE), "version": ("version", NONE)}


def node_name(sh: Interp) -> str:
    return sh.get_param_or_none("HOSTNAME") or DEFAULT_HOST


@tool("whoami")
def whoami(sh: Interp, argv: list[str]) -> int:
    _, operands = parse(argv, "", _HELP)
    if operands:
        raise Usage(f"extra operand '{operands[0]}'")
    sh.out(user_name(sh.fs.cred.uid) + "\n")
    return 0


@tool("id")
def id_(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "ugGnrz", {"user": ("u", NONE), "group": ("g", NONE), "groups": ("G", NONE),
                                            "name": ("n", NONE), "real": ("r", NONE), "zero": ("z", NONE),
                                            **_HELP})
    keys = {k for k, _ in opts}
    if len(operands) > 1:
        raise Usage(f"extra operand '{operands[1]}'")
    cred = sh.fs.cred
    uid, gid, groups = cred.uid, cred.gid, sorted(cred.groups - {cred.gid})
    if operands:
        import pwd

        try:
            pw = pwd.getpwnam(operands[0])
        except KeyError:
            raise Fail(f"'{operands[0]}': no such user") from None
        uid, gid, groups = pw.pw_uid, pw.pw_gid, []
    which = [k for k in "ugG" if k in keys]
    if len(which) > 1:
        raise Usage("cannot print \"only\" of more than one choice", hint=False)
    if not which and ({"n", "r"} & keys):
        raise Usage("cannot print only names or real IDs in default format", hint=False)
    name = "n" in keys
    if which == ["u"]:
        sh.out((user_name(uid) if name else str(uid)) + "\n")
    elif which == ["g"]:
        sh.out((group_name(gid) if name else str(gid)) + "\n")
    elif which == ["G"]:
        ids = [gid, *groups]
        sh.out(" ".join(group_name(g) if name else str(g) for g in ids) + "\n")
    else:
        gs = ",".join(f"{g}({group_name(g)})" for g in [gid, *groups])
        sh.out(f"uid={uid}({user_name(uid)}) gid={gid}({group_name(gid)}) groups={gs}\n")
    return 0


@tool("hostname")
def hostname(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "sf", {"short": ("s", NONE), "fqdn": ("f", NONE), **_HELP})
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
def uname(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "asnrvmpio", _UNAME)
    if operands:
        raise Usage(f"extra operand '{operands[0]}'")
    keys = {k for k, _ in opts}
    if "a" in keys:
        keys |= set("snrvmo")
    if not keys:
        keys = {"s"}
    machine = platform.machine() or "unknown"
    fields = [("s", SYSNAME), ("n", node_name(sh)), ("r", RELEASE), ("v", VERSION), ("m", machine),
              ("p", machine if "p" in keys and "a" not in keys else None),
              ("i", machine if "i" in keys and "a" not in keys else None), ("o", OS_NAME)]
    sh.out(" ".join(v for k, v in fields if k in keys and v is not None) + "\n")
    return 0


@tool("nproc")
def nproc(sh: Interp, argv: list[str]) -> int:
    opts, operands = parse(argv, "", {"all": ("all", NONE), "ignore": ("ignore", REQUIRED), **_HELP})
    if operands:
        raise Usage(f"extra operand '{operands[0]}'")
    count = os.cpu_count() or 1
    if not any(k == "all" for k, _ in opts):
        with contextlib.suppress(AttributeError, OSError):
            count = len(os.sched_getaffinity(0))
    for k, v in opts:
        if k == "ignore":
            if not v.isdigit():
                raise Fail(f"invalid number: '{v}'")
            count = max(1, count - int(v))
    sh.out(f"{count}\n")
    return 0

