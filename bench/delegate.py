"""Delegation against its peers, in one run, as ratios (K time / peer time; for throughput,
K's rate / the peer's rate).

  latency   a delegated `/usr/bin/true` in a K session (per command, the session's cost
            subtracted), against the same bwrap command line run directly (goal: <= 0.3x, issue 34) and
            against bash running `/usr/bin/true` in an sshd session
  pipe      `python3 -c 'print("x"*10**8)' | wc -c` through K's pipes (wc is K's), against the
            same pipeline in bash on the host (goal: >= 0.5x)
  git       `git status` in a 5,000-file repository on the FUSE mount, against the same
            repository on tmpfs (/dev/shm) (goal: <= 3x)

Each row's outputs must be the peer's (the loop's count, the pipe's byte count, git's status),
or the bench stops before printing its ratio (bench/agree.py).
Needs root (sshd, a bench user, the mount with allow_other), bubblewrap, git, openssh-server.
    .venv/bin/python bench/delegate.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
_spec = importlib.util.spec_from_file_location("kbench_ssh", os.path.join(ROOT, "bench", "ssh.py"))
assert _spec is not None and _spec.loader is not None
sshbench = importlib.util.module_from_spec(_spec)
sys.modules["kbench_ssh"] = sshbench  # its dataclasses look themselves up there
_spec.loader.exec_module(sshbench)

from agree import agree  # noqa: E402

from kshell.delegate.mounts import find_mount  # noqa: E402
from kshell.delegate.sandbox import bwrap_argv, bwrap_path, make_view  # noqa: E402

PIPE = "python3 -c 'print(\"x\" * 10**8)' | wc -c"


def ssh(target, command: str) -> tuple[float, bytes]:  # noqa: ANN001
    """Seconds for `command` over ssh, and what it printed."""
    started = time.perf_counter()
    done = subprocess.run([*sshbench.ssh_argv(target), f"{target.user}@127.0.0.1", command],
                          capture_output=True, timeout=600)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{target.name}: {command!r} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return took, done.stdout


def median_ssh(target, command: str, repeat: int) -> tuple[float, bytes]:  # noqa: ANN001
    """The median seconds of `repeat` runs, and the output, the same in every run."""
    runs = [ssh(target, command) for _ in range(repeat)]
    for _, out in runs[1:]:
        agree(f"{target.name}: {command!r} run again", out, runs[0][1], "its first run")
    return statistics.median(took for took, _ in runs), runs[0][1]


def per_command(target, runs: int, repeat: int) -> tuple[float, bytes]:  # noqa: ANN001
    """Seconds per `/usr/bin/true` inside one session (a loop of `runs` less an empty loop),
    and the count of commands the loop ran."""
    loop = f"n=0; for i in $(seq {runs}); do /usr/bin/true && n=$((n+1)); done; echo $n"
    empty = f"n=0; for i in $(seq {runs}); do : && n=$((n+1)); done; echo $n"
    full, out = median_ssh(target, loop, repeat)
    base, _ = median_ssh(target, empty, repeat)
    return max(full - base, 1e-9) / runs, out


def bare_bwrap(mount: str, home: str, uid: int, runs: int) -> float:
    """The same sandbox K builds, started directly (as the agent's uid) `runs` times."""
    view = make_view(mount, home, home, ())
    times = []
    for _ in range(runs):
        r, w = os.pipe()
        argv = bwrap_argv(view, network=False, hostname="k", info_fd=w, new_session=True,
                          argv=["/usr/bin/true"], cwd=home, bwrap=bwrap_path())
        started = time.perf_counter()
        subprocess.run(argv, pass_fds=(w,), user=uid, group=uid, extra_groups=[], check=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": home})
        times.append(time.perf_counter() - started)
        os.close(r)
        os.close(w)
    return statistics.median(times)


def host_pipe(repeat: int) -> tuple[float, bytes]:
    runs = [_timed(["bash", "-c", PIPE]) for _ in range(repeat)]
    return statistics.median(took for took, _ in runs), runs[0][1]


def _timed(argv: list[str], **kwargs) -> tuple[float, bytes]:  # noqa: ANN003
    started = time.perf_counter()
    done = subprocess.run(argv, check=True, capture_output=True, **kwargs)
    return time.perf_counter() - started, done.stdout


def git_status(where: Path, uid: int, repeat: int) -> tuple[float, bytes]:
    argv = ["git", "-c", "safe.directory=*", "status", "--porcelain", "--untracked-files=all"]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    _timed(argv, cwd=where, user=uid, env=env)  # warm the caches
    runs = [_timed(argv, cwd=where, user=uid, env=env) for _ in range(repeat)]
    return statistics.median(took for took, _ in runs), runs[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke test of the bench)")
    args = parser.parse_args()
    runs, repeat, files = (20, 1, 500) if args.quick else (200, 3, 5000)
    if os.geteuid() != 0:
        sys.exit("run as root: the bench mounts with allow_other and starts sshd")
    for tool in ("bwrap", "git", "fusermount3"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing (make deps installs it)")
    tmp = Path(tempfile.mkdtemp(prefix="k-bench-delegate-", dir="/tmp"))
    tmp.chmod(0o755)  # agents' programs reach the mount through it
    key = sshbench.client_key(tmp)
    k = sshbench.start_k(tmp, key, 10)
    mnt = tmp / "mnt"
    mnt.mkdir()
    state = tmp / "K" / "kstate"
    subprocess.run([*sshbench.KOMPUTER, "mount", "-o", "allow_other", "--state", str(state), str(mnt)],
                   cwd=ROOT, check=True, capture_output=True)
    (tmp / "sshd").mkdir()
    o = sshbench.start_sshd(tmp / "sshd", key, 10)
    try:
        uid = (mnt / "home" / "bench").stat().st_uid
        mount = find_mount(str(state.resolve())).path
        print(f"delegation bench: {runs} commands per loop, median of {repeat}; {files}-file repository")
        k_cmd, k_count = per_command(k, runs, repeat)
        o_cmd, o_count = per_command(o, runs, repeat)
        agree("latency", k_count, o_count, "sshd bash")
        bare = bare_bwrap(mount, "/home/bench", uid, runs)  # each run's status is checked
        print(f"latency   K delegated true {k_cmd * 1e3:7.2f} ms | bare bwrap {bare * 1e3:7.2f} ms "
              f"({k_cmd / bare:4.2f}x, goal <= 0.3x) | sshd bash {o_cmd * 1e3:7.2f} ms ({k_cmd / o_cmd:5.1f}x)")
        conn, _ = median_ssh(k, ":", repeat)
        k_pipe, k_bytes = median_ssh(k, PIPE, repeat)
        k_pipe -= conn
        h_pipe, h_bytes = host_pipe(repeat)
        agree("pipe", k_bytes, h_bytes, "host bash")
        print(f"pipe      K {100 / k_pipe:7.0f} MB/s | host pipe {100 / h_pipe:7.0f} MB/s "
              f"({h_pipe / k_pipe:4.2f}x of the host's rate, goal >= 0.5x)")
        ssh(k, f"mkdir -p repo && cd repo && git init -q && python3 -c 'import os\n"
               f"for i in range({files}):\n    d = \"d%02d\" % (i % 50)\n    os.makedirs(d, exist_ok=True)\n"
               f"    open(os.path.join(d, \"f%d.txt\" % i), \"w\").write(str(i))' && git add . && "
               "git -c user.name=b -c user.email=b@k commit -qm all")
        on_mount = mnt / "home" / "bench" / "repo"
        shm = Path(tempfile.mkdtemp(prefix="k-bench-git-", dir="/dev/shm"))
        shm.chmod(0o755)
        subprocess.run(["cp", "-a", str(on_mount), str(shm)], check=True)
        g_mount, s_mount = git_status(on_mount, uid, repeat)
        g_tmpfs, s_tmpfs = git_status(shm / "repo", uid, repeat)
        shutil.rmtree(shm, ignore_errors=True)
        agree("git", s_mount, s_tmpfs, "tmpfs")
        print(f"git       status on the mount {g_mount * 1e3:7.1f} ms | on tmpfs {g_tmpfs * 1e3:7.1f} ms "
              f"({g_mount / g_tmpfs:4.2f}x, goal <= 3x)")
    finally:
        o.stop()
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False)
        k.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
