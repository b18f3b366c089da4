"""chown and chgrp (-R -h -H -L -P -c -v -f --from --reference) on K's files, as GNU coreutils.

Names are K's (root, each agent and its own group: kfs.format.accounts), never the host's; a
number is taken as an id. Whether a change is allowed is the VFS's rule, Linux's: root may give
a file to anyone, an owner may only move it to a group it belongs to, everyone else gets EPERM
("changing ownership of 'f': Operation not permitted"). Messages and verbose lines are GNU's:
the new owner is shown as it was given, the old one by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kfs.format import accounts
from kfs.vfs.inode import Inode
from kshell.tools.files.names import fail, join
from kshell.core.options import NONE, REQUIRED, Fail, Usage, parse, tool
from kshell.tools.quoting import shell_quote

if TYPE_CHECKING:
    from kshell.core.context import ToolContext

_LONG = {"changes": ("c", NONE), "silent": ("f", NONE), "quiet": ("f", NONE), "verbose": ("v", NONE),
         "recursive": ("R", NONE), "no-dereference": ("h", NONE), "dereference": ("deref", NONE),
         "reference": ("ref", REQUIRED), "from": ("from", REQUIRED), "preserve-root": ("pr", NONE),
         "no-preserve-root": ("npr", NONE), "help": ("help", NONE), "version": ("version", NONE)}


def _user(sh: ToolContext, text: str) -> int:
    known = accounts(sh.fs.vfs.state)
    if text.startswith("+") and text[1:].isdigit():
        return int(text[1:])
    if text in known.uids:
        return known.uids[text]
    if text.isdigit():
        return int(text)
    raise Fail(f"invalid user: {shell_quote(text)}")


def _group(sh: ToolContext, text: str, shown: str) -> int:
    known = accounts(sh.fs.vfs.state)
    if text.startswith("+") and text[1:].isdigit():
        return int(text[1:])
    if text in known.gids:
        return known.gids[text]
    if text.isdigit():
        return int(text)
    raise Fail(f"invalid group: {shell_quote(shown)}")


def parse_spec(sh: ToolContext, spec: str) -> tuple[int | None, int | None, str | None, str | None]:
    """OWNER[:[GROUP]] as GNU's parse_user_spec: (uid, gid, user as given, group as shown);
    `user:` takes the user's login group."""
    user, colon, group = spec.partition(":")
    uid = _user(sh, user) if user else None
    gid = None
    group_shown: str | None = group or None
    if group:
        gid = _group(sh, group, spec)
    elif colon and user:
        known = accounts(sh.fs.vfs.state)
        name = known.users.get(uid) if uid is not None else None
        if name is None:
            raise Fail(f"invalid spec: {shell_quote(spec)}")
        gid = known.primary.get(name, uid)
        group_shown = known.groups.get(gid, str(gid))
    return uid, gid, user or None, group_shown


def _owners(sh: ToolContext, prog: str, argv: list[str], group_only: bool) -> int:
    opts, ops = parse(argv, "cfvRhHLP", _LONG)
    given = dict(opts)
    if "help" in given:
        sh.out(f"Usage: {prog} [OPTION]... {'GROUP' if group_only else '[OWNER][:[GROUP]]'} FILE...\n")
        return 0
    if "version" in given:
        sh.out(f"{prog} (GNU coreutils) 9.1\n")
        return 0
    known = accounts(sh.fs.vfs.state)
    recurse = "R" in given
    traversal = "P"
    for k, _ in opts:
        if k in "HLP":
            traversal = k
    deref = "h" not in given and (not recurse or traversal != "P" or "deref" in given)
    if recurse and "deref" in given and traversal == "P":
        raise Usage("-R --dereference requires either -H or -L", hint=False)
    ref = given.get("ref")
    if ref is not None:
        if not ops:
            raise Usage("missing operand")
        try:
            inode = sh.fs.stat(ref)
        except OSError as e:
            raise Fail(f"failed to get attributes of {shell_quote(ref)}: {e.strerror}") from None
        uid = None if group_only else inode.uid
        gid = inode.gid
        user_shown = None if group_only else known.users.get(inode.uid, str(inode.uid))
        group_shown: str | None = known.groups.get(inode.gid, str(inode.gid))
    else:
        if not ops:
            raise Usage("missing operand")
        spec = ops.pop(0)
        if not ops:
            raise Usage(f"missing operand after {shell_quote(spec)}")
        if group_only:
            uid, user_shown = None, None
            gid = _group(sh, spec, spec) if spec else None
            group_shown = spec or None
        else:
            uid, gid, user_shown, group_shown = parse_spec(sh, spec)
    want_uid = want_gid = None
    if "from" in given:
        want_uid, want_gid, _, _ = parse_spec(sh, given["from"])
    status = 0

    def spec_of(user: str | None, group: str | None) -> str:
        return f"{user}:{group}" if user and group else (user or group or "")

    def report(path: str, before: Inode, changed: bool) -> None:
        if "v" not in given and not ("c" in given and changed):
            return
        name = shell_quote(path)
        new = spec_of(user_shown, group_shown)
        old = spec_of(known.users.get(before.uid, str(before.uid)) if user_shown else None,
                      known.groups.get(before.gid, str(before.gid)) if group_shown else None)
        if changed:
            what = "ownership" if user_shown else "group"
            sh.out(f"changed {what} of {name} from {old} to {new}\n" if user_shown or group_shown
                   else f"no change to ownership of {name}\n")
        elif user_shown:
            sh.out(f"ownership of {name} retained as {new}\n")
        elif group_shown:
            sh.out(f"group of {name} retained as {new}\n")
        else:
            sh.out(f"ownership of {name} retained\n")

    def change(path: str, top: bool) -> None:
        nonlocal status
        # without -R: through a symbolic link unless -h; with -R, as -H/-L/-P say
        follow = deref if not recurse else (traversal in "HL" if top else traversal == "L")
        try:
            inode = sh.fs.stat(path) if follow else sh.fs.lstat(path)
        except OSError as e:
            if "f" not in given:
                fail(sh, prog, f"cannot access {shell_quote(path)}", e)
            status = 1
            return
        if recurse and inode.is_dir:
            try:
                names = sorted(n for n, _ in sh.fs.scandir(path))
            except OSError as e:
                fail(sh, prog, f"cannot read directory {shell_quote(path)}", e)
                status = 1
                names = []
            for child in names:
                change(join(path, child), False)
        if (want_uid is not None and inode.uid != want_uid) or (want_gid is not None and inode.gid != want_gid):
            return
        try:
            if uid is not None or gid is not None:
                sh.fs.chown(path, uid, gid, follow=follow)
        except OSError as e:
            if "f" not in given:
                fail(sh, prog, f"changing {'ownership' if uid is not None else 'group'} of {shell_quote(path)}", e)
            status = 1
            return
        changed = (uid is not None and uid != inode.uid) or (gid is not None and gid != inode.gid)
        report(path, inode, changed)

    for path in ops:
        change(path, True)
    return status


@tool("chown")
def chown(sh: ToolContext, argv: list[str]) -> int:
    return _owners(sh, "chown", argv, False)


@tool("chgrp")
def chgrp(sh: ToolContext, argv: list[str]) -> int:
    return _owners(sh, "chgrp", argv, True)
