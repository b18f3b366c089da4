"""`komputer`: each agent session in a persistent terminal of a K computer (kshell.sdk).

The terminal runs the K prompt, as a person's `ssh -tt` login does, and the launch command is
typed into it: it runs as the agent's command line in its session (delegated programs on a pty
of their own, in the session's cgroup leaf, under its mode and rules), kept by the computer
when no one is attached; a person attaches with `ssh -tt -o SetEnv=K_SESSION=ID` and finds the
prompt again once the program has ended."""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING, Any

from kshell.runtimes.base import (
    TIMEOUT,
    AttachInfo,
    RuntimeCreateConfig,
    RuntimeError_,
    RuntimeHandle,
    RuntimeMetrics,
    check_id,
)
from kshell.syntax.printer import quote_q

if TYPE_CHECKING:
    from kshell.sdk.computer import Komputer
    from kshell.server.terminals import PersistentTerminal


class KomputerRuntime:
    name = "komputer"

    def __init__(self, computer: Komputer, agent: str, *, size: tuple[int, int] = (80, 24),
                 ssh_options: list[str] | None = None) -> None:
        self.computer = computer
        self.agent = check_id(agent, "agent")
        self.size = size
        self.ssh_options = list(ssh_options or [])  # e.g. ["-i", KEY]: how the person's ssh logs in

    def _terminal(self, handle: RuntimeHandle) -> PersistentTerminal | None:
        return self.computer.server.terminals.get(self.agent, check_id(handle.id))

    async def create(self, config: RuntimeCreateConfig) -> RuntimeHandle:
        """A terminal at the K prompt in the session, and the launch command typed into it
        once the prompt shows (`cd -- WORKSPACE && ARGV`, each argument quoted, on one line): its
        first line."""
        agent = self.computer.agent(self.agent)
        argv = " ".join(map(typed, config.launch_command))
        line = f"cd -- {typed(config.workspace_path)} && {argv}" if config.workspace_path else argv
        terminal = await self.computer.server.terminals.create(
            agent, config.session_id, None, env=dict(config.environment), size=self.size, front="runtime")
        prompted = asyncio.ensure_future(terminal.prompted.wait())
        ended = asyncio.ensure_future(terminal.ended.wait())
        await asyncio.wait({prompted, ended}, timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        prompted.cancel()
        ended.cancel()
        if not terminal.prompted.is_set():
            await self.computer.server.terminals.destroy(self.agent, terminal.record.name)
            raise RuntimeError_(f"session {self.agent}/{config.session_id}: the K prompt did not show")
        await terminal.type(line.encode() + b"\r")
        return RuntimeHandle(config.session_id, self.name, {"agent": self.agent, "session": terminal.record.name})

    async def destroy(self, handle: RuntimeHandle) -> None:
        await self.computer.server.terminals.destroy(self.agent, check_id(handle.id))

    async def send_message(self, handle: RuntimeHandle, message: str) -> None:
        terminal = self._terminal(handle)
        if terminal is None or not _running(terminal):
            raise RuntimeError_(f"session {self.agent}/{handle.id}: its program has ended")
        await terminal.type(message.encode() + b"\r")

    async def get_output(self, handle: RuntimeHandle, lines: int = 50) -> str:
        terminal = self._terminal(handle)
        return "" if terminal is None else "\n".join(terminal.screen.lines(lines))

    async def is_alive(self, handle: RuntimeHandle) -> bool:
        """Whether the launch command still runs: False once it has ended, even while the
        terminal's prompt (where a person may attach and look around) goes on."""
        terminal = self._terminal(handle)
        return terminal is not None and _running(terminal)

    async def get_metrics(self, handle: RuntimeHandle) -> RuntimeMetrics:
        terminal = self._terminal(handle)
        if terminal is None:
            raise RuntimeError_(f"session {self.agent}/{handle.id}: no such terminal")
        m: dict[str, Any] = terminal.metrics()
        return RuntimeMetrics(m["uptime"], m.get("memory_bytes"), m.get("cpu_seconds"), m.get("tasks"),
                              {k[:-5]: v for k, v in m.items() if k.endswith("_file")})

    async def get_attach_info(self, handle: RuntimeHandle) -> AttachInfo:
        check_id(handle.id)
        addresses = self.computer.server.addresses
        if not addresses:
            raise RuntimeError_("the computer does not listen for SSH: await computer.serve() first")
        host, port = addresses[0]
        command = ["ssh", "-tt", "-p", str(port), *self.ssh_options, "-o", f"SetEnv=K_SESSION={handle.id}",
                   f"{self.agent}@{host}"]
        return AttachInfo("ssh", command, f"{self.agent}/{handle.id}")


def _running(terminal: PersistentTerminal) -> bool:
    """The terminal's first line (the launch command `create` typed) has not ended."""
    return terminal.alive and terminal.lines_ended == 0


def typed(arg: str) -> str:
    """One argument as typed at the prompt, on one line (a newline typed would end it): `$'...'`
    when it holds a control character (a script's newlines), else as shlex quotes it."""
    return quote_q(arg) if any(ord(c) < 32 or ord(c) == 127 for c in arg) else shlex.quote(arg)
