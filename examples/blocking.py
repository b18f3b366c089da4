"""The same calls without asyncio, for scripts and notebooks.

    .venv/bin/python examples/blocking.py
"""

from kshell.sdk.blocking import Komputer

with Komputer.boot() as computer:
    computer.add_agent("alice")
    agent = computer.login("alice")
    agent.exec("seq 1 5 > numbers")
    print(agent.exec("paste -sd+ numbers | bc").text, end="")
    print(agent.fs.read_text("~/numbers").split())
    for event in agent.events():
        if event["type"] == "proc.exit":
            print("first command exited with", event["status"])
            break
