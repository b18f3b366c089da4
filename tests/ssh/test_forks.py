"""Forks over real ssh: an agent logs into its fork with `K_FORK=N` or `K_SESSION=fork-N`
(SetEnv), works there with the fork's mode while the state's tree stays as it was; a fork that is not the agent's, or none,
refuses the login with one line; `komputer fork merge` then brings the work home."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kserver import Bench

from kfs import forks
from kfs.vfs import VFS, PathFS
from kshell.server import ServerConfig

ROOT = Path(__file__).resolve().parents[2]


def in_fork(b: Bench, number: int | str, command: str, user: str = "alice") -> subprocess.CompletedProcess[bytes]:
    return b.ssh(command, user=user, extra=["-o", f"SetEnv=K_FORK={number}"])


def test_an_agent_works_in_its_fork(make_server) -> None:  # noqa: ANN001
    b = make_server(ServerConfig())
    assert b.ssh("echo original > notes.txt && echo ok").stdout == b"ok\n"
    number = forks.create(b.state, agent="alice", by="test")
    done = in_fork(b, number, "echo tried >> notes.txt; mkdir attempt && echo 1 > attempt/a; cat notes.txt; ls")
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"original\ntried\nattempt\nnotes.txt\n"
    assert b.ssh("cat notes.txt; ls").stdout == b"original\nnotes.txt\n"  # the state's tree: untouched
    again = b.ssh("cat attempt/a", extra=["-o", f"SetEnv=K_SESSION=fork-{number}"])  # the fork as a named session
    assert again.stdout == b"1\n", again.stderr
    merged = subprocess.run([sys.executable, "-m", "kshell.cli", "--state", str(b.root / "state"), "fork", "merge",
                             str(number)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert merged.returncode == 0, merged.stderr
    assert merged.stdout == "A /home/alice/attempt\nM /home/alice/notes.txt\n"
    assert b.ssh("cat notes.txt attempt/a").stdout == b"original\ntried\n1\n"


def test_a_forks_mode_and_who_may_log_in(make_server) -> None:  # noqa: ANN001
    b = make_server(ServerConfig())
    review = forks.create(b.state, agent="alice", mode="readonly", by="test")
    done = in_fork(b, review, "cat /etc/hostname >/dev/null; echo x > f; echo rc=$?")
    assert done.stdout == b"rc=1\n" and b"Read-only file system" in done.stderr
    for user, number, message in (
        ("bob", review, f"K_FORK={review}: the fork is not agent bob's (komputer fork create --agent bob)"),
        ("alice", 99, "K_FORK=99: no such fork (komputer fork list shows them)"),
        ("alice", "x", "K_FORK=x: no such fork (komputer fork list shows them)"),
    ):
        done = in_fork(b, number, "echo ran", user=user)
        assert (done.returncode, done.stdout, done.stderr) == (1, b"", f"komputer: {message}\n".encode())
    fs = PathFS(VFS(b.state, by="test"))
    assert not fs.exists("/home/alice/f")


def test_sftp_in_a_fork(make_server, tmp_path: Path) -> None:  # noqa: ANN001
    """SFTP naming a fork (SetEnv=K_FORK) works in the fork's tree; one not the agent's is refused."""
    from kserver import need

    b = make_server(ServerConfig())
    number = forks.create(b.state, agent="alice", by="test")
    (tmp_path / "up.txt").write_text("uploaded\n")
    (tmp_path / "batch").write_text(f"put {tmp_path / 'up.txt'} up.txt\n")

    def sftp(user: str) -> subprocess.CompletedProcess[str]:
        argv = [need("sftp"), *b.ssh_options(user, port_flag="-P"), "-o", f"SetEnv=K_FORK={number}",
                "-b", str(tmp_path / "batch"), f"{user}@127.0.0.1"]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    done = sftp("alice")
    assert done.returncode == 0, done.stderr
    assert in_fork(b, number, "cat up.txt").stdout == b"uploaded\n"
    assert not PathFS(VFS(b.state, by="test")).exists("/home/alice/up.txt")  # the state's tree: untouched
    assert sftp("bob").returncode != 0
    assert not PathFS(VFS(b.state, by="test")).exists("/home/bob/up.txt")


def test_hostile_fork_and_session_names_are_refused_with_a_message(make_server) -> None:  # noqa: ANN001
    """Values no fork or session can have (negative, past a u64, huge, with `/`, `..` or `$(`)
    end the channel with one line saying why, never a dropped connection; nothing is stored."""
    b = make_server(ServerConfig())
    for variable, value, message in (
        ("K_FORK", "-1", "K_FORK=-1: no such fork (komputer fork list shows them)"),
        ("K_FORK", "9" * 20, f"K_FORK={'9' * 20}: no such fork (komputer fork list shows them)"),
        ("K_SESSION", "fork-" + "1" * 30, f"K_FORK={'1' * 30}: no such fork (komputer fork list shows them)"),
        ("K_SESSION", "x" * 5000, f"K_SESSION={'x' * 40}...: invalid session name"),
        ("K_SESSION", "../../etc", "K_SESSION=../../etc: invalid session name"),
        ("K_SESSION", "a/b", "K_SESSION=a/b: invalid session name"),
        ("K_SESSION", "$(id)", "K_SESSION=$(id): invalid session name"),
    ):
        done = b.ssh("echo ran", extra=["-o", f"SetEnv={variable}={value}"])
        assert done.returncode == 1 and done.stdout == b"", (value, done)
        assert done.stderr.startswith(f"komputer: {message}".encode()) and done.stderr.count(b"\n") == 1, done.stderr
    from kfs.agents.sessions import list_sessions

    assert [r.name for r, _ in list_sessions(b.state) if not r.ephemeral] == []
    assert b.ssh("echo ok", extra=["-o", "SetEnv=K_SESSION=work.2"]).stdout == b"ok\n"  # a good name still works


def test_a_limited_forks_scope_narrows_the_agents_own(make_server, tmp_path: Path) -> None:  # noqa: ANN001
    """An agent whose own scope is `~`, in a fork made `--mode limited --scope ~/proj`, writes
    only under ~/proj there: a write must be allowed by both scopes (the stricter wins), in the
    shell and over SFTP."""
    from kserver import need

    from kshell.delegate.config import set_agent_overrides

    b = make_server(ServerConfig())
    assert b.ssh("mkdir proj && echo ok").stdout == b"ok\n"
    set_agent_overrides(b.state, "alice", mode="limited", scope=("~",))
    number = forks.create(b.state, agent="alice", mode="limited", scope=("~/proj",), by="test")
    done = in_fork(b, number, "touch ~/proj/in.txt; echo rc=$?; touch ~/out.txt; echo rc=$?")
    assert done.stdout == b"rc=0\nrc=1\n", done.stderr
    assert b"touch: cannot touch '/home/alice/out.txt': Read-only file system" in done.stderr
    (tmp_path / "up.txt").write_text("uploaded\n")
    (tmp_path / "batch").write_text(f"put {tmp_path / 'up.txt'} proj/up.txt\nput {tmp_path / 'up.txt'} up.txt\n")
    argv = [need("sftp"), *b.ssh_options("alice", port_flag="-P"), "-o", f"SetEnv=K_FORK={number}",
            "-b", str(tmp_path / "batch"), "alice@127.0.0.1"]
    sftp = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert sftp.returncode != 0  # the second put, outside the fork's scope
    listing = in_fork(b, number, "ls ~ ~/proj").stdout
    assert listing == b"/home/alice:\nproj\n\n/home/alice/proj:\nin.txt\nup.txt\n", listing
