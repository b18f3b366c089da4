"""The adapters over a remote appliance: a real K SSH server on loopback (appliance.py), reached
with the SDK's `Komputer.connect`, configured as each SDK configures its endpoint (E2B: `domain`
and `api_key`, or E2B_DOMAIN and E2B_API_KEY; Daytona: `DaytonaConfig(api_url=..., api_key=...)`
or DAYTONA_API_URL and DAYTONA_API_KEY). Commands, files, the process table and signals go
through SSH, SFTP and komputer-api, so a sandbox made by one program is found by id from
another; what is not served yet (ptys, watch_dir, streamed stdin) is refused by name. The
conformance cases run remotely too (test_conformance.py, flavour e2b-remote)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from appliance import served

from kfs.runtime import procs
from kshell.compat import core
from kshell.compat.daytona import Daytona, DaytonaConfig
from kshell.compat.e2b import CommandExitException, PtySize, Sandbox, SandboxNotFoundException, Unsupported

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def appliance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from served(tmp_path_factory.mktemp("appliance"))


def options(appliance: Any) -> dict[str, str]:
    return {"domain": f"ssh://alice@127.0.0.1:{appliance.port}", "api_key": str(appliance.keys["alice"])}


def test_e2b_sandbox_on_the_appliance(appliance: Any) -> None:
    sandbox = Sandbox.create(envs={"STAGE": "dev"}, metadata={"owner": "test"}, **options(appliance))
    try:
        assert isinstance(sandbox._sandbox, core.RemoteSandbox)  # noqa: SLF001 - over SSH, not booted here
        result = sandbox.commands.run("echo $STAGE; cd /tmp; whoami")
        assert (result.stdout, result.exit_code) == ("dev\nalice\n", 0)
        assert sandbox.commands.run("pwd").stdout == "/home/alice\n"  # nothing leaks into the next command
        with pytest.raises(CommandExitException) as caught:
            sandbox.commands.run("echo no >&2; exit 4")
        assert (caught.value.exit_code, caught.value.stderr) == (4, "no\n")
        sandbox.files.write("/home/alice/notes/a.txt", "hi")  # SFTP, parents made
        assert sandbox.files.read("notes/a.txt") == "hi"
        (entry,) = sandbox.files.list("/home/alice/notes")
        assert (entry.name, entry.size, entry.owner, entry.path) == ("a.txt", 2, "alice", "/home/alice/notes/a.txt")
        assert sandbox.files.exists("notes/a.txt") and not sandbox.files.exists("notes/b.txt")
        # the process table is the appliance's: the row is there, in the server's own state
        job = sandbox.commands.run("sleep 600", background=True)
        assert job.pid in [p.pid for p in sandbox.commands.list()]
        assert procs.get(appliance.state, job.pid)["agent"] == "alice"
        assert sandbox.commands.kill(job.pid) is True
        with pytest.raises(Exception):  # noqa: B017 - killed: a non-zero end, as upstream's
            job.wait()
        assert job.pid not in [p.pid for p in sandbox.commands.list()]
        assert sandbox.commands.kill(job.pid) is False
        # what is not served yet is refused by name, at the call site
        with pytest.raises(Unsupported, match="pty on a remote appliance"):
            sandbox.pty.create(size=PtySize(24, 80))
        with pytest.raises(Unsupported, match="watch_dir on a remote appliance"):
            sandbox.files.watch_dir("/home/alice")
        with pytest.raises(Unsupported, match="stdin to a command on a remote appliance"):
            sandbox.commands.run("cat", background=True, stdin=True)
        assert sandbox.get_info().metadata == {"owner": "test"}
    finally:
        assert sandbox.kill() is True
    assert not sandbox.is_running()
    with pytest.raises(SandboxNotFoundException):
        Sandbox.connect(sandbox.sandbox_id, **options(appliance))


def test_a_remote_sandbox_and_its_fork_are_found_by_id_from_another_process(appliance: Any) -> None:
    """Another program (its endpoint from E2B_DOMAIN and E2B_API_KEY) makes a sandbox and a fork
    and lets them go; this one finds both by id on the appliance."""
    script = ("from kshell.compat.e2b import Sandbox\n"
              "s = Sandbox.create(envs={'STAGE': 'made elsewhere'})\n"
              "s.files.write('base.txt', 'base')\n"
              "(fork,) = s.fork()\n"
              "fork.files.write('mine.txt', 'the fork')\n"
              "print(s.sandbox_id, fork.sandbox_id)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "E2B_DOMAIN": options(appliance)["domain"],
           "E2B_API_KEY": options(appliance)["api_key"]}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 0, done.stderr
    sandbox_id, fork_id = done.stdout.split()
    again = Sandbox.connect(sandbox_id, **options(appliance))
    fork = Sandbox.connect(fork_id, **options(appliance))
    try:
        assert again.commands.run("echo $STAGE; cat base.txt").stdout == "made elsewhere\nbase"
        assert fork.files.read("mine.txt") == "the fork" and fork.files.read("base.txt") == "base"
        assert not again.files.exists("mine.txt")  # what the fork wrote stays in it
    finally:
        assert fork.kill() is True
        assert again.kill() is True


def test_daytona_on_the_appliance(appliance: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    config = DaytonaConfig(api_url=options(appliance)["domain"], api_key=options(appliance)["api_key"])
    daytona = Daytona(config)
    sandbox = daytona.create()
    try:
        response = sandbox.process.exec("echo out; echo err >&2; exit 3")
        assert (response.exit_code, response.result) == (3, "out\nerr\n")
        sandbox.fs.create_folder("up", "755")
        sandbox.fs.upload_file(b"data", "up/file.bin")
        assert sandbox.fs.download_file("up/file.bin") == b"data"
        assert [f.name for f in sandbox.fs.list_files("up")] == ["file.bin"]
        # the same endpoint from the environment, as Daytona() reads DAYTONA_API_URL and DAYTONA_API_KEY
        monkeypatch.setenv("DAYTONA_API_URL", config.api_url)
        monkeypatch.setenv("DAYTONA_API_KEY", config.api_key)
        other = Daytona().get(sandbox.id)
        assert other.process.exec("cat up/file.bin").result == "data"
    finally:
        daytona.delete(sandbox)
    with pytest.raises(Exception, match="not found"):
        daytona.get(sandbox.id)


def test_computesdk_on_the_appliance(appliance: Any) -> None:
    import asyncio

    from computesdk.config import GatewayConfig  # upstream's own config names the endpoint

    from kshell.compat.computesdk import Compute, CreateSandboxOptions

    config = GatewayConfig(api_key=options(appliance)["api_key"], provider="k", gateway_url=options(appliance)["domain"])

    async def main() -> None:
        compute = Compute(config)
        sandbox = await compute.sandbox.create(CreateSandboxOptions(envs={"STAGE": "dev"}))
        try:
            result = await sandbox.run_command("echo $STAGE; whoami")
            assert (result.stdout, result.exit_code) == ("dev\nalice\n", 0)
            await sandbox.filesystem.write_file("c.txt", "computed")
            again = await compute.sandbox.get_by_id(sandbox.sandbox_id)
            assert await again.filesystem.read_file("c.txt") == "computed"
        finally:
            await compute.sandbox.destroy(sandbox.sandbox_id)

    asyncio.run(asyncio.wait_for(main(), 120))
    with pytest.raises(Unsupported, match="a K appliance is reached over SSH"):
        Compute(GatewayConfig(api_key="k", provider="e2b"))  # upstream's default gateway: not an appliance
