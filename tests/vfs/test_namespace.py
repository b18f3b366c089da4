"""Directory entries: byte names, creating and removing entries, listing, walking, hard links."""

from __future__ import annotations

import errno
import stat as st

import pytest

from kfs.vfs import ROOT_INO, VFS, PathFS

from .oserrors import raises_errno

# -- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        b"\xff\xfe",
        b"with space",
        b"new\nline",
        b"tab\there",
        b"\x01\x7f",
        b"-",
        b"...",
        b"*?[",
        "ünï".encode(),
    ],
    ids=["invalid-utf8", "space", "newline", "tab", "control", "dash", "dots", "glob", "utf8"],
)
def test_a_name_may_hold_any_byte_but_nul_and_slash(fs: PathFS, name: bytes) -> None:
    fs.write_file(b"/" + name, b"content")
    assert fs.read_file(b"/" + name) == b"content"
    assert [n for n, _, _ in fs.vfs.readdir(ROOT_INO) if n == name] == [name]


def test_every_byte_value_but_nul_and_slash_works_in_a_name(vfs: VFS) -> None:
    name = bytes(b for b in range(1, 256) if b != ord("/"))[:200]
    vfs.mkdir(ROOT_INO, name, 0o755)
    assert vfs.lookup(ROOT_INO, name).is_dir


def test_a_non_utf8_name_round_trips_through_str_paths(fs: PathFS) -> None:
    fs.write_file(b"/caf\xe9", b"x")
    assert "caf\udce9" in fs.readdir("/")
    assert fs.read_file("/caf\udce9") == b"x"


def test_a_name_of_255_bytes_is_accepted(fs: PathFS) -> None:
    fs.write_file("/" + "a" * 255, b"x")
    assert fs.stat("/" + "a" * 255).size == 1


def test_a_name_of_255_multibyte_bytes_is_accepted(fs: PathFS) -> None:
    name = "é" * 127 + "a"  # 255 bytes in UTF-8
    fs.mkdir("/" + name)
    assert fs.stat("/" + name).is_dir


def test_a_name_of_256_bytes_is_enametoolong(fs: PathFS) -> None:
    path = "/" + "a" * 256
    with raises_errno(errno.ENAMETOOLONG, path):
        fs.write_file(path, b"x")
    with raises_errno(errno.ENAMETOOLONG, path):
        fs.mkdir(path)


def test_looking_up_a_name_of_256_bytes_is_enametoolong(fs: PathFS) -> None:
    path = "/" + "a" * 256
    with raises_errno(errno.ENAMETOOLONG, path):
        fs.stat(path)


def test_a_name_of_256_bytes_is_enametoolong_at_the_inode_level(vfs: VFS) -> None:
    with raises_errno(errno.ENAMETOOLONG):
        vfs.mkdir(ROOT_INO, b"a" * 256, 0o755)


@pytest.mark.parametrize(
    "name",
    [b"", b"/", b"a/b", b"\0", b"a\0b"],
    ids=["empty", "slash", "inner-slash", "nul", "inner-nul"],
)
def test_an_empty_name_or_one_with_slash_or_nul_is_einval(vfs: VFS, name: bytes) -> None:
    with raises_errno(errno.EINVAL):
        vfs.mkdir(ROOT_INO, name, 0o755)
    with raises_errno(errno.EINVAL):
        vfs.create(ROOT_INO, name, 0o644, 0)


def test_a_path_with_nul_in_it_creates_nothing(fs: PathFS) -> None:
    with pytest.raises(OSError):
        fs.write_file(b"/a\0b", b"x")
    assert fs.readdir("/") == ["home"]


