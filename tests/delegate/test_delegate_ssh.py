"""Delegation over real ssh: programs K does not have run under bubblewrap as the agent, on the
agent's files through the FUSE mount, with K's streams, statuses and signals."""

from __future__ import annotations

import hashlib
import os

from delegation import komputer, run
from kserver import HANG, Bench, need
from ptyclient import PtySession


def test_a_program_writes_a_file_k_reads_back_owned_by_the_agent(mounted: Bench) -> None:
    status, out, err = run(mounted, "rm -f made.txt; python3 -c 'open(\"made.txt\", \"w\").write(\"from python\\n\")'; "
                                    "cat made.txt; stat -c '%u %U %a' made.txt; python3 -c 'import os; print(os.getuid(), os.getgid())'; "
                                    "id -u; ls -l made.txt | cut -d' ' -f3,4; python3 -c 'import pwd, os; print(pwd.getpwuid(os.getuid()).pw_name)'")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "from python"
    uid = lines[3]
    assert lines[1] == f"{uid} alice 644"  # the agent's, the umask's mode, as a K builtin would make it
    assert lines[2] == f"{uid} {uid}"
    assert lines[4:] == ["alice alice", "alice"]  # names from K's records, inside the sandbox too


def test_git_init_add_commit_log_in_the_home(mounted: Bench) -> None:
    need("git")
    status, out, err = run(mounted, "rm -rf repo && mkdir repo && cd repo && git init -q && echo hi > a.txt && "
                                    "git add a.txt && git -c user.name=A -c user.email=a@k commit -qm first && "
                                    "git log --format=%s && git status --porcelain | wc -l && ls .git/HEAD")
    assert status == 0, err
    assert out.split() == ["first", "0", ".git/HEAD"]


def test_pipelines_mix_k_tools_and_programs_both_ways_byte_exact(mounted: Bench) -> None:
    blob = os.urandom(10 << 20)
    digest = hashlib.sha256(blob).hexdigest()
    copy = "python3 -c 'import sys, shutil; shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)'"
    script = (f"cat > blob.bin; cat blob.bin | {copy} | sha256sum; "
              f"{copy} < blob.bin | gzip -c | {copy} | gzip -dc | sha256sum; "
              "python3 -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())' < blob.bin; "
              f"x=$({copy} < blob.bin | wc -c); echo $x")
    status, out, err = run(mounted, script, input=blob)
    assert status == 0, err
    lines = out.split("\n")
    assert lines[0] == f"{digest}  -"
    assert lines[1] == f"{digest}  -"
    assert lines[2] == digest
    assert lines[3] == str(len(blob))


def test_here_docs_redirections_and_stderr(mounted: Bench) -> None:
    script = ("python3 - <<'EOF' > out.txt 2> err.txt\nimport sys\nprint('to out')\nprint('to err', file=sys.stderr)\nEOF\n"
              "cat out.txt err.txt; python3 -u -c 'import sys; print(1); print(2, file=sys.stderr)' 2>&1 | tr 12 ab")
    status, out, err = run(mounted, script)
    assert status == 0, err
    assert out == "to out\nto err\na\nb\n"


def test_exit_statuses_set_e_and_pipefail(mounted: Bench) -> None:
    status, out, _ = run(mounted, "python3 -c 'raise SystemExit(3)'; echo $?; "
                                  "python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGTERM)'; echo $?; "
                                  "set -o pipefail; python3 -c 'raise SystemExit(5)' | cat; echo $?; "
                                  "set -e; false_py() { python3 -c 'raise SystemExit(4)'; }; false_py; echo unreachable")
    assert out.split() == ["3", "143", "5"]
    assert status == 4


def test_only_exported_variables_pass_in(mounted: Bench) -> None:
    status, out, _ = run(mounted, "export SHOWN=yes; HIDDEN=no; "
                                  "python3 -c 'import os; print(os.environ.get(\"SHOWN\"), os.environ.get(\"HIDDEN\"), os.environ[\"HOME\"], os.getcwd())'")
    assert status == 0
    assert out.split() == ["yes", "None", "/home/alice", "/home/alice"]


