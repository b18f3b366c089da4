"""Running one delegated program: a descendant of the session's worker (so the worker's cgroup
bounds it), wired to K's streams, stopped, continued and ended by K's signals. A warm sandbox's
launcher starts most (kshell.delegate.launcher: the program leads a process group of its own);
a cold sandbox (below) or the ssh client the others.

Bytes flow through pipes pumped by threads: the program's stdin from the K stream at fd 0,
its stdout and stderr into fds 1 and 2 (one pipe when both name the same stream, so `2>&1`
keeps the order). A K signal (a job's `kill`, `timeout`, Ctrl-C) goes to the program's own
process group: bwrap's `--new-session` makes the program a session leader in the outer pid
namespace, and `--info-fd` names its parent (bwrap's init in the sandbox), whose child it is.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from kshell.core.errors import SigPipe
from kshell.exec.streams import Cancel, InStream, NullStream, Stream
from kshell.limits import LimitExceeded

if TYPE_CHECKING:
    from kshell.delegate.network import Outside
    from kshell.delegate.terminal import Terminal
    from kshell.exec.interp import Interp

CHUNK = 1 << 18
KILL_GRACE = 1.0  # seconds between the signal and SIGKILL of the whole sandbox


class Started(Protocol):
    """A started program as `run` waits on it: a cold sandbox's (or the ssh client's) Program,
    or a program a warm sandbox's launcher started (kshell.delegate.launcher.Launched)."""

    terminal: Terminal | None

    def fileno(self) -> int: ...  # readable once it has ended
    def status(self) -> int: ...  # its status then (128+N: signal N)
    def signal(self, sig: int) -> None: ...  # to its process group
    def kill(self) -> None: ...  # it and everything it started
    def close(self) -> None: ...


