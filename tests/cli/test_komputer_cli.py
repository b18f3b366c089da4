"""The `komputer` command line, run as a real subprocess against real state directories."""

from __future__ import annotations

import os
import stat as st
import subprocess
import sys
from pathlib import Path

import pytest

from kfs.kstate import KState
from kfs.vfs import VFS, Cred, PathFS

SUBCOMMANDS = ["init", "fsck", "import", "export", "stat", "cat", "receipts"]


def komputer(*args: str, env: dict[str, str] | None = None, check: bool = False) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "kshell.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_every_subcommand_has_help_that_mentions_state(sub: str) -> None:
    result = komputer(sub, "--help", check=True)
    assert "--state DIR" in result.stdout


def test_init_creates_the_state_and_is_idempotent(tmp_path: Path) -> None:
    state = tmp_path / "s"
    first = komputer("init", "--state", str(state), check=True)
    assert "initialised state" in first.stdout
    second = komputer("init", "--state", str(state), check=True)
    assert "using existing state" in second.stdout
    assert (state / "data.mdb").exists()


def test_state_comes_from_komputer_state_when_no_option_is_given(tmp_path: Path) -> None:
    state = tmp_path / "from-env"
    komputer("init", env={"KOMPUTER_STATE": str(state)}, check=True)
    assert (state / "data.mdb").exists()


def test_options_may_come_after_positional_arguments(tmp_path: Path) -> None:
    state = tmp_path / "s"
    komputer("init", "--state", str(state), check=True)
    host = tmp_path / "f.txt"
    host.write_text("hello\n")
    komputer("import", str(host), "/f.txt", "--state", str(state), check=True)
    assert komputer("cat", "/f.txt", "--state", str(state), check=True).stdout == "hello\n"
    assert komputer("--state", str(state), "cat", "/f.txt", check=True).stdout == "hello\n"


def test_a_missing_state_is_reported_without_a_traceback(tmp_path: Path) -> None:
    result = komputer("fsck", "--state", str(tmp_path / "nowhere"))
    assert result.returncode == 1
    assert "no KState here" in result.stderr
    assert "Traceback" not in result.stderr


def test_stat_prints_gnu_stat_layout_and_fails_on_a_missing_file(tmp_path: Path) -> None:
    state = tmp_path / "s"
    with KState(state, create=True) as ks:
        fs = PathFS(VFS(ks))
        fs.write_file("/hello", b"hi\n", mode=0o640)
    result = komputer("stat", "/hello", "/missing", "--state", str(state))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "  File: /hello"
    assert lines[1].startswith("  Size: 3 ") and lines[1].endswith("regular file")
    assert lines[3].startswith("Access: (0640/-rw-r-----)")
    assert result.stderr == "komputer: cannot stat '/missing': No such file or directory\n"


def test_cat_of_a_missing_file_names_it_and_fails(tmp_path: Path) -> None:
    komputer("init", "--state", str(tmp_path / "s"), check=True)
    result = komputer("cat", "/nope", "--state", str(tmp_path / "s"))
    assert result.returncode == 1
    assert result.stderr == "komputer: /nope: No such file or directory\n"


