"""`Komputer.boot(drives=...)`: memory, host and python drives joined to the image, so the
shell, agent.fs (the same view as SFTP and the mount) and `komputer drives` all see them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sdk_notes_drive import NotesDrive

from kfs.runtime import image
from kfs.runtime.image import ImageError
from kshell.sdk import Komputer, host_drive, memory_drive


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_boot_mounts_memory_host_and_python_drives(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "readme.txt").write_text("from the host\n")
    drives = {"/mnt/scratch": memory_drive(1 << 20, agent_max_bytes=1 << 20), "/mnt/shared": host_drive(shared, readonly=True),
              "/mnt/notes": NotesDrive}

    async def main() -> None:
        async with Komputer.boot(state=tmp_path / "s", drives=drives) as computer:
            await computer.add_agent("alice")
            agent = await computer.login("alice")
            out = await agent.exec("echo kept > /mnt/scratch/a; cat /mnt/scratch/a /mnt/shared/readme.txt "
                                   "/mnt/notes/hello.txt; echo x > /mnt/shared/no")
            assert out.stdout == b"kept\nfrom the host\nhello alice\n"
            assert b"Read-only file system" in out.stderr
            assert await agent.fs.read_text("/mnt/shared/readme.txt") == "from the host\n"
            big = await agent.exec("head -c 2000000 /dev/zero > /mnt/scratch/big")
            assert big.status == 1 and b"No space left on device" in big.stderr
            names = {d["path"] for d in image.current(computer.state)["spec"]["drives"].values()}
            assert names == set(drives)
        async with Komputer.boot(state=tmp_path / "s", drives=drives) as computer:
            assert len(image.versions(computer.state)[0]) == 1  # the same drives again: no new version

    run(main())


def test_a_bad_drive_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="K shows its own files under /etc"):
        run(Komputer.boot(state=tmp_path / "s", drives={"/etc/x": memory_drive(1 << 20)}).__aenter__())
    with pytest.raises(TypeError, match="expected memory_drive"):
        run(Komputer.boot(state=tmp_path / "s", drives={"/mnt/x": 42}).__aenter__())
