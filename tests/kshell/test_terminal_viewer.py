"""A persistent terminal's viewer (kshell.server.terminals.Viewer): one that stops reading
never stalls the terminal, and is repainted with the screen as it is when it reads again."""

from __future__ import annotations

import asyncio

from kshell.screen import VTScreen
from kshell.server.terminals import VIEWER_BACKLOG, Viewer


def test_a_viewer_that_stops_reading_is_repainted_instead_of_queueing_without_bound() -> None:
    async def main() -> None:
        screen = VTScreen(80, 24)
        gate = asyncio.Event()
        written: list[bytes] = []

        async def write(data: bytes) -> None:  # a client whose window is full until the gate opens
            await gate.wait()
            written.append(data)

        viewer = Viewer(write)
        viewer.stale = False  # attached and painted already
        viewer.task = asyncio.get_running_loop().create_task(viewer.run(screen))
        line = b"x" * 70 + b"\r\n"
        for i in range(3 * VIEWER_BACKLOG // len(line)):  # three times what it may have queued
            viewer.push(b"%07d " % i + line)  # never waits: the terminal goes on
            assert viewer.queued <= VIEWER_BACKLOG
        assert viewer.stale  # it fell behind: the screen will be painted anew
        screen.feed(b"last lines\r\nthe end")  # the screen as the terminal has it by then
        viewer.push(b"the end")
        gate.set()
        await asyncio.wait_for(viewer.idle.wait(), 60)
        painted = VTScreen(80, 24)
        for data in written:
            painted.feed(data)
        assert painted.display() == screen.display()
        assert painted.lines(1) == ["the end"]
        viewer.task.cancel()

    asyncio.run(main())
