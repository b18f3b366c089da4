"""The zygote: a pre-loaded, single-threaded parent that forks session workers on request.

The SSH front end starts it once (`python -m kshell.worker.zygote`) with one end of a
SOCK_SEQPACKET socket. It imports the whole shell and its tools, runs a warm-up script on a
throwaway state (so lazily imported modules and caches are in memory), freezes the heap for the
garbage collector (children then share those pages instead of copying them) and waits:

- `{"op": "spawn", "id": N}`: fork a worker; answer `{"op": "spawned", "id": N, "pid": P}` with
  two descriptors, the worker's frame socket and a pidfd (so the front end can kill exactly that
  process, never a recycled pid).
- a worker ends: reap it, read whether the OOM killer ended it, remove its cgroup leaf, and tell
  the front end `{"op": "died", "pid": P, "code": C, "signal": S, "oom": bool}`.
- end of stream (the front end is gone): kill every worker, remove the cgroup tree, exit.

It never opens the real KState: LMDB environments must not cross a fork, so each worker opens
its own.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import importlib
import json
import os
import pkgutil
import select
import shutil
import signal
import socket
import sys
import tempfile
from typing import Any

WARM_UP = r"""
echo a | cat >/dev/null; x=$(printf '%s' b); y=$((1+2)); arr=(1 2); declare -A m=([k]=v)
mkdir -p /w && cd /w && echo 'a b' > f && ls -la . >/dev/null && stat f >/dev/null
grep -c a f >/dev/null; sed 's/a/b/' f >/dev/null; awk '{print $1}' f >/dev/null
sort f | uniq -c | wc -l >/dev/null; head -1 f | tail -1 | cut -d' ' -f1 | tr a b >/dev/null
find . -name '*f*' | xargs cat >/dev/null; [[ a =~ ^a$ ]] && case a in a*) : ;; esac
jq . <<< '{"a":1}' >/dev/null; printf '%s\n' "${arr[@]}" >/dev/null; test -f f && rm f
for i in 1 2; do f() { echo "$1"; }; f "$i" >/dev/null; done; read -r z <<< q; sleep 0
"""


def _modules(path: list[str], prefix: str, skip: tuple[str, ...]) -> list[str]:
    """The modules under a package path, skipped names and their subpackages left out without
    being imported (pkgutil.walk_packages imports every package it walks into, skipped or not)."""
    out = []
    for info in pkgutil.iter_modules(path, prefix):
        if info.name.startswith(skip):
            continue
        out.append(info.name)
        if info.ispkg:
            with contextlib.suppress(Exception):  # an optional package that cannot load here
                package = importlib.import_module(info.name)
                out += _modules(list(package.__path__), info.name + ".", skip)
    return out


def preload() -> None:
    """Import every module a session may need and run the warm-up once."""
    import kshell

    # never in a worker: the server, the command line, and the client libraries (the SDK and the
    # sandbox adapters, which import the server and asyncssh), whose imports were a third of
    # the zygote's start that every computer's first command waits for
    skip = ("kshell.server", "kshell.cli", "kshell.worker.zygote", "kshell.sdk", "kshell.compat")
    for name in _modules(list(kshell.__path__), "kshell.", skip):
        with contextlib.suppress(Exception):  # an optional module that cannot load here
            importlib.import_module(name)
    from kfs.kstate import KState
    from kfs.vfs import VFS, Cred, PathFS
    from kshell.session import Shell

    tmp = tempfile.mkdtemp(prefix="k-zygote-")
    try:
        with KState(tmp, create=True) as state:
            fs = PathFS(VFS(state), cred=Cred(0, 0), cwd="/", home="/")
            with contextlib.suppress(Exception):
                Shell(fs, name="k", env={"HOME": "/"}).run(WARM_UP)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Zygote:
    def __init__(self, sock: socket.socket, state_dir: str, cgroups: dict[str, Any] | None) -> None:
        self.sock = sock
        self.state_dir = state_dir
        self.cgroups_desc = cgroups
        self.cgroups: Any = None
        if cgroups:
            from kshell.worker.cgroups import CGroups

            self.cgroups = CGroups.attach(cgroups)
        self.workers: set[int] = set()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    def run(self) -> None:
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a Python handler, so the wakeup fd is written
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C on `komputer up` is the front end's to handle
        signal.set_wakeup_fd(self._wake_w)
        try:
            while True:
                readable, _, _ = select.select([self.sock, self._wake_r], [], [])
                if self._wake_r in readable:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self._wake_r, 4096)
                    self.reap()
                if self.sock in readable:
                    try:
                        data = self.sock.recv(65536)
                    except ConnectionError:
                        data = b""
                    if not data:
                        return
                    request = json.loads(data)
                    if request.get("op") == "spawn":
                        self.spawn(int(request["id"]))
        finally:
            self.shutdown()

    def spawn(self, ident: int) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # the worker
            try:
                signal.set_wakeup_fd(-1)
                for fd in (self._wake_r, self._wake_w):
                    os.close(fd)
                self.sock.close()
                ours.close()
                _die_with_parent()
                from kshell.worker import worker

                worker.main(theirs, self.state_dir, self.cgroups_desc)
            finally:
                os._exit(1)
        theirs.close()
        self.workers.add(pid)
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = -1
        fds = [ours.fileno()] + ([pidfd] if pidfd >= 0 else [])
        try:
            socket.send_fds(self.sock, [json.dumps({"op": "spawned", "id": ident, "pid": pid}).encode()], fds)
        except OSError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        finally:
            ours.close()
            if pidfd >= 0:
                os.close(pidfd)

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.workers.discard(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # what it started in its process group ends with it
            oom = False
            if self.cgroups is not None:
                oom = self.cgroups.oom_killed(pid)
                self.cgroups.kill_worker(pid)  # and what left the group but not the leaf
                self.cgroups.remove_worker(pid)
            report = {"op": "died", "pid": pid, "code": os.waitstatus_to_exitcode(status), "oom": oom}
            with contextlib.suppress(OSError):
                self.sock.send(json.dumps(report).encode())

    def shutdown(self) -> None:
        """The front end is gone: no worker outlives it, nor what a worker started in a
        session of its own. A sandbox whose worker died before bwrap's --die-with-parent took
        hold (a server killed just as a program started) has no parent to die with: it is in
        the worker's leaf, as everything forked there is, and ends with it (as in `reap`)."""
        for pid in list(self.workers):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in list(self.workers):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            if self.cgroups is not None:
                self.cgroups.kill_worker(pid)
        if self.cgroups is not None:
            self.cgroups.remove_all()


def _die_with_parent() -> None:
    """PR_SET_PDEATHSIG: a worker whose zygote died (killed with the server) dies too."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    if os.getppid() == 1:
        os._exit(1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="kshell.worker.zygote")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--cgroups", default="")
    args = parser.parse_args(argv)
    sock = socket.socket(fileno=args.fd)
    preload()
    gc.collect()
    gc.freeze()  # workers share the preloaded heap instead of copying pages the collector touches
    sock.send(json.dumps({"op": "ready", "pid": os.getpid()}).encode())
    Zygote(sock, args.state, json.loads(args.cgroups) if args.cgroups else None).run()


if __name__ == "__main__":
    main(sys.argv[1:])
