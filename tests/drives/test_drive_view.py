"""The session's view with drives (kfs.drives.view.DriveFS) and the K shell on it: each path
goes to the backing it leads to (lexically, or through a K link onto a drive's place), two
backings in one operation are EXDEV, the drives' places are busy, inode numbers never collide,
the write policy judges the path a write reaches, and the tools (mv across drives, cp, find,
du, df, redirections, cd) work on drives as on mounts."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs.drives.memory import MemoryDrives
from kfs.drives.view import DriveFS, Drives, mount
from kfs.kstate import KState
from kfs.runtime.drives import Drive
from kfs.vfs import ROOT, VFS, Cred, PathFS
from kfs.vfs.policy import Refusal, WritePolicy
from kshell.session import Shell

ALICE = Cred(1000, 1000)
HOME = "/home/alice"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir(mode=0o777)
    os.chmod(src, 0o777)
    (src / "hello").write_text("hi\n")
    return src


@pytest.fixture
def drives(state: KState, vfs: VFS, source: Path) -> Iterator[Drives]:
    memory = MemoryDrives.begin(state)
    root = PathFS(vfs, cred=ROOT)
    root.mkdir(HOME, parents=True)
    root.chown(HOME, ALICE.uid, ALICE.gid)
    root.mkdir("/tmp", 0o1777)
    yield mount([Drive("data", "/mnt/data", "host", source=str(source)),
                 Drive("scratch", "/mnt/scratch", "memory", max_bytes=1 << 20)], vfs, memory)
    memory.end()


@pytest.fixture
def fs(vfs: VFS, drives: Drives) -> DriveFS:
    return DriveFS(vfs, drives=drives, cred=ALICE, cwd=HOME, home=HOME)


def test_drives_places_are_directories_listed_with_the_drives_tops(vfs: VFS, fs: DriveFS, source: Path) -> None:
    assert fs.readdir("/mnt") == ["data", "scratch"]
    assert PathFS(vfs).lstat("/mnt/scratch").is_dir  # the mount point, K's own
    tops = dict(fs.scandir("/mnt"))
    assert stat.S_IMODE(tops["scratch"].mode) == 0o1777
    assert tops["data"].mtime == source.stat().st_mtime_ns and tops["data"] == fs.stat("/mnt/data")
    assert "mnt" in fs.readdir("/")


def test_a_path_goes_where_it_leads(fs: DriveFS) -> None:
    fs.write_file("/mnt/scratch/a", "in memory\n")
    fs.cwd = b"/mnt/data"
    assert fs.read_file("hello") == b"hi\n"
    assert fs.read_file("../scratch/a") == b"in memory\n"
    assert fs.read_file("/mnt/data/../scratch/./a") == b"in memory\n"
    assert fs.realpath("hello") == "/mnt/data/hello" and fs.realpath(".") == "/mnt/data"
    with pytest.raises(NotADirectoryError):
        fs.stat("/mnt/data/hello/")
    with pytest.raises(FileNotFoundError) as e:
        fs.read_file("nope")
    assert e.value.filename == "nope"  # errors name the path as the caller gave it


def test_a_link_in_k_leads_onto_a_drive(fs: DriveFS, source: Path) -> None:
    fs.symlink("/mnt/scratch", f"{HOME}/s")
    fs.symlink("/mnt", f"{HOME}/m")
    fs.write_file("~/s/new", "through a link\n")
    assert fs.read_file("/mnt/scratch/new") == b"through a link\n"
    assert fs.readdir("~/s") == ["new"] and fs.readdir("~/m/scratch/") == ["new"]
    assert fs.read_file("~/m/scratch/../data/hello") == b"hi\n"  # `..` from a drive's top: its parent
    assert fs.lstat("~/s").is_lnk and fs.stat("~/s") == fs.stat("/mnt/scratch")
    assert fs.realpath("~/s/new") == "/mnt/scratch/new"
    fs.mkdir("~/s/p/q", parents=True)
    fs.rename("~/s/new", "~/m/scratch/p/moved")
    assert fs.readdir("/mnt/scratch/p") == ["moved", "q"]
    with pytest.raises(OSError) as e:
        fs.rename("~/s/p/moved", "~/moved")
    assert e.value.errno == errno.EXDEV
    fs.write_file("/mnt/data/mine", "mine\n")
    fs.symlink("/mnt/data/mine", f"{HOME}/h")
    fs.append_file("~/h", "more\n")
    assert (source / "mine").read_text() == "mine\nmore\n"
    with pytest.raises(FileNotFoundError) as e:
        fs.read_file("~/s/missing")
    assert e.value.filename == "~/s/missing"  # the path as given, wherever it led


def test_two_backings_are_exdev_and_a_drives_place_is_busy(fs: DriveFS) -> None:
    fs.write_file("/mnt/scratch/a", "a")
    fs.write_file(f"{HOME}/k", "k")
    for call in (lambda: fs.rename("/mnt/scratch/a", "/mnt/data/a"), lambda: fs.rename(f"{HOME}/k", "/mnt/data/k"),
                 lambda: fs.link("/mnt/scratch/a", f"{HOME}/a"), lambda: fs.link("/mnt/data/hello", "/mnt/scratch/h")):
        with pytest.raises(OSError) as e:
            call()
        assert e.value.errno == errno.EXDEV
    root = DriveFS(fs.vfs, drives=fs.drives, cred=ROOT)
    for call in (lambda: root.rename("/mnt", "/elsewhere"), lambda: root.rm("/mnt", recursive=True),
                 lambda: root.rmdir("/mnt/scratch"), lambda: root.rmdir("/mnt/data"),
                 lambda: root.rename("/mnt/data", "/mnt/data2")):
        with pytest.raises(OSError) as e:
            call()
        assert e.value.errno == errno.EBUSY
    assert root.readdir("/mnt") == ["data", "scratch"]


def test_inode_numbers_never_collide(fs: DriveFS) -> None:
    fs.write_file(f"{HOME}/k", "k")
    fs.write_file("/mnt/scratch/m", "m")
    k, m, h = fs.stat(f"{HOME}/k"), fs.stat("/mnt/scratch/m"), fs.stat("/mnt/data/hello")
    assert len({k.ino, m.ino, h.ino}) == 3
    assert k.ino < 1 << 48 and m.ino >> 48 == 17 and h.ino >> 48 == 16  # the drives' own ranges, by path order
    with fs.open("/mnt/scratch/m") as f:
        assert f.getattr().ino == m.ino
    assert dict(fs.scandir("/mnt/scratch"))["m"].ino == m.ino


def test_the_write_policy_judges_the_path_a_write_reaches(vfs: VFS, drives: Drives) -> None:
    policy = WritePolicy.make("limited", HOME, ("/mnt/scratch",))
    assert policy is not None
    seen: list[str] = []
    policy.hook = lambda path: seen.append(path)
    fs = DriveFS(vfs, drives=drives, cred=ALICE, cwd=HOME, home=HOME, policy=policy)
    fs.write_file("/mnt/scratch/ok", "allowed\n")
    for refused in (lambda: fs.write_file("/mnt/data/x", "x"), lambda: fs.mkdir("/mnt/data/d"),
                    lambda: fs.rename("/mnt/data/hello", "/mnt/data/bye")):
        with pytest.raises(Refusal):
            refused()
    assert fs.read_file("/mnt/data/hello") == b"hi\n"  # reads are never the policy's
    assert "/mnt/scratch/ok" in seen and "/mnt/data/x" in seen
    PathFS(vfs, cred=ALICE).symlink("/mnt/data", f"{HOME}/d")
    for path in ("/mnt/data/hello", f"{HOME}/d/hello"):  # SFTP's check before it changes an open file
        with pytest.raises(Refusal):
            fs.check_write(path)
    fs.check_write("/mnt/scratch/ok")


def test_a_readonly_drive_is_not_writable_by_access(vfs: VFS, source: Path) -> None:
    drives = mount([Drive("ref", "/srv/ref", "host", source=str(source), readonly=True)], vfs, None)
    fs = DriveFS(vfs, drives=drives, cred=ROOT)
    fs.symlink("/srv/ref", "/ref")
    for path in ("/srv/ref/hello", "/ref/hello"):
        assert fs.access(path, os.R_OK) and not fs.access(path, os.W_OK)
    assert [f.kind for f in fs.filesystems()] == ["kfs", "host"] and fs.filesystem("/ref/hello").path == "/srv/ref"


@pytest.fixture
def shell(vfs: VFS, drives: Drives) -> Shell:
    return Shell(PathFS(vfs, cred=ALICE, cwd=HOME, home=HOME), drives=drives, env={"HOME": HOME})


def run(sh: Shell, script: str) -> str:
    done = sh.run(script)
    assert done.status == 0, done.stderr.decode()
    return done.stdout.decode()


def test_k_tools_work_on_drives(shell: Shell, source: Path) -> None:
    assert run(shell, "cd /mnt/scratch && pwd && pwd -P && echo one > a && mkdir -p d/e && cp a d/e/b && ls -R") \
        == "/mnt/scratch\n/mnt/scratch\n.:\na\nd\n\n./d:\ne\n\n./d/e:\nb\n"
    assert run(shell, "find /mnt/scratch -type f | sort; du -a /mnt/scratch/d | sort -k2; cat < /mnt/scratch/a") \
        == "/mnt/scratch/a\n/mnt/scratch/d/e/b\n12\t/mnt/scratch/d\n8\t/mnt/scratch/d/e\n4\t/mnt/scratch/d/e/b\none\n"
    assert run(shell, "stat -c '%n %s %a' /mnt/data/hello /mnt/scratch; ls -ld /mnt/scratch | cut -c1-10") \
        == "/mnt/data/hello 3 644\n/mnt/scratch 4096 1777\ndrwxrwxrwt\n"
    assert run(shell, "echo two > /mnt/data/two; echo 2 >> /mnt/data/two; rm /mnt/scratch/a; ls /mnt/scratch") == "d\n"
    assert (source / "two").read_text() == "two\n2\n"
    if os.geteuid() == 0:  # the server acts as alice: root's file is not hers to write
        done = shell.run("echo more >> /mnt/data/hello")
        assert done.status == 1 and done.stderr.endswith(b"/mnt/data/hello: Permission denied\n")


def test_mv_between_drives_copies_and_removes(shell: Shell, source: Path) -> None:
    run(shell, "mkdir -p ~/tree/sub && echo leaf > ~/tree/sub/leaf && echo f > ~/f && chmod 640 ~/f")
    assert run(shell, "mv ~/f /mnt/scratch/ && mv ~/tree /mnt/data/tree && mv /mnt/scratch/f /mnt/data/ && ls ~ "
                      "&& stat -c %a /mnt/data/f && cat /mnt/data/tree/sub/leaf") == "640\nleaf\n"
    assert (source / "tree" / "sub" / "leaf").read_text() == "leaf\n" and (source / "f").read_text() == "f\n"
    done = shell.run("mkdir -p /mnt/scratch/full/x && mkdir ~/full && mv ~/full /mnt/scratch/")
    assert done.status == 1 and b"mv: cannot move" in done.stderr and b"Directory not empty" in done.stderr


def test_df_lists_each_drive_as_a_filesystem(shell: Shell) -> None:
    lines = run(shell, "df -T").splitlines()
    assert [line.split()[0] for line in lines] == ["Filesystem", "kfs", "host", "memory"]
    assert lines[3].split()[1:] == ["memory", "1024", "0", "1024", "0%", "/mnt/scratch"]
    assert lines[2].split()[-1] == "/mnt/data"
    assert run(shell, "df /mnt/scratch ~ | awk 'NR > 1 {print $1, $NF}'; df -t memory | tail -1 | cut -d' ' -f1") \
        == "memory /mnt/scratch\nkfs /\nmemory\n"
    done = shell.run("head -c 2000000 /dev/zero > /mnt/scratch/big")
    assert done.status == 1 and b"No space left on device" in done.stderr


def test_sys_is_a_synthetic_drive_beside_the_images_while_the_view_has_files(shell: Shell) -> None:
    """/sys is served as the image's drives are (kfs.drives.synthetic): read-only, numbered in a
    drive's range, not listed by df, and absent while the session's view has no file."""
    assert shell.run("ls -d /sys").status == 2
    shell.interp.session.view_files["hosts.md"] = lambda: b"# hosts\n"
    assert run(shell, "ls /; ls -l /sys | cut -c1-10; cat /sys/hosts.md; stat -c '%a %U %s' /sys/hosts.md") \
        == "bin\nhome\nmnt\nsys\ntmp\nusr\ntotal 4\n-rw-r--r--\n# hosts\n644 root 8\n"
    assert shell.interp.fs.stat("/sys/hosts.md").ino >> 48 == shell.interp.fs.stat("/sys").ino >> 48 >= 16
    done = shell.run("echo x > /sys/hosts.md; mkdir /sys/d; mv /mnt/scratch /sys/")
    assert done.status == 1 and done.stderr.count(b"Read-only file system") == 2 and b"mv: " in done.stderr
    assert [line.split()[0] for line in run(shell, "df -T").splitlines()] == ["Filesystem", "kfs", "host", "memory"]


def test_realpath_and_readlink_f_take_a_drives_links_as_the_drive_does(shell: Shell, source: Path) -> None:
    (source / "etc").mkdir()
    (source / "etc" / "conf").write_text("the drive's\n")
    os.symlink("/etc/conf", source / "abs")
    assert run(shell, "cat /mnt/data/abs; readlink /mnt/data/abs; readlink -f /mnt/data/abs; realpath /mnt/data/abs") \
        == "the drive's\n/etc/conf\n/mnt/data/etc/conf\n/mnt/data/etc/conf\n"


def test_test_w_and_x_on_drives_as_on_k(shell: Shell) -> None:
    assert run(shell, "ln -s /mnt/scratch ~/s; touch ~/s/f; chmod +x ~/s/f; test -w ~/s/f && test -x /mnt/scratch/f "
                      "&& echo writable; test -w /mnt/data/hello || echo root-s; test -r /mnt/data/hello && echo r") \
        == "writable\nroot-s\nr\n"


def test_a_rename_or_rm_r_on_a_drive_is_judged_on_every_path_it_moves(vfs: VFS, drives: Drives, source: Path) -> None:
    """As in K (kfs.vfs.policy's judge_tree): a host drive's `.git` cannot be moved away to
    write its hooks, a parent of a denied path cannot be renamed or removed, a link's source
    is judged too."""
    from kfs.runtime.rules import Rule, RuleSet
    from kfs.vfs.policy import PolicyDenial

    (source / "proj/.git/hooks").mkdir(parents=True)
    (source / "proj/.git/config").write_text("[core]\n")
    (source / "proj/prod").mkdir()
    (source / "proj/prod/a").write_text("prod\n")
    for path in (source / "proj", *(source / "proj").rglob("*")):
        os.chmod(path, 0o777 if path.is_dir() else 0o666)
    rules = RuleSet((Rule(1, "deny", "/mnt/data/proj/prod", on="path"),))
    fs = DriveFS(vfs, drives=drives, cred=ALICE, cwd=HOME, home=HOME,
                 policy=WritePolicy.make("limited", HOME, ("/mnt/data",), rules=rules))
    with pytest.raises(Refusal):
        fs.rename("/mnt/data/proj/.git", "/mnt/data/g2")
    with pytest.raises(Refusal):
        fs.link("/mnt/data/proj/.git/config", "/mnt/data/c2")
    (source / "other").mkdir(mode=0o777)
    os.chmod(source / "other", 0o777)
    with pytest.raises(PolicyDenial):
        fs.rename("/mnt/data/proj/prod", "/mnt/data/other/prod")
    with pytest.raises(PermissionError):  # .git/config or prod, whichever the walk meets first
        fs.rm("/mnt/data/proj", recursive=True)
    assert (source / "proj/.git/config").read_text() == "[core]\n" and (source / "proj/prod/a").exists()
    fs.mkdir("/mnt/data/free/sub", parents=True)
    fs.rename("/mnt/data/free", "/mnt/data/free2")  # nothing protected in it: moves
