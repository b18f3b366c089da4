"""The session's view of the system directories: what `type`, `command -v` and `which` print
exists where the shell looks. /usr/bin (and /bin, a link to it) holds K's tools; a session that
delegates also sees the host's program trees read-only, with the agent's permission bits and
nothing outside them; K's own files come first; writes there fail with EROFS."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs.agents.records import add_agent
from kfs.kstate import KState
from kfs.vfs import ROOT, VFS, Cred, PathFS
from kshell import Result, Shell
from kshell.delegate import Delegation
from kshell.delegate.config import DelegateConfig


class Machine:
    """A fresh state with agent alice; shells that delegate (seeing `extra` too) or do not."""

    def __init__(self, root: Path, extra: str) -> None:
        self.state = KState(root / "state", create=True)
        self.vfs = VFS(self.state, by="test")
        self.alice = add_agent(self.vfs, "alice")
        self.root = PathFS(self.vfs, cred=ROOT, cwd="/", home="/root")
        self.extra = extra

    def run(self, script: str, *, delegating: bool = False, who: str = "alice") -> Result:
        a = self.alice
        fs = (PathFS(self.vfs, cred=ROOT, cwd="/", home="/root") if who == "root" else
              PathFS(self.vfs, cred=Cred(a.uid, a.gid), cwd=a.home, home=a.home))
        shell = Shell(fs, name="bash", env={"HOME": fs.home, "LC_ALL": "C", "PATH": "/usr/local/bin:/usr/bin:/bin"})
        if delegating:
            config = DelegateConfig(read_only=(self.extra,))
            shell.interp.session.delegation = Delegation(config, str(self.state.path), a.uid, a.gid, a.home)
        return shell.run(script)


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Machine]:
    extra = tempfile.mkdtemp(prefix="k-system-", dir="/tmp")  # searchable by alice, unlike tmp_path
    os.chmod(extra, 0o755)
    m = Machine(tmp_path, extra)
    try:
        yield m
    finally:
        m.state.close()
        shutil.rmtree(extra)


def out(r: Result) -> str:
    return r.stdout.decode()


def err(r: Result) -> str:
    return r.stderr.decode()


# --------------------------------------------------------------------------- K's tools


def test_what_command_v_prints_for_a_tool_exists_and_runs(machine: Machine) -> None:
    r = machine.run('p=$(command -v wc); echo "$p"; test -x "$p" && echo executable; [ -f /bin/wc ] && echo via-bin; '
                    'printf "a\\nb\\n" | "$p" -l; type wc; which wc')
    assert out(r) == "/usr/bin/wc\nexecutable\nvia-bin\n2\nwc is /usr/bin/wc\n/usr/bin/wc\n", err(r)


def test_usr_bin_lists_the_tools_and_bin_links_to_it(machine: Machine) -> None:
    r = machine.run("ls /usr/bin | grep -cx -e ls -e grep -e jq; readlink /bin; realpath /bin/ls; ls /; "
                    "ls -ld /usr/bin | cut -c1-10; stat -c '%U %a' /usr/bin/grep")
    assert out(r) == "3\nusr/bin\n/usr/bin/ls\nbin\netc\nhome\ntmp\nusr\ndrwxr-xr-x\nroot 755\n", err(r)


def test_a_tool_file_is_a_script_that_runs_the_tool(machine: Machine) -> None:
    r = machine.run("head -1 /usr/bin/sort; sh /usr/bin/sort <<< $'b\\na'")
    assert out(r) == "#!/bin/sh\na\nb\n", err(r)


def test_writes_to_the_system_view_are_refused_read_only(machine: Machine) -> None:
    r = machine.run("touch /usr/bin/x; mkdir /usr/lib; rm /usr/bin/ls; echo > /bin/y; mv /usr/bin/cat /tmp/; "
                    "chmod 700 /usr/bin/ls; echo $?")
    assert err(r).splitlines() == [
        "touch: cannot touch '/usr/bin/x': Read-only file system",
        "mkdir: cannot create directory '/usr/lib': Read-only file system",
        "rm: cannot remove '/usr/bin/ls': Read-only file system",
        "bash: line 1: /bin/y: Read-only file system",
        "mv: cannot move '/usr/bin/cat' to '/tmp/cat': Read-only file system",
        "chmod: changing permissions of '/usr/bin/ls': Read-only file system"]
    assert out(r) == "1\n"


def test_root_making_a_file_in_a_synthetic_directory_makes_it_ks_own(machine: Machine) -> None:
    r = machine.run("mkdir -p /usr/local/bin && echo 'echo mine' > /usr/local/bin/mine && chmod +x /usr/local/bin/mine; "
                    "mine; ls /usr; rm /usr/bin/ls", who="root")
    assert out(r) == "mine\nbin\nlocal\n"
    assert err(r) == "rm: cannot remove '/usr/bin/ls': Read-only file system\n"
    assert machine.root.stat("/usr/local/bin/mine").is_reg and not machine.root.exists("/usr/bin")


def test_k_files_come_first_and_directories_list_both(machine: Machine) -> None:
    machine.root.mkdir("/usr/local/bin", 0o755, parents=True)
    machine.root.write_file("/usr/local/bin/hello", b"echo hello from K\n", mode=0o755)
    r = machine.run("hello; command -v hello; ls /usr; ls /usr/local/bin")
    assert out(r) == "hello from K\n/usr/local/bin/hello\nbin\nlocal\nhello\n", err(r)


def test_host_programs_are_not_shown_without_delegation(machine: Machine) -> None:
    r = machine.run("ls /usr/lib; command -v python3; echo $?")
    assert out(r) == "1\n"
    assert "ls: cannot access '/usr/lib': No such file or directory" in err(r)


# --------------------------------------------------------------------------- the host's trees


def test_a_delegating_session_sees_the_host_programs_it_runs(machine: Machine) -> None:
    python = os.path.realpath("/usr/bin/python3")
    r = machine.run('p=$(command -v python3); test -x "$p" && echo executable; ls /usr/bin | grep -cx -e python3 -e jq; '
                    'ls -L "$p" >/dev/null && echo listed; realpath "$p"; head -c4 "$p" | cut -c2-', delegating=True)
    assert out(r) == f"executable\n2\nlisted\n{python}\nELF\n", err(r)


def test_host_files_are_read_with_the_agents_bits(machine: Machine) -> None:
    extra = Path(machine.extra)
    (extra / "open.txt").write_text("anyone\n")
    (extra / "closed.txt").write_text("root only\n")
    (extra / "closed.txt").chmod(0o600)
    (extra / "private").mkdir(mode=0o700)
    (extra / "private" / "f").write_text("hidden\n")
    r = machine.run(f"cd {extra}; cat open.txt; cat closed.txt; ls private; cat private/f; ls", delegating=True)
    assert out(r) == "anyone\nclosed.txt\nopen.txt\nprivate\n"
    assert err(r).splitlines() == ["cat: closed.txt: Permission denied",
                                   "ls: cannot open directory 'private': Permission denied",
                                   "cat: private/f: Permission denied"]
    r = machine.run(f"cat {extra}/closed.txt; ls {extra}/private", delegating=True, who="root")
    assert out(r) == "root only\nf\n", err(r)


def test_links_leading_out_of_the_shown_trees_lead_nowhere(machine: Machine) -> None:
    extra = Path(machine.extra)
    secret = Path(tempfile.mkdtemp(prefix="k-outside-", dir="/tmp"))
    try:
        (secret / "s").write_text("outside\n")
        (secret / "s").chmod(0o644)
        secret.chmod(0o755)
        (extra / "out").symlink_to(secret / "s")
        (extra / "updir").symlink_to("..")
        r = machine.run(f"cat {extra}/out; readlink {extra}/out; ls {extra}/updir/ | head -1; "
                        f"cat {extra}/../{secret.name}/s", delegating=True, who="root")
        assert out(r) == f"{secret}/s\n", err(r)
        assert err(r).splitlines() == [f"cat: {extra}/out: No such file or directory",
                                       f"ls: cannot access '{extra}/updir/': No such file or directory",
                                       f"cat: {extra}/../{secret.name}/s: No such file or directory"]
    finally:
        shutil.rmtree(secret)


def test_host_trees_are_read_only_even_where_the_bits_allow(machine: Machine) -> None:
    extra = Path(machine.extra)
    (extra / "w").mkdir(mode=0o777)
    (extra / "w").chmod(0o777)
    r = machine.run(f"touch {extra}/w/new; echo x > {extra}/w/f; test -w {extra}/w || echo not-writable", delegating=True)
    assert out(r) == "not-writable\n"
    assert err(r).splitlines() == [f"touch: cannot touch '{extra}/w/new': Read-only file system",
                                   f"bash: line 1: {extra}/w/f: Read-only file system"]
    assert not (extra / "w" / "new").exists()
