"""bench/loop.py: the agent loop's own costs, measured in one run.

Rows (each prints K's figure and the goal):
- the loop's overhead per step without a model: a scripted model (no HTTP) whose every answer
  calls one in-process no-op tool, so a step is what the loop itself does (the turn begun and
  ended, the chunks published, the assistant message and the tool result committed, each a
  KState transaction), median over N steps, the mean and 90th percentile beside it (a machine
  shared with other work shows in those) (goal: < 2 ms);
- stream chunks per second through the event stream to a follower: one answer of N one-character
  chunks, each published as a `turn.chunk` event, counted by a follower reading the event log
  (kfs.journal.events_since, as `komputer events --follow` does) from the first chunk to the
  last (goal: >= 20,000/s);
- from a tool call's chunk to its process start: the wall time from the loop seeing a `shell`
  call's `tool_call` chunk to the K process row's start, median of N (goal: < 5 ms);
- a stop in the middle of a tool: from `agent.stop()` called while a `sleep 100` call runs to
  its K process row's end, median of N (goal: < 1 s; the tests only check that it ends).

    .venv/bin/python bench/loop.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # ahead of bench/, whose native.py would shadow the `native` package

from kfs.journal import events_since, last_event  # noqa: E402
from kfs.runtime import procs  # noqa: E402
from kshell.agent import Hooks, tool  # noqa: E402
from kshell.agent.models import ScriptedModel  # noqa: E402
from kshell.sdk import Komputer  # noqa: E402


def row(name: str, k: float, unit: str, goal: str) -> None:
    print(f"{name:<52} {k:>12.3f} {unit:<9} (goal {goal})")


async def step_overhead(computer: Komputer, steps: int) -> float:
    session = await computer.login("bench", id="steps")

    @tool("noop", "does nothing", {})
    async def noop() -> str:
        return "ok"

    done = {"n": 0}  # the steps of this prompt so far: a counter, as scanning the messages grows with them

    def script(messages: list) -> dict:
        done["n"] = 0 if messages[-1].role == "user" else done["n"] + 1
        return "done" if done["n"] >= steps else {"text": "step", "calls": [{"name": "noop", "arguments": {}}]}

    starts: list[float] = []
    agent = session.loop(ScriptedModel(script, piece=64), tools=[noop], computer_tools=False,
                         hooks=Hooks(step_start=lambda step, messages: starts.append(time.perf_counter())))
    await session.exec("true")  # the worker pool up: nothing else of the computer's runs meanwhile
    await agent.prompt("warm up")  # the conversation made, the modules loaded (as many steps)
    steps_before = len(agent.messages)
    starts.clear()
    cpu = time.process_time()
    await agent.prompt("go")
    cpu = (time.process_time() - cpu) / (steps + 1) * 1e3
    assert len(agent.messages) - steps_before == 2 * steps + 2, len(agent.messages) - steps_before
    took = [(b - a) * 1e3 for a, b in zip(starts, starts[1:])]
    print(f"  (per step: mean {statistics.mean(took):.3f} ms, 90th percentile "
          f"{statistics.quantiles(took, n=10)[-1]:.3f} ms; CPU time of this process {cpu:.3f} ms, "
          "which other work on the machine does not inflate)")
    return statistics.median(took)


async def chunk_rate(computer: Komputer, chunks: int) -> float:
    session = await computer.login("bench", id="chunks")
    agent = session.loop(ScriptedModel(lambda m: "x" * chunks, piece=1), computer_tools=False)
    await agent.open()
    state = computer.state
    since = last_event(state)
    seen = {"n": 0, "first": 0.0, "last": 0.0}
    stop = threading.Event()

    def follow() -> None:
        seq = since
        while not stop.is_set() or seq < last_event(state):
            batch = events_since(state, seq)
            for event in batch:
                seq = event["seq"]
                if event["type"] == "turn.chunk" and event["chunk"]["kind"] == "text":
                    if not seen["n"]:
                        seen["first"] = time.perf_counter()
                    seen["n"] += 1
                    seen["last"] = time.perf_counter()
            if not batch:
                time.sleep(0.001)

    follower = threading.Thread(target=follow)
    follower.start()
    await agent.prompt("talk")
    stop.set()
    await asyncio.to_thread(follower.join)
    assert seen["n"] == chunks, seen
    return chunks / (seen["last"] - seen["first"])


async def call_to_process(computer: Komputer, runs: int) -> float:
    session = await computer.login("bench", id="calls")
    seen: list[int] = []

    def on_chunk(chunk: object, response_id: str) -> None:
        if getattr(chunk, "kind", "") == "tool_call":
            seen.append(time.time_ns())

    def script(messages: list) -> dict:
        last = messages[-1]
        return "ok" if last.role == "tool" else {"calls": [{"name": "shell", "arguments": {"command": "true"}}]}

    agent = session.loop(ScriptedModel(script, piece=256), hooks=Hooks(chunk=on_chunk))
    await agent.prompt("warm up")  # the session's worker started
    delays = []
    for _ in range(runs):
        seen.clear()
        since = last_event(computer.state)
        result = await agent.prompt("run true")
        output = next(m.content[0] for m in result.messages if m.role == "tool")
        assert output["output"] == "(no output)", output
        events = [e for e in events_since(computer.state, since) if e["type"] == "turn.tool"]
        row_ = procs.get(computer.state, events[-1]["pid"])
        delays.append((row_["started"] - seen[0]) / 1e6)
    return statistics.median(delays)


async def stop_mid_tool(computer: Komputer, runs: int) -> float:
    session = await computer.login("bench", id="stops")

    def script(messages: list) -> dict | str:
        return "stopped" if messages[-1].role == "tool" else {"calls": [{"name": "shell",
                                                                          "arguments": {"command": "sleep 100"}}]}

    agent = session.loop(ScriptedModel(script, piece=256))
    await session.exec("true")  # the session's worker started
    delays = []
    for _ in range(runs):
        task = asyncio.create_task(agent.prompt("sleep"))
        rows: list = []
        while not rows:  # the tool's process runs
            await asyncio.sleep(0.005)
            rows = [r for r in procs.rows(computer.state, agent="bench", live=True) if "sleep 100" in r["cmd"]]
        asked = time.time_ns()
        await agent.stop()
        assert (await task).status == "stopped"
        ended = procs.get(computer.state, rows[0]["pid"])
        assert ended["state"] != "running", ended
        delays.append((ended["ended"] - asked) / 1e6)
    return statistics.median(delays)


async def main(quick: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as tmp:
        async with Komputer.boot(state=Path(tmp) / "state") as computer:
            await computer.add_agent("bench")
            steps = 50 if quick else 300
            row(f"loop overhead per step, no model (median, {steps} steps)", await step_overhead(computer, steps), "ms",
                "< 2 ms")
            chunks = 5_000 if quick else 50_000
            row(f"stream chunks through events to a follower ({chunks})", await chunk_rate(computer, chunks),
                "chunks/s", ">= 20,000/s")
            runs = 5 if quick else 30
            row(f"tool call chunk to process start (median of {runs})", await call_to_process(computer, runs), "ms",
                "< 5 ms")
            runs = 3 if quick else 10
            row(f"stop mid-tool to its process's end (median of {runs})", await stop_mid_tool(computer, runs), "ms",
                "< 1000 ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps, chunks and runs")
    asyncio.run(main(parser.parse_args().quick))
