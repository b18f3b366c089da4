"""Delegated programs through the SDK: `Komputer.boot(remotes={"local": local_remote()})`
mounts the state and runs what K does not have under bubblewrap, as the server does; the same
command lines give the same output, status and file effects through OpenSSH's `ssh` to a
mounted server and through `agent.exec`, a restricted mode included."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from delegation import open_to_agents

from kshell.sdk import Komputer, local_remote

HANG = 300.0
CASES = [
    ("python3 -c 'import sys; print(sys.version_info[0]); sys.exit(3)'", ""),
    ("python3 -c 'open(\"made.txt\", \"w\").write(\"by python\\n\")' && cat made.txt", ""),
    ("python3 -c 'import os; print(os.getuid() >= 100000, os.getcwd())'", ""),
    ("printf 'a\\nb\\n' | python3 -c 'import sys; print(sys.stdin.read().upper(), end=\"\")'", ""),
    ("X=exported python3 -c 'import os; print(os.environ[\"X\"])'", ""),
    ("python3 -c 'open(\"denied.txt\", \"w\")'", "readonly"),
    ("no-such-program-anywhere", ""),
]


def test_delegated_programs_give_the_same_through_ssh_and_the_sdk(mounted, tmp_path: Path) -> None:  # noqa: ANN001
    by_ssh = []
    for command, mode in CASES:
        extra = ["-o", f"SetEnv=K_MODE={mode}"] if mode else []
        done = mounted.ssh(command, extra=extra)
        by_ssh.append((done.stdout, done.stderr.replace(b"/tmp/", b"/"), done.returncode))

    base = open_to_agents()

    async def main() -> list[tuple[bytes, bytes, int]]:
        remote = local_remote()
        assert remote.sandboxed, remote.why_not
        async with Komputer.boot(state=base / "state", remotes={"local": remote}) as computer:
            await computer.add_agent("alice")
            out = []
            for command, mode in CASES:
                agent = await computer.login("alice", mode=mode or "full")
                result = await agent.exec(command)
                out.append((result.stdout, result.stderr.replace(b"/tmp/", b"/"), result.status))
                await agent.close()
            return out

    try:
        by_sdk = asyncio.run(asyncio.wait_for(main(), HANG))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert by_sdk == by_ssh
    assert by_ssh[0][2] == 3 and by_ssh[1][0] == b"by python\n"
    assert b"Read-only file system" in by_ssh[5][1] and by_ssh[6][2] == 127
