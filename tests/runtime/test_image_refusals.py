"""What `komputer image apply` refuses because it would hand agents the host: a path of the image
that leads out of its folder (a link included), a host drive of the host's whole tree, a system
tree or the state, a memory drive larger than the host's memory, and a drive over K's own trees
or a home. Each refusal names the file (and line), and nothing is applied."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kfs.runtime import drives, image

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "image"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the repository's example image, and beside it (outside it) a secret file."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("host secret\n")
    (tmp_path / "outside" / "evil.py").write_text("def echo(request):\n    return 'outside'\n")
    return Path(shutil.copytree(EXAMPLE, tmp_path / "img"))


def komputer(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kshell.cli", *args, "--state", str(state)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def refused_by_apply(tmp_path: Path, folder: Path) -> str:
    """`komputer image apply FOLDER` on a fresh state: its refusal's first line; nothing applied."""
    state = tmp_path / "state"
    assert komputer(state, "init").returncode == 0
    done = komputer(state, "image", "apply", str(folder))
    assert done.returncode == 1, done.stdout
    first, second = done.stderr.splitlines()
    assert second == "komputer image apply: nothing applied; the image in force is unchanged"
    assert komputer(state, "image", "list").stdout == ""
    return first


@pytest.mark.parametrize("link", [
    "hosts/api/leak",            # a file a host serves
    "hosts/api/docs/leak",       # one in a folder beneath
    "hosts/api/outdir",          # a folder a host serves
    "handlers.py",               # a handler's module
    "hooks.py",                  # a hook's
    "lib/evil.py",               # Python the image stores for its modules to import
    "komputer.toml",             # the declarations themselves
])
def test_a_link_out_of_the_folder_is_refused_by_name(tmp_path: Path, folder: Path, link: str) -> None:
    target = tmp_path / "outside" / ("evil.py" if link.endswith(".py") else "secret")
    if link.endswith("outdir"):
        target = tmp_path / "outside"
    where = folder / link
    where.parent.mkdir(exist_ok=True)
    if where.exists():
        if link == "komputer.toml":
            (tmp_path / "outside" / "komputer.toml").write_text(where.read_text())
            target = tmp_path / "outside" / "komputer.toml"
        where.unlink()
    where.symlink_to(target)
    assert refused_by_apply(tmp_path, folder) == (
        f"komputer image apply: {where}: leads out of the image folder (to {target}): an image's paths, "
        "links included, stay inside its folder")


def test_a_markdown_command_linked_out_is_refused_at_its_line(tmp_path: Path, folder: Path) -> None:
    (folder / "commands" / "inspect.md").unlink()
    (folder / "commands" / "inspect.md").symlink_to(tmp_path / "outside" / "secret")
    line = (folder / "komputer.toml").read_text().splitlines().index('markdown = "commands/inspect.md"') + 1
    assert refused_by_apply(tmp_path, folder) == (
        f"komputer image apply: {folder / 'komputer.toml'}:{line}: commands/inspect.md: paths stay inside the "
        "image folder")


def test_a_link_that_stays_inside_the_folder_is_served(folder: Path) -> None:
    (folder / "hosts" / "api" / "guide").symlink_to("docs/guide.md")
    loaded = image.load(folder)
    assert loaded.spec["hosts"]["api"]["routes"]["/guide"] == {"file": "hosts/api/guide"}
    assert loaded.files["hosts/api/guide"] == (folder / "hosts/api/docs/guide.md").read_bytes()


DRIVE = '''[drives.d]
path = "PATH"
kind = "host"
source = "SOURCE"
'''


@pytest.mark.parametrize(("source", "tree"), [
    ("/", None), ("/etc", "/etc"), ("/usr/lib", "/usr"), ("/var", "/var"), ("/root", "/root"), ("/proc", "/proc"),
    ("/boot", "/boot"), ("/run", "/run"), ("/dev/shm", "/dev"), ("/sys", "/sys"), ("/lib", "/lib")])
def test_a_host_drive_of_the_host_or_a_system_tree_is_refused(tmp_path: Path, source: str, tree: str | None) -> None:
    if not os.path.isdir(source):
        pytest.fail(f"this host has no {source}")
    real = os.path.realpath(source)
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "komputer.toml").write_text(DRIVE.replace("PATH", "/mnt/d").replace("SOURCE", source))
    shown = source if real == source else f"{source} (that is, {real})"
    why = "the host's whole tree" if tree is None else f"the host's system tree {'/' + real.split('/')[1]}"
    assert refused_by_apply(tmp_path, tmp_path / "img") == (
        f"komputer image apply: {tmp_path / 'img' / 'komputer.toml'}:4: source {shown}: a host drive may not "
        f"show {why}")