class Program:
    """One running sandbox: bwrap (the monitor, our child) and the sandbox's own session.

    bwrap's `--new-session` makes its init in the sandbox (`child-pid` on `--info-fd`) the
    leader of a new session and process group, which the program joins: a signal to that group
    reaches the program (init, pid 1 of the sandbox, ignores what it has no handler for), and
    SIGKILL to it ends the whole sandbox. Without that group (not started yet, or the ssh
    remote) signals go to the monitor's group."""

    def __init__(self, argv: list[str], *, env: dict[str, str], uid: int | None, gid: int | None,
                 info: tuple[int, int], fds: tuple[int, int, int], terminal: Terminal | None = None,
                 ctty: bool = False, block: tuple[int, int] | None = None, keep: tuple[int, ...] = ()) -> None:
        self.info_r, info_w = info
        self.terminal = terminal
        self.outside: Outside | None = None
        self._info = b""
        self._group = 0
        self._exited = -1
        kwargs: dict = {}
        if uid is not None:
            kwargs = {"user": uid, "group": gid, "extra_groups": []}
        if ctty:  # `setsid --ctty`: the pty (stdin) is the controlling terminal of what runs here
            argv = ["setsid", "--ctty", *argv]
        try:
            self.proc = subprocess.Popen(argv, stdin=fds[0], stdout=fds[1], stderr=fds[2], env=env, cwd="/",
                                         pass_fds=(info_w, *keep) if block is None else (info_w, block[0], *keep),
                                         start_new_session=not ctty, close_fds=True, **kwargs)
        except BaseException:
            if block is not None:
                os.close(block[1])
            raise
        finally:
            os.close(info_w)
            if block is not None:
                os.close(block[0])
        if block is not None:
            self._connect(block[1])

    def _connect(self, block_w: int) -> None:
        """A networked sandbox: its namespace gets its way out (kshell.delegate.network) while
        bwrap waits on `block_w`, then the program runs; a sandbox that cannot have it ends."""
        from kshell.delegate.network import Outside

        try:
            pid = self.group(30.0)
            if not pid:
                raise OSError("bubblewrap did not start its sandbox")
            self.outside = Outside(pid)
            os.write(block_w, b"1")
        except BaseException:
            self.kill()
            self.proc.wait()
            self.close()
            raise
        finally:
            os.close(block_w)

    def group(self, wait: float = 0.0) -> int:
        """The sandbox's process group (0 while unknown): bwrap's `child-pid`, from the JSON it
        writes on `--info-fd` (read until it parses: it may come in pieces)."""
        deadline = time.monotonic() + wait
        while not self._group and _readable(self.info_r, max(0.0, deadline - time.monotonic())):
            try:
                chunk = os.read(self.info_r, 4096)
            except OSError:
                break
            if not chunk:
                break
            self._info += chunk
            with contextlib.suppress(ValueError, KeyError, TypeError):
                self._group = int(json.loads(self._info)["child-pid"])
        return self._group

    def signal(self, sig: int) -> None:
        shown = self.terminal.foreground() if self.terminal is not None else 0
        for pgid in (shown or self.group(0.2), self.proc.pid):
            if pgid:
                try:
                    os.killpg(pgid, sig)
                    return
                except ProcessLookupError:
                    continue

    def kill(self) -> None:
        for pgid in (self.group(), self.proc.pid):
            if pgid:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGKILL)

    def end_sandbox(self) -> None:
        """After the monitor has ended: bwrap's init can outlive it (its parent-death signal does
        not always hold), keeping the program's pipes open; whatever is left of the sandbox goes.
        The group is killed only while its leader lives, so its id cannot have been reused."""
        group = self.group()
        if not group:
            return
        try:
            leader = os.pidfd_open(group)
        except OSError:
            return  # gone already
        try:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        finally:
            os.close(leader)

    def fileno(self) -> int:
        """Readable the moment the monitor ends (a pidfd: no polling delay)."""
        if self._exited < 0:
            self._exited = os.pidfd_open(self.proc.pid)
        return self._exited

    def status(self) -> int:
        """The monitor's status once it has ended, and whatever is left of the sandbox gone:
        the program's status, or 128+N when signal N ended it."""
        self.proc.wait()
        self.end_sandbox()
        code = self.proc.returncode
        return 128 - code if code < 0 else code

    def close(self) -> None:
        if self.outside is not None:
            self.outside.close()
            self.outside = None
        with contextlib.suppress(OSError):
            os.close(self.info_r)
        if self._exited >= 0:
            os.close(self._exited)
            self._exited = -1


def _readable(fd: int, wait: float = 0.0) -> bool:
    import select

    return bool(select.select([fd], [], [], wait)[0])


def _stopped(cancel: Cancel) -> bool:
    c: Cancel | None = cancel
    while c is not None:
        if c.stopped:
            return True
        c = c.parent
    return False


