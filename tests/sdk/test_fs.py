"""agent.fs through the session view: every call, its errors as a Unix program gets them, and
the same refusals as the agent's shell (mode, path rules, forks)."""

from __future__ import annotations

import asyncio
import errno
import stat
from pathlib import Path

import pytest

from kfs.journal import receipts_since
from kshell.sdk import Komputer
from kshell.server.config import ServerConfig

HANG = 120.0


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, HANG))


def test_every_call_and_its_errors(tmp_path: Path) -> None:
    async def main() -> None:
        async with await Komputer.boot(state=tmp_path / "s") as computer:
            await computer.add_agent("alice")
            agent = await computer.login("alice")
            fs = agent.fs
            with pytest.raises(FileNotFoundError):
                await fs.write_file("~/work/a.md", "one\n")  # no parent: ENOENT, as open(2)
            await fs.mkdir("~/work/archive", parents=True)
            assert await fs.write_file("~/work/a.md", "one\n") == 4
            assert await fs.append_file("work/a.md", b"two\n") == 4  # relative: from home
            assert await fs.read_text("~/work/a.md") == "one\ntwo\n"
            assert (await agent.exec("cat work/a.md")).stdout == b"one\ntwo\n"  # the shell sees it
            st = await fs.stat("~/work/a.md")
            assert st.is_file and st.size == 8 and stat.S_IMODE(st.mode) == 0o644
            assert st.uid == computer.agent("alice").uid
            await fs.chmod("~/work/a.md", 0o600)
            assert stat.S_IMODE((await fs.stat("~/work/a.md")).mode) == 0o600
            await fs.symlink("a.md", "~/work/link")
            assert await fs.readlink("~/work/link") == "a.md"
            assert (await fs.stat("~/work/link", follow=False)).is_symlink
            await fs.rename("~/work/a.md", "~/work/archive/a.md")
            assert not await fs.exists("~/work/a.md") and await fs.exists("~/work/archive/a.md")
            tree = await fs.walk("~/work")
            assert [(e.path, sorted(e.dirs), sorted(e.files)) for e in tree] == [
                ("/home/alice/work", ["archive"], ["link"]), ("/home/alice/work/archive", [], ["a.md"])]
            with pytest.raises(OSError) as e:
                await fs.rm("~/work")
            assert e.value.errno == errno.EISDIR
            with pytest.raises(OSError) as e:
                await fs.mkdir("~/work")
            assert e.value.errno == errno.EEXIST
            with pytest.raises(FileNotFoundError):
                await fs.read_file("~/nope")
            with pytest.raises(IsADirectoryError):
                await fs.read_file("~/work")
            with pytest.raises(PermissionError):
                await fs.write_file("/etc/passwd", "x")  # not the agent's: EACCES
            with pytest.raises(PermissionError):
                await fs.write_file("/x", "y")  # the root directory is root's
            await fs.rm("~/work", recursive=True)
            assert not await fs.exists("~/work")
            await fs.rm("~/work", recursive=True, force=True)  # -f: nothing there is no error
            by = {r.get("by") for r in receipts_since(computer.state, 0)}
            assert f"sdk fs alice/{agent.id}" in by  # its receipts name the front end and session

    run(main())


def test_fs_obeys_the_same_rules_as_the_shell(tmp_path: Path) -> None:
    config = ServerConfig(policy=({"on": "path", "pattern": "/home/alice/secret*", "action": "deny",
                                   "agent": "alice"},))

    async def main() -> None:
        async with await Komputer.boot(state=tmp_path / "s", config=config) as computer:
            await computer.add_agent("alice")
            agent = await computer.login("alice")
            with pytest.raises(PermissionError):
                await agent.fs.write_file("~/secret.txt", "x")
            shell = await agent.exec("echo x > ~/secret.txt")
            assert shell.status != 0 and not await agent.fs.exists("~/secret.txt")
            readonly = await computer.login("alice", mode="readonly")
            with pytest.raises(OSError) as e:
                await readonly.fs.write_file("~/r.txt", "x")
            assert e.value.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
            assert (await readonly.exec("echo x > ~/r.txt")).status != 0
            fork = await agent.fork()
            await fork.fs.write_file("~/in-fork", "f")
            assert await fork.fs.exists("~/in-fork") and not await agent.fs.exists("~/in-fork")
            await agent.detach()
            with pytest.raises(Exception, match="detached"):
                await agent.fs.read_file("~/in-fork")

    run(main())
