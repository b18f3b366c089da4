"""The warm sandbox of a session: one bubblewrap sandbox kept alive per session (per set of
binds, network and identity), with a small launcher inside it that starts each delegated
program on request, so a program pays for a fork and an exec instead of a new sandbox.

The launcher (LAUNCHER, run by the host's python3) is the sandbox's pid 1 (`--as-pid-1`): a
program cannot kill it (pid 1 only gets the signals it handles, from inside its namespace), and
it is not dumpable (no ptrace, no /proc/1/fd, no /proc/1/environ). Its only channel is one end
of a socketpair the worker made: it has no name, in the file system or the abstract namespace,
so nothing can connect to it, and the sandbox's own pid and network namespaces keep every
other session's and agent's programs from seeing or signalling it. When the worker closes its
end (the session ends, or its settings name another sandbox), the launcher exits, and the
kernel ends everything left in its pid namespace.

Each program gets a keeper: a fork of the launcher that leads a session of its own, adopts
everything the program leaves behind (PR_SET_CHILD_SUBREAPER), forks the program (in a session
and process group of its own, with the streams, working directory, environment and resource
limits the request names) and, once it has ended, kills what it left, then reports its status:
nothing of a program outlives it, as when its sandbox ended with it. The worker gets pidfds of
the program and its keeper, and signals the program's process group by its pid in the host's
namespace (read from the pidfd), as it signalled a cold sandbox's.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
import queue
import resource
import signal
import socket
import subprocess
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kshell.delegate.run import Program
    from kshell.delegate.terminal import Terminal

PYTHON = "/usr/bin/python3"  # the host's, bound read-only in every sandbox (the job leader runs on it too)
MESSAGE = 200_000  # the longest request a SOCK_SEQPACKET socket takes at its default buffer size
IDLE = 3  # sandboxes of other binds kept warm beside the one in use (a session going back and forth)
LIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))

# Only built-in and C modules (no `socket`, `signal`, `json`, `ctypes`: their imports cost the
# first program of a session more than the rest of the launcher's start); requests are marshal's.
LAUNCHER = r"""
import _ctypes, _signal, _socket, errno, marshal, os, resource, select, sys
prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")
_ctypes.call_function(prctl, (4, 0, 0, 0, 0))  # PR_SET_DUMPABLE 0: no ptrace, no /proc/1/fd for programs
ctl = _socket.socket(fileno=int(sys.argv[1]))
wake_r, wake_w = os.pipe()
os.set_blocking(wake_w, False)
_signal.set_wakeup_fd(wake_w)
_signal.signal(_signal.SIGCHLD, lambda *_: None)
keepers = set()

def children():
    with open(f"/proc/self/task/{os.getpid()}/children") as f:
        return [int(p) for p in f.read().split()]

def kill(pids):
    for pid in pids:
        try:
            os.kill(pid, _signal.SIGKILL)
        except ProcessLookupError:
            pass

def program(req, stdio):
    what = req["argv"][0]
    try:
        for sig in (_signal.SIGPIPE, _signal.SIGXFSZ, _signal.SIGCHLD):
            _signal.signal(sig, _signal.SIG_DFL)
        if not req["terminal"]:
            os.setsid()
        given = iter(stdio)
        for n, passed in enumerate(req["stdio"]):
            os.dup2(next(given) if passed else os.open("/dev/null", os.O_RDWR), n)
        os.closerange(3, 1 << 20)  # the program gets its three streams and nothing of the launcher's
        for res, soft, hard in req["limits"]:
            try:
                resource.setrlimit(res, (soft, hard))
            except (OSError, ValueError):
                pass
        what = req["cwd"]
        os.chdir(what)
        what = req["argv"][0]
        os.execvpe(what, req["argv"], req["env"])
    except OSError as e:
        os.write(2, f"{what}: {e.strerror}\n".encode(errors="surrogateescape"))
        os._exit(127 if e.errno == errno.ENOENT else 126)
    finally:
        os._exit(126)

def keeper(req, fds):
    try:
        ctl.close()
        _signal.set_wakeup_fd(-1)
        os.close(wake_r)
        os.close(wake_w)
        _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
        os.setsid()
        _ctypes.call_function(prctl, (36, 1, 0, 0, 0))  # PR_SET_CHILD_SUBREAPER: what the program leaves is ours
        chan = _socket.socket(fileno=fds[0])
        pid = os.fork()
        if pid == 0:
            program(req, fds[1:])
        for fd in fds[1:]:
            os.close(fd)
        pidfds = [os.pidfd_open(pid), os.pidfd_open(os.getpid())]
        chan.sendmsg([b"started"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS,
                                     b"".join(fd.to_bytes(4, sys.byteorder) for fd in pidfds))])
        _, status = os.waitpid(pid, 0)
        while True:  # nothing of the program outlives it
            kill(children())
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        code = os.waitstatus_to_exitcode(status)
        chan.send(str(128 - code if code < 0 else code).encode())
    finally:
        os._exit(0)

