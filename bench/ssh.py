"""bench/ssh.py: the K SSH server against Debian's OpenSSH sshd + bash, measured in one run.

Both servers are started by the bench on loopback ports and stopped at the end:
K as `komputer serve` in a subprocess (a fresh state, an agent `bench` and a generated key, all
through the documented CLI forms); OpenSSH as `/usr/sbin/sshd -D -f CONFIG` with a temporary
config (its own host key, PidFile and AuthorizedKeysFile in a temp directory, never the system's
sshd config) and a temporary user `kbench` whose home (in the temp directory) has an empty
`.bashrc`; the user is removed at the end.

Rows: new-connection latency for `true` with the OpenSSH `ssh` client (median of 20),
200 sequential execs over one asyncssh connection, 200 execs 8 at a time over one connection,
`sftp` (the OpenSSH client) upload and download of a 100 MiB file (median time of 3 each; the
time of an `sftp` run that only connects, median of 3, is subtracted: throughput, not session
setup), 1,000 concurrent idle PTY shell sessions (one connection each): the time to open them
and memory per session, and a storm: one agent opens 300 sessions at once (30 connections of
10 channels, `sleep 2` each) while another agent logs in with `ssh host true` 10 times one after
another: the median and the slowest of those (sshd has one user, so there its storm and its
logins are the same user's). Last, K's front end alone: its RSS before and after a storm (the
storm row's, plus an `sftp` upload and download of the file) and after 15 s idle, when it has
given memory back (kshell/server/memory.py). With --baseline DIR, the K of another checkout (e.g. the commit before a
change: `git worktree add DIR REV`, native module built there) is measured too, in the same run,
and a K/base column shows the change's cost. Each row group is measured on K, then on sshd, before the next group,
so that a change in the machine's load falls on both columns of a row. Memory is the PSS delta
of each server's process tree: for K the front end, the worker zygote and every session worker;
for sshd the listener, every per-connection sshd and every bash (PSS so shared pages count once).
The ratio column is K/sshd: below 1 is better for times and memory, above 1 for throughput.

Run as root (sshd and the temporary user need it; --no-sshd measures K alone, as any user):
    .venv/bin/python bench/ssh.py [--quick] [--sessions N] [--execs N] [--file-mib N] [--only connect,execs,sftp]
                                  [--baseline DIR] [--no-sshd]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

import asyncssh  # noqa: E402

SSHD = "/usr/sbin/sshd"
SFTP_SERVER = "/usr/lib/openssh/sftp-server"
BENCH_USER = "kbench"
KOMPUTER = [sys.executable, "-m", "kshell.cli"]


@dataclass
class Sizes:
    connects: int = 20
    execs: int = 200
    parallel: int = 8
    file_mib: int = 100
    transfers: int = 3
    sessions: int = 1000
    storm: int = 300
    storm_logins: int = 10


QUICK = Sizes(connects=5, execs=40, parallel=8, file_mib=10, transfers=1, sessions=50, storm=100, storm_logins=5)


@dataclass
class Target:
    """One running server: where it listens, who logs in, and which processes are its memory."""

    name: str
    port: int
    user: str
    key: Path
    pid: int
    tree: bool  # count the whole process tree (sshd forks per connection) or one process
    stop: Callable[[], None] = lambda: None
    results: dict[str, float] = field(default_factory=dict)
    other: tuple[str, Path] | None = None  # a second agent (user, key) for the storm row; None: the same user


# -- memory ------------------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def _field_kib(pid: int, path: str, name: str) -> int:
    try:
        with open(f"/proc/{pid}/{path}") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_kib(target: Target) -> int:
    """RSS of the one server process, or PSS summed over the server's process tree."""
    if not target.tree:
        return _field_kib(target.pid, "status", "VmRSS")
    kids = _children()
    total, todo = 0, [target.pid]
    while todo:
        pid = todo.pop()
        total += _field_kib(pid, "smaps_rollup", "Pss")
        todo.extend(kids.get(pid, []))
    return total


