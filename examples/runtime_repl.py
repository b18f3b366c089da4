"""An orchestrator drives a python3 REPL through a runtime chosen by name (docs/runtimes.md).

    .venv/bin/python examples/runtime_repl.py [komputer|tmux|process]
"""

import asyncio
import sys

from kshell.runtimes import RuntimeCreateConfig
from kshell.sdk import Komputer, local_remote, memory_state


async def wait_for(runtime, handle, text: str) -> str:
    """The screen once `text` is on it (a bound, not a schedule: a REPL answers when it does)."""
    for _ in range(3000):
        screen = await runtime.get_output(handle, 10)
        if text in screen:
            return screen
        await asyncio.sleep(0.01)
    raise TimeoutError(f"{text!r} never appeared:\n{screen}")


async def drive(runtime) -> None:
    handle = await runtime.create(RuntimeCreateConfig(
        session_id="task-1", workspace_path="", launch_command=["python3", "-q"],
        environment={"TASK": "sum"}))
    await wait_for(runtime, handle, ">>>")
    await runtime.send_message(handle, "import os; print(os.environ['TASK'], sum(range(10)))")
    screen = await wait_for(runtime, handle, "sum 45")
    print(screen.splitlines()[-2])                      # sum 45
    print("alive:", await runtime.is_alive(handle))     # alive: True
    await runtime.send_message(handle, "raise SystemExit")
    while await runtime.is_alive(handle):
        await asyncio.sleep(0.01)
    print("alive:", await runtime.is_alive(handle))     # alive: False
    await runtime.destroy(handle)


async def main(name: str) -> None:
    if name != "komputer":
        from kshell.runtimes import get_runtime

        await drive(get_runtime(name))
        return
    async with Komputer.boot(state=memory_state(64 << 20), remotes={"local": local_remote()}) as computer:
        await computer.add_agent("alice")
        runtime = computer.runtime("komputer", agent="alice")
        await drive(runtime)


asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "komputer"))
