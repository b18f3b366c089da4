"""groups: the groups a user is in, named from K's user database, as GNU coreutils prints them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kfs.format import accounts
from kshell.core.options import NONE, parse, tool

if TYPE_CHECKING:
    from kshell.core.context import ToolContext


@tool("groups")
def groups(sh: ToolContext, argv: list[str]) -> int:
    opts, users = parse(argv, "", {"help": ("help", NONE), "version": ("version", NONE)})
    if opts:
        sh.out("Usage: groups [OPTION]... [USERNAME]...\n" if opts[0][0] == "help" else "groups (GNU coreutils) 9.1\n")
        return 0
    known = accounts(sh.fs.vfs.state)

    def names(ids: list[int]) -> str:
        return " ".join(known.groups.get(g, str(g)) for g in ids)

    if not users:
        cred = sh.fs.cred
        sh.out(names([cred.gid, *sorted(cred.groups - {cred.gid})]) + "\n")
        return 0
    status = 0
    for user in users:
        if user not in known.uids:
            sh.write_err(f"groups: '{user}': no such user\n")
            status = 1
            continue
        # each K account is in its own group alone: no supplementary groups
        sh.out(f"{user} : {names([known.primary.get(user, known.uids[user])])}\n")
    return status
