"""kshell.compat.computesdk on a real state: create, find and get_by_id, run_command as a shell
line (cwd, env, a non-zero status returned), the filesystem calls, destroy, and refusals."""

from __future__ import annotations

import asyncio

import pytest

from kshell.compat.computesdk import (
    CreateSandboxOptions,
    FileType,
    NotFoundError,
    RunCommandOptions,
    SandboxStatus,
    Unsupported,
    compute,
)


def test_computesdk_calls() -> None:
    async def main() -> None:
        sandbox = await compute.sandbox.create(CreateSandboxOptions(name="web", envs={"STAGE": "dev"}))
        try:
            assert (await compute.sandbox.find("web")).sandbox_id == sandbox.sandbox_id
            assert (await compute.sandbox.get_by_id(sandbox.sandbox_id)).sandbox_id == sandbox.sandbox_id
            result = await sandbox.run_command("echo $STAGE $X; pwd; echo e >&2; exit 2",
                                               RunCommandOptions(cwd="/tmp", env={"X": "x"}))
            assert (result.stdout, result.stderr, result.exit_code) == ("dev x\n/tmp\n", "e\n", 2)
            fs = sandbox.filesystem
            await fs.mkdir("/home/user/site/css")
            await fs.batch_write([{"path": "/home/user/site/index.html", "content": "<h1>hi</h1>"}])
            assert await fs.read_file("/home/user/site/index.html") == "<h1>hi</h1>"
            assert [(e.name, e.type) for e in await fs.readdir("/home/user/site")] == [
                ("css", FileType.DIRECTORY), ("index.html", FileType.FILE)]
            await fs.remove("/home/user/site")
            assert not await fs.exists("/home/user/site")
            with pytest.raises(NotFoundError):
                await fs.read_file("/home/user/site/index.html")
            assert (await sandbox.get_info()).status == SandboxStatus.RUNNING
            with pytest.raises(Unsupported, match="port 3000: a K sandbox listens on no ports"):
                await sandbox.get_url(3000)
            with pytest.raises(Unsupported, match="shell='zsh'"):
                await sandbox.run_command("true", RunCommandOptions(shell="zsh"))
        finally:
            await sandbox.destroy()
        assert (await sandbox.get_info()).status == SandboxStatus.STOPPED
        with pytest.raises(NotFoundError):
            await compute.sandbox.get_by_id(sandbox.sandbox_id)

    asyncio.run(asyncio.wait_for(main(), 120))
