"""The drives' backings below the shell: a memory drive (a KState of its own, bounded by its
max_bytes, made empty each server run) and a host drive (a real directory, every path resolved
inside it, read-only when declared so, acting with the agent's credentials)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs.drives.host import HostBacking, HostFS
from kfs.drives.memory import MemoryBacking, MemoryDrives
from kfs.journal.receipts import receipts_since
from kfs.kstate import KState
from kfs.runtime.drives import Drive
from kfs.vfs import ROOT, VFS, Cred, PathFS

AGENT = Cred(4242, 4242)


@pytest.fixture
def as_root() -> None:
    """A host drive acts as another uid: only root can (the suite runs as root, as the server
    does); elsewhere the test fails saying so, never a silent skip."""
    if os.geteuid() != 0:
        pytest.fail("acting as another uid on a host drive needs root: run the suite as root (make test)")


@pytest.fixture
def memory(state: KState) -> Iterator[MemoryDrives]:
    drives = MemoryDrives.begin(state)
    yield drives
    drives.end()


def test_a_memory_drive_is_bounded_by_its_max_bytes(memory: MemoryDrives) -> None:
    drive = Drive("scratch", "/mnt/scratch", "memory", max_bytes=256 << 10)
    backing = MemoryBacking(drive, memory.state(drive), 0)
    fs = backing.view(AGENT, 0o022)
    assert stat.S_IMODE(fs.stat("/").mode) == 0o1777  # every agent writes there, as in /tmp
    fs.write_file("/a", b"x" * (192 << 10))
    with pytest.raises(OSError) as e:
        fs.write_file("/b", b"y" * (128 << 10))
    assert e.value.errno == errno.ENOSPC
    assert not fs.exists("/b")  # the write that failed left nothing
    s = backing.statfs()
    assert s.blocks * s.block_size == 256 << 10 and s.blocks_free * s.block_size == 64 << 10
    fs.unlink("/a")
    fs.write_file("/b", b"y" * (128 << 10))  # the room is back
    assert fs.stat("/b").uid == AGENT.uid
    for i in range(200):
        fs.write_file(f"/small{i}", "x")
    assert receipts_since(memory.state(drive)) == []  # nothing would prune them: a drive keeps none


def test_a_memory_drive_is_made_empty_by_each_server_run(state: KState) -> None:
    drive = Drive("scratch", "/mnt/scratch", "memory", max_bytes=1 << 20)
    first = MemoryDrives.begin(state)
    assert first.directory.parent == Path(os.environ["KOMPUTER_DRIVES_DIR"])
    PathFS(VFS(first.state(drive)), cred=ROOT).write_file("/kept", "until the end\n")
    first.close()  # a server killed without its stop: the next start clears what it left
    second = MemoryDrives.begin(state)
    assert not PathFS(VFS(second.state(drive)), cred=ROOT).exists("/kept")
    second.end()
    assert not second.directory.exists()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A host drive's directory, beside a file outside it that no path of the drive may reach."""
    (tmp_path / "outside").write_text("outside the drive\n")
    src = tmp_path / "src"
    (src / "etc").mkdir(parents=True)
    (src / "etc" / "passwd").write_text("the drive's own\n")
    (src / "hello").write_text("hi\n")
    os.chmod(src, 0o777)
    return src


def host(source: Path, cred: Cred = AGENT, *, readonly: bool = False) -> HostFS:
    return HostBacking(Drive("data", "/mnt/data", "host", source=str(source), readonly=readonly), 0).view(cred, 0o022)


@pytest.mark.parametrize("link", [
    "/etc/passwd",  # absolute: a path of the drive
    "../../../../../../etc/passwd",  # `..` stops at the drive's top
    "etc/../../../etc/passwd",
])
def test_a_host_drive_resolves_every_link_inside_it(source: Path, link: str) -> None:
    os.symlink(link, source / "link")
    fs = host(source)
    assert fs.read_file("/link") == b"the drive's own\n"
    assert fs.readlink("/link") == link  # stored as it was made
    assert fs.realpath("/link") == "/etc/passwd"


