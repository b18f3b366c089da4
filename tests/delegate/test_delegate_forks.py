"""Delegated programs of a session in a fork (K_FORK) run on the fork's tree, through the fork's
own mount; without one they are refused, saying which command mounts it."""

from __future__ import annotations

from delegation import komputer, run, unmount

from kfs import forks
from kfs.vfs import VFS, PathFS


def test_programs_in_a_fork_see_the_forks_tree(make_mounted) -> None:  # noqa: ANN001
    b = make_mounted()
    status, _, err = run(b, "echo state > s.txt")
    assert status == 0, err
    number = forks.create(b.state, agent="alice", by="test")
    script = "python3 -c 'print(open(\"s.txt\").read(), end=\"\"); open(\"made.txt\", \"w\").write(\"by python\\n\")'"
    status, out, err = run(b, script, extra=["-o", f"SetEnv=K_FORK={number}"])
    assert status == 126
    assert f"no FUSE mount of fork {number} (mount it: komputer mount --fork {number} -o allow_other" in err
    where = b.root / "fork-mnt"
    where.mkdir()
    done = komputer("mount", "--fork", str(number), "-o", "allow_other", "--state", str(b.root / "state"), str(where))
    assert done.returncode == 0, done.stderr
    try:
        status, out, err = run(b, f"echo fork > s.txt; {script}; cat made.txt", extra=["-o", f"SetEnv=K_FORK={number}"])
        assert (status, out) == (0, "fork\nby python\n"), err
    finally:
        unmount(where)
    state = PathFS(VFS(b.state, by="test"))
    assert state.read_file("/home/alice/s.txt") == b"state\n" and not state.exists("/home/alice/made.txt")


def test_programs_in_a_limited_fork_write_through_the_agents_view_of_the_fork(make_mounted) -> None:  # noqa: ANN001
    b = make_mounted()
    status, _, err = run(b, "mkdir -p proj")
    assert status == 0, err
    number = forks.create(b.state, agent="alice", mode="limited", scope=("~/proj",), by="test")
    where = b.root / "fork-mnt"
    where.mkdir()
    done = komputer("mount", "--fork", str(number), "-o", "allow_other", "--state", str(b.root / "state"), str(where))
    assert done.returncode == 0, done.stderr
    try:
        status, out, err = run(b, "cd proj; dash -c 'echo in > made.txt; echo x > .mcp.json'; echo $?; "
                                  "dash -c 'echo out > ../out.txt'; echo $?; ls -A; "
                                  "dash -c 'grep -c \" kfs-view:alice:limited:" + str(number) + ":\" /proc/self/mountinfo'",
                               extra=["-o", f"SetEnv=K_FORK={number}"])
        lines = out.split("\n")
        assert lines[:3] == ["2", "2", "made.txt"] and int(lines[3]) > 0, (out, err)  # the view of the fork's tree
        assert "cannot create .mcp.json: Read-only file system" in err
    finally:
        unmount(where)
    state = PathFS(VFS(b.state, by="test"))
    assert not state.exists("/home/alice/proj/made.txt")  # the fork's, not the state's