def test_a_host_drive_linked_to_a_system_tree_is_refused(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "etc-link").symlink_to("/etc")
    (tmp_path / "img" / "komputer.toml").write_text(
        DRIVE.replace("PATH", "/mnt/d").replace("SOURCE", str(tmp_path / "etc-link")))
    assert refused_by_apply(tmp_path, tmp_path / "img").endswith(
        f"source {tmp_path / 'etc-link'} (that is, /etc): a host drive may not show the host's system tree /etc")


@pytest.mark.parametrize("source", ["state", ".", "state/sub"])
def test_a_host_drive_of_the_state_or_above_it_is_refused(tmp_path: Path, source: str) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "state" / "sub").mkdir(parents=True)
    (tmp_path / "img" / "komputer.toml").write_text(
        DRIVE.replace("PATH", "/mnt/d").replace("SOURCE", str((tmp_path / source).resolve())))
    assert refused_by_apply(tmp_path, tmp_path / "img").endswith(
        f": a host drive may not show the state ({tmp_path / 'state'}), which holds every agent's files")


MEMORY = '''[drives.a]
path = "/mnt/a"
kind = "memory"
max_bytes = "A"

[drives.b]
path = "/mnt/b"
kind = "memory"
max_bytes = "B"
'''


def test_a_memory_drive_beyond_the_hosts_memory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    manifest = tmp_path / "img" / "komputer.toml"
    manifest.write_text(MEMORY.replace("A", "999999999999G").replace("B", "1M"))
    bound = drives.size_text(drives.memory_bound())
    assert refused_by_apply(tmp_path, tmp_path / "img") == (
        f"komputer image apply: {manifest}:4: max_bytes = '999999999999G': more than this host's memory ({bound}), "
        "which holds every memory drive")


def test_memory_drives_together_beyond_the_hosts_memory_are_refused(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    manifest = tmp_path / "img" / "komputer.toml"
    half = drives.memory_bound() // 2 + 4096
    manifest.write_text(MEMORY.replace("A", str(half)).replace("B", str(half)))
    with pytest.raises(image.ImageError) as e:
        image.load(tmp_path / "img")
    assert str(e.value) == (f"{manifest}:9: max_bytes = '{half}' (with the memory drives before it, "
                            f"{drives.size_text(2 * half)}): more than this host's memory "
                            f"({drives.size_text(drives.memory_bound())}), which holds every memory drive")
    manifest.write_text(MEMORY.replace("A", "64M").replace("B", "64M"))
    assert image.load(tmp_path / "img").spec["drives"]["b"]["max_bytes"] == 64 << 20


@pytest.mark.parametrize(("path", "why"), [
    ("/home/bob", "a drive there would hide a home (a path under a home is fine)"),
    ("/home", "a drive there would hide the agents' homes (a path under a home is fine)"),
    ("/root", "a drive there would hide a home (a path under a home is fine)"),
    ("/etc", "K shows its own files under /etc"),
    ("/etc/ssl", "K shows its own files under /etc"),
    ("/.komputer", "K shows its own files under /.komputer"),
    ("/usr/local", "K shows its own files under /usr"),
    ("/bin", "K shows its own files under /bin"),
    ("/sbin", "K shows its own files under /sbin"),
    ("/lib64", "K shows its own files under /lib64"),
    ("/sys/x", "K shows its own files under /sys"),
])
def test_a_drive_over_ks_own_trees_or_a_home_is_refused(tmp_path: Path, path: str, why: str) -> None:
    (tmp_path / "img").mkdir()
    manifest = tmp_path / "img" / "komputer.toml"
    manifest.write_text(MEMORY.replace("/mnt/a", path).replace("A", "1M").replace("B", "1M"))
    assert refused_by_apply(tmp_path, tmp_path / "img") == f"komputer image apply: {manifest}:2: path {path}: {why}"


def test_a_drive_under_a_home_or_in_tmp_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "komputer.toml").write_text(
        MEMORY.replace("/mnt/a", "/home/bob/scratch").replace("/mnt/b", "/tmp/b").replace("A", "1M").replace("B", "1M"))
    assert set(image.load(tmp_path / "img").spec["drives"]) == {"a", "b"}


def test_a_folder_link_out_that_no_declaration_reaches_is_not_read(tmp_path: Path, folder: Path) -> None:
    (folder / "vendor").symlink_to(tmp_path / "outside")  # a venv's or a checkout's links, say
    loaded = image.load(folder)
    assert not any(rel.startswith("vendor/") for rel in loaded.files)
    edit = (folder / "komputer.toml").read_text().replace('"handlers:echo"', '"vendor.evil:echo"')
    (folder / "komputer.toml").write_text(edit)
    with pytest.raises(image.ImageError) as e:
        image.load(folder)  # a handler there would be imported from outside: refused by name
    assert str(e.value).startswith(f"{folder / 'vendor' / 'evil.py'}: leads out of the image folder")
