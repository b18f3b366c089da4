"""The machine's own shape: names from K's agent records (never the host's /etc/passwd),
/etc/passwd and /etc/group kept from them, /tmp (1777) and /etc made with the first agent, the
shell's /dev, and the appliance's host name. Expected texts are GNU's (Debian 12, checked with
real coreutils for an id without a name)."""

from __future__ import annotations

import stat as st
from collections.abc import Iterator
from pathlib import Path

import pytest

from kfs.accounts import accounts, group_name, user_name
from kfs.agents.records import add_agent, ensure_agent, remove_agent
from kfs.format import stat_text
from kfs.kstate import KState
from kfs.kstate.schema import U64
from kfs.vfs import ROOT, VFS, Cred, PathFS
from kshell import Result, Shell
from kshell.tools.system.identity import DEFAULT_HOST


class Machine:
    """A fresh state with agents alice and bob, and shells as either of them or root."""

    def __init__(self, root: Path) -> None:
        self.state = KState(root / "state", create=True)
        self.vfs = VFS(self.state, by="test")
        self.alice = add_agent(self.vfs, "alice")
        self.bob = add_agent(self.vfs, "bob")
        self.root = PathFS(self.vfs, cred=ROOT, cwd="/", home="/root")

    def run(self, script: str, who: str = "alice", env: dict[str, str] | None = None) -> Result:
        if who == "root":
            fs = PathFS(self.vfs, cred=ROOT, cwd="/", home="/root")
        else:
            agent = self.alice if who == "alice" else self.bob
            fs = PathFS(self.vfs, cred=Cred(agent.uid, agent.gid), cwd=agent.home, home=agent.home)
        return Shell(fs, name="bash", env={"HOME": fs.home or "/", "LC_ALL": "C", "TZ": "UTC", **(env or {})}).run(
            script)


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Machine]:
    m = Machine(tmp_path)
    try:
        yield m
    finally:
        m.state.close()


def out(r: Result) -> str:
    return r.stdout.decode()


# --------------------------------------------------------------------------- names


def test_names_come_from_the_agent_records(machine: Machine) -> None:
    s = machine.state
    assert (user_name(s, 0), group_name(s, 0)) == ("root", "root")
    assert (user_name(s, machine.alice.uid), group_name(s, machine.alice.gid)) == ("alice", "alice")
    assert user_name(s, 4242) is None and group_name(s, 4242) is None
    # the host's users are nobody here (uid 65534 is `nobody` on Debian hosts)
    assert user_name(s, 65534) is None
    assert user_name(None, 0) == "root" and user_name(None, 1000) is None


def test_names_follow_agents_added_and_removed_while_running(machine: Machine) -> None:
    r = machine.run("touch f; ls -l f | cut -d' ' -f3,4")
    assert out(r) == "alice alice\n"
    carol = add_agent(machine.vfs, "carol")
    assert user_name(machine.state, carol.uid) == "carol"
    machine.root.write_file("/home/carol/c", b"")
    machine.root.chown("/home/carol/c", carol.uid, carol.gid)
    remove_agent(machine.vfs, "carol")
    assert user_name(machine.state, carol.uid) is None
    r = machine.run("ls -ld /home/carol | cut -c11-; stat -c '%U %G %u' /home/carol; id carol; echo $?",
                    who="root")
    assert out(r).split("\n")[0].split()[1:3] == [str(carol.uid)] * 2
    assert out(r).split("\n")[1:] == [f"UNKNOWN UNKNOWN {carol.uid}", "1", ""]
    assert r.stderr == b"id: 'carol': no such user\n"


def test_an_agent_another_process_adds_is_seen(machine: Machine) -> None:
    from kfs.accounts import agents_changed, put_agent_record
    from kfs.agents.records import Agent

    assert accounts(machine.state).uids.get("dave") is None
    # what another process's add_agent commits: the record and a new generation
    dave = Agent("dave", 1500, 1500, "/home/dave", 0)

    def body(txn) -> None:  # noqa: ANN001
        put_agent_record(txn, "dave", dave.to_json())
        agents_changed(txn)

    machine.state.write(body)
    assert accounts(machine.state).uids["dave"] == 1500
    assert user_name(machine.state, 1500) == "dave"


def test_ls_stat_find_tar_name_owners(machine: Machine) -> None:
    a = machine.alice.uid
    r = machine.run("touch f; ls -l f | cut -d' ' -f3,4; stat -c '%U:%G %u:%g' f; stat f | grep -o 'Uid.*';"
                    f" find . -user alice -name f; find . -group alice -name f; find . -user {a} -name f;"
                    " tar cf t.tar f; tar tvf t.tar | cut -d' ' -f2")
    assert out(r) == (f"alice alice\nalice:alice {a}:{a}\nUid: ({a:5}/   alice)   Gid: ({a:5}/   alice)\n"
                      "./f\n./f\n./f\nalice/alice\n")


