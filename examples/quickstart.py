"""The SDK's quick start: a computer on a memory state, an agent, its commands and files.

    .venv/bin/python examples/quickstart.py
"""

import asyncio

from kshell.sdk import Komputer, memory_state


async def main() -> None:
    async with Komputer.boot(state=memory_state(64 << 20),
                             hosts={"api": {"/data.json": {"ok": True}}}) as computer:
        await computer.add_agent("alice")
        agent = await computer.login("alice", id="chat")

        result = await agent.exec("mkdir -p work && cd work && echo 'hello from K' > note.txt && wc -c note.txt")
        print(result.status, result.text, end="")

        print(await agent.fs.read_text("~/work/note.txt"), end="")
        await agent.fs.write_file("~/work/plan.md", "# plan\n- read the API\n")
        print((await agent.exec("curl -s http://api/data.json | jq .ok")).text, end="")
        print((await agent.exec("pwd; ls")).text, end="")  # the session kept its cwd

        reviewer = await agent.fork(mode="readonly")
        denied = await reviewer.exec("rm work/plan.md")
        print("readonly fork:", denied.status, denied.stderr.decode().strip().splitlines()[0])

        await agent.close()


asyncio.run(main())
