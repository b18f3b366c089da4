"""The server's cron runner: the image's crons (kfs.runtime.crons), each run as an exec
session of its agent in a worker (the same shell, mode, rules and hooks as over ssh; its
command a process with its row and events), one run of a cron at a time, its output dropped
(the command redirects what it wants kept). It receives the state and the server's shell maker
(KServer.make_shell), nothing else of the server."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from kfs import agents
from kfs.agents import Agent, SessionRecord
from kfs.kstate import KState
from kfs.runtime import crons, image

if TYPE_CHECKING:
    from kshell.server.workers import WorkerShell

log = logging.getLogger("komputer.crons")
TICK = 0.2  # how often the schedule is looked at (seconds)


class ShellMaker(Protocol):
    """What makes a run's shell: an exec session of `agent` in a worker (KServer.make_shell)."""

    def __call__(self, agent: Agent, record: SessionRecord, env: dict[str, str]) -> WorkerShell: ...


class CronRunner:
    def __init__(self, state: KState, make_shell: ShellMaker) -> None:
        self.state = state
        self.make_shell = make_shell
        self.running: dict[str, asyncio.Task[None]] = {}

    async def run_forever(self) -> None:
        state = self.state
        while True:
            record = await asyncio.to_thread(image.current, state)
            now = time.time()
            for cron in record["spec"]["crons"] if record is not None else ():
                if cron["name"] in self.running:
                    continue
                run = await asyncio.to_thread(crons.start, state, cron, now, record["version"])
                if run is not None:
                    task = asyncio.get_running_loop().create_task(self._run(cron, run))
                    self.running[cron["name"]] = task
                    task.add_done_callback(lambda _t, name=cron["name"]: self.running.pop(name, None))
            await asyncio.sleep(TICK)

    async def _run(self, cron: dict[str, Any], run: int) -> None:
        state = self.state
        agent = await asyncio.to_thread(agents.find_agent, state, cron["agent"])
        if agent is None:
            await asyncio.to_thread(crons.done, state, cron, run, None, f"no agent {cron['agent']!r}")
            return
        record = SessionRecord(agent.name, f"cron-{cron['name']}", agent.home, ephemeral=True)
        shell = self.make_shell(agent, record, {"K_CRON": cron["name"]})

        async def drop(data: bytes) -> None:
            pass

        status: int | None = None
        try:
            status = await shell.run(cron["command"], drop, drop, stdin=False)
        except Exception as e:  # noqa: BLE001 - a run that could not start is reported, the next one tries
            log.warning("cron %s: %s", cron["name"], e)
            await asyncio.to_thread(crons.done, state, cron, run, None, str(e))
            return
        finally:
            await shell.hangup()
        await asyncio.to_thread(crons.done, state, cron, run, status)

    async def stop(self) -> None:
        for task in list(self.running.values()):
            task.cancel()
        await asyncio.gather(*self.running.values(), return_exceptions=True)