def test_find_refuses_names_nobody_has(machine: Machine) -> None:
    r = machine.run("find . -user nobody; echo $?; find . -group nogroup; echo $?")
    assert out(r) == "1\n1\n"
    assert r.stderr == (b"find: 'nobody' is not the name of a known user\n"
                        b"find: 'nogroup' is not the name of an existing group\n")


def test_ls_right_aligns_an_id_without_a_name(machine: Machine) -> None:
    machine.root.write_file("/tmp/x", b"")
    machine.root.chown("/tmp/x", 4242, 4242)
    machine.root.write_file("/tmp/y", b"")
    r = machine.run("cd /tmp && ls -l x y | cut -c14-24; ls -ln x y | cut -c14-24", who="root")
    assert out(r) == "4242 4242 0\nroot root 0\n4242 4242 0\n   0    0 0\n"


def test_stat_text_names_from_the_state(machine: Machine) -> None:
    inode = machine.root.stat("/home/alice")
    a = machine.alice.uid
    assert f"Uid: ({a:5}/   alice)" in stat_text("/home/alice", inode, state=machine.state)
    assert f"Uid: ({a:5}/ UNKNOWN)" in stat_text("/home/alice", inode)  # no state: root alone


def test_id_and_whoami_for_agents(machine: Machine) -> None:
    a, b = machine.alice.uid, machine.bob.uid
    r = machine.run(f"id; id -un; id -gn; id -Gn; whoami; id bob; id -u bob; id {b}; id root")
    assert out(r) == (f"uid={a}(alice) gid={a}(alice) groups={a}(alice)\nalice\nalice\nalice\nalice\n"
                      f"uid={b}(bob) gid={b}(bob) groups={b}(bob)\n{b}\n"
                      f"uid={b}(bob) gid={b}(bob) groups={b}(bob)\nuid=0(root) gid=0(root) groups=0(root)\n")
    r = machine.run("id nobody; echo $?")
    assert (out(r), r.stderr) == ("1\n", b"id: 'nobody': no such user\n")


def test_id_and_whoami_for_a_uid_without_a_name(machine: Machine) -> None:
    fs = PathFS(machine.vfs, cred=Cred(4242, 4242), cwd="/tmp", home="/tmp")
    sh = Shell(fs, name="bash", env={"LC_ALL": "C"})
    assert sh.run("whoami; echo $?").stdout == b"1\n"
    assert sh.run("whoami").stderr == b"whoami: cannot find name for user ID 4242\n"
    assert sh.run("id; echo $?").stdout == b"uid=4242 gid=4242 groups=4242\n0\n"
    r = sh.run("id -un; echo $?; id -gn; echo $?")
    assert r.stdout == b"4242\n1\n4242\n1\n"
    assert r.stderr == b"id: cannot find name for user ID 4242\nid: cannot find name for group ID 4242\n"


# --------------------------------------------------------------------------- /etc and /tmp


def test_etc_passwd_and_group_follow_the_agents(machine: Machine) -> None:
    fs, a, b = machine.root, machine.alice.uid, machine.bob.uid
    assert fs.read_file("/etc/passwd") == (b"root:x:0:0:root:/root:/bin/sh\n"
                                           b"alice:x:%d:%d::/home/alice:/bin/sh\n"
                                           b"bob:x:%d:%d::/home/bob:/bin/sh\n" % (a, a, b, b))
    assert fs.read_file("/etc/group") == b"root:x:0:\nalice:x:%d:\nbob:x:%d:\n" % (a, b)
    for path in ("/etc/passwd", "/etc/group"):
        inode = fs.stat(path)
        assert (st.S_IMODE(inode.mode), inode.uid, inode.gid, inode.is_reg) == (0o644, 0, 0, True)
    etc = fs.stat("/etc")
    assert (st.S_IMODE(etc.mode), etc.uid, etc.gid) == (0o755, 0, 0)
    remove_agent(machine.vfs, "alice")
    assert fs.read_file("/etc/passwd") == b"root:x:0:0:root:/root:/bin/sh\nbob:x:%d:%d::/home/bob:/bin/sh\n" % (b, b)
    assert fs.read_file("/etc/group") == b"root:x:0:\nbob:x:%d:\n" % b
    assert machine.run("cut -d: -f1 /etc/passwd", who="bob").stdout == b"root\nbob\n"


