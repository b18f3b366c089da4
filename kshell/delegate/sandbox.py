"""The bubblewrap command line for one delegated program, and which paths it may name.

A delegated program sees the host's programs read-only (/usr, /bin, /lib*, the few /etc files
programs need), a private /proc and a minimal /dev, and of K only what the agent works on:
its home, /tmp and the working directory, each bound read-write from the FUSE mount at the
same path it has in K, so a path means the same file inside and out (in a restricted session,
the mount is the agent's view, which asks the session's policy for every write). The image's
drives are bound at their paths, a memory drive and a writable host drive from the mount (which
charges an agent's host-drive writes to its quota), a read-only host drive from its source (a
host drive read-only when the drive is, or the session is restricted), so a drive means
the same directory inside too. Everything else of the host (the state directory, /root, /home,
other agents' homes, sockets) is simply not there.
A path outside those views could only name the wrong file (the host's /etc instead of K's, or
a file that vanishes with the sandbox), so it is refused before anything runs.
"""

from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kshell.delegate.mounts import Unavailable
from kshell.exec.system import HOST_DIRS  # shown read-only at their own paths (/bin -> usr/bin stays a link)

# The /etc files programs need to start, find libraries, verify TLS and name things
HOST_ETC = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ssl", "ca-certificates", "ca-certificates.conf",
    "alternatives", "nsswitch.conf", "localtime", "timezone", "mime.types", "protocols", "services",
    "gitconfig", "python3", "python3.11", "perl", "terminfo", "magic", "magic.mime", "inputrc",
    "vim", "mailcap", "gai.conf", "host.conf",
)
NETWORK_ETC = ("resolv.conf", "hosts")
# K's own account files, from the mount: names inside match `ls -l` in K
K_ETC = ("passwd", "group")


@dataclass(frozen=True, slots=True)
class View:
    """What of K one delegated program sees: K paths, each bound from the mount at itself."""

    mount: str  # the admin mount, or in a restricted session the agent's view (its policy decides writes)
    binds: tuple[str, ...]  # K directories, read-write (the mount applies the mode bits and the policy)
    host: tuple[str, ...]  # host paths shown read-only (HOST_DIRS and the configured extras)
    drives: tuple[tuple[str, str, bool], ...] = ()  # drives: (path, source, read-only)

    def visible(self, path: str) -> bool:
        """Whether a K path is inside one of the bound directories or drives."""
        return any(_under(path, b) for b in self.binds) or any(_under(path, d[0]) for d in self.drives)

    def on_host(self, path: str) -> bool:
        return any(_under(path, h) for h in self.host) or path.startswith("/etc/") or path in ("/proc", "/dev") \
            or path.startswith(("/proc/", "/dev/"))


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def make_view(mount: str, home: str, cwd: str, read_only: Sequence[str],
              drives: Sequence[tuple[str, str, bool]] = ()) -> View:
    host = tuple(HOST_DIRS) + tuple(read_only)
    binds = [home, "/tmp"]
    if not any(_under(cwd, b) for b in binds) and not any(_under(cwd, d[0]) for d in drives):
        if cwd == "/" or any(_under(cwd, h) for h in host) or _under(cwd, "/etc") \
                or _under(cwd, "/proc") or _under(cwd, "/dev"):
            raise Refused(cwd, "the working directory is where the sandbox shows the host's own "
                               "files; cd to your home or /tmp first")
        binds.append(cwd)
    return View(mount, tuple(binds), host, drives=tuple(drives))


class Refused(Exception):
    """A path the sandbox would show as a different file (or not at all)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path


def check_paths(view: View, cwd: str, args: Iterable[str], exists_in_k) -> None:  # noqa: ANN001
    """Refuse absolute (and `..`-climbing) arguments that lie outside the program's view but
    name something in K, or name nothing anywhere (a file written there would vanish)."""
    for arg in args:
        if arg.startswith("/"):
            path = posixpath.normpath(arg)
        elif arg.startswith("../") or "/../" in arg or arg == "..":
            path = posixpath.normpath(posixpath.join(cwd, arg))
        else:
            continue
        if path.startswith("//"):
            path = path[1:]
        if view.visible(path):
            continue
        if exists_in_k(path) and not view.on_host(path):
            raise Refused(arg, "not visible to host programs, which see K only under "
                               + ", ".join(view.binds))
        if not view.on_host(path) and not exists_in_k(path):
            raise Refused(arg, "outside what host programs can see ("
                               + ", ".join(view.binds) + " and the host's programs)")


def bwrap_argv(view: View, *, network: bool, hostname: str, info_fd: int, new_session: bool,
               argv: Sequence[str], cwd: str, bwrap: str = "bwrap", block_fd: int | None = None) -> list[str]:
    """The command line; with `network`, bwrap waits on `block_fd` before it runs the program,
    while K gives the sandbox's own network namespace its way out (kshell.delegate.network)."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--hostname", hostname,
            "--info-fd", str(info_fd)]
    if new_session:
        args.append("--new-session")  # no TIOCSTI into a terminal that is not the program's own
    if network:
        assert block_fd is not None, "a networked sandbox waits for its network"
        args += ["--block-fd", str(block_fd)]
    for top in view.host:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.exists(top):
            args += ["--ro-bind", top, top]
    for name in HOST_ETC + (NETWORK_ETC if network else ()):
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for name in K_ETC:
        args += ["--ro-bind-try", f"{view.mount}/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for path in sorted(view.binds, key=len):  # parents first: a cwd under home stays bound
        args += ["--bind", view.mount + path, path]
    for path, source, read_only in view.drives:  # after K's binds: a drive under home stays bound
        args += ["--ro-bind" if read_only else "--bind", source, path]
    args += ["--chdir", cwd, "--", *argv]
    return args


def bwrap_path() -> str:
    found = _which_bwrap(os.environ.get("PATH") or "/usr/bin:/bin")
    if found is None:
        _which_bwrap.cache_clear()  # installed later: found then
        raise Unavailable("bubblewrap is not installed (apt-get install bubblewrap)")
    return found


@functools.lru_cache(maxsize=4)
def _which_bwrap(path: str) -> str | None:
    """Where bwrap is on `path`, looked up once (a search of $PATH cost each program 1 ms)."""
    from shutil import which

    return which("bwrap", path=path)


_PROBED: dict[int, str] = {}  # uid -> why bwrap cannot run ("" when it can), once per worker


def check_namespaces(bwrap: str, uid: int | None, gid: int | None) -> None:
    """Whether bwrap can make its namespaces as this uid (it cannot where user namespaces are
    off, or in a container that forbids them): said once, in words, rather than as bwrap's own
    error on every command."""
    import subprocess

    key = -1 if uid is None else uid
    if key not in _PROBED:
        ids = {} if uid is None else {"user": uid, "group": gid, "extra_groups": []}
        try:
            done = subprocess.run([bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "/usr/bin/true"],
                                  capture_output=True, timeout=30, env={}, cwd="/", **ids)
            why = "" if done.returncode == 0 else (done.stderr.decode(errors="replace").strip().splitlines()
                                                   or [f"exit status {done.returncode}"])[-1]
        except (OSError, subprocess.TimeoutExpired) as e:
            why = str(e)
        _PROBED[key] = why
    if _PROBED[key]:
        raise Unavailable(f"bubblewrap cannot make its sandbox here ({_PROBED[key]}): enable user namespaces "
                          "(sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone = 1 where it "
                          "exists; a container must allow them), or set [delegate] remote = \"ssh\" or \"none\"")
