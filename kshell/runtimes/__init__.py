"""Runtimes: where an orchestrator runs its agents, chosen by name (docs/runtimes.md).

    runtime = get_runtime("komputer", computer=computer, agent="alice")   # or "tmux", "process"
    handle = await runtime.create(RuntimeCreateConfig("task-1", "work", ["python3", "-q"]))
    await runtime.send_message(handle, "6 * 7")
    print(await runtime.get_output(handle, 5))

`komputer` runs the agent in a persistent terminal of a K computer (kshell.server.terminals);
`tmux` and `process` are the usual local built-ins, on the host, so an orchestrator can switch
by name and one conformance suite (tests/runtimes) holds for all three.
"""

from __future__ import annotations

from typing import Any

from kshell.runtimes.base import (
    AttachInfo,
    Runtime,
    RuntimeCreateConfig,
    RuntimeError_,
    RuntimeHandle,
    RuntimeMetrics,
    check_id,
)

NAMES = ("komputer", "tmux", "process")


def get_runtime(name: str, **options: Any) -> Runtime:
    """The runtime called `name`, made with its options (komputer: computer=, agent=)."""
    if name == "komputer":
        from kshell.runtimes.komputer import KomputerRuntime

        return KomputerRuntime(**options)
    if name == "tmux":
        from kshell.runtimes.tmux import TmuxRuntime

        return TmuxRuntime(**options)
    if name == "process":
        from kshell.runtimes.process import ProcessRuntime

        return ProcessRuntime(**options)
    raise ValueError(f"no runtime named {name!r} (one of {', '.join(NAMES)})")


__all__ = ["NAMES", "AttachInfo", "Runtime", "RuntimeCreateConfig", "RuntimeError_", "RuntimeHandle",
           "RuntimeMetrics", "check_id", "get_runtime"]
