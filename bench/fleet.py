"""bench/fleet.py: a fleet of K hosts on etcd, measured in one run.

Starts a 1-member etcd (Debian's etcd-server) and two `komputer serve` hosts on 127.0.0.1 and
127.0.0.2 sharing one computers root, in a temp dir; everything is stopped at the end. Rows:
- routed login vs direct login to the owner: connect + `true` + close with asyncssh, median of N
  (goal: routed < 1.3x direct);
- first login of a cold computer (never opened on its host), median of 5 (goal: < 100 ms);
- placement of 10,000 keys (one `place_many`: a compare-and-swap of 128 keys a transaction,
  8 transactions in flight) (goal: < 5 s);
- failover RTO: kill -9 of the owner of a computer, until a login through the other host
  runs a command on it again, probing every 50 ms (goal: < 10 s; lease TTL 3 s: 2 s lapsed under load).

    .venv/bin/python bench/fleet.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

import asyncssh  # noqa: E402

from kshell.server.fleet import Member, connect  # noqa: E402

PY = [sys.executable, "-m", "kshell.cli"]
ENV = {**os.environ, "PYTHONPATH": ROOT}


def port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def komputer(*args: str) -> None:
    subprocess.run([*PY, *args], check=True, capture_output=True, env=ENV)


async def login(address: str, port_: int, user: str, key: asyncssh.SSHKey) -> float:
    start = time.perf_counter()
    async with asyncssh.connect(address, port_, username=user, client_keys=[key], known_hosts=None,
                                agent_path=None, config=None) as conn:
        result = await conn.run("true")
        assert result.exit_status == 0, result.stderr
    return time.perf_counter() - start


def row(name: str, value: str, goal: str) -> None:
    print(f"{name:<44} {value:>14}   goal {goal}", flush=True)


async def main(quick: bool) -> None:
    if shutil.which("etcd") is None:
        sys.exit("etcd is missing: install etcd-server (apt-get install -y etcd-server)")
    tmp = Path(tempfile.mkdtemp(prefix="kfleet-"))
    procs: list[subprocess.Popen[str]] = []
    try:
        cp, pp = port(), port()
        procs.append(subprocess.Popen(
            ["etcd", "--name", "e0", "--data-dir", str(tmp / "e0"), "--listen-client-urls", f"http://127.0.0.1:{cp}",
             "--advertise-client-urls", f"http://127.0.0.1:{cp}", "--listen-peer-urls", f"http://127.0.0.1:{pp}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{pp}",
             "--initial-cluster", f"e0=http://127.0.0.1:{pp}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        endpoints = [f"127.0.0.1:{cp}"]
        client = connect(endpoints)
        for _ in range(200):
            try:
                await client.put(b"/bench/up", b"1")
                break
            except Exception:  # noqa: BLE001 - not up yet
                await asyncio.sleep(0.05)
        root = tmp / "root"
        keyfile = tmp / "key"
        key = asyncssh.generate_private_key("ssh-ed25519")
        key.write_private_key(str(keyfile))
        key.write_public_key(str(keyfile) + ".pub")
        names = [f"c{i}" for i in range(12)]
        komputer("computers", "create", "--root", str(root), "--agent", "alice", "--key", str(keyfile) + ".pub", *names)
        hosts: dict[str, tuple[subprocess.Popen[str], str, int]] = {}
        for i in range(2):
            cfg = tmp / f"h{i}.toml"
            cfg.write_text(f'[computers]\nroot = "{root}"\nidle_for = 600.0\n[fleet]\n'
                           f'etcd = ["{endpoints[0]}"]\nname = "h{i}"\nttl = 3\n')
            proc = subprocess.Popen([*PY, "serve", "--config", str(cfg), "--listen", f"127.0.0.{i + 1}:0"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV)
            procs.append(proc)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            hosts[f"h{i}"] = (proc, f"127.0.0.{i + 1}", int(line.split("listening on ")[1].split()[0].rsplit(":")[1]))
        member = Member(client, "bench", "", prefix="/k/")

        # first login of a cold computer: placed and opened on this login
        cold = []
        for n in names[:5]:
            owner = (await member.place(n)).owner
            _, addr, p = hosts[owner]
            cold.append(await login(addr, p, f"alice+{n}", key))
        row("first login of a cold computer (median)", f"{statistics.median(cold) * 1000:.0f} ms", "< 100 ms")

        # routed vs direct, on a warm computer
        n = names[5]
        owner = (await member.place(n)).owner
        other = next(h for h in hosts if h != owner)
        await login(*hosts[owner][1:], f"alice+{n}", key)
        rounds = 5 if quick else 20
        direct = statistics.median([await login(*hosts[owner][1:], f"alice+{n}", key) for _ in range(rounds)])
        routed = statistics.median([await login(*hosts[other][1:], f"alice+{n}", key) for _ in range(rounds)])
        row("direct login to the owner (median)", f"{direct * 1000:.1f} ms", "")
        row("routed login through another host (median)", f"{routed * 1000:.1f} ms", "")
        row("routed / direct", f"{routed / direct:.2f}x", "< 1.3x")

        # placement of 10,000 keys
        many = [f"p{i}" for i in range(2000 if quick else 10_000)]
        start = time.perf_counter()
        await member.place_many(many)
        row(f"placement of {len(many):,} keys", f"{time.perf_counter() - start:.2f} s", "< 5 s")

        # failover RTO
        n = names[6]
        owner = (await member.place(n)).owner
        survivor = next(h for h in hosts if h != owner)
        await login(*hosts[owner][1:], f"alice+{n}", key)
        hosts[owner][0].send_signal(signal.SIGKILL)
        hosts[owner][0].wait()
        killed = time.perf_counter()
        while True:
            try:
                await login(*hosts[survivor][1:], f"alice+{n}", key)
                break
            except (OSError, asyncssh.Error, AssertionError):
                await asyncio.sleep(0.05)
        row("failover RTO (kill -9, lease TTL 3 s)", f"{time.perf_counter() - killed:.2f} s", "< 10 s")
        await client.close()
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and 2,000 keys")
    asyncio.run(main(parser.parse_args().quick))