class _Feeder:
    """The program's stdin, fed from a K stream, giving back what the program did not read.

    A real program shares its stdin with the shell: what it does not read stays for the next
    command (`while read f; do python3 job.py "$f"; done < list` goes on through the list). So
    the feeder writes without blocking, and once the program has ended, the bytes still in the
    pipe and the part of a chunk not yet written go back in front of the stream's buffer; a
    chunk the feeder reads after that goes back too."""

    def __init__(self, stream: Stream, fd: int, unread: int | None) -> None:
        self.stream = stream
        self.fd = fd  # the write end (a pipe's, or the pty master's)
        self.unread = unread  # our copy of the pipe's read end: what is left in it at the end
        self.lock = threading.Lock()
        self.done = False
        self.pending = b""
        os.set_blocking(fd, False)

    def run(self) -> None:
        try:
            while True:
                try:
                    data = self.stream.read_some() if hasattr(self.stream, "read_some") else self.stream.read(CHUNK)
                except LimitExceeded:
                    data = b""
                with self.lock:
                    if self.done:
                        self._give_back(data, late=True)
                        return
                    if not data:
                        os.close(self.fd)  # end of input: the program sees EOF
                        self.fd = -1
                        return
                    self.pending = data
                if not self._write():
                    return
        except OSError:
            pass

    def _write(self) -> bool:
        """Write the pending chunk; False when the feeder is finished (ended or unwanted)."""
        while True:
            with self.lock:
                if self.done:
                    return False
                try:
                    self.pending = self.pending[os.write(self.fd, self.pending):]
                except BlockingIOError:
                    pass
                except OSError:  # the program closed its stdin: what it did not take stays
                    return False
                if not self.pending:
                    return True
            select.select([], [self.fd], [], 0.05)

    def finish(self) -> None:
        """The program has ended: give back what it did not read, stop feeding."""
        with self.lock:
            self.done = True
            left = b""
            if self.unread is not None:
                os.set_blocking(self.unread, False)
                with contextlib.suppress(OSError):
                    while chunk := os.read(self.unread, CHUNK):
                        left += chunk
                os.close(self.unread)
                self.unread = None
            self._give_back(left + self.pending)
            self.pending = b""
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1

    def _give_back(self, data: bytes, late: bool = False) -> None:
        if data and isinstance(self.stream, InStream):
            self.stream.unread(data, at_end=late)


def _pump_out(fd: int, stream: Stream, failed: list[BaseException]) -> None:
    try:
        while True:
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:  # a pty master shares its non-blocking mode with the feeder's copy
                select.select([fd], [], [])
                continue
            except OSError as e:
                if e.errno == errno.EIO:  # a pty whose last slave closed: the program is done
                    break
                raise
            if not data:
                break
            stream.write(data)
    except (SigPipe, BrokenPipeError):
        pass  # the reader is gone: the program gets EPIPE/SIGPIPE at its next write
    except BaseException as e:  # noqa: BLE001 - reported by the waiting thread
        failed.append(e)
    finally:
        os.close(fd)


def terminal_of(sh: Interp) -> Terminal | None:
    """The session's terminal when the program's stdin and stdout are it (not redirected)."""
    terminal = sh.session.terminal
    if terminal is None or not getattr(sh.fds.get(0), "is_terminal", False) \
            or not getattr(sh.fds.get(1), "terminal", False):
        return None
    return terminal


def run(sh: Interp, start: Callable[[tuple[int, int, int]], Started], terminal: Terminal | None = None) -> int:
    """Start the program (`start` gives it stdin, stdout and stderr: a cold sandbox's or the
    ssh client's Program, or a warm sandbox's Launched) and wait for it; K's cancel ends it.
    With a terminal, the program's stdin and stdout (and stderr, unless redirected) are a pty
    of its own, relayed to the session's terminal."""
    out, err = sh.fds.get(1), sh.fds.get(2)
    stdin = sh.fds.get(0)
    to_close: list[int] = []
    threads: list[threading.Thread] = []
    failed: list[BaseException] = []
    child_fds = [subprocess.DEVNULL, subprocess.DEVNULL, subprocess.DEVNULL]
    feeders: list[_Feeder] = []
    readers: list[tuple[int, Stream]] = []
    master = -1
    if terminal is not None:
        master, slave = terminal.open()
        terminal.give(_in_foreground(sh, sh.session.cancel))  # a job started with & never takes the keys
        child_fds[0] = child_fds[1] = slave
        to_close.append(slave)
        feeders.append(_Feeder(stdin, os.dup(master), None))  # type: ignore[arg-type]
        readers.append((os.dup(master), out))  # type: ignore[arg-type]  # the Terminal keeps master
        if getattr(err, "terminal", False):
            child_fds[2] = slave
            err = None
    elif stdin is not None and not isinstance(stdin, NullStream):
        r, w = os.pipe()
        child_fds[0] = r
        to_close.append(r)
        feeders.append(_Feeder(stdin, w, os.dup(r)))
    if terminal is None and out is not None:
        r, w = os.pipe()
        child_fds[1] = w
        to_close.append(w)
        readers.append((r, out))
    if err is not None:
        if err is out:
            child_fds[2] = child_fds[1]
        else:
            r, w = os.pipe()
            child_fds[2] = w
            to_close.append(w)
            readers.append((r, err))
    try:
        program = start(tuple(child_fds))  # type: ignore[arg-type]
    except BaseException:
        for feeder in feeders:
            feeder.finish()
        for fd, _ in readers:
            os.close(fd)
        if terminal is not None:
            terminal.close(master)
        raise
    finally:
        for fd in to_close:
            with contextlib.suppress(OSError):
                os.close(fd)
    for feeder in feeders:
        threads.append(threading.Thread(target=feeder.run, name="k-feed", daemon=True))
    for fd, stream in readers:
        threads.append(threading.Thread(target=_pump_out, args=(fd, stream, failed), name="k-drain", daemon=True))
    for t in threads:
        t.start()
    try:
        return _wait(sh, program, threads[len(feeders):], failed)
    finally:
        for feeder in feeders:
            feeder.finish()
        program.close()
        if terminal is not None:
            terminal.close(master)


