"""Symbolic links: targets, readlink, loops and the 40-hop limit, trailing slashes, realpath."""

from __future__ import annotations

import errno
import os

from kfs.vfs import ROOT_INO, VFS, PathFS

from .oserrors import raises_errno


def chain(fs: PathFS, length: int, end: str = "/target") -> str:
    """Make /l1 -> /target and /lN -> lN-1 up to `length`; return the head of the chain."""
    previous = end
    for i in range(1, length + 1):
        fs.symlink(previous, f"/l{i}")
        previous = f"l{i}"
    return f"/l{length}"


# -- targets -----------------------------------------------------------------------------------


def test_a_relative_target_resolves_from_the_links_directory(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    fs.write_file("/a/b/f", b"rel")
    fs.symlink("b/f", "/a/l")
    assert fs.read_file("/a/l") == b"rel"


def test_an_absolute_target_resolves_from_the_vfs_root(fs: PathFS) -> None:
    fs.mkdir("/etc")
    fs.write_file("/etc/passwd", b"inside the vfs")
    fs.mkdir("/a")
    fs.symlink("/etc/passwd", "/a/l")
    assert fs.read_file("/a/l") == b"inside the vfs"


def test_a_target_climbing_above_the_root_stays_inside(fs: PathFS) -> None:
    fs.mkdir("/etc")
    fs.write_file("/etc/passwd", b"inside the vfs")
    fs.mkdir("/a/b", parents=True)
    fs.symlink("../../../../../../etc/passwd", "/a/b/l")
    assert fs.read_file("/a/b/l") == b"inside the vfs"
    assert fs.realpath("/a/b/l") == "/etc/passwd"


def test_readlink_returns_the_target_verbatim(fs: PathFS) -> None:
    fs.symlink("../x//y/./z/", "/l")
    assert fs.readlink("/l") == "../x//y/./z/"


def test_a_target_may_hold_any_bytes(fs: PathFS) -> None:
    fs.symlink(b"\xff\xfe name", b"/l")
    assert fs.readlink(b"/l") == "\udcff\udcfe name"
    assert fs.vfs.readlink(fs.lstat("/l").ino) == b"\xff\xfe name"


def test_readlink_of_a_file_is_einval(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.EINVAL, "/f"):
        fs.readlink("/f")


def test_readlink_of_a_missing_path_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/nope"):
        fs.readlink("/nope")


def test_readlink_follows_links_in_the_parent_path(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("x", "/d/inner")
    fs.symlink("d", "/ld")
    assert fs.readlink("/ld/inner") == "x"


def test_a_symlink_with_an_empty_target_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT):
        fs.symlink("", "/l")
    assert not fs.exists("/l")


def test_an_inode_level_symlink_with_an_empty_target_is_enoent(vfs: VFS) -> None:
    with raises_errno(errno.ENOENT):
        vfs.symlink(ROOT_INO, b"l", b"")


def test_a_target_of_4095_bytes_is_accepted(fs: PathFS) -> None:
    fs.symlink("a" * 4095, "/l")
    assert fs.lstat("/l").size == 4095


def test_a_target_of_4096_bytes_is_enametoolong(fs: PathFS) -> None:
    with raises_errno(errno.ENAMETOOLONG):
        fs.symlink("a" * 4096, "/l")
    assert not fs.exists("/l") and fs.readdir("/") == ["home"]


# -- stat and lstat ----------------------------------------------------------------------------


def test_stat_follows_a_symlink_and_lstat_does_not(fs: PathFS) -> None:
    fs.write_file("/f", b"12345")
    fs.symlink("/f", "/l")
    assert fs.stat("/l").ino == fs.stat("/f").ino
    assert fs.stat("/l").size == 5
    assert fs.lstat("/l").is_lnk
    assert fs.lstat("/l").ino != fs.stat("/f").ino


def test_lstat_follows_symlinks_in_the_middle_of_a_path(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("x", "/d/inner")
    fs.symlink("d", "/ld")
    assert fs.lstat("/ld/inner").is_lnk


def test_a_dangling_symlink_exists_for_lstat_only(fs: PathFS) -> None:
    fs.symlink("/nowhere", "/l")
    assert fs.lstat("/l").is_lnk
    assert not fs.exists("/l")
    with raises_errno(errno.ENOENT, "/l"):
        fs.stat("/l")
    with raises_errno(errno.ENOENT, "/l"):
        fs.read_file("/l")


def test_chmod_of_a_dangling_symlink_is_enoent(fs: PathFS) -> None:
    fs.symlink("/nowhere", "/l")
    with raises_errno(errno.ENOENT, "/l"):
        fs.chmod("/l", 0o600)


def test_chmod_through_a_symlink_changes_the_target(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("/f", "/l")
    fs.chmod("/l", 0o600)
    assert fs.stat("/f").mode & 0o777 == 0o600
    assert fs.lstat("/l").mode & 0o777 == 0o777


def test_writing_through_a_dangling_symlink_creates_the_target(fs: PathFS) -> None:
    fs.symlink("/made", "/l")
    fs.write_file("/l", b"x")
    assert fs.read_file("/made") == b"x"


# -- loops and the hop limit -------------------------------------------------------------------


def test_a_chain_of_40_symlinks_resolves(fs: PathFS) -> None:
    fs.write_file("/target", b"end")
    assert fs.read_file(chain(fs, 40)) == b"end"


def test_a_chain_of_41_symlinks_is_eloop(fs: PathFS) -> None:
    fs.write_file("/target", b"end")
    head = chain(fs, 41)
    with raises_errno(errno.ELOOP, head):
        fs.stat(head)


def test_the_hop_limit_counts_every_link_in_one_path(fs: PathFS) -> None:
    fs.mkdir("/dir")
    fs.write_file("/dir/f", b"x")
    fs.symlink("/dir", "/d1")
    for i in range(2, 22):
        fs.symlink(f"d{i - 1}", f"/d{i}")  # /d21 takes 21 hops to reach /dir
    fs.symlink("/d21/f", "/f1")
    for i in range(2, 21):
        fs.symlink(f"f{i - 1}", f"/f{i}")  # /f20 takes 20 hops to reach /d21/f, 41 in all
    assert fs.read_file("/f19") == b"x"  # 40 hops
    with raises_errno(errno.ELOOP, "/f20"):
        fs.read_file("/f20")


def test_a_symlink_to_itself_is_eloop(fs: PathFS) -> None:
    fs.symlink("self", "/self")
    with raises_errno(errno.ELOOP, "/self"):
        fs.stat("/self")


def test_two_symlinks_pointing_at_each_other_are_eloop(fs: PathFS) -> None:
    fs.symlink("/b", "/a")
    fs.symlink("/a", "/b")
    with raises_errno(errno.ELOOP, "/a/x"):
        fs.stat("/a/x")


def test_creating_through_a_looping_symlink_is_eloop(fs: PathFS) -> None:
    fs.symlink("self", "/self")
    with raises_errno(errno.ELOOP, "/self"):
        fs.write_file("/self", b"x")


def test_a_symlink_to_an_ancestor_directory_is_not_a_loop(fs: PathFS) -> None:
    fs.mkdir("/a")
    fs.symlink("..", "/a/up")
    fs.write_file("/f", b"root file")
    assert fs.read_file("/a/up/a/up/a/up/f") == b"root file"


def test_lstat_of_a_looping_symlink_works(fs: PathFS) -> None:
    fs.symlink("self", "/self")
    assert fs.lstat("/self").is_lnk


# -- dotdot is physical ------------------------------------------------------------------------


def test_dotdot_after_a_symlink_goes_to_the_targets_parent(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    fs.write_file("/a/marker", b"a")
    fs.mkdir("/x")
    fs.symlink("/a/b", "/x/l")
    assert fs.read_file("/x/l/../marker") == b"a"
    assert fs.realpath("/x/l/..") == "/a"


def test_dotdot_in_a_relative_target_is_physical_too(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    fs.mkdir("/c")
    fs.symlink("/a/b", "/c/lb")
    fs.symlink("lb/../b", "/c/l2")  # lb/.. is /a, so /a/b
    assert fs.realpath("/c/l2") == "/a/b"


# -- trailing slashes --------------------------------------------------------------------------


def test_a_trailing_slash_on_a_symlink_to_a_directory_follows_it(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("d", "/ld")
    assert fs.lstat("/ld/").is_dir
    assert fs.lstat("/ld").is_lnk


def test_a_trailing_slash_on_a_symlink_to_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("f", "/lf")
    with raises_errno(errno.ENOTDIR, "/lf/"):
        fs.lstat("/lf/")
    with raises_errno(errno.ENOTDIR, "/lf/"):
        fs.stat("/lf/")


def test_a_trailing_slash_on_a_dangling_symlink_is_enoent(fs: PathFS) -> None:
    fs.symlink("nope", "/dang")
    with raises_errno(errno.ENOENT, "/dang/"):
        fs.lstat("/dang/")


def test_a_trailing_slash_on_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f/"):
        fs.stat("/f/")


def test_a_dot_after_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f/."):
        fs.stat("/f/.")


def test_a_target_with_a_trailing_slash_must_be_a_directory(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("f/", "/l")
    with raises_errno(errno.ENOTDIR, "/l"):
        fs.stat("/l")


def test_creating_through_a_dangling_symlink_whose_target_ends_in_slash_is_eisdir(
    fs: PathFS,
) -> None:
    fs.symlink("new/", "/l")
    with raises_errno(errno.EISDIR, "/l"):
        fs.open("/l", os.O_WRONLY | os.O_CREAT)
    with raises_errno(errno.EISDIR, "/l"):
        fs.write_file("/l", b"x")
    assert not fs.exists("/new")


def test_rmdir_of_a_symlink_to_a_directory_with_a_trailing_slash_is_enotdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("d", "/ld")
    with raises_errno(errno.ENOTDIR, "/ld/"):
        fs.rmdir("/ld/")
    assert fs.stat("/d").is_dir and fs.lstat("/ld").is_lnk


def test_unlink_of_a_symlink_to_a_directory_with_a_trailing_slash_is_enotdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("d", "/ld")
    with raises_errno(errno.ENOTDIR, "/ld/"):
        fs.unlink("/ld/")
    assert fs.lstat("/ld").is_lnk


def test_unlink_of_a_symlink_to_a_file_with_a_trailing_slash_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("f", "/lf")
    with raises_errno(errno.ENOTDIR, "/lf/"):
        fs.unlink("/lf/")
    assert fs.lstat("/lf").is_lnk


def test_rename_of_a_symlink_to_a_directory_with_a_trailing_slash_is_enotdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("d", "/ld")
    with raises_errno(errno.ENOTDIR, "/ld/", "/x"):
        fs.rename("/ld/", "/x")
    assert fs.stat("/d").is_dir and fs.lstat("/ld").is_lnk


def test_mkdir_over_a_dangling_symlink_with_a_trailing_slash_is_eexist(fs: PathFS) -> None:
    fs.symlink("zz", "/dang")
    with raises_errno(errno.EEXIST, "/dang/"):
        fs.mkdir("/dang/")
    assert not fs.exists("/zz")


def test_mkdir_over_a_dangling_symlink_is_eexist(fs: PathFS) -> None:
    fs.symlink("zz", "/dang")
    with raises_errno(errno.EEXIST, "/dang"):
        fs.mkdir("/dang")


# -- realpath ----------------------------------------------------------------------------------


def test_realpath_resolves_every_symlink(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    fs.write_file("/a/b/f", b"")
    fs.symlink("/a", "/la")
    fs.symlink("b/f", "/a/lf")
    assert fs.realpath("/la/lf") == "/a/b/f"
    assert fs.realpath("/la/b/") == "/a/b"


def test_realpath_of_the_root_is_the_root(fs: PathFS) -> None:
    assert fs.realpath("/") == "/"
    assert fs.realpath("/..") == "/"


def test_realpath_of_a_missing_path_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/nope"):
        fs.realpath("/nope")


def test_realpath_non_strict_allows_a_missing_last_component(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("/d", "/ld")
    assert fs.realpath("/ld/new", strict=False) == "/d/new"


def test_realpath_of_a_dangling_symlink_non_strict_names_its_target(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.symlink("/d/missing", "/l")
    assert fs.realpath("/l", strict=False) == "/d/missing"