def test_no_path_of_a_host_drive_leads_out(source: Path) -> None:
    outside = source.parent / "outside"
    os.symlink(str(outside), source / "abs")
    os.symlink("../outside", source / "up")
    os.symlink(str(source.parent), source / "parent")
    os.symlink("/k-drive-escape-test", source / "dangling")
    fs = host(source, ROOT)  # root: nothing but the confinement keeps it in
    for path in ("/abs", "/up", "/../outside", "/parent/outside", "/etc/../../outside"):
        with pytest.raises(FileNotFoundError):
            fs.read_file(path)
    with pytest.raises(FileNotFoundError):
        fs.scandir("/parent")
    fs.write_file("/dangling", "written through a link\n")  # lands in the drive, never at the host's /
    assert (source / "k-drive-escape-test").read_text() == "written through a link\n"
    assert not os.path.lexists("/k-drive-escape-test")
    fs.rm("/parent", recursive=True)  # removes the link, never what it points to
    fs.unlink("/up")
    assert outside.read_text() == "outside the drive\n" and not (source / "parent").exists()


def test_a_readonly_host_drive_refuses_every_write(source: Path) -> None:
    fs = host(source, ROOT, readonly=True)
    assert fs.read_file("/hello") == b"hi\n" and [n for n, _ in fs.scandir("/")].count("hello") == 1
    writes = [lambda: fs.write_file("/new", "x"), lambda: fs.append_file("/hello", "x"), lambda: fs.mkdir("/d"),
              lambda: fs.unlink("/hello"), lambda: fs.rename("/hello", "/moved"), lambda: fs.chmod("/hello", 0o600),
              lambda: fs.utime("/hello"), lambda: fs.truncate("/hello", 0), lambda: fs.symlink("x", "/l"),
              lambda: fs.open("/hello", os.O_WRONLY), lambda: fs.rm("/etc", recursive=True)]
    for write in writes:
        with pytest.raises(OSError) as e:
            write()
        assert e.value.errno == errno.EROFS, write
    with fs.open("/hello") as f:
        assert f.pread(10, 0) == b"hi\n"
    assert (source / "hello").read_text() == "hi\n" and (source / "etc").is_dir()


@pytest.mark.usefixtures("as_root")
def test_a_host_drive_acts_as_the_agent(source: Path) -> None:
    fs = host(source)
    fs.write_file("/mine", "agent's\n")
    fs.mkdir("/dir", 0o750)
    fs.mkdir("/a/b/c", parents=True)
    made = [source / "mine", source / "dir", source / "a" / "b" / "c"]
    assert [(p.stat().st_uid, p.stat().st_gid) for p in made] == [(AGENT.uid, AGENT.gid)] * 3
    assert stat.S_IMODE((source / "mine").stat().st_mode) == 0o644  # the session's umask, not the server's
    assert stat.S_IMODE((source / "dir").stat().st_mode) == 0o750
    os.chmod(source / "hello", 0o600)  # root's
    (source / "private").mkdir(mode=0o700)
    groups, fsuid_check = os.getgroups(), (source / "private").stat()
    for denied in (lambda: fs.read_file("/hello"), lambda: fs.write_file("/hello", "x"),
                   lambda: fs.scandir("/private"), lambda: fs.write_file("/private/x", "x"),
                   lambda: fs.chmod("/hello", 0o666), lambda: fs.unlink("/etc/passwd")):
        with pytest.raises(PermissionError):
            denied()
    assert os.getgroups() == groups and (source / "private").stat() == fsuid_check  # the thread is root again
    with fs.open("/mine", os.O_RDWR) as f:
        f.pwrite(b"AGENT", 0)
        assert f.setattr(mode=0o600).mode & 0o777 == 0o600
        assert f.getattr().size == len("agent's\n")
    assert (source / "mine").read_text() == "AGENT's\n"


@pytest.mark.usefixtures("as_root")
def test_a_host_drive_strips_setuid_and_setgid_from_every_mode_it_sets(source: Path) -> None:
    fs = host(source)
    fs.write_file("/f", "x", mode=0o6777)
    with fs.open("/g", os.O_CREAT | os.O_WRONLY, 0o4755):
        pass
    fs.mkdir("/d", 0o2777)
    fs.mknod("/n", stat.S_IFREG | 0o6644)
    assert fs.chmod("/f", 0o4755).mode & 0o7777 == 0o755
    with fs.open("/g", os.O_RDWR) as f:
        assert f.setattr(mode=0o2750).mode & 0o7777 == 0o750
    modes = {n: stat.S_IMODE((source / n).stat().st_mode) for n in ("f", "g", "d", "n")}
    assert modes == {"f": 0o755, "g": 0o750, "d": 0o755, "n": 0o644}
    (source / "shared").mkdir()
    os.chmod(source / "shared", 0o2777)  # the host's own setgid directory: its new folders inherit it
    fs.mkdir("/shared/sub", 0o777)
    assert stat.S_IMODE((source / "shared" / "sub").stat().st_mode) == 0o2755


