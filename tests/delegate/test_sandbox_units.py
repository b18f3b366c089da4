"""Delegation's pure parts, below the SSH rung: which paths a sandbox shows or refuses, the
bwrap command line, finding the state's mount in a mount table, and the settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from kshell.delegate.config import DelegateConfig
from kshell.delegate.mounts import Unavailable, find_mount
from kshell.delegate.sandbox import Refused, bwrap_argv, bwrap_path, check_namespaces, check_paths, make_view


def test_the_view_binds_home_tmp_and_a_cwd_outside_them() -> None:
    assert make_view("/mnt/k", "/home/a", "/home/a/src", ()).binds == ("/home/a", "/tmp")
    assert make_view("/mnt/k", "/home/a", "/data/proj", ()).binds == ("/home/a", "/tmp", "/data/proj")


@pytest.mark.parametrize("cwd", ["/", "/usr", "/usr/lib", "/etc", "/proc/1", "/dev"])
def test_a_cwd_where_the_sandbox_shows_host_files_is_refused(cwd: str) -> None:
    with pytest.raises(Refused) as e:
        make_view("/mnt/k", "/home/a", cwd, ())
    assert e.value.path == cwd


def test_arguments_are_checked_against_the_view() -> None:
    view = make_view("/mnt/k", "/home/a", "/home/a", ())
    in_k = {"/home/b/secret", "/data/x"}.__contains__
    check_paths(view, "/home/a", ["-c", "print(1)", "/home/a/x.py", "/tmp/y", "/usr/bin/env", "/etc/ssl/x",
                                  "relative/../ok", "x=/y"], in_k)
    for bad in ("/home/b/secret", "/data/x", "../b/secret", "/nowhere/out.txt", "//data/x"):
        with pytest.raises(Refused) as e:
            check_paths(view, "/home/a", [bad], in_k)
        assert e.value.path == bad


def test_the_bwrap_line_unshares_everything_and_binds_k_from_the_mount(tmp_path: Path) -> None:
    extra = str(tmp_path)
    view = make_view("/mnt/k", "/home/a", "/home/a/w", (extra, "/no/such/dir"))
    argv = bwrap_argv(view, network=False, hostname="box", info_fd=9, new_session=True,
                      argv=["python3", "-V"], cwd="/home/a/w", bwrap="/usr/bin/bwrap")
    text = " ".join(argv)
    for part in ("--unshare-all", "--die-with-parent", "--cap-drop ALL", "--new-session", "--hostname box",
                 "--info-fd 9", "--proc /proc", "--dev /dev", "--bind /mnt/k/home/a /home/a",
                 "--bind /mnt/k/tmp /tmp", "--ro-bind-try /mnt/k/etc/passwd /etc/passwd",
                 "--chdir /home/a/w -- python3 -V"):
        assert part in text, part
    assert "--share-net" not in argv and "/etc/resolv.conf" not in text
    assert f"--ro-bind {extra} {extra}" in text  # a configured extra host path, read-only
    assert "/no/such/dir" not in argv  # one that does not exist is left out
    assert not any(a in ("/root", "/home", "/var/lib/komputer") for a in argv)
    networked = bwrap_argv(view, network=True, hostname="box", info_fd=9, new_session=False, argv=["x"],
                           cwd="/home/a", block_fd=7)
    # a namespace of its own (never the host's), which the program waits for
    assert "--share-net" not in networked and "--new-session" not in networked
    assert "--block-fd 7" in " ".join(networked)
    assert "--ro-bind-try /etc/resolv.conf /etc/resolv.conf" in " ".join(networked)


def test_a_missing_bubblewrap_fails_closed_saying_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(Unavailable, match=r"bubblewrap is not installed \(apt-get install bubblewrap\)"):
        bwrap_path()


MOUNTINFO = (
    "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n"
    "43 22 0:40 / /srv/k\\040mnt rw,nosuid,nodev,relatime - fuse.kfs kfs:/var/lib/komputer "
    "rw,user_id=0,group_id=0,default_permissions,allow_other\n"
    "44 22 0:41 / /mnt/private rw,nosuid,nodev,relatime - fuse.kfs kfs:/other/state "
    "rw,user_id=0,group_id=0,default_permissions\n"
)


def test_the_mount_of_the_state_is_found_in_the_mount_table(tmp_path: Path) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(MOUNTINFO)
    with pytest.raises(Unavailable) as e:  # found, but /srv/k mnt is not on this machine
        find_mount("/var/lib/komputer", mountinfo=table)
    assert "/srv/k mnt does not answer" in str(e.value)
    with pytest.raises(Unavailable, match="no FUSE mount of /elsewhere .*komputer mount -o allow_other"):
        find_mount("/elsewhere", mountinfo=table)
    with pytest.raises(Unavailable, match="mounted without allow_other"):
        find_mount("/other/state", mountinfo=table)
    with pytest.raises(Unavailable, match="/not/there is not a FUSE mount"):
        find_mount("/var/lib/komputer", "/not/there", mountinfo=table)


def test_settings_refuse_what_cannot_work() -> None:
    with pytest.raises(ValueError, match="remote 'docker'"):
        DelegateConfig(remote="docker")
    with pytest.raises(ValueError, match="needs ssh_host"):
        DelegateConfig(remote="ssh")
    with pytest.raises(ValueError, match="must be absolute"):
        DelegateConfig(read_only=("opt",))
    with pytest.raises(ValueError, match=r"x: \[delegate\]: unknown setting 'netwrk'"):
        DelegateConfig.from_toml({"netwrk": True}, "x: [delegate]")
    assert DelegateConfig.from_toml({"read-only": ["/opt"]}, "x").read_only == ("/opt",)
    config = DelegateConfig(network=True, read_only=("/opt",))
    assert DelegateConfig.from_wire(config.to_wire()) == config


def test_a_bubblewrap_that_cannot_make_namespaces_fails_closed_in_words(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"  # what bwrap prints where user namespaces are off
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(Unavailable) as e:
        check_namespaces(str(fake), None, None)
    assert "bubblewrap cannot make its sandbox here (bwrap: No permissions to creating new namespace)" in str(e.value)
    assert "enable user namespaces" in str(e.value)
    check_namespaces(bwrap_path(), 65534, 65534)  # the real one, as an unprivileged uid: no error


def test_host_drives_are_bound_from_their_sources_at_their_paths() -> None:
    from dataclasses import replace

    drives = (("/mnt/data", "/srv/data", False), ("/srv/ref", "/srv/r", True))
    view = make_view("/mnt/k", "/home/a", "/mnt/data/sub", (), drives)
    assert view.binds == ("/home/a", "/tmp")  # a working directory on a drive is the drive's bind
    check_paths(view, "/mnt/data/sub", ["/mnt/data/x", "/srv/ref/y", "../z"], lambda path: True)
    text = " ".join(bwrap_argv(view, network=False, hostname="box", info_fd=9, new_session=True, argv=["x"],
                               cwd="/mnt/data/sub"))
    assert "--bind /srv/data /mnt/data" in text and "--ro-bind /srv/r /srv/ref" in text
    assert text.index("--bind /mnt/k/home/a /home/a") < text.index("--bind /srv/data /mnt/data")
    restricted = replace(view, drives=tuple((path, source, True) for path, source, _ in view.drives))
    text = " ".join(bwrap_argv(restricted, network=False, hostname="box", info_fd=9, new_session=True, argv=["x"],
                               cwd="/mnt/data"))
    assert "--ro-bind /srv/data /mnt/data" in text  # a restricted session's host drives are read-only


def test_slirp4netns_is_given_no_way_to_the_hosts_loopback() -> None:
    from kshell.delegate.network import slirp_argv

    argv = slirp_argv("/usr/bin/slirp4netns", "/proc/7/ns/net", exit_fd=5, ready_fd=6)
    assert "--disable-host-loopback" in argv and "--disable-dns" in argv  # neither 10.0.2.2 nor 10.0.2.3
    assert "--configure" not in argv  # the namespace's loopback is bwrap's: K configures the tap alone
    assert argv[-3:] == ["--netns-type=path", "/proc/7/ns/net", "tap0"]


def test_the_hosts_own_addresses_are_read_from_its_routing_table(tmp_path: Path) -> None:
    from kshell.delegate.network import host_addresses

    trie = tmp_path / "fib_trie"
    trie.write_text("""Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.1
              /32 host LOCAL
     |-- 192.0.2.0
        /24 link UNICAST
     |-- 192.0.2.2
        /32 host LOCAL
     |-- 192.0.2.255
        /32 link BROADCAST
Local:
  +-- 0.0.0.0/0 3 0 5
     |-- 192.0.2.2
        /32 host LOCAL
     |-- 172.17.0.1
        /32 host LOCAL
""")
    assert host_addresses(str(trie)) == ["192.0.2.2", "172.17.0.1"]
    assert host_addresses(str(tmp_path / "missing")) == []
