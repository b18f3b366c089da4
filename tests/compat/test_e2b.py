"""kshell.compat.e2b on real states: watch_dir events for writes made through the K shell,
SFTP (paramiko against K's SSH server on the sandbox's state) and the agent's FUSE mount; a
durable sandbox connected to from another process; files and commands as E2B documents them;
and the refusals, at the call site, of what K cannot do."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ssh"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuse"))
from kfs_mounts import Mount  # noqa: E402
from kserver import ServerThread, keygen  # noqa: E402

from kshell.compat import core  # noqa: E402
from kshell.compat.e2b import (  # noqa: E402
    CommandExitException,
    FilesystemEventType,
    FileType,
    NotFoundException,
    Sandbox,
    SandboxNotFoundException,
    TimeoutException,
    Unsupported,
)

ROOT = Path(__file__).resolve().parents[2]
HANG = 120.0  # only a hang fails: never a speed claim


@pytest.fixture
def durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Sandboxes are durable states under this root (K_SANDBOX_ROOT)."""
    root = tmp_path / "sandboxes"
    monkeypatch.setenv(core.ROOT_ENV, str(root))
    return root


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    made = Sandbox.create()
    yield made
    made.kill()


def events_until(handle, wanted: set[tuple[str, FilesystemEventType]]) -> list[tuple[str, FilesystemEventType]]:  # noqa: ANN001
    """The watch's events, collected until every wanted one came (bounded: only a hang fails)."""
    seen: list[tuple[str, FilesystemEventType]] = []
    deadline = time.monotonic() + HANG
    while not wanted <= set(seen) and time.monotonic() < deadline:
        seen += [(e.name, e.type) for e in handle.get_new_events()]
        time.sleep(0.02)
    return seen


