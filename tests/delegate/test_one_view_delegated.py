"""One session view, for delegated programs: the `deny` path rule and the readonly mode that
refuse a write in the K shell, SFTP, scp, sshfs, the agent's mount and the SDK
(tests/ssh/test_one_view.py) refuse it to a real python3 under bubblewrap too, with the errno a
program gets (EACCES for the rule, EROFS for the mode)."""

from __future__ import annotations

from delegation import run

from kfs.agents.records import find_agent
from kfs.runtime.rules import add_rule
from kfs.vfs import VFS, PathFS

DENIED = "/home/alice/vault/f"
NOTES = "/home/alice/notes"
WRITE = "python3 -c 'import sys; open(sys.argv[1], \"w\").write(\"x\")' {path}"


def test_a_delegated_program_is_refused_both(make_mounted) -> None:  # noqa: ANN001
    b = make_mounted()
    alice = find_agent(b.state, "alice")
    assert alice is not None
    root = PathFS(VFS(b.state, by="test"))
    root.mkdir("/home/alice/vault")
    root.chown("/home/alice/vault", alice.uid, alice.gid)  # alice's own: only the rule refuses
    add_rule(b.state, "deny", "~/vault", agent="alice", on="path", by="test")
    status, _, err = run(b, WRITE.format(path=DENIED))
    assert status == 1 and "PermissionError" in err and "Permission denied" in err, err
    status, _, err = run(b, WRITE.format(path=NOTES), extra=["-o", "SetEnv=K_MODE=readonly"])
    assert status == 1 and "Read-only file system" in err, err
    status, out, _ = run(b, WRITE.format(path="/home/alice/ok") + " && cat /home/alice/ok")
    assert (status, out) == (0, "x")  # the program writes where nothing refuses it
    assert not root.exists(DENIED) and not root.exists(NOTES)