def test_command_v_type_and_which_name_the_program(mounted: Bench) -> None:
    status, out, _ = run(mounted, "command -v python3; type python3; which python3; nosuchprogram-x; echo $?; "
                                  'test -x "$(command -v python3)" && echo runnable; ls /usr/bin | grep -cx -e python3 -e ls')
    lines = out.splitlines()
    assert lines[0].endswith("/python3") and lines[0].startswith("/usr")
    assert lines[1] == f"python3 is {lines[0]}"
    assert lines[2] == lines[0]
    assert lines[3:] == ["127", "runnable", "2"]


def test_timeout_ends_a_busy_program_with_124(mounted: Bench) -> None:
    status, out, _ = run(mounted, "timeout 1 python3 -c 'while 1: pass'; echo $?", timeout=HANG)  # never ends alone
    assert out.split() == ["124"]


def test_kill_and_wait_reach_a_background_program(mounted: Bench) -> None:
    status, out, _ = run(mounted, "rm -f up; python3 -c 'import time; open(\"up\", \"w\").close(); time.sleep(300)' & "
                                  "until test -e up; do sleep 0.05; done; kill %1; wait %1; echo $?; "
                                  "python3 -c 'import time; time.sleep(0.2); print(\"bg done\")' & wait; echo all")
    assert out.split("\n")[:3] == ["143", "bg done", "all"]


def test_a_script_with_a_python_shebang_is_delegated_and_sh_ones_stay_in_k(mounted: Bench) -> None:
    script = ("printf '#!/usr/bin/env python3\\nimport sys\\nprint(\"py\", sys.argv[1:])\\n' > x.py; chmod +x x.py; ./x.py a b; "
              "printf '#!/bin/sh\\necho sh $K_INSIDE\\n' > x.sh; chmod +x x.sh; K_INSIDE=k ./x.sh")
    status, out, err = run(mounted, script)
    assert status == 0, err
    assert out == "py ['a', 'b']\nsh k\n"


def test_the_sandbox_sees_none_of_the_host_or_other_agents(mounted: Bench) -> None:
    secrets = ["/etc/shadow", "/root", "/home/bob", "/home/bob/private.txt", f"{mounted.root}/state",
               f"{mounted.root}/state/data.mdb", "/home"]
    probe = ("import os, sys\n"
             f"for p in {secrets!r}:\n"
             "    try:\n"
             "        os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(1)\n"
             "        print(p, 'READABLE')\n"
             "    except OSError as e:\n"
             "        print(p, 'refused', e.errno)\n")
    run(mounted, "echo secret > private.txt; chmod 600 private.txt", user="bob")
    status, out, err = run(mounted, f"cat > /tmp/probe.py <<'EOF'\n{probe}EOF\n"
                                    "cd /tmp && python3 probe.py && ls /home")
    assert status == 0, err
    lines = out.splitlines()
    for line in lines[:6]:
        assert line.endswith(("refused 2", "refused 13")), line
    assert lines[6] == "/home READABLE"
    home = run(mounted, "python3 -c 'import os; print(sorted(os.listdir(\"/home\")))'")[1]
    assert home.strip() == "['alice']"


def test_network_is_unreachable_unless_the_agent_is_allowed(make_mounted) -> None:  # noqa: ANN001
    b = make_mounted()
    status, out, err = run(b, "dash -c 'ip -o -4 addr; ip route'")
    assert out.split()[1] == "lo" and "tap0" not in out and "default" not in out, out  # a loopback of its own only
    done = komputer("agent", "set", "--state", str(b.root / "state"), "alice", "--network", "on")
    assert done.returncode == 0, done.stderr
    status, out, err = run(b, "dash -c 'ip -o -4 addr; ip route'")
    assert "tap0    inet 10.0.2.100/24" in out and "default via 10.0.2.2 dev tap0" in out, out


