"""A fleet member in a process of its own (to be killed or frozen): joins, prints "joined",
then answers each line on stdin with whether it may still serve."""

from __future__ import annotations

import asyncio
import sys

from kshell.server.fleet import Member, connect


async def main() -> None:
    endpoints, name, ttl = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3])
    prefix = sys.argv[4]
    member = Member(connect(endpoints), name, f"{name}:22", ttl=ttl, prefix=prefix)
    await member.join()
    print("joined", flush=True)
    loop = asyncio.get_running_loop()
    while await loop.run_in_executor(None, sys.stdin.readline):
        print("valid" if member.valid() else "fenced", flush=True)


asyncio.run(main())
