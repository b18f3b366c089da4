"""`komputer mount`: serve a KState as a FUSE filesystem until unmounted or signalled.

`pyfuse3.init` mounts, `trio.run(pyfuse3.main)` answers requests, `pyfuse3.close` always runs
in `finally` (so SIGINT and SIGTERM unmount cleanly). A mount left behind by a daemon that
died (stat says ENOTCONN) is cleared with `fusermount3 -uz` before mounting again. Without
`--foreground` the daemon forks and the command returns once the mount answers requests.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger("kfs.fuse")

AgentViewOf = Callable[[Any, int | None], Any]
"""(the daemon's KState, the fork served or None) -> kfs.fuse.operations.AgentView: one agent's
credentials and write policy, decided by the caller (kshell.view: kfs loads no image code, so
it neither judges a write hook nor decides a session's view itself); MountError when it cannot."""

PROG = "komputer mount"
READAHEAD_KB = 1024  # the kernel's default is 128 KiB; FUSE requests carry up to 1 MiB
# The kernel caps a FUSE mount's dirty pages at 1% of the dirty limit and throttles its
# writers early ("strict limit"), against untrusted or stuck daemons. K's daemon is neither:
# under the writeback cache a writer may fill up to this share before it waits.
DIRTY_RATIO = 20
FUSE_CONF = Path("/etc/fuse.conf")
BASE_OPTIONS = frozenset({"default_permissions", "subtype=kfs"})
# K's own -o option, not libfuse's: the kernel's writeback cache (kfs/fuse/operations.py).
# Small writes and `tar x` get faster, creates slower (bench/fs.py); but the kernel then keeps a
# file's size while it knows the file: a file another K process shrinks keeps its old size in a
# mount that holds it open, and a drive's files, which change with no feed the mount could
# follow, keep the size the mount last saw. Off unless asked for.
WRITEBACK = "writeback"


class MountError(Exception):
    """The mount cannot be made; the message says why and what to do."""


def mount_options(requested: Iterable[str]) -> set[str]:
    """The libfuse options for a mount: K's base set plus each `-o a,b,...` given."""
    options = set(BASE_OPTIONS)
    for group in requested:
        options.update(opt.strip() for opt in group.split(",") if opt.strip())
    return options


def check_allow_other(options: set[str], fuse_conf: Path = FUSE_CONF) -> None:
    """allow_other needs root, or `user_allow_other` on a line of its own in /etc/fuse.conf."""
    if "allow_other" not in options or os.geteuid() == 0:
        return
    try:
        lines = fuse_conf.read_text().splitlines()
    except OSError:
        lines = []
    if "user_allow_other" not in (line.strip() for line in lines):
        raise MountError(
            f"-o allow_other is refused for non-root users unless {fuse_conf} has a line "
            "'user_allow_other' (add it as root, or mount as root)"
        )


def clear_stale_mount(mountpoint: Path, say: Callable[[str], None] = print) -> bool:
    """Unmount what a dead daemon left at `mountpoint`; returns whether there was one.

    statfs is the probe because the kernel never answers it from its caches: on a mount
    whose daemon died it fails with ENOTCONN even while stat still shows cached attributes.
    A live mount there is an error: K never stacks a second mount on the same directory.
    """
    try:
        os.statvfs(mountpoint)
    except OSError as e:
        if e.errno != errno.ENOTCONN:
            raise MountError(f"{mountpoint}: {e.strerror}") from None
        result = subprocess.run(
            ["fusermount3", "-uz", str(mountpoint)], capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise MountError(
                f"{mountpoint}: stale mount, and fusermount3 -uz failed: {result.stderr.strip()}"
            ) from None
        say(f"{PROG}: cleared a stale mount at {mountpoint} (its daemon had died)")
        return True
    if os.path.ismount(mountpoint):
        raise MountError(f"{mountpoint}: already a mount point (unmount it first: fusermount3 -u {mountpoint})")
    if not mountpoint.is_dir():
        raise MountError(f"{mountpoint}: Not a directory")
    return False


def mount_device(mountpoint: Path, mountinfo: Path = Path("/proc/self/mountinfo")) -> str | None:
    """The "major:minor" of the filesystem mounted at `mountpoint`, read without touching it."""
    where = str(mountpoint)
    device = None
    for line in mountinfo.read_text().splitlines():
        fields = line.split()
        if len(fields) > 4 and unescape(fields[4]) == where:
            device = fields[2]  # the last one listed is the one on top
    return device


def unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in a path as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def raise_readahead(mountpoint: Path, kib: int = READAHEAD_KB, sysfs: Path = Path("/sys/class/bdi")) -> bool:
    """Let the kernel read ahead `kib` per request on this mount (root only); returns whether it did.

    Sequential reads then arrive as 1 MiB requests instead of 128 KiB ones: an eighth of
    the round trips for the same bytes. Anything in the way (not root, no sysfs) leaves
    the kernel's default, which is only slower. Call it once FUSE's INIT has been answered:
    the kernel lowers read-ahead to what the INIT reply allows (its own default).
    """
    device = mount_device(mountpoint)
    if device is None:
        return False
    try:
        (sysfs / device / "read_ahead_kb").write_text(f"{kib}\n")
    except OSError as e:
        log.debug("read-ahead stays at the kernel's default: %s", e)
        return False
    return True


def raise_dirty_limit(mountpoint: Path, ratio: int = DIRTY_RATIO, sysfs: Path = Path("/sys/class/bdi")) -> bool:
    """Let writers on this mount dirty up to `ratio`% of the kernel's dirty limit before they are
    throttled, checked against the global limits only (no strict per-mount limit); returns
    whether it did (root only, like `raise_readahead`, and after INIT). With the writeback
    cache a sequential write then runs ahead of the daemon instead of waiting on its share."""
    device = mount_device(mountpoint)
    if device is None:
        return False
    try:
        (sysfs / device / "max_ratio").write_text(f"{ratio}\n")
        (sysfs / device / "strict_limit").write_text("0\n")
    except OSError as e:
        log.debug("the dirty limit stays at the kernel's default: %s", e)
        return False
    return True


def serve(state_dir: Path, mountpoint: Path, options: set[str], ready: Callable[[], None] | None = None,
          agent: tuple[str, AgentViewOf] | None = None, fork: int | None = None) -> None:
    """Mount, answer requests until unmounted or SIGINT/SIGTERM, then unmount. `agent`:
    (name, what makes its view) for one agent's view (its uid for every request, its policy),
    made here, on the daemon's own state (LMDB handles never cross a fork); `fork`: a fork's
    tree (kfs.forks) instead of the state's."""
    import pyfuse3
    import trio

    from kfs.fuse.coherence import ChangeFollower
    from kfs.fuse.loop import one_worker
    from kfs.fuse.operations import Operations
    from kfs.journal import append_event
    from kfs.kstate import KState
    from kfs.vfs import VFS

    state = KState(state_dir, create=fork is None)
    record = None
    if fork is not None:
        from kfs import forks

        try:
            tree = forks.view(state, fork)
        except forks.ForkError as e:
            state.close()
            raise MountError(str(e)) from None
        record = tree.record
        vfs = VFS(tree, by="fuse")  # "fuse fork N" in its receipts
    else:
        vfs = VFS(state, by="fuse")
    try:
        from kfs.runtime.rules import fork_policy

        # a restricted fork's mount writes only what its mode lets a session of it write
        ops = Operations(vfs, agent=agent[1](state, fork) if agent is not None else None,
                         policy=fork_policy(state, record) if record is not None else None)
    except MountError:
        state.close()
        raise
    if WRITEBACK in options:
        options = options - {WRITEBACK}
        ops.enable_writeback_cache = True  # pyfuse3 reads it when it answers INIT
    try:
        with one_worker():  # pyfuse3 makes its worker's lock here
            pyfuse3.init(ops, str(mountpoint), options)
    except RuntimeError as e:
        state.close()
        raise MountError(f"{mountpoint}: mount failed ({e}); see the messages above") from None
    where = {"path": str(mountpoint), "pid": os.getpid(), "front": "fuse",
             **({"agent": agent[0]} if agent is not None else {}), **({"fork": fork} if fork is not None else {})}
    state.write(lambda txn: append_event(txn, "mount.start", options=sorted(options), **where))
    tuned = False

    def chores() -> None:  # the coherence thread runs this every poll, between its own work
        nonlocal tuned
        if not tuned and ops.initialised:  # the kernel lowers read-ahead when it reads INIT's reply
            tuned = True
            raise_readahead(mountpoint)
            if ops.enable_writeback_cache:
                raise_dirty_limit(mountpoint)
        ops.tick()

    follower = ChangeFollower(vfs, ops.known, chores=chores, changed=ops.changed,
                              name_of=ops.name_of if ops.enable_writeback_cache else None)
    ops.coherence = follower.position
    unmount = False
    try:
        follower.start()
        if ready is not None:
            ready()
        log.info("serving %s at %s", state_dir, mountpoint)
        with one_worker():
            trio.run(_main_loop)
        unmount = True
    finally:
        follower.stop()
        try:
            ops.shutdown()
            state.write(lambda txn: append_event(txn, "mount.stop", **where))
        finally:
            pyfuse3.close(unmount=unmount)
            state.close()
    log.info("unmounted %s", mountpoint)


async def _main_loop() -> None:
    import pyfuse3
    import trio

    from kfs.fuse.loop import serve_requests

    async def stop_on_signal() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                log.info("%s: unmounting", signal.Signals(signum).name)
                pyfuse3.terminate()
                return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop_on_signal)
        await serve_requests()
        nursery.cancel_scope.cancel()


def daemonise(run: Callable[[Callable[[], None]], None], mountpoint: Path, log_file: str | None) -> int:
    """Fork; the child serves, the parent returns 0 once the mount answers (1 if it failed)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            message = pipe.read().decode(errors="replace")
        if message != "ok":
            print(message.strip() or f"{PROG}: the daemon died before mounting", file=sys.stderr)
            return 1
        os.stat(mountpoint)  # returns once the daemon's main loop answers
        print(f"{PROG}: mounted at {mountpoint} (daemon pid {pid})")
        return 0
    os.close(read_end)
    os.setsid()
    os.chdir("/")
    null = os.open(os.devnull, os.O_RDWR)
    out = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640) if log_file else null
    os.dup2(null, 0)

    told = False

    def ready() -> None:
        nonlocal told
        os.write(write_end, b"ok")
        os.close(write_end)
        told = True
        os.dup2(out, 1)
        os.dup2(out, 2)

    status = 0
    try:
        run(ready)
    except BaseException as e:
        status = 1
        if told:
            log.exception("the daemon failed")
        else:
            os.write(write_end, f"{PROG}: {e}".encode())
    os._exit(status)


def main(
    state_dir: Path, mountpoint: Path, requested: list[str], *, foreground: bool, log_file: str | None, debug: bool,
    agent: str | None = None, view_of: AgentViewOf | None = None, fork: int | None = None,
) -> int:
    """`komputer mount`; with `agent`, that agent's view, which `view_of` makes (AgentViewOf)."""
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.INFO,
        format="%(asctime)s komputer mount[%(process)d] %(levelname)s %(message)s",
        filename=log_file if foreground else None,
    )
    state_dir = state_dir.resolve()  # the daemon works from /: a relative path would name another state
    options = mount_options(requested)
    view = (agent, view_of) if agent is not None and view_of is not None else None
    if view is not None:  # the daemon checks as the agent: the kernel must not check as the caller
        options.discard("default_permissions")
    if not any(opt.startswith("fsname=") for opt in options):
        # what mount(8) and df show as the source; delegation looks for the admin mount's name
        options.add(f"fsname=kfs-agent:{agent}:{state_dir}" if view else
                    f"fsname=kfs-fork:{fork}:{state_dir}" if fork is not None else f"fsname=kfs:{state_dir}")
    try:
        check_allow_other(options)
        mountpoint = mountpoint.absolute()
        clear_stale_mount(mountpoint)
        if foreground:
            serve(state_dir, mountpoint, options, ready=lambda: print(f"{PROG}: mounted at {mountpoint}", flush=True),
                  agent=view, fork=fork)
            return 0
        return daemonise(lambda ready: serve(state_dir, mountpoint, options, ready, agent=view, fork=fork),
                         mountpoint, log_file)
    except MountError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