ALICE, BOB = Cred(100_001, 100_001), Cred(100_002, 100_002)  # agents' uids: held to their shares


def test_no_agent_fills_a_memory_drive_for_the_others(memory: MemoryDrives) -> None:
    drive = Drive("scratch", "/mnt/scratch", "memory", max_bytes=256 << 10)  # half each by default
    backing = MemoryBacking(drive, memory.state(drive), 0)
    alice, bob = backing.view(ALICE, 0o022), backing.view(BOB, 0o022)
    alice.write_file("/a", b"x" * (96 << 10))
    with pytest.raises(OSError) as e:
        alice.write_file("/b", b"y" * (64 << 10))
    assert e.value.errno == errno.EDQUOT  # her share (128 KiB), not the drive's room
    assert not alice.exists("/b")
    with pytest.raises(OSError) as e:
        for i in range(drive.agent_files + 1):  # files too: many empty ones fill it as surely
            alice.write_file(f"/empty{i}", b"")
    assert e.value.errno == errno.EDQUOT and drive.agent_files == 64
    bob.write_file("/b", b"y" * (120 << 10))  # bob still has his share
    wide = Drive("wide", "/mnt/wide", "memory", max_bytes=256 << 10, agent_max_bytes=256 << 10)
    whole = MemoryBacking(wide, memory.state(wide), 1).view(ALICE, 0o022)
    whole.write_file("/a", b"x" * (200 << 10))  # agent_max_bytes: the operator's share
    with pytest.raises(OSError) as e:
        whole.write_file("/b", b"y" * (64 << 10))
    assert e.value.errno == errno.ENOSPC  # the drive's own bound


@pytest.mark.usefixtures("as_root")
def test_an_agents_host_drive_files_are_charged_to_its_quota(source: Path, state: KState) -> None:
    from kfs.kstate import quota

    os.chmod(source, 0o777)
    state.write(lambda txn: quota.set_limit(txn, ALICE.uid, 256 << 10))
    backing = HostBacking(Drive("data", "/mnt/data", "host", source=str(source)), 0, state)
    fs = backing.view(ALICE, 0o022)

    def used() -> tuple[int, int]:
        with state.read() as txn:
            return quota.usage(txn, ALICE.uid, quota.HOST), quota.total_use(txn, ALICE.uid)

    fs.write_file("/a", b"x" * (100 << 10))
    fs.append_file("/a", b"x" * (50 << 10))
    assert used() == (150 << 10, 150 << 10)
    with pytest.raises(OSError) as e:
        fs.write_file("/b", b"y" * (200 << 10))
    assert e.value.errno == errno.EDQUOT and e.value.strerror == "Disk quota exceeded"
    assert (source / "b").stat().st_size == 0  # created, nothing written: as write(2) past a quota
    with fs.open("/a", os.O_RDWR) as f:
        f.pwrite(b"z" * (150 << 10), 0)  # an overwrite in place takes nothing more
        with pytest.raises(OSError) as e:
            f.pwrite(b"z" * (200 << 10), 100 << 10)
        assert e.value.errno == errno.EDQUOT
        f.truncate(50 << 10)
    assert used()[0] == 50 << 10
    PathFS(VFS(state), cred=ROOT).mkdir("/home")
    PathFS(VFS(state), cred=ROOT).chmod("/home", 0o777)
    k = PathFS(VFS(state), cred=ALICE)  # K's own files and the drive's are held to one limit
    with pytest.raises(OSError) as e:
        k.write_file("/home/big", b"k" * (220 << 10))
    assert e.value.errno == errno.EDQUOT
    k.write_file("/home/small", b"k" * (100 << 10))
    assert used() == (50 << 10, 150 << 10)
    fs.link("/a", "/a2")
    fs.unlink("/a")  # another name still holds it
    assert used()[0] == 50 << 10
    fs.write_file("/c", b"c" * (10 << 10))
    fs.rename("/c", "/a2")  # the file renamed over lost its last name
    assert used()[0] == 10 << 10
    with fs.open("/a2", os.O_WRONLY | os.O_TRUNC):
        pass
    assert used()[0] == 0
    fs.mkdir("/d")
    fs.write_file("/d/e", b"e" * 4096)
    fs.rm("/d", recursive=True)
    assert used()[0] == 0
    root_view = backing.view(ROOT, 0o022)
    root_view.write_file("/r", b"r" * 1000)  # root's file: no agent's charge
    root_view.chown("/r", ALICE.uid, ALICE.gid)  # given to alice: hers now
    assert used()[0] == 1000