def test_removing_an_agent_keeps_its_home_and_drops_its_keys(machine: Machine) -> None:
    from kfs.agents import add_key, list_keys

    add_key(machine.state, "bob", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDkPfGlw8jX2JcQ0c8ZP6pIu7w4o8m2r1b2jW+F6zq1c b")
    remove_agent(machine.vfs, "bob")
    assert machine.root.stat("/home/bob").uid == machine.bob.uid
    with pytest.raises(Exception):  # noqa: B017 - no agent: no keys to list
        list_keys(machine.state, "bob")
    with pytest.raises(KeyError):
        remove_agent(machine.vfs, "bob")


def test_tmp_is_sticky_and_world_writable(machine: Machine) -> None:
    tmp = machine.root.stat("/tmp")
    assert (st.S_IMODE(tmp.mode), tmp.uid, tmp.gid) == (0o1777, 0, 0)
    assert out(machine.run("ls -ld /tmp | cut -c1-10")) == "drwxrwxrwt\n"


def test_a_fresh_agent_in_a_fresh_state_has_mktemp_and_process_substitution(machine: Machine) -> None:
    r = machine.run('f=$(mktemp) && d=$(mktemp -d) && echo "$f" "$d" | grep -c "^/tmp/tmp\\..* /tmp/tmp\\."; '
                    'ls -ld "$f" | cut -c1-10; ls -ld "$d" | cut -c1-10; diff <(echo a) <(echo b); '
                    'echo "status $?"; cat <(echo in); echo out > >(cat)', who="bob")
    assert out(r) == "1\n-rw-------\ndrwx------\n1c1\n< a\n---\n> b\nstatus 1\nin\nout\n", r.stderr


def test_an_existing_state_without_the_layout_gets_it_from_ensure_agent(tmp_path: Path) -> None:
    state = KState(tmp_path / "old", create=True)
    try:
        vfs = VFS(state, by="test")
        # a state from before: an agent record made by hand, no /tmp, no /etc
        from kfs.accounts import put_agent_record
        from kfs.agents.records import Agent

        PathFS(vfs, cred=ROOT).mkdir("/home/old", 0o750, parents=True)
        state.write(lambda txn: put_agent_record(txn, "old", Agent("old", 1000, 1000, "/home/old", 0).to_json()))
        fs = PathFS(vfs, cred=ROOT)
        assert not fs.exists("/tmp") and not fs.exists("/etc")
        agent, created = ensure_agent(vfs, "old")
        assert created is False
        assert st.S_IMODE(fs.stat("/tmp").mode) == 0o1777
        assert fs.read_file("/etc/passwd").endswith(b"old:x:1000:1000::/home/old:/bin/sh\n")
    finally:
        state.close()


def test_process_substitution_makes_a_missing_tmp_as_root_1777(tmp_path: Path) -> None:
    state = KState(tmp_path / "bare", create=True)
    try:
        vfs = VFS(state, by="test")
        sh = Shell(PathFS(vfs, cred=ROOT, cwd="/", home="/"), name="bash", env={"LC_ALL": "C"})
        assert sh.run("cat <(echo hi)").stdout == b"hi\n"
        tmp = PathFS(vfs, cred=ROOT).stat("/tmp")
        assert (st.S_IMODE(tmp.mode), tmp.uid) == (0o1777, 0)
    finally:
        state.close()


# --------------------------------------------------------------------------- /dev


def test_ls_dev_lists_the_shells_devices(machine: Machine) -> None:
    assert out(machine.run("ls /dev")) == "fd\nfull\nnull\nrandom\nstderr\nstdin\nstdout\ntty\nurandom\nzero\n"
    # mode, owner, group, size or major/minor, name (the dates vary)
    assert out(machine.run("ls -l /dev | head -1")) == "total 0\n"
    chars = out(machine.run("ls -l /dev | awk '/^c/ {print $1, $3, $4, $5, $6, $NF}'"))
    assert chars == ("crw-rw-rw- root root 1, 7 full\ncrw-rw-rw- root root 1, 3 null\n"
                     "crw-rw-rw- root root 1, 8 random\ncrw-rw-rw- root root 5, 0 tty\n"
                     "crw-rw-rw- root root 1, 9 urandom\ncrw-rw-rw- root root 1, 5 zero\n")
    links = out(machine.run("ls -l /dev | awk '/^l/ {print $1, $3, $4, $5, $(NF-2), $(NF-1), $NF}'"))
    assert links == ("lrwxrwxrwx root root 13 fd -> /proc/self/fd\n"
                     "lrwxrwxrwx root root 15 stderr -> /proc/self/fd/2\n"
                     "lrwxrwxrwx root root 15 stdin -> /proc/self/fd/0\n"
                     "lrwxrwxrwx root root 15 stdout -> /proc/self/fd/1\n")
    assert out(machine.run("ls -l /dev/null | cut -d' ' -f1-6")) == "crw-rw-rw- 1 root root 1, 3\n"
    assert out(machine.run("ls -ld /dev | cut -c1-10; test -d /dev && echo dir")) == "drwxr-xr-x\ndir\n"


def test_character_devices_behave_as_on_linux(machine: Machine) -> None:
    r = machine.run("for d in null zero full random urandom tty; do test -c /dev/$d && echo $d; done;"
                    " head -c 16 /dev/urandom | wc -c; head -c 16 /dev/random | wc -c;"
                    " head -c 4 /dev/full | tr '\\0' z; echo;"
                    " a=$(head -c 32 /dev/urandom | md5sum); b=$(head -c 32 /dev/urandom | md5sum);"
                    " [ \"$a\" != \"$b\" ] && echo differ;"
                    " echo x > /dev/urandom; echo $?")
    assert out(r) == "null\nzero\nfull\nrandom\nurandom\ntty\n16\n16\nzzzz\ndiffer\n0\n"


def test_dev_full_refuses_writes(machine: Machine) -> None:
    r = machine.run("echo hi > /dev/full; echo $?")
    assert (out(r), r.stderr) == ("1\n", b"bash: line 1: echo: write error: No space left on device\n")


def quota(tmp_path: Path, max_bytes: int) -> KState:
    """A new state whose file data may take `max_bytes` (what `komputer init --max-bytes` sets)."""
    state = KState(tmp_path / "state", create=True)
    state.write(lambda txn: txn.put("meta", b"max_bytes", U64.pack(max_bytes)))
    return state


@pytest.mark.parametrize(("command", "name"), [
    ("head -c 3000000 /dev/zero > f", "head"), ("cat /dev/zero > f", "cat"), ("yes > f", "yes"),
    ("seq 1 10000000 > f", "seq"), ("f() { yes; }; f > f", "yes"), ("exec 3>f; seq 1 10000000 >&3", "seq"),
])
def test_a_full_quota_is_a_write_error_of_the_command_that_writes(tmp_path: Path, command: str, name: str) -> None:
    """The quota refuses the write, not the read: `head: error reading '/dev/zero'` blamed the
    input, and `yes`/`seq` ended the shell with an internal error."""
    with quota(tmp_path, 2_000_000) as state:
        fs = PathFS(VFS(state, by="test"), cred=ROOT, cwd="/", home="/")
        r = Shell(fs, name="bash", env={"LC_ALL": "C"}).run(f"{command}; echo rc=$?; echo after")
    assert (out(r), r.stderr) == ("rc=1\nafter\n", f"{name}: write error: No space left on device\n".encode())


def test_a_builtins_write_to_a_full_quota_is_bashs_write_error(tmp_path: Path) -> None:
    with quota(tmp_path, 2_000_000) as state:
        fs = PathFS(VFS(state, by="test"), cred=ROOT, cwd="/", home="/")
        r = Shell(fs, name="bash").run("x=$(head -c 1500000 /dev/zero | tr '\\0' a); echo \"$x\" > v; echo rc=$?;"
                                       " echo \"$x\" >> v; echo rc=$?; printf %s \"$x\" >> v; echo rc=$?")
    assert out(r) == "rc=0\nrc=1\nrc=1\n"
    assert r.stderr == (b"bash: line 1: echo: write error: No space left on device\n"
                        b"bash: line 1: printf: write error: No space left on device\n")


def test_dev_tty_without_a_terminal(machine: Machine) -> None:
    r = machine.run("echo hi > /dev/tty; echo $?; stat -c %t,%T /dev/tty")
    assert (out(r), r.stderr) == ("1\n5,0\n", b"bash: line 1: /dev/tty: No such device or address\n")


def test_dev_stdin_links_and_fd_directory(machine: Machine) -> None:
    assert out(machine.run("readlink /dev/stdin /dev/stdout /dev/stderr /dev/fd")) == (
        "/proc/self/fd/0\n/proc/self/fd/1\n/proc/self/fd/2\n/proc/self/fd\n")
    assert out(machine.run("ls /dev/fd/")) == "0\n1\n2\n"


# --------------------------------------------------------------------------- host name


def test_the_default_host_name_is_the_appliances(machine: Machine) -> None:
    assert DEFAULT_HOST == "komputer"
    assert out(machine.run("unset HOSTNAME; hostname; uname -n")) == "komputer\nkomputer\n"
