"""bench/many_computers.py: many computers on one host, counted from /proc.

Makes KEYS computers (`komputer computers create --agent --key`), serves them with `komputer
serve --computers` (max_warm WARM, idle_for 10 s: the logins touch many more than WARM keys in
that time, so the pool's bound is what closes them), logs in to every key once with asyncssh
(authentication opens the computer), every few logins running a command (that computer starts
its worker zygote), and reports the host tree's open files, memory (PSS) and processes at rest,
at most during the logins, and once every computer is closed again; the disk a computer takes;
the first login of a cold computer that runs a command. Counts from /proc: the tree is the host
and the processes below it.

    .venv/bin/python bench/many_computers.py [--keys 10000] [--warm 100] [--commands 100]
"""

from __future__ import annotations

import argparse
import asyncio
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
sys.path.insert(0, os.path.join(ROOT, "tests", "fleet"))

import asyncssh  # noqa: E402
from procfs import fd_count, fds, pss_kib, tree  # noqa: E402

PY = [sys.executable, "-m", "kshell.cli"]
ENV = {**os.environ, "PYTHONPATH": ROOT}


def row(name: str, value: str) -> None:
    print(f"{name:<52} {value}", flush=True)


async def main(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kmany-"))
    proc = None
    try:
        root = tmp / "root"
        key = asyncssh.generate_private_key("ssh-ed25519")
        (tmp / "key.pub").write_bytes(key.export_public_key())
        keys = [f"k{i:05d}" for i in range(args.keys)]
        start = time.perf_counter()
        for i in range(0, len(keys), 1000):
            subprocess.run([*PY, "computers", "create", "--root", str(root), "--agent", "alice", "--key",
                            str(tmp / "key.pub"), *keys[i:i + 1000]], check=True, capture_output=True, env=ENV)
        row(f"create {args.keys:,} computers", f"{time.perf_counter() - start:.1f} s")
        disk = subprocess.run(["du", "-sk", str(root)], capture_output=True, text=True, check=True).stdout.split()[0]
        row("disk, all computers (du)", f"{int(disk) / 1024:.0f} MiB ({int(disk) / args.keys:.0f} KiB each)")
        config = tmp / "komputer.toml"
        config.write_text(f'[computers]\nroot = "{root}"\nmax_warm = {args.warm}\nidle_for = 10.0\n')
        proc = subprocess.Popen([*PY, "serve", "--config", str(config), "--listen", "127.0.0.1:0"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV)
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split("listening on ")[1].split()[0].rsplit(":")[1])
        fds0, kib0 = fd_count(proc.pid), pss_kib(proc.pid)
        row("host at rest: open files, memory (PSS)", f"{fds0} fds, {kib0 / 1024:.0f} MiB")
        every = max(1, args.keys // max(args.commands, 1)) if args.commands else 0
        peak_fds = peak_kib = peak_procs = 0
        cold: list[float] = []
        start = time.perf_counter()
        for i, k in enumerate(keys):
            t0 = time.perf_counter()
            async with asyncssh.connect("127.0.0.1", port, username=f"alice+{k}", client_keys=[key],
                                        known_hosts=None, agent_path=None, config=None) as conn:
                if every and i % every == 0:
                    assert (await conn.run("true")).exit_status == 0
                    cold.append(time.perf_counter() - t0)
            if i % 200 == 199 or i == len(keys) - 1:
                peak_fds, peak_kib = max(peak_fds, fd_count(proc.pid)), max(peak_kib, pss_kib(proc.pid))
                peak_procs = max(peak_procs, len(tree(proc.pid)) - 1)
        took = time.perf_counter() - start
        row(f"logins to {args.keys:,} keys, {len(cold)} running a command", f"{took:.1f} s "
            f"({args.keys / took:.0f}/s)")
        row(f"host, {args.warm} warm, most seen: fds, memory, processes",
            f"{peak_fds} fds, {peak_kib / 1024:.0f} MiB, {peak_procs} processes")
        row("  per warm computer over rest", f"{(peak_fds - fds0) / args.warm:.1f} fds, "
            f"{(peak_kib - kib0) / 1024 / args.warm:.1f} MiB")
        if cold:
            row("first login of a cold computer running `true` (median)", f"{statistics.median(cold) * 1000:.0f} ms")
        deadline = time.monotonic() + 300
        while (len(tree(proc.pid)) > 1 or any(f.startswith(str(root)) for f in fds(proc.pid))) \
                and time.monotonic() < deadline:
            await asyncio.sleep(0.5)  # idle_for passes: each computer is closed
        row("host once every computer closed: fds, memory, processes",
            f"{fd_count(proc.pid)} fds, {pss_kib(proc.pid) / 1024:.0f} MiB, {len(tree(proc.pid)) - 1} processes")
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--warm", type=int, default=100)
    parser.add_argument("--commands", type=int, default=20, help="logins that run a command (spread evenly)")
    asyncio.run(main(parser.parse_args()))