while True:
    ready = select.select([ctl, wake_r], [], [])[0]
    if wake_r in ready:
        os.read(wake_r, 4096)
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not pid:
                break
            keepers.discard(pid)
        kill(kid for kid in children() if kid not in keepers)  # a keeper was killed: what it kept goes too
    if ctl in ready:
        try:
            data, ancillary, _, _ = ctl.recvmsg(262144, _socket.CMSG_SPACE(8 * 4), _socket.MSG_CMSG_CLOEXEC)
        except InterruptedError:
            continue
        if not data:
            os._exit(0)  # the session is done with this sandbox: the kernel ends what is left in it
        fds = [int.from_bytes(blob[n:n + 4], sys.byteorder) for level, kind, blob in ancillary
               if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS for n in range(0, len(blob) - 3, 4)]
        pid = os.fork()
        if pid == 0:
            keeper(marshal.loads(data), fds)
        keepers.add(pid)
        for fd in fds:
            os.close(fd)
"""


class Gone(Exception):
    """The sandbox ended (or never started): the program is started in a new one."""


class Launched:
    """One program started by a warm sandbox's launcher: what `run` waits on and signals, as it
    does a cold sandbox's Program."""

    def __init__(self, chan: socket.socket, program: int, keeper: int, terminal: Terminal | None) -> None:
        self.chan = chan
        self.terminal = terminal
        self.closed: Callable[[], None] = lambda: None  # its sandbox may end once no program runs there
        self._pidfds = (program, keeper)
        self._group = _host_pid(program)  # its process group (it leads one) in the host's pids

    def fileno(self) -> int:
        """Readable once the program and all it left have ended (its status is there)."""
        return self.chan.fileno()

    def group(self, wait: float = 0.0) -> int:
        return self._group

    def signal(self, sig: int) -> None:
        shown = self.terminal.foreground() if self.terminal is not None else 0
        for pgid in (shown, self._group):
            if pgid:
                try:
                    os.killpg(pgid, sig)
                    return
                except ProcessLookupError:
                    continue
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self._pidfds[0], sig)

    def kill(self) -> None:
        """The program with everything it started: its group, then its keeper (whose orphans
        the launcher kills), even one the program stopped."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._group, signal.SIGKILL)
        for pidfd in self._pidfds:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)

    def status(self) -> int:
        """The program's exit status, or 128+N when signal N ended it (137: its keeper was
        killed before it could say)."""
        try:
            said = self.chan.recv(64)
        except OSError:
            said = b""
        return int(said) if said.isdigit() else 128 + signal.SIGKILL

    def close(self) -> None:
        self.chan.close()
        for pidfd in self._pidfds:
            os.close(pidfd)
        self.closed()


def _host_pid(pidfd: int) -> int:
    """The pid a pidfd names, in the host's pid namespace (its fdinfo in our /proc says)."""
    with open(f"/proc/self/fdinfo/{pidfd}") as f:
        for line in f:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    return 0


