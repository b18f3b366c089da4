"""quota: the session's user's disk use and limit on K's filesystem, as quota-tools prints them.

K keeps a byte limit and a file limit per agent (kfs.kstate.quota), both hard limits: there is
no soft limit, so no grace period. Blocks are KiB, rounded up, as quota-tools shows them; the filesystem is "kfs", the
name df gives it. Options: -s (--human-readable), -v (--verbose: the line even with no limit),
-q (--quiet: only "Block limit reached on kfs" or "File limit reached on kfs" at a limit), -u (users; the default).
A user named as an operand is reported to root only, as quota-tools answers non-root callers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kfs.format import accounts
from kfs.kstate import quota as quotas
from kshell.core.options import NONE, Fail, Usage, parse, tool

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

DEVICE = "kfs"
LONG = {"human-readable": ("s", NONE), "verbose": ("v", NONE), "quiet": ("q", NONE), "user": ("u", NONE),
        "group": ("g", NONE)}


@tool("quota")
def quota(sh: ToolContext, argv: list[str]) -> int:
    opts, operands = parse(argv, "svqug", LONG)
    keys = {k for k, _ in opts}
    if "g" in keys:
        raise Usage("group quotas are not kept: K limits each user (agent) alone")
    cred = sh.fs.cred
    known = accounts(sh.fs.vfs.state)
    who: list[tuple[str, int]] = []
    for user in operands or [known.users.get(cred.uid, str(cred.uid))]:
        uid = known.uids.get(user)
        if uid is None and user.isdigit():
            uid = int(user)
        if uid is None:
            raise Fail(f"user {user} does not exist.")
        if uid != cred.uid and not cred.is_root:
            raise Fail(f"{user} (uid {uid}): Permission denied")
        who.append((known.users.get(uid, str(uid)), uid))
    for name, uid in who:
        with sh.fs.vfs.state.read() as txn:
            used, limit = quotas.total_use(txn, uid), quotas.limit(txn, uid)
            files, most = quotas.usage(txn, uid, quotas.FILES), quotas.limit(txn, uid, quotas.FILES)
        full = limit is not None and used >= limit
        many = most is not None and files >= most
        if "q" in keys:
            if full:
                sh.out(f"\tBlock limit reached on {DEVICE}\n")
            if many:
                sh.out(f"\tFile limit reached on {DEVICE}\n")
            continue
        sh.out(f"Disk quotas for user {name} (uid {uid}): ")
        if limit is None and most is None and "v" not in keys:
            sh.out("none\n")
            continue
        sh.out(f"\n{'Filesystem':>15}{'blocks':>8} {'quota':>7}{'limit':>8}{'grace':>8}{'files':>8} "
               f"{'quota':>7}{'limit':>8}{'grace':>8}\n")

        def size(n: int) -> str:
            return human_blocks(-(-n // 1024)) if "s" in keys else str(-(-n // 1024))

        shown_limit = size(limit) if limit is not None else size(0)
        sh.out(f"{DEVICE:>15}{size(used):>8}{'*' if full else ' '}{size(0):>7}{shown_limit:>8}{'':>8}"
               f"{files:>8}{'*' if many else ' '}{'0':>7}{most or 0:>8}{'':>8}\n")
    return 0


def human_blocks(kib: int) -> str:
    """quota-tools' space2str: KiB in the largest unit that still leaves at least 100 of it
    (4 GiB is 4096M, 100 MiB is 102400K), rounded up, with its letter."""
    for power, suffix in ((3, "T"), (2, "G"), (1, "M")):
        if kib >= (1 << (10 * power)) * 100:
            return f"{-(-kib // (1 << (10 * power)))}{suffix}"
    return f"{kib}K"
