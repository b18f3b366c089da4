"""Path handling: cwd, home, dots, slashes, limits, and no escape from the root.

The property tests compare path resolution with Linux itself: the same tree is built on the
host and looked up by a forked child that has chroot()ed into it, so `/`, `..` at the top and
absolute symlink targets mean exactly what they mean inside the VFS.
"""

from __future__ import annotations

import errno
import os
import pickle
import stat as st
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from kfs.vfs import VFS, PathFS

from .oserrors import raises_errno

HOME = "/home/agent"


# -- cwd, home, dots and slashes ---------------------------------------------------------------


def test_a_relative_path_resolves_from_the_cwd(vfs: VFS, fs: PathFS) -> None:
    fs.write_file("/home/agent/notes", b"n")
    here = PathFS(vfs, cwd="/home/agent", home=HOME)
    assert here.read_file("notes") == b"n"
    assert here.abspath("notes") == "/home/agent/notes"


def test_a_relative_path_creates_in_the_cwd(vfs: VFS, fs: PathFS) -> None:
    here = PathFS(vfs, cwd="/home/agent", home=HOME)
    here.write_file("new", b"x")
    assert fs.read_file("/home/agent/new") == b"x"


def test_tilde_is_the_home_directory(fs: PathFS) -> None:
    fs.write_file("/home/agent/f", b"home")
    assert fs.read_file("~/f") == b"home"
    assert fs.stat("~").ino == fs.stat(HOME).ino
    assert fs.abspath("~/f") == "/home/agent/f"