def test_a_networked_sandbox_reaches_neither_the_hosts_loopback_nor_its_addresses(make_mounted) -> None:  # noqa: ANN001
    """The network is the outside: K's SSH port on the host's 127.0.0.1 is not there (the
    sandbox's loopback is its own), and each of the host's own addresses is a prohibited route.
    Only loopback is ever connected to here: that slirp's gateway does not lead to the host's
    loopback is slirp4netns' --disable-host-loopback (test_sandbox_units checks the flag), not
    probed, as no test sends a packet to a private-range address."""
    from kshell.delegate.network import host_addresses

    b = make_mounted(network=True)
    probe = ("import socket, sys\n"
             "for host in sys.argv[1:]:\n"
             "    try:\n"
             f"        socket.create_connection((host, {b.port}), 2); print(host, 'connected')\n"
             "    except OSError as e: print(host, type(e).__name__)\n")
    status, out, err = run(b, f"cat > /tmp/probe.py <<'EOF'\n{probe}EOF\npython3 /tmp/probe.py 127.0.0.1; "
                              "dash -c 'ip route'")
    lines = out.splitlines()
    assert lines[0] == "127.0.0.1 ConnectionRefusedError", (out, err)  # the sandbox's own loopback: nothing there
    assert "default via 10.0.2.2 dev tap0" in out
    addresses = host_addresses()
    assert addresses, "the host has an address of its own"
    for address in addresses:
        assert f"prohibit {address} " in out + " ", (address, out)


def test_no_mount_fails_closed_with_one_line_saying_what_to_do(make_mounted) -> None:  # noqa: ANN001
    b = make_mounted(mounted=False)
    status, out, err = run(b, "python3 -c 'print(1)'; echo $?; nosuchprogram-y; echo $?")
    assert out.split() == ["126", "127"]
    first = err.splitlines()[0]
    assert "python3: cannot run host programs: no FUSE mount of" in first
    assert "komputer mount -o allow_other" in first


def test_remote_none_means_command_not_found(make_mounted) -> None:  # noqa: ANN001
    b = make_mounted(remote="none")
    status, out, err = run(b, "python3 -c 'print(1)'; echo $?")
    assert out.split() == ["127"]
    assert "python3: command not found" in err


def test_paths_outside_the_sandbox_view_are_refused_not_run_on_the_wrong_file(mounted: Bench) -> None:
    status, out, err = run(mounted, "python3 /srv-nothere/x.py; echo $?; python3 ../bob; echo $?; "
                                    "cat /home/bob/nothere | python3 -c 1 /home/alice/ok; echo $?; cd /; python3 -c 1; echo $?")
    assert out.split() == ["126", "126", "0", "126"]
    assert "python3: /srv-nothere/x.py: outside what host programs can see" in err
    assert "python3: ../bob: not visible to host programs, which see K only under /home/alice, /tmp" in err
    assert "python3: /: the working directory" in err


def test_ctrl_c_in_a_terminal_stops_a_running_program(mounted: Bench) -> None:
    s = PtySession([need("ssh"), "-tt", *mounted.ssh_options(), "alice@127.0.0.1"])
    try:
        s.expect(b"$ ")
        s.send(b"python3 -c 'import time; print(\"sl\" + \"eeping\", flush=True); time.sleep(60)'\r")
        s.expect(b"sleeping")  # the program's output, not the echo of the line
        s.send(b"\x03")
        s.expect(b"$ ", timeout=HANG)
        s.send(b"echo status=$?\r")  # 130: the interrupt ended it, not its 60 s
        assert b"status=130" in s.expect(b"$ ")
    finally:
        s.close()


def _terminal(b: Bench) -> PtySession:
    s = PtySession([need("ssh"), "-tt", *b.ssh_options(), "alice@127.0.0.1"])
    s.expect(b"$ ")
    return s


def test_a_program_in_a_terminal_has_a_pty_of_its_own_that_follows_the_window(mounted: Bench) -> None:
    """The program sees the window's size, and a change of it reaches the program as SIGWINCH
    with the new size (its handler prints it: the test waits for that, not for a guessed time)."""
    need("tput")
    s = PtySession([need("ssh"), "-tt", *mounted.ssh_options(), "alice@127.0.0.1"], size=(90, 30))
    try:
        s.expect(b"$ ")
        s.send(b"printf '%s\\n' 'import os, signal, subprocess, sys' "
               b"'cols = lambda: subprocess.check_output([\"tput\", \"cols\"]).decode().strip()' "
               b"'signal.signal(signal.SIGWINCH, lambda *_: os.write(1, (\"now \" + cols() + \"\\n\").encode()))' "
               b"'print(\"tty\", os.isatty(0), os.isatty(1), \"cols\", cols(), flush=True)' "
               b"'sys.stdin.readline()' > winch.py\r")
        s.expect(b"$ ")
        s.send(b"python3 winch.py\r")
        s.expect(b"tty True True cols 90")
        s.resize(40, 132)
        s.expect(b"now 132", timeout=HANG)
        s.send(b"\r")
        s.expect(b"$ ")
    finally:
        s.close()


