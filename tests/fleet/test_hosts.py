"""Three K hosts (`komputer serve` on 127.0.0.1, .2 and .3) sharing one computers root, in one
fleet on the real etcd cluster: each computer is served by the one host it is placed on;
kill -9 of a host brings its computers back on another with every acknowledged write (RPO 0,
the state being on the shared disk) once its lease is gone (RTO measured); no computer is ever
open on two hosts (the open-lock is held by one process at a time, and its token only grows)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import HANG, Etcd
from kserver import keygen, komputer, need, start_host
from procfs import holding

from kshell.server.fleet import Member, connect

KEYS = [f"c{i}" for i in range(9)]


@dataclass
class Fleet:
    root: Path
    key: Path
    hosts: dict[str, tuple[subprocess.Popen[str], str, int]]  # name -> (process, address, port)
    prefix: str
    etcd: Etcd
    config: Path  # h0's komputer.toml (its [fleet] names the cluster)

    def argv(self, host: str, user: str, command: str) -> list[str]:
        _, address, port = self.hosts[host]
        return [need("ssh"), "-p", str(port), "-i", str(self.key), "-F", "/dev/null", "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes",
                "-o", "IdentitiesOnly=yes", f"{user}@{address}", command]

    def ssh(self, host: str, user: str, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(host, user, command), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=HANG)

    def holders(self, key: str) -> set[str]:
        """The hosts whose process tree (the host, its zygotes and workers) has the computer's
        state open or mapped."""
        return {h for h, (proc, _, _) in self.hosts.items()
                if proc.poll() is None and holding(proc.pid, self.root / key)}

    def placements(self) -> dict[str, tuple[str, int]]:
        async def read() -> dict[str, tuple[str, int]]:
            reader = Member(connect(self.etcd.endpoints), "reader", "", prefix=self.prefix)
            try:
                return {p.key: (p.owner, p.token) for p in await reader.placements()}
            finally:
                await reader.client.close()

        return asyncio.run(read())


@pytest.fixture
def fleet(etcd: Etcd, tmp_path: Path) -> Iterator[Fleet]:
    root = tmp_path / "root"
    key = keygen(tmp_path / "alice_key", "alice@test")
    prefix = f"/k-{tmp_path.name}/"
    komputer("computers", "create", "--root", str(root), "--agent", "alice", "--key", str(key) + ".pub", *KEYS)
    hosts = {}
    try:
        for i in range(3):
            config = tmp_path / f"h{i}.toml"
            config.write_text(f'[ssh]\nhostname = "h{i}"\n\n[computers]\nroot = "{root}"\nidle_for = 600.0\n\n'
                              f'[fleet]\netcd = {list(etcd.endpoints)!r}\nname = "h{i}"\nttl = 3\n'
                              f'prefix = "{prefix}"\n'.replace("'", '"'))
            proc, port = start_host(config, f"127.0.0.{i + 1}:0")
            hosts[f"h{i}"] = (proc, f"127.0.0.{i + 1}", port)
        yield Fleet(root, key, hosts, prefix, etcd, tmp_path / "h0.toml")
    finally:
        for proc, _, _ in hosts.values():
            if proc.poll() is None:
                proc.terminate()
        for proc, _, _ in hosts.values():
            proc.wait(HANG)
            print(proc.stdout.read() if proc.stdout else "")


def test_each_computer_is_served_by_the_host_it_is_placed_on_and_survives_kill_9(fleet: Fleet) -> None:
    served: dict[str, str] = {}
    for k in KEYS:  # a login through any host lands on the one etcd places the key on
        landed = {h: fleet.ssh(h, f"alice+{k}", "echo $HOSTNAME") for h in fleet.hosts}
        assert all(r.returncode == 0 for r in landed.values()), {h: (r.returncode, r.stdout, r.stderr) for h, r in landed.items()}
        assert len({r.stdout for r in landed.values()}) == 1
        served[k] = landed["h0"].stdout.strip()
    placed = fleet.placements()
    assert served == {k: placed[k][0] for k in KEYS}
    assert len(set(served.values())) >= 2  # spread, not all on one host

    victim = max(set(served.values()), key=list(served.values()).count)
    theirs = [k for k, h in served.items() if h == victim]
    acknowledged = {k: 0 for k in theirs}
    for k in theirs:  # acknowledged writes: each an ssh that returned 0
        for n in range(5):
            assert fleet.ssh(victim, f"alice+{k}", f"echo {n} > w{n}").returncode == 0
            acknowledged[k] += 1
    fleet.hosts[victim][0].send_signal(signal.SIGKILL)
    fleet.hosts[victim][0].wait(HANG)
    killed = time.monotonic()
    others = [h for h in fleet.hosts if h != victim]
    back: dict[str, str] = {}
    deadline = killed + HANG
    while len(back) < len(theirs):
        assert time.monotonic() < deadline, f"never served again: {set(theirs) - set(back)}"
        for k in theirs:
            if k in back:
                continue
            result = fleet.ssh(others[len(back) % 2], f"alice+{k}", "echo $HOSTNAME")
            if result.returncode == 0:
                back[k] = result.stdout.strip()
        time.sleep(0.1)
    rto = time.monotonic() - killed
    lost = 0
    for k in theirs:
        seen = fleet.ssh(back[k], f"alice+{k}", "cat w0 w1 w2 w3 w4 | wc -l").stdout.strip()
        lost += acknowledged[k] - int(seen)
    print(f"failover: {len(theirs)} computers back in {rto:.2f} s (RTO, lease ttl 3 s), "
          f"{lost} of {sum(acknowledged.values())} acknowledged writes lost (RPO)")
    assert lost == 0
    after = fleet.placements()
    for k in theirs:
        assert after[k][0] == back[k] and after[k][1] > placed[k][1]  # a new fencing token
        holder = (fleet.root / ".locks" / k).read_text().split()
        assert holder == [back[k], str(after[k][1])]  # the open-lock names the new owner's token
    for proc, _, _ in fleet.hosts.values():
        if proc.poll() is None:
            proc.terminate()
            proc.wait(HANG)
    for k in theirs:
        fsck = komputer("--state", str(fleet.root / k), "fsck", check=False)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_fleet_move_hands_a_computer_to_another_host_and_the_old_one_holds_nothing_of_it(fleet: Fleet) -> None:
    """`komputer fleet move KEY HOST`: the old owner cuts the computer's connections and closes
    it (its host, zygote and workers then hold no file of it: it cannot write), the move
    returns once it has, and every login, through any host, lands on the new owner with what
    was written before. Never two hosts holding the state, checked at each step."""
    key = "c1"
    first = fleet.ssh("h0", f"alice+{key}", "echo before > moved.txt; echo $HOSTNAME")
    assert first.returncode == 0, first.stderr
    old = first.stdout.strip()
    new = next(h for h in sorted(fleet.hosts) if h != old)
    held = subprocess.Popen(fleet.argv(old, f"alice+{key}", "echo started; cat"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert held.stdout is not None and held.stdout.readline() == "started\n"
        assert fleet.holders(key) == {old}
        token = fleet.placements()[key][1]
        status = komputer("fleet", "status", "--config", str(fleet.config)).stdout
        hosts = {line.split()[0]: line.split() for line in status.splitlines()[1:4]}
        assert set(hosts) == {"h0", "h1", "h2"}
        assert all(int(row[2], 16) > 0 and 0 <= int(row[3]) <= 3 and row[4] == "s" for row in hosts.values())  # lease, TTL left
        assert [key, old, str(token), old] in [line.split() for line in status.splitlines()]  # placed and open there

        moved = komputer("fleet", "move", key, new, "--config", str(fleet.config))
        assert moved.stdout == f"komputer fleet move: {key} moved from {old} to {new} (token "\
                               f"{fleet.placements()[key][1]})\n"
        assert held.wait(HANG) == 255  # its connection cut by the old owner
        assert fleet.holders(key) == set()  # closed on the old owner: nothing of it open or mapped there

        again = fleet.ssh(old, f"alice+{key}", "cat moved.txt; echo $HOSTNAME")  # through the old owner
        assert again.returncode == 0, again.stderr
        assert again.stdout == f"before\n{new}\n"
        assert fleet.holders(key) == {new}
        owner, moved_token = fleet.placements()[key]
        assert owner == new and moved_token > token
        assert (fleet.root / ".locks" / key).read_text().split() == [new, str(moved_token)]
        row = [line.split() for line in komputer("fleet", "status", key, "--config", str(fleet.config)).stdout.splitlines()]
        assert [key, new, str(moved_token), new] in row

        assert "is already on" in komputer("fleet", "move", key, new, "--config", str(fleet.config)).stdout
        refused = komputer("fleet", "move", key, "nosuch", "--config", str(fleet.config), check=False)
        assert refused.returncode == 1 and refused.stderr == "komputer fleet move: nosuch: no such live host\n"
        assert fleet.placements()[key] == (new, moved_token)
    finally:
        if held.poll() is None:
            held.kill()
        held.wait(HANG)
