"""A session's warm sandbox: one bubblewrap sandbox per session whose launcher (its pid 1)
starts each program on request. Programs of a session share it; nothing of another session or
agent can see, signal or connect to it; it ends with its session."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from delegation import run
from kserver import HANG, Bench, need, poll

PROBE = """\
import os, signal, sys
launcher, keeper, program, socket_inode = (int(a) for a in sys.argv[1:])
shown = []
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            shown.append(open(f"/proc/{p}/cmdline", "rb").read())
        except OSError:
            pass
print("sees the other program", any(b"other-session" in c for c in shown))
for pid in (launcher, keeper, program):
    try:
        os.kill(pid, signal.SIGKILL)
        print("signalled")
    except ProcessLookupError:
        print("no such process")
with open("/proc/net/unix") as f:
    print("sees its socket", any(line.split()[6] == str(socket_inode) for line in f.readlines()[1:]))
try:
    os.listdir("/proc/1/fd")
    print("reads its own launcher's fds")
except PermissionError:
    print("own launcher's fds refused")
os.kill(1, signal.SIGKILL)
"""


def _status(pid: int) -> dict[str, str]:
    text = Path(f"/proc/{pid}/status").read_text()
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def _parent(pid: int) -> int:
    return int(_status(pid)["PPid"])


def _program(marker: str, uid: int) -> int:
    """The host pid of the running program whose command line holds `marker` (0: none yet)."""
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                cmdline = Path(f"/proc/{p}/cmdline").read_bytes()
                if marker.encode() in cmdline and int(_status(int(p))["Uid"].split()[0]) == uid:
                    return int(p)
            except (OSError, KeyError):
                continue
    return 0


def _socket_inodes(pid: int) -> list[int]:
    inodes = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        found = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
        if found:
            inodes.append(int(found.group(1)))
    return inodes


def test_programs_of_a_session_share_its_sandbox_and_another_session_has_its_own(mounted: Bench) -> None:
    started = "python3 -c 'print(open(\"/proc/1/stat\").read().split()[21])'"  # pid 1's start time
    status, out, err = run(mounted, f"{started}; {started}")
    assert status == 0, err
    first, second = out.split()
    assert first == second  # the same pid 1: the session's launcher, started once
    _, again, _ = run(mounted, started)
    assert again.strip() != first  # the next session: a sandbox of its own


def test_a_program_cannot_reach_the_launcher_of_another_session_or_agent(mounted: Bench) -> None:
    """alice's session runs a program; bob's and another of alice's sessions try to see it, to
    signal its launcher, keeper and program by their pids, and to find the launcher's socket:
    nothing of it is there. Its own launcher (pid 1) survives SIGKILL and keeps its fds."""
    need("ssh")
    uid = int(run(mounted, "id -u")[1])
    other = subprocess.Popen(
        [need("ssh"), *mounted.ssh_options("alice"), "alice@127.0.0.1",
         "python3 -c 'print(1)'; python3 -c 'import sys, time; time.sleep(300)' other-session"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        poll(lambda: _program("other-session", uid), "the other session's program never started")
        program = _program("other-session", uid)
        keeper = _parent(program)
        launcher = _parent(keeper)
        assert _status(launcher)["NSpid"].split()[-1] == "1"  # its sandbox's pid 1
        assert _status(launcher)["Uid"].split()[0] == str(uid)  # the agent's, as its programs
        (inode,) = _socket_inodes(launcher)  # its channel to the worker, and nothing else
        unix = Path("/proc/net/unix").read_text().splitlines()[1:]
        (line,) = [row for row in unix if row.split()[6] == str(inode)]
        assert len(line.split()) == 7  # no path: in no directory, and not in the abstract namespace
        # a name of its own: /tmp is sticky, and another test of this mount leaves a probe.py of alice's
        shared = "/tmp/warm-sandbox-probe.py"
        assert run(mounted, f"cat > {shared} <<'EOF'\n{PROBE}EOF\nchmod 644 {shared}", user="bob")[0] == 0
        args = f"{launcher} {keeper} {program} {inode}"
        for user in ("bob", "alice"):
            probe = f"cp {shared} probe-{user}.py && python3 probe-{user}.py {args}; python3 -c 'print(\"next\")'"
            status, out, err = run(mounted, probe, user=user, timeout=HANG)
            assert status == 0, err
            assert out.splitlines() == ["sees the other program False", *["no such process"] * 3,
                                        "sees its socket False", "own launcher's fds refused", "next"], user
        assert _program("other-session", uid) == program  # untouched
        assert _parent(keeper) == launcher
    finally:
        other.terminate()
        other.wait(HANG)
    poll(lambda: not os.path.exists(f"/proc/{launcher}"), "the ended session's launcher is still running")


def test_what_a_program_leaves_running_ends_with_it(mounted: Bench) -> None:
    status, out, err = run(mounted, "python3 -c 'import subprocess; "
                                    "subprocess.Popen([\"sleep\", \"300\"], start_new_session=True)'; "
                                    "python3 -c 'import os; print(sum(open(f\"/proc/{p}/comm\").read() == \"sleep\\n\" "
                                    "for p in os.listdir(\"/proc\") if p.isdigit()))'")
    assert status == 0, err
    assert out.strip() == "0"


def test_a_limit_set_after_the_sandbox_started_reaches_the_next_program(mounted: Bench) -> None:
    nofile = "python3 -c 'import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])'"
    status, out, err = run(mounted, f"{nofile}; ulimit -n 100; {nofile}")
    assert status == 0, err
    assert out.split()[1] == "100"
