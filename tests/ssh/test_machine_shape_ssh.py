"""The machine's own shape over SSH: names from K's agents in the shell and in SFTP listings,
/etc/passwd, /tmp and /dev for a logged-in agent, and the appliance's default host name."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kserver import Bench, need

from kshell.server import ServerConfig
from kshell.server.config import Penalties


def test_an_agent_sees_k_names_tmp_etc_and_dev(bench: Bench) -> None:
    r = bench.ssh("id; whoami; ls -ld /home/bob | cut -d' ' -f3,4; cut -d: -f1 /etc/passwd | grep -c -x -e root"
                  " -e alice -e bob; f=$(mktemp) && echo made; diff <(echo a) <(echo b) > /dev/null; echo $?;"
                  " ls /dev | tr '\\n' ' '; echo; head -c 16 /dev/urandom | wc -c")
    lines = r.stdout.decode().splitlines()
    uid = lines[0].split("=")[1].split("(")[0]
    assert int(uid) >= 100_000, lines[0]  # a new agent's id: no host account's (kfs.agents.records)
    assert lines == [
        f"uid={uid}(alice) gid={uid}(alice) groups={uid}(alice)", "alice", "bob bob", "3", "made", "1",
        "fd full null random stderr stdin stdout tty urandom zero ", "16",
    ], r.stderr


def test_sftp_long_listing_names_agents(bench: Bench, tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    batch.write_text("ls -l /home\n")
    argv = [need("sftp"), *bench.ssh_options(port_flag="-P"), "-b", str(batch), "alice@127.0.0.1"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    owners = {tuple(line.split()[2:4]) for line in r.stdout.splitlines() if line.startswith("d")}
    assert {("alice", "alice"), ("bob", "bob")} <= owners, r.stdout


def test_the_default_host_name_is_komputer(make_server) -> None:  # noqa: ANN001
    b = make_server(ServerConfig(penalties=Penalties(exempt=("127.0.0.1/32",))))
    assert b.ssh('hostname; echo "$HOSTNAME"; uname -n').stdout == b"komputer\nkomputer\nkomputer\n"
