"""rename(2) and renameat2(2): replacement rules, directory rules, NOREPLACE and EXCHANGE."""

from __future__ import annotations

import errno
import stat as st

import pytest

from kfs.vfs import RENAME_EXCHANGE, RENAME_NOREPLACE, ROOT_INO, VFS, Cred, PathFS
from kfs.vfs.namespace import RENAME_WHITEOUT

from .oserrors import raises_errno


def test_rename_moves_a_file_to_a_new_name(fs: PathFS) -> None:
    fs.write_file("/a", b"data")
    fs.rename("/a", "/b")
    assert not fs.exists("/a")
    assert fs.read_file("/b") == b"data"


def test_rename_moves_a_file_into_another_directory(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/a", b"data")
    fs.rename("/a", "/d/a")
    assert fs.readdir("/d") == ["a"]


def test_rename_over_an_existing_file_replaces_it(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/a", b"new")
    fs.write_file("/b", b"old")
    old_ino = fs.stat("/b").ino
    fs.rename("/a", "/b")
    assert fs.read_file("/b") == b"new"
    assert not fs.exists("/a")
    with raises_errno(errno.ENOENT):
        vfs.getattr(old_ino)


def test_rename_over_a_hard_linked_file_drops_only_one_link(fs: PathFS) -> None:
    fs.write_file("/a", b"new")
    fs.write_file("/b", b"old")
    fs.link("/b", "/c")
    fs.rename("/a", "/b")
    assert fs.read_file("/c") == b"old"
    assert fs.stat("/c").nlink == 1


def test_rename_a_directory_over_an_empty_directory_replaces_it(fs: PathFS) -> None:
    fs.mkdir("/a")
    fs.write_file("/a/f", b"x")
    fs.mkdir("/b")
    fs.rename("/a", "/b")
    assert fs.readdir("/b") == ["f"]
    assert not fs.exists("/a")


def test_rename_over_a_non_empty_directory_is_enotempty(fs: PathFS) -> None:
    fs.mkdir("/a")
    fs.mkdir("/b")
    fs.write_file("/b/f", b"x")
    with raises_errno(errno.ENOTEMPTY, "/a", "/b"):
        fs.rename("/a", "/b")
    assert fs.exists("/a") and fs.exists("/b/f")


def test_rename_a_directory_over_a_file_is_enotdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/d", "/f"):
        fs.rename("/d", "/f")


def test_rename_a_file_over_a_directory_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/f", b"")
    with raises_errno(errno.EISDIR, "/f", "/d"):
        fs.rename("/f", "/d")


def test_rename_a_directory_into_its_own_subtree_is_einval(fs: PathFS) -> None:
    fs.mkdir("/a/b/c", parents=True)
    with raises_errno(errno.EINVAL, "/a", "/a/b/c/a"):
        fs.rename("/a", "/a/b/c/a")
    with raises_errno(errno.EINVAL, "/a", "/a/x"):
        fs.rename("/a", "/a/x")


def test_rename_a_file_onto_itself_is_a_no_op(fs: PathFS) -> None:
    fs.write_file("/a", b"data")
    fs.rename("/a", "/a")
    assert fs.read_file("/a") == b"data"


def test_rename_between_two_links_of_one_file_keeps_both_names(fs: PathFS) -> None:
    fs.write_file("/a", b"data")
    fs.link("/a", "/b")
    fs.rename("/a", "/b")
    assert fs.read_file("/a") == fs.read_file("/b") == b"data"
    assert fs.stat("/a").nlink == 2


def test_rename_of_a_missing_source_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/nope", "/x"):
        fs.rename("/nope", "/x")


def test_rename_into_a_missing_directory_is_enoent(fs: PathFS) -> None:
    fs.write_file("/a", b"")
    with raises_errno(errno.ENOENT, "/a", "/no/a"):
        fs.rename("/a", "/no/a")
    assert fs.exists("/a")


def test_rename_of_the_root_is_ebusy(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EBUSY, "/", "/d/x"):
        fs.rename("/", "/d/x")


def test_rename_of_dot_or_dotdot_is_ebusy(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EBUSY, "/d/.", "/x"):
        fs.rename("/d/.", "/x")
    with raises_errno(errno.EBUSY, "/d/..", "/x"):
        fs.rename("/d/..", "/x")


def test_rename_onto_dot_or_dotdot_is_ebusy(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.mkdir("/e")
    fs.write_file("/f", b"")
    with raises_errno(errno.EBUSY, "/f", "/d/."):
        fs.rename("/f", "/d/.")
    with raises_errno(errno.EBUSY, "/e", "/d/.."):
        fs.rename("/e", "/d/..")


def test_rename_a_symlink_moves_the_link_not_its_target(fs: PathFS) -> None:
    fs.write_file("/f", b"x")
    fs.symlink("/f", "/l")
    fs.rename("/l", "/m")
    assert fs.lstat("/m").is_lnk
    assert fs.exists("/f")


def test_rename_a_file_to_a_name_with_a_trailing_slash_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f", "/x/"):
        fs.rename("/f", "/x/")
    assert fs.exists("/f")


def test_rename_a_directory_to_a_name_with_a_trailing_slash_works(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.rename("/d", "/e/")
    assert fs.stat("/e").is_dir


# -- link counts of parents --------------------------------------------------------------------


def test_moving_a_directory_moves_one_link_between_parents(fs: PathFS) -> None:
    fs.mkdir("/a/sub", parents=True)
    fs.mkdir("/b")
    fs.rename("/a/sub", "/b/sub")
    assert fs.stat("/a").nlink == 2
    assert fs.stat("/b").nlink == 3


def test_moving_a_directory_updates_its_dotdot(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/a/sub", parents=True)
    fs.mkdir("/b")
    fs.rename("/a/sub", "/b/sub")
    assert fs.stat("/b/sub/..").ino == fs.stat("/b").ino
    assert fs.realpath("/b/sub") == "/b/sub"
    assert vfs.lookup(fs.stat("/b/sub").ino, b"..").ino == fs.stat("/b").ino


def test_renaming_a_directory_within_its_parent_keeps_the_parents_link_count(fs: PathFS) -> None:
    fs.mkdir("/a/sub", parents=True)
    fs.rename("/a/sub", "/a/other")
    assert fs.stat("/a").nlink == 3


def test_replacing_an_empty_directory_in_another_parent_fixes_both_link_counts(fs: PathFS) -> None:
    fs.mkdir("/a/x", parents=True)
    fs.mkdir("/b/y", parents=True)
    fs.rename("/a/x", "/b/y")
    assert fs.stat("/a").nlink == 2
    assert fs.stat("/b").nlink == 3


def test_replacing_an_empty_directory_in_the_same_parent_drops_one_link(fs: PathFS) -> None:
    fs.mkdir("/a/x", parents=True)
    fs.mkdir("/a/y")
    fs.rename("/a/x", "/a/y")
    assert fs.stat("/a").nlink == 3


# -- RENAME_NOREPLACE --------------------------------------------------------------------------


def test_noreplace_onto_an_existing_name_is_eexist(fs: PathFS) -> None:
    fs.write_file("/a", b"a")
    fs.write_file("/b", b"b")
    with raises_errno(errno.EEXIST, "/a", "/b"):
        fs.rename("/a", "/b", RENAME_NOREPLACE)
    assert fs.read_file("/b") == b"b"
    assert fs.read_file("/a") == b"a"


def test_noreplace_onto_a_free_name_renames(fs: PathFS) -> None:
    fs.write_file("/a", b"a")
    fs.rename("/a", "/b", RENAME_NOREPLACE)
    assert fs.read_file("/b") == b"a"


def test_noreplace_and_exchange_together_are_einval(fs: PathFS) -> None:
    fs.write_file("/a", b"a")
    fs.write_file("/b", b"b")
    with raises_errno(errno.EINVAL):
        fs.rename("/a", "/b", RENAME_NOREPLACE | RENAME_EXCHANGE)


def test_unknown_rename_flags_are_einval(fs: PathFS) -> None:
    fs.write_file("/a", b"a")
    with raises_errno(errno.EINVAL):
        fs.rename("/a", "/b", 1 << 7)


# -- RENAME_EXCHANGE ---------------------------------------------------------------------------


def test_exchange_swaps_two_files(fs: PathFS) -> None:
    fs.write_file("/a", b"A")
    fs.write_file("/b", b"B")
    fs.rename("/a", "/b", RENAME_EXCHANGE)
    assert fs.read_file("/a") == b"B"
    assert fs.read_file("/b") == b"A"


def test_exchange_swaps_a_file_and_a_directory_across_parents(fs: PathFS) -> None:
    fs.mkdir("/p")
    fs.mkdir("/q")
    fs.write_file("/p/f", b"file")
    fs.mkdir("/q/d")
    fs.write_file("/q/d/inner", b"in")
    fs.rename("/p/f", "/q/d", RENAME_EXCHANGE)
    assert fs.stat("/p/f").is_dir
    assert fs.read_file("/p/f/inner") == b"in"
    assert fs.read_file("/q/d") == b"file"


def test_exchange_of_a_file_and_a_directory_moves_one_parent_link(fs: PathFS) -> None:
    fs.mkdir("/p")
    fs.mkdir("/q")
    fs.write_file("/p/f", b"file")
    fs.mkdir("/q/d")
    fs.rename("/p/f", "/q/d", RENAME_EXCHANGE)
    assert fs.stat("/p").nlink == 3
    assert fs.stat("/q").nlink == 2


def test_exchange_fixes_the_dotdot_of_a_moved_directory(fs: PathFS) -> None:
    fs.mkdir("/p")
    fs.mkdir("/q")
    fs.write_file("/p/f", b"file")
    fs.mkdir("/q/d")
    fs.rename("/p/f", "/q/d", RENAME_EXCHANGE)
    assert fs.stat("/p/f/..").ino == fs.stat("/p").ino
    assert fs.realpath("/p/f") == "/p/f"


def test_exchange_of_two_directories_keeps_parent_link_counts(fs: PathFS) -> None:
    fs.mkdir("/p/x", parents=True)
    fs.mkdir("/q/y", parents=True)
    fs.mkdir("/q/y/z")
    fs.rename("/p/x", "/q/y", RENAME_EXCHANGE)
    assert fs.stat("/p").nlink == 3 and fs.stat("/q").nlink == 3
    assert fs.stat("/p/x/z").is_dir


def test_exchange_with_a_missing_target_is_enoent(fs: PathFS) -> None:
    fs.write_file("/a", b"A")
    with raises_errno(errno.ENOENT, "/a", "/nope"):
        fs.rename("/a", "/nope", RENAME_EXCHANGE)
    assert fs.read_file("/a") == b"A"


def test_exchange_of_a_directory_into_its_own_subtree_is_einval(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    with raises_errno(errno.EINVAL, "/a", "/a/b"):
        fs.rename("/a", "/a/b", RENAME_EXCHANGE)


def test_exchange_does_not_care_whether_the_directory_is_empty(fs: PathFS) -> None:
    fs.mkdir("/a")
    fs.write_file("/a/f", b"")
    fs.mkdir("/b")
    fs.write_file("/b/g", b"")
    fs.rename("/a", "/b", RENAME_EXCHANGE)
    assert fs.readdir("/a") == ["g"] and fs.readdir("/b") == ["f"]


# -- the inode-level face ----------------------------------------------------------------------


def test_inode_level_rename_moves_the_entry(vfs: VFS) -> None:
    d = vfs.mkdir(ROOT_INO, b"d", 0o755).ino
    vfs.mknod(ROOT_INO, b"f", 0o100644)
    vfs.rename(ROOT_INO, b"f", d, b"g")
    assert vfs.lookup(d, b"g").is_reg
    with raises_errno(errno.ENOENT):
        vfs.lookup(ROOT_INO, b"f")


@pytest.mark.parametrize("flags", [0, RENAME_NOREPLACE])
def test_inode_level_rename_of_a_missing_name_is_enoent(vfs: VFS, flags: int) -> None:
    with raises_errno(errno.ENOENT):
        vfs.rename(ROOT_INO, b"nope", ROOT_INO, b"x", flags)


# -- a rename within one directory skips the second walk: it must decide as the walk would -----


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        ("/ln/a", "/ln/b"),  # the prefix passes a symlink to a directory
        ("/d/x/../a", "/d/x/../b"),  # the prefix holds ".."
        ("d/a", "d/b"),  # relative, from the cwd
        ("/d//a", "/d//b"),
        ("/d/./a", "/d/./b"),
    ],
)
def test_rename_within_one_directory_however_the_prefix_is_spelled(fs: PathFS, src: str, dst: str) -> None:
    fs.mkdir("/d")
    fs.mkdir("/d/x")
    fs.symlink("/d", "/ln")
    fs.write_file("/d/a", b"data")
    fs.rename(src, dst)
    assert sorted(fs.readdir("/d")) == ["b", "x"]
    assert fs.read_file("/d/b") == b"data"


def test_rename_within_one_directory_still_judges_the_target(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/a", b"data")
    fs.mkdir("/d/sub")
    fs.write_file("/d/sub/x", b"")
    with raises_errno(errno.EISDIR):
        fs.rename("/d/a", "/d/sub")
    with raises_errno(errno.ENAMETOOLONG):
        fs.rename("/d/a", "/d/" + "n" * 256)
    with raises_errno(errno.EBUSY):
        fs.rename("/d/a", "/d/..")
    fs.symlink("/d/sub", "/d/link")
    fs.rename("/d/a", "/d/link")  # replaces the symlink itself, never what it points at
    assert fs.read_file("/d/link") == b"data" and fs.readdir("/d/sub") == ["x"]
    fs.rename("/d/sub", "/d/moved/")
    assert fs.readdir("/d/moved") == ["x"]


def test_rename_within_one_directory_of_a_missing_source_is_enoent(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.ENOENT):
        fs.rename("/d/missing", "/d/b")


def test_rename_whiteout_leaves_a_0_0_character_device_at_the_old_name(fs: PathFS, vfs: VFS) -> None:
    fs.write_file("/a", b"data")
    fs.write_file("/b", b"old")
    fs.rename("/a", "/b", RENAME_WHITEOUT)
    assert fs.read_file("/b") == b"data"
    whiteout = fs.lstat("/a")
    assert st.S_ISCHR(whiteout.mode) and whiteout.rdev == 0
    with raises_errno(errno.EEXIST):  # with RENAME_NOREPLACE too
        fs.rename("/b", "/a", RENAME_WHITEOUT | RENAME_NOREPLACE)
    with raises_errno(errno.EINVAL):
        fs.rename("/b", "/a", RENAME_WHITEOUT | RENAME_EXCHANGE)
    fs.mkdir("/pub")
    fs.chmod("/pub", 0o777)
    user = PathFS(vfs, cred=Cred(1000, 1000))
    user.write_file("/pub/x", b"")
    with raises_errno(errno.EPERM):  # a whiteout is a device: only root makes one
        user.rename("/pub/x", "/pub/y", RENAME_WHITEOUT)