def test_watch_dir_sees_writes_through_the_shell_sftp_and_the_mount(durable: Path, tmp_path: Path) -> None:
    import paramiko

    from kfs.agents import add_key
    from kshell.server import ServerConfig
    from kshell.server.config import Penalties

    sandbox = Sandbox.create()
    try:
        assert sandbox.files.make_dir("/home/user/watched") is True
        watch = sandbox.files.watch_dir("/home/user/watched")
        sandbox.commands.run("echo a > watched/from_shell")

        state = sandbox._sandbox.computer.state  # noqa: SLF001 - the SSH server serves the sandbox's own state
        add_key(state, "user", keygen(tmp_path / "key", "user@test").with_suffix(".pub").read_text())
        server = ServerThread(durable / sandbox.sandbox_id,
                              ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",)))).start(state)
        try:
            client = paramiko.SSHClient()
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
            client.connect("127.0.0.1", server.port, "user", key_filename=str(tmp_path / "key"), look_for_keys=False,
                           allow_agent=False)
            with client.open_sftp() as sftp, sftp.open("/home/user/watched/from_sftp", "w") as f:
                f.write("b\n")
            client.close()
        finally:
            server.stop()

        top = Path(tempfile.mkdtemp(prefix="kfs-compat."))
        mount = Mount(durable / sandbox.sandbox_id, top / "mnt", options=(), extra=("--agent", "user")).start()
        try:
            (mount.path / "home/user/watched/from_mount").write_text("c\n")
        finally:
            mount.stop()
            shutil.rmtree(top, ignore_errors=True)

        sandbox.commands.run("echo more >> watched/from_mount; rm watched/from_shell")
        seen = events_until(watch, {("from_shell", FilesystemEventType.CREATE),
                                    ("from_sftp", FilesystemEventType.CREATE),
                                    ("from_mount", FilesystemEventType.CREATE),
                                    ("from_mount", FilesystemEventType.WRITE),
                                    ("from_shell", FilesystemEventType.REMOVE)})
        order = [name for name, kind in seen if kind == FilesystemEventType.CREATE]
        assert order == ["from_shell", "from_sftp", "from_mount"], seen
        assert ("from_shell", FilesystemEventType.REMOVE) in seen and ("from_mount", FilesystemEventType.WRITE) in seen
        watch.stop()
    finally:
        sandbox.kill()


def test_watch_dir_names_renames_and_follows_subdirectories_when_recursive(sandbox: Sandbox) -> None:
    sandbox.files.make_dir("/home/user/tree/sub")
    flat = sandbox.files.watch_dir("/home/user/tree")
    deep = sandbox.files.watch_dir("/home/user/tree", recursive=True, include_entry=True)
    sandbox.commands.run("cd tree && touch a && mv a b && echo x > sub/c && chmod 600 b")
    wanted = {("a", FilesystemEventType.CREATE), ("a", FilesystemEventType.RENAME), ("b", FilesystemEventType.CREATE),
              ("b", FilesystemEventType.CHMOD)}
    assert wanted <= set(events_until(flat, wanted))
    deep_seen = events_until(deep, {("sub/c", FilesystemEventType.CREATE)})
    assert ("sub/c", FilesystemEventType.CREATE) in deep_seen
    assert all(not name.startswith("sub/") for name, _ in events_until(flat, set()))


def test_a_durable_sandbox_is_connected_to_from_another_process(durable: Path) -> None:
    script = ("from kshell.compat.e2b import Sandbox\n"
              "s = Sandbox.create(metadata={'owner': 'script'})\n"
              "s.files.write('/home/user/left/note.txt', 'from the first program')\n"
              "s.commands.run('echo done > left/ran')\n"
              "print(s.sandbox_id)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT), core.ROOT_ENV: str(durable)})
    assert done.returncode == 0, done.stderr
    sandbox_id = done.stdout.strip()
    again = Sandbox.connect(sandbox_id)
    try:
        assert again.files.read("/home/user/left/note.txt") == "from the first program"
        assert again.commands.run("cat left/ran").stdout == "done\n"
        assert again.get_info().metadata == {"owner": "script"}
        assert sandbox_id in [info.sandbox_id for info in Sandbox.list().next_items()]
    finally:
        assert again.kill() is True
    assert not (durable / sandbox_id).exists()
    with pytest.raises(SandboxNotFoundException):
        Sandbox.connect(sandbox_id)
    assert Sandbox.kill(sandbox_id) is False


def test_a_fork_is_connected_to_by_id_from_another_process(durable: Path) -> None:
    script = ("from kshell.compat.e2b import Sandbox\n"
              "s = Sandbox.create()\n"
              "s.files.write('/home/user/base.txt', 'base')\n"
              "(fork,) = s.fork()\n"
              "fork.files.write('/home/user/mine.txt', 'the fork\\'s')\n"
              "fork.commands.run('cd /tmp; export KEPT=1')\n"
              "print(s.sandbox_id, fork.sandbox_id)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT), core.ROOT_ENV: str(durable)})
    assert done.returncode == 0, done.stderr
    parent_id, fork_id = done.stdout.split()
    fork = Sandbox.connect(fork_id)
    try:
        assert fork.sandbox_id == fork_id
        assert fork.files.read("/home/user/mine.txt") == "the fork's"
        assert fork.files.read("/home/user/base.txt") == "base"
        fork.files.write("/home/user/later.txt", "later")  # still the fork's tree
        parent = Sandbox.connect(parent_id)
        assert not parent.files.exists("/home/user/mine.txt") and not parent.files.exists("/home/user/later.txt")
        assert fork.commands.run("cat later.txt").stdout == "later"
    finally:
        assert Sandbox.kill(parent_id) is True  # its forks go with it
    assert not fork.is_running()
    with pytest.raises(SandboxNotFoundException):
        Sandbox.connect(fork_id)
    assert [p.name for p in durable.iterdir()] == []  # no state, no record left


def test_commands_and_files_as_e2b_documents_them(sandbox: Sandbox) -> None:
    result = sandbox.commands.run("cd /tmp; X=1; echo $GREETING; pwd", envs={"GREETING": "hi"})
    assert (result.stdout, result.stderr, result.exit_code, result.error) == ("hi\n/tmp\n", "", 0, None)
    assert sandbox.commands.run("pwd; echo ${X-unset}").stdout == "/home/user\nunset\n"  # nothing leaks
    assert sandbox.commands.run("pwd", cwd="/home").stdout == "/home\n"
    with pytest.raises(CommandExitException) as failed:
        sandbox.commands.run("echo partial; echo why >&2; exit 7")
    assert (failed.value.stdout, failed.value.stderr, failed.value.exit_code) == ("partial\n", "why\n", 7)
    with pytest.raises(TimeoutException):
        sandbox.commands.run("sleep 600", timeout=0.5)

    handle = sandbox.commands.run("while read -r line; do echo got $line; done", background=True, stdin=True)
    sandbox.commands.send_stdin(handle.pid, "one\n")
    handle.send_stdin(b"two\n")
    sandbox.commands.close_stdin(handle.pid)
    assert handle.wait().stdout == "got one\ngot two\n"
    with pytest.raises(NotFoundException):
        handle.send_stdin("late\n")  # it ended: no more input

    info = sandbox.files.write("/home/user/deep/er/file.txt", "content")  # parents made
    assert (info.name, info.type, info.path) == ("file.txt", FileType.FILE, "/home/user/deep/er/file.txt")
    assert sandbox.files.read("/home/user/deep/er/file.txt", format="bytes") == bytearray(b"content")
    assert b"".join(sandbox.files.read("/home/user/deep/er/file.txt", format="stream")) == b"content"
    sandbox.files.write_files([{"path": "/home/user/deep/two.txt", "data": b"2"}])
    entries = sandbox.files.list("/home/user/deep", depth=2)
    assert [(e.name, e.type) for e in entries] == [("er", FileType.DIR), ("two.txt", FileType.FILE),
                                                   ("file.txt", FileType.FILE)]
    entry = sandbox.files.get_info("/home/user/deep/two.txt")
    assert (entry.size, entry.mode, entry.permissions, entry.owner, entry.group) == (1, 0o644, "-rw-r--r--", "user",
                                                                                     "user")
    sandbox.commands.run("ln -s deep/two.txt link")
    assert sandbox.files.get_info("/home/user/link").symlink_target == "deep/two.txt"
    renamed = sandbox.files.rename("/home/user/deep/two.txt", "/home/user/deep/three.txt")
    assert renamed.path == "/home/user/deep/three.txt" and not sandbox.files.exists("/home/user/deep/two.txt")
    assert sandbox.files.make_dir("/home/user/deep") is False
    sandbox.files.remove("/home/user/deep")
    assert not sandbox.files.exists("/home/user/deep")
    with pytest.raises(NotFoundException):
        sandbox.files.read("/home/user/deep/er/file.txt")


def test_what_k_cannot_do_is_refused_at_the_call_site(sandbox: Sandbox) -> None:
    with pytest.raises(Unsupported, match="user='root'.*cannot act as another user or as root"):
        sandbox.commands.run("id", user="root")
    with pytest.raises(Unsupported, match=r"endpoint .e2b.example.org.: not supported by K: a K appliance is reached over SSH"):
        Sandbox.create(domain="e2b.example.org")
    with pytest.raises(Unsupported, match="Sandbox.get_host"):
        sandbox.get_host(8080)
    with pytest.raises(Unsupported, match="Sandbox.set_timeout"):
        sandbox.set_timeout(60)
    with pytest.raises(Unsupported, match="allow_internet_access=True"):
        Sandbox.create(allow_internet_access=True)
    with pytest.raises(Unsupported, match="metadata"):
        sandbox.files.write("/home/user/m", "x", metadata={"k": "v"})
    with pytest.raises(NotFoundException, match="komputer.toml"):
        Sandbox.create(template="no-such-template")


def test_a_warm_spare_is_a_fresh_sandbox_and_the_next_one_boots_behind_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(core.WARM_ENV, "1")
    try:
        core.run(core.warm_up())
        first = Sandbox.create(envs={"WHO": "first"})
        assert len(core._spares) == 1  # noqa: SLF001 - the next spare is booting already
        first.files.write("/home/user/mine.txt", "first's")
        assert first.commands.run("echo $WHO").stdout == "first\n"
        first.kill()
        second = Sandbox.create()
        try:
            assert second.sandbox_id != first.sandbox_id
            assert not second.files.exists("/home/user/mine.txt")
            assert second.commands.run("echo ${WHO-unset}").stdout == "unset\n"
        finally:
            second.kill()
    finally:
        monkeypatch.delenv(core.WARM_ENV)
        core.run(core.cool_down())
    assert core._spares == []  # noqa: SLF001


def test_fork_makes_sandboxes_on_k_forks_of_the_tree(sandbox: Sandbox) -> None:
    sandbox.files.write("/home/user/base.txt", "base")
    left, right = sandbox.fork(count=2)
    assert left.files.read("/home/user/base.txt") == "base"  # what the parent had
    left.commands.run("echo mine > left.txt")
    job = left.commands.run("cat base.txt; echo bg > job.txt", background=True)  # a session in the fork too
    assert job.wait().stdout == "base"
    assert left.files.exists("/home/user/job.txt") and left.files.exists("/home/user/left.txt")
    for other in (right, sandbox):  # what a fork writes stays in it
        assert not other.files.exists("/home/user/left.txt") and not other.files.exists("/home/user/job.txt")
    held = left.commands.run("sleep 600", background=True)
    assert [p.pid for p in left.commands.list()] == [held.pid] and sandbox.commands.list() == []
    assert left.kill() is True and sandbox.is_running() and right.is_running()
    assert sandbox.commands.run("cat base.txt").stdout == "base"
    sandbox.kill()
    assert not right.is_running()  # forks end with their sandbox