def test_a_programs_bytes_reach_the_terminal_as_its_pty_made_them(mounted: Bench) -> None:
    """A program with a pty of its own has its line ends made by that pty (ONLCR: CR LF); the
    login passes them on as they are, past its line editor: no CR doubled, and a bare LF (a
    TUI's cursor move, with ONLCR off as curses sets it) stays a bare LF."""
    s = _terminal(mounted)
    try:
        s.send(b"printf '%s\\n' 'import sys, termios' 'print(\"on\", \"crlf\", flush=True)' "
               b"'a = termios.tcgetattr(1)' 'a[1] &= ~termios.ONLCR' 'termios.tcsetattr(1, termios.TCSANOW, a)' "
               b"'sys.stdout.write(\"bare\" + chr(10) + \"lf\" + chr(10))' > lines.py\r")
        s.expect(b"$ ")
        s.send(b"python3 lines.py\r")
        seen = s.expect(b"lf\n", timeout=HANG)
        assert b"on crlf\r\n" in seen and b"on crlf\r\r\n" not in seen, seen
        assert seen.endswith(b"bare\nlf\n"), seen
        s.expect(b"$ ")
        s.send(b"echo k; echo again\r")  # the line editor's own output still has CR LF
        assert b"k\r\nagain\r\n" in s.expect(b"$ ")
    finally:
        s.close()


def test_the_python_repl_runs_interactively_and_ctrl_c_interrupts_only_the_line(mounted: Bench) -> None:
    s = _terminal(mounted)
    try:
        s.send(b"python3 -q\r")
        s.expect(b">>> ")
        s.send(b"6 * 7\r")
        s.expect(b"42")
        s.expect(b">>> ")
        s.send(b"import time; print('sl' + 'eeping', flush=True); time.sleep(30)\r")
        s.expect(b"sleeping")  # the line runs: the interrupt reaches its sleep, not the prompt
        s.send(b"\x03")
        s.expect(b"KeyboardInterrupt")
        s.expect(b">>> ")  # the REPL goes on: SIGINT reached the program, not the sandbox
        s.send(b"raise SystemExit(5)\r")
        s.expect(b"$ ")
        s.send(b"echo status=$?\r")
        assert b"status=5" in s.expect(b"$ ")
        s.send(b"echo back in k | tr a-z A-Z\r")  # the line editor has the terminal again
        assert b"BACK IN K" in s.expect(b"$ ")
    finally:
        s.close()


def test_ctrl_z_makes_a_terminal_program_a_stopped_job_and_fg_brings_it_back(mounted: Bench) -> None:
    s = _terminal(mounted)
    try:
        s.send(b"python3 -q\r")
        s.expect(b">>> ")
        s.send(b"x = 6\r")
        s.expect(b">>> ")
        s.send(b"\x1a")
        seen = s.expect(b"$ ")
        assert b"Stopped" in seen and b"python3 -q" in seen
        s.send(b"jobs\r")
        assert b"[1]+  Stopped                 python3 -q" in s.expect(b"$ ")
        s.send(b"echo editor is back | tr a-z A-Z\r")
        assert b"EDITOR IS BACK" in s.expect(b"$ ")
        s.send(b"fg\r")
        s.expect(b"python3 -q")
        s.send(b"print(x * 7)\r")
        s.expect(b"42")
        s.send(b"raise SystemExit(0)\r")
        s.expect(b"$ ")
        s.send(b"jobs; echo done\r")
        assert b"Stopped" not in s.expect(b"done\r\n")
    finally:
        s.close()
