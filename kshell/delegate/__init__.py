"""Delegation: a command that is not a function, builtin, K tool or K script runs as a real
program, in a bubblewrap sandbox on this host (the `local` remote) or on another host over
OpenSSH (the `ssh` remote), with its bytes flowing through K's streams.

`Delegation` is what a session knows about it (settings, the state, the agent's identity);
`run_program` is what the shell calls, for a program it found in the session's view (the host
programs a delegating session shows: kshell.exec.system). Everything refuses with one line
saying why and what to configure rather than run a program on the wrong files: a program
naming a python drive (files the image's code serves in the session's worker, which the mount
cannot serve) is refused, and one on the ssh remote naming any drive. The local sandbox binds
the memory drives and the writable host drives from the FUSE mount, which shows them
(kfs.drives.nodes) and charges what an agent writes on a host drive to its quota, each at its
path; a read-only host drive from its source. A session with a write policy (a restricted mode, path
rules, write hooks) binds K from the agent's view of it instead (kshell.delegate.mounts), so the
same policy decides a program's creates, renames, links and writes as the shell's, once.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kfs.drives.view import DriveFS
from kfs.journal import last_change
from kfs.runtime.drives import Drive
from kfs.vfs.policy import WritePolicy
from kshell.delegate.config import DelegateConfig
from kshell.delegate.launcher import LAUNCHER, PYTHON, Gone, Sandboxes
from kshell.delegate.mounts import Mount, Unavailable, agent_view, find_mount, wait_coherent
from kshell.delegate.run import Program, run, terminal_of
from kshell.delegate.sandbox import (
    Refused,
    View,
    bwrap_argv,
    bwrap_path,
    check_namespaces,
    check_paths,
    make_view,
)
from kshell.delegate.terminal import JOB_LEADER
from kshell.exec.scripts import k_cwd, k_path
from kshell.exec.system import HOST_DIRS

if TYPE_CHECKING:
    from kshell.exec.interp import Interp

__all__ = ["DelegateConfig", "Delegation", "delegates", "k_path", "run_program"]


@dataclass(frozen=True, slots=True)
class Delegation:
    config: DelegateConfig
    state_dir: str
    uid: int
    gid: int
    home: str
    hostname: str = "komputer"
    agent: str = ""
    configured: dict[str, Any] | None = None  # what the server's configuration says of the agent (its view's too)
    hold: Callable[[int], None] | None = None  # takes a view daemon's pid out of the session's cgroup
    sandboxes: Sandboxes = field(default_factory=Sandboxes)  # the session's warm sandboxes (kshell.delegate.launcher)

    def close(self) -> None:
        """The session ends: its warm sandboxes end (with the last program still running in one)."""
        self.sandboxes.close()

    @property
    def runs_programs(self) -> bool:
        """Whether this session runs programs K does not have (a remote other than `none`)."""
        return self.config.remote != "none"

    def run(self, sh: Interp, argv: list[str], shown: str) -> int:
        """The interpreter's way to a program K does not have (kshell.exec.scripts): it holds
        this object as `session.delegation` and imports nothing of this package."""
        return run_program(sh, argv, shown)


def _delegation(sh: Interp) -> Delegation | None:
    d = sh.session.delegation
    return d if d is not None and d.runs_programs else None


def delegates(sh: Interp) -> bool:
    """Whether this session runs programs K does not have."""
    return _delegation(sh) is not None


def _shows(tops: tuple[str, ...], path: str) -> bool:
    return any(path == top or path.startswith(top + "/") for top in tops)


def run_program(sh: Interp, argv: list[str], shown: str) -> int:
    """Run `argv` (argv[0] a host program path, or a K file's absolute path) delegated."""
    d = _delegation(sh)
    if d is None:
        sh.error(f"{shown}: command not found")
        return 127
    policy = sh.fs.policy
    drive = _drive_named(sh, argv, ("python",) if d.config.remote == "local" else None)
    if drive is not None:
        what = {"memory": "a memory drive", "python": "a python drive"}.get(drive.kind, "a drive of this host")
        sh.error(f"{shown}: {drive.path} is {what}, which delegated programs cannot reach")
        return 126
    try:
        if d.config.remote == "ssh":
            if policy is not None:  # fail closed: the ssh remote is not a sandbox it could harden
                what = f"is in {policy.mode} mode" if policy.mode != "full" else "has rules on written paths"
                raise Unavailable(f"this session {what}, and the ssh remote is not a sandbox "
                                  "that could keep it (use the local remote: komputer agent set NAME --remote local)")
            return _run_ssh(sh, d, argv)
        return _run_local(sh, d, argv)
    except Unavailable as e:
        sh.error(f"{shown}: cannot run host programs: {e}")
        return 126
    except Refused as e:
        sh.error(f"{shown}: {e}")
        return 126
    except PermissionError as e:  # no CAP_SETUID (a hardened unit), or bwrap not executable
        sh.error(f"{shown}: cannot run host programs: cannot start the sandbox as the agent: {e.strerror}")
        return 126


def _named(sh: Interp, argv: list[str]) -> list[str]:
    """The K paths a program's working directory and arguments name, as check_paths reads
    them: absolute arguments, and relative ones that climb with `..`."""
    cwd = k_cwd(sh)
    paths = [cwd]
    for arg in argv:
        if arg.startswith("/") or arg == ".." or arg.startswith("../") or "/../" in arg:
            paths.append(posixpath.normpath(posixpath.join(cwd, arg)))
    return paths


def _drive_named(sh: Interp, argv: list[str], kinds: tuple[str, ...] | None) -> Drive | None:
    """The first drive (of `kinds`, or any) that the program's cwd or arguments name."""
    if not isinstance(sh.fs, DriveFS):
        return None
    for path in _named(sh, argv):
        backing = sh.fs.on_drive(path)
        if backing is not None and (kinds is None or backing.drive.kind in kinds):
            return backing.drive
    return None


def _drive_binds(sh: Interp, mount: str) -> tuple[tuple[str, str, bool], ...]:
    """The session's drives the sandbox binds, (path, source, read-only): a read-only host
    drive from its directory; a memory drive, and a host drive the program may write, from the
    mount (`wait_coherent` has it mount the image's drives in force), whose writes to a host
    drive are charged to the agent's quota as the shell's and SFTP's are (kfs.drives.host)."""
    if not isinstance(sh.fs, DriveFS):
        return ()
    sources = {"host": lambda drive: drive.source if drive.readonly else mount + drive.path,
               "memory": lambda drive: mount + drive.path}
    return tuple((b.drive.path, sources[b.drive.kind](b.drive), b.drive.readonly)
                 for b in sh.fs.drives if b.drive.kind in sources)


def _env(sh: Interp) -> dict[str, str]:
    """Exported variables only, as exec gives a child; PWD is the working directory."""
    return {**sh.exported_env(), "PWD": k_cwd(sh)}


def _run_local(sh: Interp, d: Delegation, argv: list[str]) -> int:
    if os.geteuid() != 0 and os.geteuid() != d.uid:
        raise Unavailable("the server must run as root to start programs as the agent's uid")
    bwrap = bwrap_path()
    uid = d.uid if os.geteuid() == 0 else None
    check_namespaces(bwrap, uid, d.gid)
    fork = getattr(sh.fs.vfs.state, "fork", None)
    state_dir = os.path.realpath(d.state_dir)
    mount = find_mount(state_dir, d.config.mount, fork=fork, answers=False)  # wait_coherent asks it
    if sh.fs.policy is not None:
        mount = _view_of(d, mount, state_dir, fork, sh.fs.policy)
    cwd = k_cwd(sh)
    view = make_view(mount.path, d.home, cwd, d.config.read_only, _drive_binds(sh, mount.path))

    check_paths(view, cwd, argv, lambda path: _lstat(sh, path) is not None)
    if sh.fs.policy is not None:
        view = _restricted(sh, view)
    wait_coherent(mount, last_change(sh.fs.vfs.state))
    for path in view.binds:
        if not os.path.isdir(mount.path + path):
            raise Refused(path, "not a directory in K (create it, mode 1777 for /tmp)")
    terminal = terminal_of(sh)
    if sh.niceness > 0:  # `nice -n N CMD`: the sandbox starts at the server's niceness, the host's nice raises it
        argv = ["/usr/bin/nice", "-n", str(sh.niceness), *argv]
    if terminal is not None:  # the program is the foreground job of its own pty session
        argv = ["/usr/bin/python3", "-I", "-S", "-c", JOB_LEADER, *argv]
    env = _env(sh)

    def sandbox(argv: list[str], fds: tuple[int, int, int], *, new_session: bool, keep: tuple[int, ...] = (),
                cwd: str = cwd) -> Program:
        info_r, info_w = os.pipe()
        block = os.pipe() if d.config.network else None  # bwrap waits on it while K wires the sandbox's network
        command = bwrap_argv(view, network=d.config.network, hostname=d.hostname, info_fd=info_w,
                             new_session=new_session, argv=argv, cwd=cwd, bwrap=bwrap,
                             block_fd=None if block is None else block[0])
        if keep:  # the launcher is its sandbox's pid 1: a program cannot kill it
            command.insert(1, "--as-pid-1")
        return Program(command, env=env if not keep else {}, uid=uid, gid=d.gid, info=(info_r, info_w),
                       fds=fds, terminal=terminal if not keep else None, block=block, keep=keep)

    def cold(fds: tuple[int, int, int]) -> Program:
        return sandbox(argv, fds, new_session=terminal is None)

    if not os.path.exists(PYTHON):
        return run(sh, cold, terminal)
    key = (uid, d.gid, *bwrap_argv(view, network=d.config.network, hostname=d.hostname, info_fd=-1,
                                   new_session=True, argv=(), cwd="/", bwrap=bwrap, block_fd=-1))

    def warm(fds: tuple[int, int, int]) -> Any:
        def launcher(keep: list[int]) -> Program:
            null = (subprocess.DEVNULL,) * 3
            return sandbox([PYTHON, "-I", "-S", "-c", LAUNCHER, str(keep[0])], null, new_session=True,  # type: ignore[arg-type]
                           keep=tuple(keep), cwd=view.binds[0])

        try:
            return d.sandboxes.launch(key, launcher, argv, env, cwd, fds, terminal)
        except Gone:  # the session has ended (a job of a detached one), or too long a request
            return cold(fds)

    return run(sh, warm, terminal)


def _lstat(sh: Interp, path: str) -> Any:
    """The K entry at `path` (not followed), None when there is none."""
    try:
        return sh.fs.lstat(path)
    except OSError:
        return None


def _view_of(d: Delegation, admin: Mount, state_dir: str, fork: int | None, policy: WritePolicy) -> Mount:
    """The agent's view with the session's policy: the agent, its effective mode, the fork, and
    what decides beyond the mode (the rules, the scope, a write hook), digested: a session whose
    rules differ gets a view of its own, and every session with the same policy shares one."""
    decides = {"agent": d.agent, "mode": policy.mode, "fork": fork, "allowed": policy.allowed,
               "rules": [(r.id, r.action, r.pattern, r.agent, r.on) for r in (policy.rules or ())],
               "hook": policy.hook is not None, "configured": d.configured or {}}
    digest = hashlib.sha256(json.dumps(decides, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return agent_view(admin, state_dir, d.agent, policy.mode, fork, d.configured or {}, digest, d.hold)


def _restricted(sh: Interp, view: View) -> View:
    """A restricted session's host drives: read-only, the whole drive, in a restricted mode or
    where a path rule that denies or asks reaches it (for a glob, from the directory before its
    first glob character: more than the rule, never less). The view's policy is not asked for
    a host drive's writes (they were bound from their own directories, which no view saw)."""
    policy = sh.fs.policy
    assert policy is not None
    ruled = []
    for rule in policy.rules:
        if rule.action != "allow":
            head = rule.pattern.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
            ruled.append(head if head == rule.pattern else posixpath.dirname(head) or "/")

    hosts = {b.drive.path for b in sh.fs.drives if b.drive.kind == "host"} if isinstance(sh.fs, DriveFS) else set()

    def read_only(path: str, source: str) -> bool:
        if path not in hosts:
            return False  # a memory drive, which the view shows: its policy decides there
        return policy.mode != "full" or any(_shows((path,), r) or _shows((r,), path) for r in ruled)

    drives = tuple((path, source, ro or read_only(path, source)) for path, source, ro in view.drives)
    return replace(view, drives=drives)


# Run on the ssh remote by its login shell: the program in the background with the channel as
# its stdin, and a watchdog that ends it when the connection's sshd process is gone (without a
# pty, sshd signals nothing when a client goes away: `timeout` and `kill` end the local client).
_REMOTE = """cd {cwd} || exit 126
{program} <&0 &
p=$!
(while [ -d /proc/$PPID ]; do sleep 0.5; done; kill -TERM $p 2>/dev/null; sleep 1; kill -KILL $p 2>/dev/null) &
w=$!
wait $p; s=$?
kill $w 2>/dev/null
exit $s"""


def _run_ssh(sh: Interp, d: Delegation, argv: list[str]) -> int:
    """The ssh remote: the program runs on the configured host in the directory where that
    host sees the K working directory (under `ssh_root`), with only the exported variables.
    Not a sandbox: it has whatever that account has there."""
    cfg = d.config
    cwd = k_cwd(sh)
    root = cfg.ssh_root.rstrip("/")
    program = list(argv)
    if program[0].startswith("/") and not _shows(HOST_DIRS, program[0]):
        program[0] = root + program[0]  # a K file: as that host sees it
    env = [f"{k}={v}" for k, v in sorted(_env(sh).items()) if k not in ("PWD", "HOME")]
    env += [f"HOME={root}{d.home}", f"PWD={root}{cwd}"]
    terminal = terminal_of(sh)
    if terminal is not None:  # a remote pty: sshd hangs up the program itself
        remote = f"cd {shlex.quote(root + cwd)} && exec env -i {shlex.join(env)} {shlex.join(program)}"
    else:
        remote = _REMOTE.format(cwd=shlex.quote(root + cwd), program=f"env -i {shlex.join(env)} {shlex.join(program)}")
    command = ["ssh", "-tt" if terminal is not None else "-T", "-o", "BatchMode=yes", *cfg.ssh_options,
               "--", cfg.ssh_host, remote]

    def start(fds: tuple[int, int, int]) -> Program:
        return Program(command, env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")},
                       uid=None, gid=None, info=os.pipe(), fds=fds, terminal=terminal, ctty=terminal is not None)

    return run(sh, start, terminal)