def test_tilde_inside_a_path_is_an_ordinary_name(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.write_file("/d/~", b"tilde")
    assert fs.read_file("/d/~") == b"tilde"
    assert fs.realpath("/d/~") == "/d/~"


def test_tilde_followed_by_a_name_is_not_expanded(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "~agent"):
        fs.stat("~agent")


def test_dot_components_are_ignored(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    assert fs.stat("/./a/./b/.").ino == fs.stat("/a/b").ino


def test_repeated_slashes_are_one(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    assert fs.stat("//a///b//").ino == fs.stat("/a/b").ino


def test_dotdot_goes_to_the_parent(fs: PathFS) -> None:
    fs.mkdir("/a/b", parents=True)
    assert fs.stat("/a/b/..").ino == fs.stat("/a").ino


def test_dotdot_at_the_root_stays_at_the_root(fs: PathFS) -> None:
    assert fs.stat("/..").ino == fs.stat("/").ino
    assert fs.stat("/../../..").ino == fs.stat("/").ino


def test_dotdot_above_the_root_cannot_reach_host_files(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/../../etc/passwd"):
        fs.read_file("/../../etc/passwd")
    fs.mkdir("/etc")
    fs.write_file("/etc/passwd", b"vfs")
    assert fs.read_file("/../../etc/passwd") == b"vfs"
    assert fs.realpath("/../../etc") == "/etc"


def test_relative_dotdot_from_the_cwd_stays_inside(vfs: VFS, fs: PathFS) -> None:
    here = PathFS(vfs, cwd="/home/agent", home=HOME)
    assert here.realpath("../../../../..") == "/"


def test_dotdot_through_a_missing_directory_is_enoent(fs: PathFS) -> None:
    fs.mkdir("/a")
    with raises_errno(errno.ENOENT, "/a/missing/.."):
        fs.stat("/a/missing/..")


def test_dotdot_after_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f/.."):
        fs.stat("/f/..")


def test_a_file_in_the_middle_of_a_path_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    with raises_errno(errno.ENOTDIR, "/f/x"):
        fs.stat("/f/x")
    with raises_errno(errno.ENOTDIR, "/f/x"):
        fs.write_file("/f/x", b"")


def test_a_missing_directory_in_the_middle_of_a_path_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, "/no/x"):
        fs.write_file("/no/x", b"")


def test_an_empty_path_is_enoent(fs: PathFS) -> None:
    with raises_errno(errno.ENOENT, ""):
        fs.stat("")


def test_a_path_of_4096_bytes_is_enametoolong(fs: PathFS) -> None:
    path = "/" + "a/" * 2048
    with raises_errno(errno.ENAMETOOLONG, path):
        fs.stat(path)


def test_a_long_path_of_short_names_below_the_limit_works(fs: PathFS) -> None:
    path = "/" + "/".join(["d" * 50] * 40)
    fs.mkdir(path, parents=True)
    assert fs.stat(path).is_dir


def test_bytes_and_str_paths_name_the_same_file(fs: PathFS) -> None:
    fs.write_file(b"/f", b"x")
    assert fs.stat("/f").ino == fs.stat(b"/f").ino


def test_errors_name_the_path_the_caller_gave(vfs: VFS) -> None:
    here = PathFS(vfs, cwd="/", home=HOME)
    with raises_errno(errno.ENOENT, "missing/file", "/missing/file"):
        here.read_file("missing/file")


def test_exists_is_false_rather_than_raising(fs: PathFS) -> None:
    fs.write_file("/f", b"")
    assert fs.exists("/f")
    assert not fs.exists("/nope")
    assert not fs.exists("/f/x")


# -- property tests: random paths over a small tree --------------------------------------------

TOKENS = ["a", "b", "..", ".", "/", "~", "l"]
# Either raw token soup ("a..~/l" is one name) or components joined by "/", which more often
# lands on names that exist; both may start or end with "/" and hold "//".
SOUP = hs.lists(hs.sampled_from(TOKENS), min_size=1, max_size=12).map("".join)
COMPONENTS = hs.tuples(
    hs.sampled_from(["", "/"]),
    hs.lists(hs.sampled_from(["a", "b", "l", "..", ".", "~", ""]), min_size=1, max_size=10).map(
        "/".join
    ),
    hs.sampled_from(["", "", "/"]),
).map("".join)
PATHS = hs.one_of(SOUP, COMPONENTS).filter(bool)

# The tree both sides build: directories, files, symlinks (absolute, relative, escaping, looping).
TREE: list[tuple[str, str, str]] = [
    ("dir", "/a", ""),
    ("file", "/a/a", "aa"),
    ("dir", "/a/b", ""),
    ("link", "/a/l", "/b"),
    ("link", "/a/b/l", "../../../.."),
    ("dir", "/b", ""),
    ("link", "/b/a", "../a/a"),
    ("file", "/b/b", "bb"),
    ("link", "/b/l", "l"),
    ("link", "/l", "a/b"),
    ("file", "/home/agent/a", "home"),
    ("link", "/home/agent/l", "../../a"),
]


def build_vfs_tree(fs: PathFS) -> None:
    for kind, path, arg in TREE:
        if kind == "dir":
            fs.mkdir(path)
        elif kind == "file":
            fs.write_file(path, arg)
        else:
            fs.symlink(arg, path)


def build_host_tree(root: Path) -> None:
    (root / "home/agent").mkdir(parents=True)
    for kind, path, arg in TREE:
        host = root / path.lstrip("/")
        if kind == "dir":
            host.mkdir()
        elif kind == "file":
            host.write_text(arg)
        else:
            host.symlink_to(arg)


def kind_of(mode: int) -> str:
    return "dir" if st.S_ISDIR(mode) else "link" if st.S_ISLNK(mode) else "file"


def outcome(call: object) -> object:
    try:
        return call()  # type: ignore[operator]
    except OSError as err:
        return errno.errorcode[err.errno]


def host_lookup(path: str) -> tuple[object, object, object]:
    """stat kind, lstat kind and realpath of `path` as Linux answers (errno names on failure)."""
    if path == "~" or path.startswith("~/"):
        path = HOME + path[1:]
    stat_kind = outcome(lambda: kind_of(os.stat(path).st_mode))
    lstat_kind = outcome(lambda: kind_of(os.lstat(path).st_mode))
    real = os.path.realpath(path, strict=True) if not str(stat_kind).startswith("E") else None
    return stat_kind, lstat_kind, real


def vfs_lookup(fs: PathFS, path: str) -> tuple[object, object, object]:
    stat_kind = outcome(lambda: kind_of(fs.stat(path).mode))
    lstat_kind = outcome(lambda: kind_of(fs.lstat(path).mode))
    real = fs.realpath(path) if not str(stat_kind).startswith("E") else None
    return stat_kind, lstat_kind, real


class ChrootedHost:
    """A forked child chroot()ed into a host tree that answers `host_lookup` over pipes."""

    _LEN = struct.Struct(">I")

    def __init__(self, root: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                os.close(self._to_child)
                os.close(self._from_child)
                os.chroot(root)
                os.chdir("/")
                while (request := self._recv(to_child_r)) is not None:
                    self._send(from_child_w, host_lookup(request))
                code = 0
            finally:
                os._exit(code)  # never return into pytest in the forked child
        os.close(to_child_r)
        os.close(from_child_w)

    def _send(self, fd: int, value: object) -> None:
        raw = pickle.dumps(value)
        os.write(fd, self._LEN.pack(len(raw)) + raw)

    def _read(self, fd: int, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = os.read(fd, n - len(out))
            if not chunk:
                raise EOFError
            out += chunk
        return out

    def _recv(self, fd: int) -> object:
        try:
            size = self._LEN.unpack(self._read(fd, self._LEN.size))[0]
        except EOFError:
            return None
        return pickle.loads(self._read(fd, size))

    def lookup(self, path: str) -> object:
        self._send(self._to_child, path)
        return self._recv(self._from_child)

    def close(self) -> None:
        os.close(self._to_child)
        os.close(self._from_child)
        os.waitpid(self.pid, 0)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChrootedHost]:
    if os.geteuid() != 0:
        pytest.fail("the path differential test chroot()s into a host tree: run it as root")
    root = tmp_path_factory.mktemp("host-tree")
    build_host_tree(root)
    oracle = ChrootedHost(root)
    yield oracle
    oracle.close()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=PATHS)
def test_random_paths_raise_only_oserror_and_resolve_inside_the_root(fs: PathFS, path: str) -> None:
    if not fs.exists("/a"):
        build_vfs_tree(fs)
    for call in (
        fs.stat,
        fs.lstat,
        fs.realpath,
        fs.exists,
        fs.abspath,
        lambda p: fs.realpath(p, strict=False),
    ):
        try:
            result = call(path)
        except OSError:
            continue
        if isinstance(result, str):
            assert result.startswith("/")
    try:
        real = fs.realpath(path)
    except OSError:
        return
    assert fs.stat(real).ino == fs.stat(path).ino


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=PATHS)
def test_random_paths_resolve_as_linux_resolves_them_in_a_chroot(
    fs: PathFS, host: ChrootedHost, path: str
) -> None:
    if not fs.exists("/a"):
        build_vfs_tree(fs)
    assert vfs_lookup(fs, path) == host.lookup(path)


@pytest.mark.parametrize(
    "path",
    [
        "/a/l/..",
        "/l/l/l",
        "/b/l",
        "/b/l/",
        "a/b/l/a/a",
        "~/l/..",
        "/a/a/",
        "/a/a/.",
        "/b/a/..",
        "l/..",
        "~/l/a",
    ],
)
def test_chosen_paths_resolve_as_linux_resolves_them_in_a_chroot(
    fs: PathFS, host: ChrootedHost, path: str
) -> None:
    build_vfs_tree(fs)
    assert vfs_lookup(fs, path) == host.lookup(path)


def test_without_tilde_expansion_a_leading_tilde_names_a_file(fs: PathFS) -> None:
    literal = PathFS(fs.vfs, cwd="/home/agent", home="/home/agent", tilde=False)
    literal.mkdir("~")
    literal.write_file("~/x", b"here")
    assert fs.read_file("/home/agent/~/x") == b"here"
    assert literal.abspath("~/x") == "/home/agent/~/x"
    assert not fs.exists("/home/agent/x")


@pytest.mark.parametrize(
    "path",
    ["/", "/a", "/a/b", "/a/./b", "/a/../b", "/a//b", "/a/", "/.hidden", "/a/.b/c", "/~", "/~/x", "/a~/b", "/caf\u00e9", "/\udcff", "//a"],
)
def test_abspath_of_an_absolute_path_is_its_normal_form(fs: PathFS, path: str) -> None:
    import native

    assert fs.abspath(path) == os.fsdecode(native.normalize(os.fsencode(path), b"/home/agent", b"/home/agent"))


# -- reading a directory's files with its listing --------------------------------------------


def test_scandir_contents_reads_the_wanted_regular_files_within_the_budget(fs: PathFS) -> None:
    fs.mkdir("/d")
    fs.mkdir("/d/sub")
    fs.write_file("/d/a", b"aa")
    fs.write_file("/d/b", b"bbbb")
    fs.write_file("/d/skip", b"s")
    fs.symlink("a", "/d/l")
    found = {name: (inode.ino, content) for name, inode, content in
             fs.scandir_contents("/d", lambda name, _: name != "skip", budget=5)}
    assert {name: ino for name, (ino, _) in found.items()} == {n: i.ino for n, i in fs.scandir("/d")}
    assert found["skip"][1] is None and found["sub"][1] is None and found["l"][1] is None
    # a and b together are over the budget: one is read, the other left to its reader
    assert sorted(c for n, (_, c) in found.items() if n in "ab" and c is not None) in ([b"aa"], [b"bbbb"])


def test_scandir_contents_of_a_file_is_enotdir(fs: PathFS) -> None:
    fs.write_file("/f", b"x")
    with raises_errno(errno.ENOTDIR, "/f"):
        fs.scandir_contents("/f", lambda name, _: True, budget=100)