class Sandbox:
    """One bubblewrap sandbox with the launcher as its pid 1. The bwrap process is started and
    waited for by a thread of its own: `--die-with-parent` ends a sandbox with the thread that
    started it, so no command's thread may be that thread."""

    def __init__(self, start: Callable[[list[int]], Program]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctl = ours
        self.users = 0
        self.stale = False  # the session moved on (ended, or other binds): close when idle
        self._lock = threading.Lock()
        self._proc: Program | None = None
        made: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._hold, args=(start, theirs, made), name="k-sandbox",
                                        daemon=True)
        self._thread.start()
        failed = made.get()
        if failed is not None:
            ours.close()
            raise failed

    def _hold(self, start: Callable[[list[int]], Program], theirs: socket.socket,
              made: queue.SimpleQueue[BaseException | None]) -> None:
        try:
            try:
                self._proc = start([theirs.fileno()])
            finally:
                theirs.close()
        except BaseException as e:  # noqa: BLE001 - raised in the thread that asked
            made.put(e)
            return
        made.put(None)
        self._proc.proc.wait()
        self._proc.end_sandbox()
        self._proc.close()
        with contextlib.suppress(OSError):
            self.ctl.shutdown(socket.SHUT_RDWR)

    def launch(self, argv: list[str], env: dict[str, str], cwd: str, fds: tuple[int, int, int],
               terminal: Terminal | None) -> Launched:
        """Start `argv` in the sandbox with stdin, stdout, stderr `fds` (DEVNULL: /dev/null)."""
        request = marshal.dumps({
            "argv": list(argv), "env": dict(env), "cwd": cwd, "terminal": terminal is not None,
            "stdio": [fd != subprocess.DEVNULL for fd in fds],
            "limits": [(n, *resource.getrlimit(n)) for n in LIMITS],  # `ulimit` in K since it started
        }, 4)
        if len(request) > MESSAGE:
            raise Gone("too long a request")
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self._lock:
                try:
                    socket.send_fds(self.ctl, [request], [theirs.fileno(), *(fd for fd in fds if fd >= 0)])
                except OSError as e:
                    raise Gone(str(e)) from None
            theirs.close()
            _, pidfds, _, _ = socket.recv_fds(mine, 64, 2)
            if len(pidfds) != 2:
                for fd in pidfds:
                    os.close(fd)
                raise Gone("the launcher did not start the program")
        except BaseException:
            mine.close()
            theirs.close()
            raise
        return Launched(mine, pidfds[0], pidfds[1], terminal)

    def alive(self) -> bool:
        return self._thread.is_alive()

    def close(self) -> None:
        """The launcher sees its channel close and exits; what is left in the sandbox ends."""
        with contextlib.suppress(OSError):
            self.ctl.shutdown(socket.SHUT_RDWR)
        self.ctl.close()


class Sandboxes:
    """The warm sandboxes of one session, by what makes them differ (the bwrap command line
    but the program: binds, network, hostname, identity). A new key keeps the last few idle
    ones (a session going back and forth between directories), ends the others when idle."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[tuple, Sandbox] = {}
        self._closed = False

    def launch(self, key: tuple, start: Callable[[list[int]], Program], argv: list[str], env: dict[str, str],
               cwd: str, fds: tuple[int, int, int], terminal: Terminal | None) -> Launched:
        """Start `argv` in the sandbox of `key`, started now (by `start`, given the fds bwrap
        passes on) if the session has none alive; one that ended is replaced once."""
        for attempt in (1, 2):
            sandbox = self._acquire(key, start)
            try:
                launched = sandbox.launch(argv, env, cwd, fds, terminal)
            except Gone:
                with self._lock:
                    if self._by_key.get(key) is sandbox:
                        del self._by_key[key]
                    sandbox.stale = True
                self.release(sandbox)
                if attempt == 2:
                    raise
                continue
            except BaseException:
                self.release(sandbox)
                raise
            launched.closed = functools.partial(self.release, sandbox)
            return launched
        raise AssertionError("unreachable")

    def _acquire(self, key: tuple, start: Callable[[list[int]], Program]) -> Sandbox:
        with self._lock:
            if self._closed:
                raise Gone("the session has ended")
            sandbox = self._by_key.get(key)
            if sandbox is not None and sandbox.alive():
                sandbox.users += 1
                self._by_key[key] = self._by_key.pop(key)  # the most recent last
                return sandbox
        sandbox = Sandbox(start)  # outside the lock: another command's program need not wait for it
        with self._lock:
            sandbox.users += 1
            old = self._by_key.pop(key, None)
            if old is not None:
                self._retire(old)
            self._by_key[key] = sandbox
            while len(self._by_key) > IDLE + 1:
                self._retire(self._by_key.pop(next(iter(self._by_key))))
            if self._closed:
                self._retire(self._by_key.pop(key))
        return sandbox

    def release(self, sandbox: Sandbox) -> None:
        """A program of `sandbox` has ended (or did not start)."""
        with self._lock:
            sandbox.users -= 1
            if sandbox.stale and sandbox.users == 0:
                sandbox.close()

    def _retire(self, sandbox: Sandbox) -> None:
        sandbox.stale = True
        if sandbox.users == 0:
            sandbox.close()

    def close(self) -> None:
        """The session ends: every sandbox ends, one whose programs still run (a detached
        session's jobs) when the last has ended."""
        with self._lock:
            self._closed = True
            for sandbox in self._by_key.values():
                self._retire(sandbox)
            self._by_key.clear()
