"""`komputer`: each agent session in a persistent terminal of a K computer (kshell.sdk).

The launch command runs as the agent's command line in its session (delegated programs on a
pty of their own, in the session's cgroup leaf, under its mode and rules), kept by the
computer when no one is attached; a person attaches with `ssh -tt -o SetEnv=K_SESSION=ID`."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from kshell.runtimes.base import AttachInfo, RuntimeCreateConfig, RuntimeError_, RuntimeHandle, RuntimeMetrics, check_id

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
        agent = self.computer.agent(self.agent)
        argv = shlex.join(config.launch_command)
        command = f"cd -- {shlex.quote(config.workspace_path)} && {argv}" if config.workspace_path else argv
        terminal = await self.computer.server.terminals.create(
            agent, config.session_id, command, env=dict(config.environment), size=self.size, front="runtime")
        return RuntimeHandle(config.session_id, self.name, {"agent": self.agent, "session": terminal.record.name})

    async def destroy(self, handle: RuntimeHandle) -> None:
        await self.computer.server.terminals.destroy(self.agent, check_id(handle.id))

    async def send_message(self, handle: RuntimeHandle, message: str) -> None:
        terminal = self._terminal(handle)
        if terminal is None or not terminal.alive:
            raise RuntimeError_(f"session {self.agent}/{handle.id}: its program has ended")
        await terminal.type(message.encode() + b"\r")

    async def get_output(self, handle: RuntimeHandle, lines: int = 50) -> str:
        terminal = self._terminal(handle)
        return "" if terminal is None else "\n".join(terminal.screen.lines(lines))

    async def is_alive(self, handle: RuntimeHandle) -> bool:
        terminal = self._terminal(handle)
        return terminal is not None and terminal.alive

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
