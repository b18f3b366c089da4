"""The operator's side of disk quotas: `komputer init --agent-disk`, `agent set --disk`,
`komputer quota`, and `komputer compact`, which gives the host back what a deleted file left in
data.mdb and refuses while another process has the state open."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kfs.agents import find_agent
from kfs.fsck import check
from kfs.kstate import KState
from kfs.vfs import VFS, Cred, PathFS

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def komputer(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args, "--state", str(state)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))


def write_as(state: Path, agent: str, name: str, size: int) -> None:
    with KState(state) as ks:
        found = find_agent(ks, agent)
        assert found is not None
        PathFS(VFS(ks), cred=Cred(found.uid, found.gid), cwd=found.home).write_file(name, b"x" * size)


def test_quota_lists_each_agents_use_and_limit(tmp_path: Path) -> None:
    state = tmp_path / "s"
    assert komputer(state, "init", "--agent-disk", "8M").returncode == 0
    assert komputer(state, "agent", "add", "alice").returncode == 0
    assert komputer(state, "agent", "add", "bob").returncode == 0
    done = komputer(state, "agent", "set", "bob", "--disk", "2M", "--files", "50")
    assert done.returncode == 0 and "disk=2 MiB" in done.stdout and "files=50" in done.stdout
    write_as(state, "alice", "f", 3 * MIB)
    lines = komputer(state, "quota").stdout.splitlines()
    assert lines[0].split() == ["User", "used", "limit", "files", "limit"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert rows["alice"] == ["3072K", "8192K", "2", "1000000"]  # her home and f
    assert rows["bob"] == ["0K", "2048K", "1", "50"]
    assert rows["root"][1:] == ["none", rows["root"][2], "none"]


def test_agent_set_disk_zero_lifts_the_limit_and_default_restores_it(tmp_path: Path) -> None:
    state = tmp_path / "s"
    assert komputer(state, "agent", "add", "alice").returncode == 0
    assert "disk=none" in komputer(state, "agent", "set", "alice", "--disk", "0").stdout
    assert "disk=4 GiB" in komputer(state, "agent", "set", "alice", "--disk", "default").stdout


def test_compact_gives_back_what_a_deleted_file_left(tmp_path: Path) -> None:
    state = tmp_path / "s"
    assert komputer(state, "agent", "add", "alice").returncode == 0
    write_as(state, "alice", "keep", 100_000)
    write_as(state, "alice", "big", 8 * MIB)
    with KState(state) as ks:
        PathFS(VFS(ks)).unlink("/home/alice/big")
    before = (state / "data.mdb").stat().st_size
    assert before > 8 * MIB  # LMDB keeps the freed pages: the file does not shrink by itself
    done = komputer(state, "compact")
    assert done.returncode == 0, done.stderr
    after = (state / "data.mdb").stat().st_size
    assert after < 2 * MIB and f"data.mdb {before} -> {after} bytes" in done.stdout
    with KState(state) as ks:
        assert check(ks).clean
        assert PathFS(VFS(ks)).read_file("/home/alice/keep") == b"x" * 100_000


def test_compact_refuses_while_another_process_holds_the_state(tmp_path: Path) -> None:
    state = tmp_path / "s"
    assert komputer(state, "init").returncode == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from kfs.kstate import KState; s = KState(sys.argv[1]); "
                               "print('open', flush=True); sys.stdin.read()", str(state)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        size = (state / "data.mdb").stat().st_size
        refused = komputer(state, "compact")
        assert refused.returncode == 1
        assert "the state is in use (a server, a mount or a shell has it open)" in refused.stderr
        assert (state / "data.mdb").stat().st_size == size and not (state / "data.mdb.compact").exists()
    finally:
        holder.communicate("", timeout=60)
    assert komputer(state, "compact").returncode == 0


def test_quota_recount_drives_counts_what_the_host_changed(tmp_path: Path) -> None:
    """A host drive's files are counted as K writes them; what the host itself put there (or
    took away) is counted by `komputer quota --recount-drives`, a file with two names once."""
    from kfs.runtime import image

    state = tmp_path / "s"
    assert komputer(state, "agent", "add", "alice").returncode == 0
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "komputer.toml").write_text(f'[drives.data]\npath = "/mnt/data"\nkind = "host"\n'
                                                     f'source = "{data}"\n')
    with KState(state) as ks:
        image.apply(ks, image.load(tmp_path / "img"), by="test")
        alice = find_agent(ks, "alice")
        assert alice is not None
    (data / "sub" / "f").write_bytes(b"x" * (3 * MIB))
    os.link(data / "sub" / "f", data / "g")
    (data / "root's").write_bytes(b"r" * MIB)  # a host user's: not counted
    os.chown(data / "sub" / "f", alice.uid, alice.gid)

    def alices(*flags: str) -> str:
        rows = {line.split()[0]: line.split()[1:] for line in komputer(state, "quota", *flags).stdout.splitlines()[1:]}
        return rows["alice"][0]

    home = int(alices().rstrip("K"))  # her home's files only: K never saw the host's
    assert alices("--recount-drives") == f"{home + 3072}K"
    (data / "g").unlink()
    (data / "sub" / "f").unlink()
    assert alices("--recount-drives") == f"{home}K"