def _host_tree(root: Path) -> None:
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"alpha\n")
    (root / "sub" / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    os.chmod(root / "sub" / "run.sh", 0o4755)
    (root / "sub" / "deep" / "big.bin").write_bytes(os.urandom(300_000))
    os.symlink("../a.txt", root / "sub" / "link")
    os.symlink("dangling-target", root / "dangling")
    (root / "odd \xe9 name").write_bytes(b"")
    os.chmod(root / "sub" / "deep", 0o710)
    os.utime(root / "a.txt", ns=(1_000_000_123, 2_000_000_456))
    os.utime(root / "sub" / "link", ns=(3_000_000_789, 4_000_000_012), follow_symlinks=False)


def _describe(root: Path) -> dict[str, tuple[int, int, bytes | str | None]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            rel = str(path.relative_to(root))
            if st.S_ISLNK(info.st_mode):
                body: bytes | str | None = os.readlink(path)
            elif st.S_ISREG(info.st_mode):
                body = path.read_bytes()
            else:
                body = None
            mtime = info.st_mtime_ns if not st.S_ISDIR(info.st_mode) else 0  # dirs change as they fill
            out[rel] = (info.st_mode, mtime, body)
    return out


def test_import_then_export_round_trips_modes_symlinks_times_and_bytes(tmp_path: Path) -> None:
    src, dst, state = tmp_path / "src", tmp_path / "dst", tmp_path / "s"
    src.mkdir()
    _host_tree(src)
    komputer("import", str(src), "/home/agent/proj", "--state", str(state), check=True)
    assert komputer("fsck", "--state", str(state), check=True).stdout.endswith("clean\n")
    komputer("export", "/home/agent/proj", str(dst), "--keep-setuid", "--state", str(state), check=True)
    assert _describe(dst) == _describe(src)


def test_import_is_all_or_nothing_when_a_name_already_exists(tmp_path: Path) -> None:
    src, state = tmp_path / "src", tmp_path / "s"
    src.mkdir()
    _host_tree(src)
    with KState(state, create=True) as ks:
        fs = PathFS(VFS(ks))
        fs.mkdir("/proj/sub", parents=True)
        fs.write_file("/proj/sub/run.sh", b"already here")
    result = komputer("import", str(src), "/proj", "--state", str(state))
    assert result.returncode == 1
    assert "File exists" in result.stderr
    with KState(state) as ks:
        fs = PathFS(VFS(ks))
        assert fs.readdir("/proj") == ["sub"]
        assert fs.readdir("/proj/sub") == ["run.sh"]


def test_receipts_lists_changes_as_json_lines_without_contents(tmp_path: Path) -> None:
    state = tmp_path / "s"
    with KState(state, create=True) as ks:
        PathFS(VFS(ks, by="agent")).write_file("/secret.txt", b"hunter2-password")
    result = komputer("receipts", "--state", str(state), check=True)
    assert '"op":"vfs.write"' in result.stdout and '"path":"/secret.txt"' in result.stdout
    assert "hunter2" not in result.stdout


def test_importing_kfs_or_the_cli_does_no_work(tmp_path: Path) -> None:
    """`import kfs` (and its subpackages) or the `komputer` program opens no state and creates nothing."""
    probe = (
        "import os, sys; import kfs, kfs.kstate, kfs.vfs, kfs.journal, kfs.fsck, kshell.cli.main;"
        "sys.exit(1 if os.listdir(sys.argv[1]) else 0)"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, "KOMPUTER_STATE": str(empty / "state"), "HOME": str(empty)}
    result = subprocess.run([sys.executable, "-c", probe, str(empty)], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_export_drops_setuid_and_setgid_bits_unless_asked_and_says_so(tmp_path: Path) -> None:
    state = tmp_path / "s"
    with KState(state, create=True) as ks:
        agent = PathFS(VFS(ks), cred=Cred(1000, 1000), cwd="/", home="/")
        PathFS(VFS(ks)).mkdir("/home/agent", parents=True)
        PathFS(VFS(ks)).chown("/home/agent", 1000, 1000)
        for name, mode in (("suid", 0o4755), ("sgid", 0o2755), ("plain", 0o755)):
            agent.write_file(f"/home/agent/{name}", b"#!/bin/sh\n")
            agent.chmod(f"/home/agent/{name}", mode)
        agent.mkdir("/home/agent/shared", 0o2755)
    dropped = tmp_path / "dropped"
    result = komputer("export", "/home/agent", str(dropped), "--state", str(state), check=True)
    assert result.stderr == "komputer: export: removed setuid/setgid bits from 2 files (--keep-setuid keeps them)\n"
    modes = {p.name: st.S_IMODE(p.lstat().st_mode) for p in dropped.iterdir()}
    assert modes == {"suid": 0o755, "sgid": 0o755, "plain": 0o755, "shared": 0o2755}
    kept = tmp_path / "kept"
    result = komputer("export", "/home/agent", str(kept), "--keep-setuid", "--state", str(state), check=True)
    assert result.stderr == ""
    assert {p.name: st.S_IMODE(p.lstat().st_mode) for p in kept.iterdir()} == {
        "suid": 0o4755, "sgid": 0o2755, "plain": 0o755, "shared": 0o2755}
    assert (kept / "suid").stat().st_uid == 1000  # owned by the agent's uid: why the bits go by default


def test_agent_remove_keeps_the_home_and_forgets_name_keys_and_settings(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    komputer("agent", "add", "carol", "--state", state, check=True)
    komputer("agent", "set", "carol", "--network", "on", "--state", state, check=True)
    removed = komputer("agent", "remove", "carol", "--state", state)
    assert removed.returncode == 0, removed.stderr
    assert "home /home/carol stays" in removed.stdout
    assert komputer("agent", "list", "--state", state).stdout == ""
    with KState(tmp_path / "state") as ks:
        fs = PathFS(VFS(ks))
        assert fs.stat("/home/carol").uid >= 100_000  # the id carol had: agents' ids are no host account's
        assert b"carol" not in fs.read_file("/etc/passwd")
        with ks.read() as txn:
            assert list(txn.scan("keys", b"agentset/")) == []
    again = komputer("agent", "remove", "carol", "--state", state)
    assert (again.returncode, again.stderr.strip()) == (1, "komputer agent remove: no agent carol")
