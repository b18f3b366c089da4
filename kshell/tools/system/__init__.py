"""Environment and identity tools: env, printenv, id, whoami, hostname, uname, date, which, help,
nproc."""

from __future__ import annotations

from kshell.builtins import Builtin
from kshell.tools.system import date, env, identity, which

TOOLS: dict[str, Builtin] = {
    "env": env.env,
    "printenv": env.printenv,
    "id": identity.id_,
    "whoami": identity.whoami,
    "hostname": identity.hostname,
    "uname": identity.uname,
    "nproc": identity.nproc,
    "date": date.date,
    "which": which.which,
    "help": which.help_,
}
