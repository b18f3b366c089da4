"""The Runtime interface an orchestrator drives, and what its calls take and give."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
TIMEOUT = 10.0  # seconds any external call (tmux, a process's end) may take


class RuntimeError_(Exception):  # noqa: N801 - the builtin's name is taken
    """A runtime call that failed (the message says why, in the words of the tool that failed)."""


def check_id(value: str, what: str = "session_id") -> str:
    """An id used in names and command lines: letters, digits, `.`, `_`, `-`, at most 64,
    not starting with punctuation (no option, path or shell syntax can be smuggled in)."""
    if not isinstance(value, str) or not ID.fullmatch(value):
        raise ValueError(f"{what} {value!r}: expected 1 to 64 of A-Z a-z 0-9 . _ - (not starting with . _ -)")
    return value


@dataclass(frozen=True)
class RuntimeCreateConfig:
    """What to run: `launch_command` is an argument vector (never a shell string), run in
    `workspace_path` with `environment` added to the runtime's own."""

    session_id: str
    workspace_path: str
    launch_command: Sequence[str]
    environment: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_id(self.session_id)
        if isinstance(self.launch_command, str) or not self.launch_command:
            raise TypeError("launch_command: an argument vector (a list of strings), never a shell string")
        for key in self.environment:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                raise ValueError(f"environment: {key!r} is not a variable name")


@dataclass(frozen=True)
class RuntimeHandle:
    id: str
    runtime_name: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RuntimeMetrics:
    """Uptime, memory in use and CPU seconds of everything the session runs (None: unknown
    here); `files`: where each figure was read."""

    uptime: float
    memory_bytes: int | None = None
    cpu_seconds: float | None = None
    tasks: int | None = None
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AttachInfo:
    """How a person attaches: `type` (ssh, tmux, process), the argument vector to run (empty
    when there is nothing to run, as for a plain process), and the target it names."""

    type: str
    command: list[str]
    target: str


class Runtime(Protocol):
    name: str

    async def create(self, config: RuntimeCreateConfig) -> RuntimeHandle: ...

    async def destroy(self, handle: RuntimeHandle) -> None: ...

    async def send_message(self, handle: RuntimeHandle, message: str) -> None: ...

    async def get_output(self, handle: RuntimeHandle, lines: int = 50) -> str: ...

    async def is_alive(self, handle: RuntimeHandle) -> bool: ...

    async def get_metrics(self, handle: RuntimeHandle) -> RuntimeMetrics: ...

    async def get_attach_info(self, handle: RuntimeHandle) -> AttachInfo: ...