def _wait(sh: Interp, program: Started, drains: list[threading.Thread], failed: list[BaseException]) -> int:
    """Wait for the monitor, passing on K's stops, continues and ends; then for its output.

    A program with a pty of its own that stops (Ctrl-Z reached it through the pty, or it
    suspended itself as vi does) is K's Ctrl-Z: the command becomes a stopped job and the
    terminal goes back to the line editor; `fg` gives it the terminal again."""
    terminal = program.terminal
    ended: LimitExceeded | None = None
    signalled_at = 0.0
    paused = False
    exited = program.fileno()
    while not _readable(exited, 0.05):
        cancel = sh.session.cancel
        if ended is not None:
            if time.monotonic() - signalled_at > KILL_GRACE:
                program.kill()
            continue
        if terminal is not None and not paused and _group_stopped(terminal.foreground()):
            terminal.suspend()  # the shell stops the command: `_stopped` sees it next
        if _stopped(cancel) != paused:
            paused = not paused
            program.signal(signal.SIGSTOP if paused else signal.SIGCONT)
            if terminal is not None:
                terminal.give(not paused and _in_foreground(sh, cancel))
        if paused:
            continue
        try:
            cancel.check()
        except LimitExceeded as e:
            ended = e
            program.signal(_signal_of(cancel))
            program.signal(signal.SIGCONT)  # a stopped program is continued to let it die
            signalled_at = time.monotonic()
    code = program.status()
    for t in drains:
        t.join()
    if ended is not None:
        raise ended
    if failed:
        raise failed[0]
    return code


def _group_stopped(pgid: int) -> bool:
    """Whether the leader of process group `pgid` is stopped (state T in /proc)."""
    if pgid <= 0:
        return False
    try:
        with open(f"/proc/{pgid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] == b"T"


def _in_foreground(sh: Interp, cancel: Cancel) -> bool:
    """Whether the command of `cancel` is the terminal's foreground: not yet a job, or the job
    `fg` brought back (after `bg` it runs on without the terminal)."""
    jobs = sh.session.jobs
    chain: list[Cancel] = []
    c: Cancel | None = cancel
    while c is not None:
        chain.append(c)
        c = c.parent
    held = jobs.foreground
    if held is not None:
        return any(held.cancel is c for c in chain)
    return not any(job.cancel is c for job in jobs.ordered() for c in chain)


def _signal_of(cancel: Cancel) -> int:
    c: Cancel | None = cancel
    while c is not None:
        if c.cancelled or time.monotonic() > c.deadline:
            return c.signal or (signal.SIGINT if c.reason == "interrupted" else signal.SIGTERM)
        c = c.parent
    return signal.SIGTERM