# -- the two servers ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen[Any], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def client_key(tmp: Path, name: str = "client_ed25519") -> Path:
    key = asyncssh.generate_private_key("ssh-ed25519", comment="bench@ssh")
    path = tmp / name
    key.write_private_key(str(path))
    key.write_public_key(str(path) + ".pub")
    path.chmod(0o600)
    return path


def stop_process(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_k(tmp: Path, key: Path, sessions: int, root: str = ROOT, name: str = "K") -> Target:
    """`komputer serve` from the checkout at `root` (this one, or a --baseline checkout)."""
    tmp = tmp / name.replace("@", "-")
    tmp.mkdir()
    state = tmp / "kstate"
    env = dict(os.environ, PYTHONPATH=root)

    def komputer(*args: str) -> None:
        subprocess.run([*KOMPUTER, *args], cwd=root, env=env, check=True, capture_output=True)

    other = client_key(tmp, "other_ed25519")
    for agent, k in (("bench", key), ("other", other)):
        komputer("agent", "add", "--state", str(state), agent)
        komputer("keys", "add", "--state", str(state), agent, str(k) + ".pub")
    config = tmp / "komputer.toml"
    config.write_text(
        "[ssh]\n"
        'hostname = "k"\n'
        'max_startups = "200:30:1000"\n'
        "max_sessions = 64\n"
        f"max_sessions_per_agent = {max(sessions * 2 + 100, 1000)}\n"
        "[ssh.penalties]\n"
        'exempt = ["127.0.0.0/8"]\n'
    )
    port = free_port()
    log = (tmp / "k.log").open("w")
    proc = subprocess.Popen(
        [*KOMPUTER, "serve", "--state", str(state), "--listen", f"127.0.0.1:{port}", "--config", str(config)],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    wait_port(port, proc)
    return Target(name, port, "bench", key, proc.pid, tree=True, stop=lambda: (stop_process(proc), log.close()),
                  other=("other", other))


def start_sshd(tmp: Path, key: Path, sessions: int) -> Target:
    if not os.path.exists(SSHD):
        sys.exit(f"{SSHD} is missing: apt-get install -y openssh-server")
    if os.geteuid() != 0:
        sys.exit("the sshd half of this bench runs sshd and adds a temporary user: run it as root")
    home = tmp / "home"
    made_user = False
    try:
        subprocess.run(["getent", "passwd", BENCH_USER], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        subprocess.run(["useradd", "-M", "-d", str(home), "-s", "/bin/bash", BENCH_USER], check=True)
        made_user = True
    subprocess.run(["usermod", "-d", str(home), "-p", "*", BENCH_USER], check=True)  # '*': not locked
    home.mkdir()
    for dotfile in (".bashrc", ".bash_profile", ".hushlogin"):
        (home / dotfile).write_text("")
    shutil.chown(home, BENCH_USER, BENCH_USER)
    tmp.chmod(0o755)
    authorized = tmp / "authorized_keys"
    authorized.write_text(Path(str(key) + ".pub").read_text())
    authorized.chmod(0o644)
    host_key = tmp / "ssh_host_ed25519_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
    port = free_port()
    config = tmp / "sshd_config"
    config.write_text(f"""\
Port {port}
ListenAddress 127.0.0.1
HostKey {host_key}
PidFile {tmp}/sshd.pid
AuthorizedKeysFile {authorized}
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers {BENCH_USER}
MaxStartups 200:30:1000
MaxSessions 64
PrintMotd no
PrintLastLog no
UseDNS no
LogLevel ERROR
Subsystem sftp {SFTP_SERVER}
""")
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    log = (tmp / "sshd.log").open("w")
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
    wait_port(port, proc)

    def stop() -> None:
        stop_process(proc)
        log.close()
        if made_user:
            subprocess.run(["userdel", BENCH_USER], check=False, capture_output=True)

    return Target("sshd", port, BENCH_USER, key, proc.pid, tree=True, stop=stop)


# -- measurements ------------------------------------------------------------------------------


def ssh_argv(t: Target, program: str = "ssh", key: Path | None = None) -> list[str]:
    port_flag = "-P" if program == "sftp" else "-p"
    return [
        program, port_flag, str(t.port), "-i", str(key or t.key), "-F", "/dev/null",
        "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
        "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
    ]


def connect_latency(t: Target, runs: int) -> float:
    """Median seconds for `ssh host true`: connect, key exchange, auth, exec, exit."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run([*ssh_argv(t), f"{t.user}@127.0.0.1", "true"], capture_output=True)
        times.append(time.perf_counter() - t0)
        if done.returncode != 0:
            raise RuntimeError(f"{t.name}: ssh true failed: {done.stderr.decode(errors='replace')}")
    return statistics.median(times)


async def connect(t: Target) -> asyncssh.SSHClientConnection:
    return await asyncssh.connect("127.0.0.1", t.port, username=t.user, client_keys=[str(t.key)],
                                  known_hosts=None, agent_path=None)


async def execs(t: Target, count: int, parallel: int) -> float:
    """Seconds for `count` execs of `true` over one connection, `parallel` at a time."""
    async with await connect(t) as conn:
        await conn.run("true", check=True)  # warm: the first session may import the shell
        gate = asyncio.Semaphore(parallel)

        async def one() -> None:
            async with gate:
                await conn.run("true", check=True)

        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(count)))
        return time.perf_counter() - t0


def sftp_transfer(t: Target, batch: str, setup: float = 0.0) -> float:
    """Seconds for one `sftp -b` run of `batch`, less `setup` (the same run with nothing to do)."""
    t0 = time.perf_counter()
    done = subprocess.run([*ssh_argv(t, "sftp"), "-b", "-", f"{t.user}@127.0.0.1"],
                          input=batch.encode(), capture_output=True)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{t.name}: sftp failed: {done.stderr.decode(errors='replace')}")
    return max(elapsed - setup, 1e-3)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


PROMPT = re.compile(r"[$#] $")


async def open_shell(t: Target) -> tuple[asyncssh.SSHClientConnection, asyncssh.SSHClientProcess[str]]:
    conn = await connect(t)
    proc = await conn.create_process(term_type="xterm", term_size=(80, 24))
    seen = ""
    while not PROMPT.search(seen):
        seen += await asyncio.wait_for(proc.stdout.read(4096), 60)
    return conn, proc


async def idle_sessions(t: Target, count: int) -> tuple[float, float]:
    """Open `count` PTY shells (one connection each) and hold them: (seconds to open all,
    KiB of server memory per session)."""
    warm_conn, _ = await open_shell(t)
    await asyncio.sleep(1)
    before = memory_kib(t)
    gate = asyncio.Semaphore(16)
    held: list[asyncssh.SSHClientConnection] = []

    async def one() -> None:
        async with gate:
            conn, _ = await open_shell(t)
            held.append(conn)

    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(one() for _ in range(count)))
        opened = time.perf_counter() - t0
        await asyncio.sleep(2)
        after = memory_kib(t)
    finally:
        for conn in [*held, warm_conn]:
            conn.close()
        await asyncio.gather(*(c.wait_closed() for c in [*held, warm_conn]), return_exceptions=True)
    return opened, (after - before) / count


async def storm(t: Target, count: int, logins: int) -> tuple[float, float]:
    """One agent opens `count` sessions at once (`sleep 2` each, 10 channels a connection)
    while another logs in `logins` times with `ssh host true`: (median, slowest) seconds."""
    user, key = t.other or (t.user, t.key)
    conns = await asyncio.gather(*(connect(t) for _ in range(count // 10)))

    async def one(conn: asyncssh.SSHClientConnection) -> None:
        with contextlib.suppress(asyncssh.Error):  # past a cap: refused, as the row intends
            await conn.run("sleep 2")

    sessions = [asyncio.ensure_future(one(conns[i % len(conns)])) for i in range(count)]
    times = []
    try:
        await asyncio.sleep(0)  # the session requests are on their way
        for _ in range(logins):
            t0 = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(*ssh_argv(t, key=key), f"{user}@127.0.0.1", "true",
                                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, err = await proc.communicate()
            times.append(time.perf_counter() - t0)
            if proc.returncode != 0:
                raise RuntimeError(f"{t.name}: ssh true during the storm failed: {err.decode(errors='replace')}")
        await asyncio.gather(*sessions)
    finally:
        for conn in conns:
            conn.close()
    return statistics.median(times), max(times)


def measure(t: Target, group: str, sizes: Sizes, tmp: Path, data: Path) -> None:
    """One row group on one server (the caller alternates servers per group, so that a change
    in the machine's load during the run falls on both)."""
    r = t.results
    say = lambda what: print(f"  {t.name}: {what}", file=sys.stderr, flush=True)  # noqa: E731
    if group == "connect":
        say("connect latency")
        r["connect"] = connect_latency(t, sizes.connects) * 1000
    elif group == "execs":
        say("sequential execs")
        r["seq"] = asyncio.run(execs(t, sizes.execs, 1))
        say("parallel execs")
        r["par"] = asyncio.run(execs(t, sizes.execs, sizes.parallel))
    elif group == "sessions":
        say("idle sessions")
        r["open"], r["mem"] = asyncio.run(idle_sessions(t, sizes.sessions))
    elif group == "sftp":
        measure_sftp(t, sizes, tmp, data, say)
    elif group == "frontend":
        if not t.name.startswith("K"):
            return  # sshd forks per connection: no front end that keeps a peak
        say("front end RSS before and after a storm, and idle")
        rss = lambda: _field_kib(t.pid, "status", "VmRSS") / 1024  # noqa: E731
        r["fe_start"] = rss()
        asyncio.run(storm(t, sizes.storm, 1))
        sftp_transfer(t, f"put {data} fe.bin\nget fe.bin {tmp / 'fe-back.bin'}\nrm fe.bin\n")
        (tmp / "fe-back.bin").unlink()
        r["fe_peak"] = rss()
        time.sleep(15)  # housekeeping gives memory back within 10 s of the last connection
        r["fe_idle"] = rss()
    elif group == "storm":
        say(f"another agent's logins during a storm of {sizes.storm} sessions")
        r["storm_med"], r["storm_max"] = (s * 1000 for s in asyncio.run(storm(t, sizes.storm, sizes.storm_logins)))


def measure_sftp(t: Target, sizes: Sizes, tmp: Path, data: Path, say: Callable[[str], None]) -> None:
    """Throughput from the median time of `sizes.transfers` uploads and as many downloads."""
    r = t.results
    setup = statistics.median(sftp_transfer(t, "pwd\n") for _ in range(3))
    say("sftp upload")
    r["up"] = sizes.file_mib / statistics.median(
        sftp_transfer(t, f"put {data} big.bin\n", setup) for _ in range(sizes.transfers)
    )
    back = tmp / f"back-{t.name}.bin"
    say("sftp download")
    r["down"] = sizes.file_mib / statistics.median(
        sftp_transfer(t, f"get big.bin {back}\n", setup) for _ in range(sizes.transfers)
    )
    sftp_transfer(t, "rm big.bin\n")
    if sha256(back) != sha256(data):
        raise RuntimeError(f"{t.name}: the downloaded file differs from the uploaded one")
    back.unlink()


ROWS = ("connect", "execs", "sessions", "sftp", "storm", "frontend")


def table(k: Target, o: Target | None, sizes: Sizes, base: Target | None = None) -> str:
    rows = [
        (f"new connection + `true` (ms, median of {sizes.connects})", "connect", "{:.1f}"),
        (f"{sizes.execs} sequential execs, one connection (s)", "seq", "{:.2f}"),
        (f"{sizes.execs} execs, {sizes.parallel} at a time (s)", "par", "{:.2f}"),
        (f"sftp upload {sizes.file_mib} MiB (MiB/s, median of {sizes.transfers})", "up", "{:.1f}"),
        (f"sftp download {sizes.file_mib} MiB (MiB/s, median of {sizes.transfers})", "down", "{:.1f}"),
        (f"open {sizes.sessions} idle PTY sessions (s)", "open", "{:.2f}"),
        (f"memory per idle session, {sizes.sessions} held (KiB)", "mem", "{:.0f}"),
        (f"another agent's `ssh true` during a storm of {sizes.storm} sessions, median (ms)", "storm_med", "{:.0f}"),
        (f"... the slowest of {sizes.storm_logins} (ms)", "storm_max", "{:.0f}"),
        ("front end RSS before a storm (MiB)", "fe_start", "{:.0f}"),
        (f"... after {sizes.storm} sessions and sftp of {sizes.file_mib} MiB (MiB)", "fe_peak", "{:.0f}"),
        ("... after 15 s idle (MiB)", "fe_idle", "{:.0f}"),
    ]
    width = max(len(r[0]) for r in rows)
    head = f"{'':{width}}  {'K':>9}  {'sshd':>9}  {'K/sshd':>7}"
    if base is not None:
        head += f"  {'K@base':>9}  {'K/base':>7}"
    lines = [head, "-" * len(head)]
    ratio = lambda a, b: f"{a / b:.2f}" if b else "-"  # noqa: E731
    for label, key, fmt in rows:
        if key not in k.results:
            continue
        kv = k.results[key]
        if o is not None and key in o.results:  # a row sshd has no counterpart of shows "-"
            ov = o.results[key]
            line = f"{label:{width}}  {fmt.format(kv):>9}  {fmt.format(ov):>9}  {ratio(kv, ov):>7}"
        else:
            line = f"{label:{width}}  {fmt.format(kv):>9}  {'-':>9}  {'-':>7}"
        if base is not None and key in base.results:
            bv = base.results[key]
            line += f"  {fmt.format(bv):>9}  {ratio(kv, bv):>7}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--sessions", type=int, metavar="N", help="idle sessions to hold (default 1000)")
    parser.add_argument("--execs", type=int, metavar="N", help="execs per exec row (default 200)")
    parser.add_argument("--file-mib", type=int, metavar="N", help="size of the sftp file (default 100)")
    parser.add_argument("--only", metavar="ROWS", default=",".join(ROWS),
                        help=f"comma-separated row groups to measure (default all: {','.join(ROWS)})")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also measure the K of another checkout (e.g. `git worktree add DIR REV` with its "
                             "native module built) and print K/base ratios")
    parser.add_argument("--no-sshd", action="store_true",
                        help="measure K (and --baseline) only: no sshd, no temporary user")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else Sizes()
    if args.sessions:
        sizes = dataclasses.replace(sizes, sessions=args.sessions)
    if args.execs:
        sizes = dataclasses.replace(sizes, execs=args.execs)
    if args.file_mib:
        sizes = dataclasses.replace(sizes, file_mib=args.file_mib)
    only = {g.strip() for g in args.only.split(",") if g.strip()}
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a socket per held session
    if only - set(ROWS):
        parser.error(f"--only: unknown row groups {sorted(only - set(ROWS))}; known: {','.join(ROWS)}")
    for program in ("ssh", "sftp", "ssh-keygen"):
        if shutil.which(program) is None:
            sys.exit(f"{program} is missing: apt-get install -y openssh-client")
    with tempfile.TemporaryDirectory(prefix="kbench-ssh-") as name:
        tmp = Path(name)
        tmp.chmod(0o755)  # sshd reads the authorized keys file as the bench user
        key = client_key(tmp)
        data = tmp / "data.bin"
        with data.open("wb") as f:
            for _ in range(sizes.file_mib):
                f.write(os.urandom(1 << 20))
        (tmp / "sshd").mkdir()
        targets: list[Target] = []
        try:
            targets.append(start_k(tmp, key, sizes.sessions))
            if not args.no_sshd:
                targets.append(start_sshd(tmp / "sshd", key, sizes.sessions))
            if args.baseline:
                targets.append(start_k(tmp, key, sizes.sessions, os.path.abspath(args.baseline), "K@base"))
            for t in targets:
                subprocess.run([*ssh_argv(t), f"{t.user}@127.0.0.1", "true"], capture_output=True)  # warm up
            for group in ROWS:
                if group in only:
                    for t in targets:
                        measure(t, group, sizes, tmp, data)
        finally:
            for t in reversed(targets):
                t.stop()
        load = os.getloadavg()
        sshd = None if args.no_sshd else targets[1]
        print(table(targets[0], sshd, sizes, targets[-1] if args.baseline else None))
        print(f"(load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