def test_link_and_rename_refuse_invalid_names(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/f", b"")
    ino = fs.stat("/f").ino
    with raises_errno(errno.EINVAL):
        vfs.link(ino, ROOT_INO, b"a/b")
    with raises_errno(errno.ENAMETOOLONG):
        vfs.rename(ROOT_INO, b"f", ROOT_INO, b"x" * 256)


# -- creating entries --------------------------------------------------------------------------


def test_mkdir_of_an_existing_name_is_eexist(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.mkdir("/d")
    with raises_errno(errno.EEXIST, "/d"):
        fs.mkdir("/d")
    with raises_errno(errno.EEXIST, "/f"):
        fs.mkdir("/f")


def test_mkdir_in_a_missing_directory_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/no/d"):
        fs.mkdir("/no/d")


def test_mkdir_below_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f/d"):
        fs.mkdir("/f/d")


def test_mkdir_with_a_trailing_slash_creates_the_directory(fs: PathFS) -> None:
    fs.mkdir("/d/")
    assert fs.stat("/d").is_dir


def test_mkdir_parents_creates_every_missing_ancestor(fs: PathFS) -> None:
    fs.mkdir("/a/b/c", parents=True)
    assert fs.stat("/a/b/c").is_dir


def test_mkdir_parents_accepts_an_existing_directory(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    fs.mkdir("/a/b", parents=True)
    assert fs.stat("/a/b").is_dir


def test_mkdir_parents_refuses_a_file_on_the_way(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f"):
        fs.mkdir("/f/b/c", parents=True)


def test_mkdir_parents_refuses_an_existing_file_at_the_end(fs: PathFS) -> None:
    fs.mkdir("/a")
    fs.write_file("/a/f", b"")
    with raises_errno(errno.EEXIST, "/a/f"):
        fs.mkdir("/a/f", parents=True)


def test_a_failed_mkdir_parents_creates_nothing(fs: PathFS) -> None:
    fs.mkdir("/a")
    fs.write_file("/a/f", b"")
    with raises_errno(errno.ENOTDIR):
        fs.mkdir("/a/new/../f/z", parents=True)  # creates /a/new, then meets the file
    assert fs.readdir("/a") == ["f"]


def test_mkdir_of_dot_or_dotdot_is_eexist(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EEXIST, "/d/."):
        fs.mkdir("/d/.")
    with raises_errno(errno.EEXIST, "/d/.."):
        fs.mkdir("/d/..")


def test_a_hard_link_onto_dot_is_eexist(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/f", b"")
    with raises_errno(errno.EEXIST, "/d/."):
        fs.link("/f", "/d/.")


def test_mkdir_of_the_root_is_eexist(fs: PathFS) -> None:
    with raises_errno(errno.EEXIST, "/"):
        fs.mkdir("/")


def test_symlink_over_an_existing_name_is_eexist(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.EEXIST, "/f"):
        fs.symlink("x", "/f")


# -- removing entries --------------------------------------------------------------------------


def test_unlink_removes_a_file(fs: PathFS) -> None:
    fs.write_file("/f", b"x")
    fs.unlink("/f")
    assert not fs.exists("/f")


def test_unlink_of_a_missing_file_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/nope"):
        fs.unlink("/nope")


def test_unlink_of_a_directory_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EISDIR, "/d"):
        fs.unlink("/d")


def test_unlink_of_dot_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EISDIR, "/d/."):
        fs.unlink("/d/.")
    assert fs.stat("/d").is_dir


def test_unlink_of_a_symlink_removes_the_link_not_the_target(fs: PathFS) -> None:
    fs.write_file("/f", b"x")
    fs.symlink("/f", "/l")
    fs.unlink("/l")
    assert fs.read_file("/f") == b"x"
    assert not fs.exists("/l")


def test_rmdir_removes_an_empty_directory(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.rmdir("/d")
    assert not fs.exists("/d")


def test_rmdir_of_a_non_empty_directory_is_enotempty(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/f", b"")
    with raises_errno(errno.ENOTEMPTY, "/d"):
        fs.rmdir("/d")


def test_rmdir_of_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f"):
        fs.rmdir("/f")


def test_rmdir_of_dot_is_einval(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EINVAL, "/d/."):
        fs.rmdir("/d/.")


def test_rmdir_of_dotdot_is_enotempty(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.ENOTEMPTY, "/d/.."):
        fs.rmdir("/d/..")


def test_rmdir_of_the_root_is_ebusy(fs: PathFS) -> None:
    with raises_errno(errno.EBUSY, "/"):
        fs.rmdir("/")


def test_rmdir_with_a_trailing_slash_removes_the_directory(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.rmdir("/d/")
    assert not fs.exists("/d")


def test_rm_of_a_directory_without_recursive_is_eisdir(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EISDIR, "/d"):
        fs.rm("/d")


def test_rm_recursive_removes_a_whole_tree(fs: PathFS) -> None:
    fs.mkdir("/t/a/b", parents=True)
    fs.write_file("/t/a/b/f", b"x")
    fs.write_file("/t/g", b"y")
    fs.symlink("/t/g", "/t/a/l")
    files = fs.statfs().files
    fs.rm("/t", recursive=True)
    assert not fs.exists("/t")
    assert fs.statfs().files == files - 6


def test_rm_recursive_does_not_follow_a_symlink_to_a_directory(fs: PathFS) -> None:
    fs.mkdir("/keep")
    fs.write_file("/keep/f", b"x")
    fs.mkdir("/t")
    fs.symlink("/keep", "/t/l")
    fs.rm("/t", recursive=True)
    assert fs.read_file("/keep/f") == b"x"


def test_rm_force_ignores_a_missing_path(fs: PathFS) -> None:
    fs.rm("/nope", force=True)


def test_rm_of_a_missing_path_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/nope"):
        fs.rm("/nope")


# -- listing -----------------------------------------------------------------------------------


def test_readdir_lists_names_without_dot_entries(fs: PathFS) -> None:
    fs.mkdir("/d")
    for name in ("b", "a", "c"):
        fs.write_file(f"/d/{name}", b"")
    assert fs.readdir("/d") == ["a", "b", "c"]


def test_readdir_of_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f"):
        fs.readdir("/f")


def test_readdir_cookies_stay_valid_while_the_directory_changes(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/d")
    for name in "abcdef":
        fs.write_file(f"/d/{name}", b"")
    d = fs.stat("/d").ino
    listing = [name for name, _, _ in vfs.readdir(d)]
    first = vfs.readdir(d, limit=3)
    seen_first = [name for name, _, _ in first]
    fs.unlink(b"/d/" + seen_first[0])  # one already returned
    fs.unlink(b"/d/" + listing[4])  # one not yet returned
    fs.write_file("/d/g", b"")
    rest = [name for name, _, _ in vfs.readdir(d, after=first[-1][2])]
    # every survivor not yet returned comes exactly once; a name added meanwhile may or may not
    assert sorted(n for n in rest if n != b"g") == sorted(listing[3:4] + listing[5:])
    assert not set(rest) & set(seen_first)


def test_readdir_pages_through_a_directory_with_a_limit(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/d")
    for i in range(10):
        fs.write_file(f"/d/f{i}", b"")
    d = fs.stat("/d").ino
    seen: list[bytes] = []
    after = 0
    while page := vfs.readdir(d, after, limit=3):
        assert len(page) <= 3
        seen += [name for name, _, _ in page]
        after = page[-1][2]
    assert sorted(seen) == sorted(f"f{i}".encode() for i in range(10))


def test_lookup_of_dot_and_dotdot_at_the_inode_level(vfs: VFS, fs: PathFS) -> None:
    fs.mkdir("/d")
    d = fs.stat("/d").ino
    assert vfs.lookup(d, b".").ino == d
    assert vfs.lookup(d, b"..").ino == ROOT_INO
    assert vfs.lookup(ROOT_INO, b"..").ino == ROOT_INO


def test_walk_visits_the_tree_top_down_without_following_symlinks(fs: PathFS) -> None:
    fs.mkdir("/w/a", parents=True)
    fs.mkdir("/w/b")
    fs.write_file("/w/a/f", b"")
    fs.symlink("/w", "/w/b/loop")
    assert list(fs.walk("/w")) == [
        ("/w", ["a", "b"], []),
        ("/w/a", [], ["f"]),
        ("/w/b", [], ["loop"]),
    ]


# -- hard links --------------------------------------------------------------------------------


def test_a_hard_link_shares_the_inode_and_raises_nlink(fs: PathFS) -> None:
    fs.write_file("/f", b"data")
    fs.link("/f", "/g")
    assert fs.stat("/f").ino == fs.stat("/g").ino
    assert fs.stat("/f").nlink == 2


def test_a_write_through_one_link_is_seen_through_the_other(fs: PathFS) -> None:
    fs.write_file("/f", b"data")
    fs.link("/f", "/g")
    fs.write_file("/g", b"new")
    assert fs.read_file("/f") == b"new"


def test_unlinking_one_name_keeps_the_data_under_the_other(fs: PathFS) -> None:
    fs.write_file("/f", b"data")
    fs.link("/f", "/g")
    fs.unlink("/f")
    assert fs.read_file("/g") == b"data"
    assert fs.stat("/g").nlink == 1


def test_unlinking_the_last_name_frees_the_inode(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/f", b"data")
    ino = fs.stat("/f").ino
    fs.link("/f", "/g")
    fs.unlink("/f")
    fs.unlink("/g")
    with raises_errno(errno.ENOENT):
        vfs.getattr(ino)


def test_a_hard_link_to_a_directory_is_eperm(fs: PathFS) -> None:
    fs.mkdir("/d")
    with raises_errno(errno.EPERM, "/e", "/d"):
        fs.link("/d", "/e")


def test_a_hard_link_over_an_existing_name_is_eexist(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.write_file("/g", b"")
    with raises_errno(errno.EEXIST, "/g"):
        fs.link("/f", "/g")


def test_a_hard_link_of_a_missing_file_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/nope"):
        fs.link("/nope", "/g")


def test_a_hard_link_to_a_symlink_links_the_symlink_itself(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    fs.symlink("/f", "/l")
    fs.link("/l", "/l2")
    assert st.S_ISLNK(fs.lstat("/l2").mode)
    assert fs.lstat("/l2").ino == fs.lstat("/l").ino
    assert fs.stat("/f").nlink == 1


def test_hard_links_in_different_directories_count_once_each(fs: PathFS) -> None:
    fs.mkdir("/a")
    fs.mkdir("/b")
    fs.write_file("/a/f", b"")
    fs.link("/a/f", "/b/f")
    fs.link("/a/f", "/b/g")
    assert fs.stat("/a/f").nlink == 3
    fs.rm("/b", recursive=True)
    assert fs.stat("/a/f").nlink == 1
