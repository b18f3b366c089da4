"""Parity: every case of parity_cases.CASES, and an `ask` that is decided, through OpenSSH's
`ssh` to a served state and through the local SDK's `agent.exec` on a state made the same way
(the same agents, in the same order) give the same stdout, stderr and status, and leave the same
process events and receipts (the front end's name aside: `ssh exec` there, `sdk` here)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ssh"))
from kserver import Bench, close_bench, make_bench  # noqa: E402
from parity_cases import CASES  # noqa: E402

from kfs.journal import events_since, last_event, receipts_since  # noqa: E402
from kfs.runtime import approvals  # noqa: E402
from kshell.sdk import Komputer  # noqa: E402
from kshell.server import ServerConfig  # noqa: E402
from kshell.server.config import Penalties  # noqa: E402

CONFIG = ServerConfig(hostname="k", penalties=Penalties(exempt=("127.0.0.1/32",)),
                      agents={"alice": {"scope": ["~/proj"]}},
                      policy=({"on": "command", "pattern": "touch *asked*", "action": "ask", "agent": "alice"},))
HANG = 120.0
# what a front end adds of its own: its name, its session, ids and times
VOLATILE = {"seq", "time", "ts", "pid", "session", "front", "by", "id", "receipt", "proc", "owner", "started",
            "ended", "holder", "cwd"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    b = make_bench(tmp_path_factory.mktemp("sdk-parity"), CONFIG)
    yield b
    close_bench(b)


def trace(state: Any, since_event: int, since_receipt: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The process events and the receipts a command left, without what names the front end."""
    events = [{k: v for k, v in e.items() if k not in VOLATILE} for e in events_since(state, since_event)
              if e.get("agent") == "alice" and (e["type"].startswith("proc") or e["type"] in ("process", "policy.deny"))]
    receipts = [{k: v for k, v in r.items() if k not in VOLATILE} for r in receipts_since(state, since_receipt)]
    return events, receipts


def marks(state: Any) -> tuple[int, int]:
    rows = receipts_since(state, 0, limit=10**9)
    return last_event(state), rows[-1]["id"] if rows else 0


def decide_when_asked(state: Any, stop: threading.Event) -> None:
    """The operator: allow each approval alice's sessions ask for."""
    while not stop.is_set():
        for record in approvals.listing(state):
            if record.get("agent") == "alice":
                approvals.decide(state, record["id"], True, by="test")
        time.sleep(0.02)


def test_parity_between_ssh_and_the_sdk(bench: Bench, tmp_path: Path) -> None:
    assert len(CASES) >= 40
    state = bench.state
    cases = [*CASES, ("touch ~/proj/asked.txt && echo touched", b"")]
    bench.ssh("mkdir -p ~/proj")
    stop = threading.Event()
    operator = threading.Thread(target=decide_when_asked, args=(state, stop), daemon=True)
    operator.start()
    try:
        by_ssh = []
        for command, stdin in cases:
            before = marks(state)
            done = bench.ssh(command, input=stdin, extra=["-o", "SetEnv=K_MODE=limited"])
            by_ssh.append(((done.stdout, done.stderr, done.returncode), trace(state, *before)))

        async def main() -> list[Any]:
            async with Komputer.boot(state=tmp_path / "state", config=CONFIG) as computer:
                state = computer.state
                await computer.add_agent("alice")
                await computer.add_agent("bob")
                done = threading.Event()
                sdk_operator = threading.Thread(target=decide_when_asked, args=(state, done), daemon=True)
                sdk_operator.start()
                try:
                    await (await computer.login("alice")).exec("mkdir -p ~/proj")
                    out = []
                    for command, stdin in cases:
                        agent = await computer.login("alice", mode="limited")  # a session per command, as ssh's
                        before = marks(state)
                        result = await agent.exec(command, stdin=stdin or None)
                        await agent.close()
                        out.append(((result.stdout, result.stderr, result.status), trace(state, *before)))
                    return out
                finally:
                    done.set()
                    sdk_operator.join()  # before the computer closes the state it reads

        by_sdk = asyncio.run(asyncio.wait_for(main(), HANG * 4))
    finally:
        stop.set()
        operator.join()
    differ = [(command, s, k) for (command, _), s, k in zip(cases, by_ssh, by_sdk, strict=True) if s != k]
    assert not differ, "\n".join(f"{c!r}:\n  ssh {s!r}\n  sdk {k!r}" for c, s, k in differ)
    # the ask was decided and the command went on
    assert by_ssh[-1][0] == (b"touched\n", b"K: waiting for approval 1: touch /home/alice/proj/asked.txt\n", 0)
    assert any(e["type"] == "proc.exit" for e in by_ssh[0][1][0])  # the traces are not empty
    assert {0, 1, 3, 7, 127} <= {out[2] for out, _ in by_ssh}
