"""The ssh remote against a real local sshd: the OpenSSH client runs delegated commands on
`root@127.0.0.1`, where K's root is visible at the FUSE mount (as a host that mounted K with
sshfs would see it). Same streams, statuses and signals as the local sandbox; not a sandbox."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from delegation import run
from kserver import HANG, Bench, keygen, need

SSHD = "/usr/sbin/sshd"


@pytest.fixture
def remote_sshd(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """sshd on a free loopback port that lets root in with a key of the test's own."""
    if not os.path.exists(SSHD):
        pytest.fail(f"{SSHD} is missing: install openssh-server")
    keygen(tmp_path / "remote_key", "k-remote@test")
    authorized = tmp_path / "authorized_keys"
    authorized.write_text((tmp_path / "remote_key.pub").read_text())
    host_key = tmp_path / "host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "sshd_config"
    config.write_text(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nPidFile {tmp_path}/sshd.pid\n"
                      f"AuthorizedKeysFile {authorized}\nStrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n"
                      "PasswordAuthentication no\nKbdInteractiveAuthentication no\nLogLevel ERROR\nPrintMotd no\n")
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + HANG
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "sshd did not start"
            time.sleep(0.05)
    yield port, tmp_path / "remote_key"
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def over_ssh(make_mounted, remote_sshd) -> Bench:  # noqa: ANN001
    need("ssh")
    port, key = remote_sshd
    options = ("-p", str(port), "-i", str(key), "-F", "/dev/null", "-o", "StrictHostKeyChecking=no",
               "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "IdentitiesOnly=yes")
    placeholder = "/nonexistent"  # the mount is made by make_mounted; ssh_root is set below
    b = make_mounted(remote="ssh", ssh_host="root@127.0.0.1", ssh_root=placeholder, ssh_options=options)
    from dataclasses import replace

    b.server.config = replace(b.server.config, delegate=replace(b.server.config.delegate, ssh_root=str(b.root / "mnt")))
    return b


def test_programs_run_on_the_remote_host_on_the_agents_files(over_ssh: Bench) -> None:
    status, out, err = run(over_ssh, "python3 -c 'import os; print(os.getcwd().endswith(\"/mnt/home/alice\"))'; "
                                     "python3 -c 'open(\"remote.txt\", \"w\").write(\"made there\\n\")'; cat remote.txt; "
                                     "export SHOWN=1; HIDDEN=1; python3 -c 'import os; print(os.environ.get(\"SHOWN\"), os.environ.get(\"HIDDEN\"))'")
    assert status == 0, err
    assert out == "True\nmade there\n1 None\n"


def test_streams_and_statuses_pass_through_ssh(over_ssh: Bench) -> None:
    status, out, err = run(over_ssh, "seq 1 1000 | python3 -c 'import sys; print(sum(map(int, sys.stdin)))' | tr 0-9 a-j; "
                                     "python3 -c 'raise SystemExit(3)'; echo $?; "
                                     "python3 -u -c 'import sys; print(1); print(2, file=sys.stderr)' 2>&1 | wc -l")
    assert status == 0, err
    assert out.split() == ["faafaa", "3", "2"]


def test_timeout_ends_the_remote_program_too(over_ssh: Bench) -> None:
    status, out, err = run(over_ssh, "timeout 1 python3 -c 'import time; open(\"alive\", \"w\").close(); "
                                     "time.sleep(300)  # k-remote-timeout'; echo $?", timeout=HANG)
    assert out.split() == ["124"], (status, err)

    def leftover() -> str:  # the remote program, named by its own comment (no other test's sleep)
        return subprocess.run(["pgrep", "-f", "k-remote-timeout"], capture_output=True, text=True).stdout.strip()

    # the watchdog sees the connection gone, TERM then KILL: gone long before its 300 s sleep ends
    deadline = time.monotonic() + HANG
    while leftover():
        assert time.monotonic() < deadline, leftover()
        time.sleep(0.1)


@pytest.mark.parametrize(("folder", "runs"), [("image", True), ("examples/image-locked", False)])
def test_the_example_image_lets_the_ssh_remote_run_and_the_locked_one_fails_closed(
        over_ssh: Bench, folder: str, runs: bool) -> None:
    """The repository's example image, as it is, leaves an agent on the ssh remote its host
    programs; the locked example's write hook gives every session rules on written paths, which
    the ssh remote cannot keep, so there a program is refused rather than run unjudged."""
    from kfs.runtime import image

    image.apply(over_ssh.state, image.load(Path(__file__).resolve().parents[2] / folder), by="test")
    status, out, err = run(over_ssh, "python3 -c 'print(6 * 7)'")
    if runs:
        assert (status, out, err) == (0, "42\n", "")
    else:
        assert (status, out) == (126, "")
        assert err == ("k: line 1: python3: cannot run host programs: this session has rules on written paths, and "
                       "the ssh remote is not a sandbox that could keep it (use the local remote: komputer agent set "
                       "NAME --remote local)\n")
