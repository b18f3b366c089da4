"""A pool of computers by tenant: concurrent logins share one boot per key, idle ones close.

    .venv/bin/python examples/pool.py
"""

import asyncio
import tempfile
from pathlib import Path

from kshell.sdk import Komputer, KomputerPool


async def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        async def boot(key: str) -> Komputer:
            computer = await Komputer.boot(state=Path(root) / key.replace(":", "_"))
            await computer.add_agent("assistant")
            return computer

        async with KomputerPool(boot, max_warm=2, idle_for=0.0) as pool:
            async def task(n: int) -> str:
                async with pool.with_login("tenant:alice", "assistant", id=f"task{n}") as agent:
                    return (await agent.exec(f"echo task {n} > t{n}; cat t{n}")).text.strip()

            print(await asyncio.gather(*(task(n) for n in range(3))))
            print("boots:", pool.stats()["boots"])
            print("swept:", await pool.sweep())


asyncio.run(main())
