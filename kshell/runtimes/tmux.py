"""`tmux`: each session a detached tmux session on the host, on a tmux server of the runtime's own
socket (`tmux -L NAME`), so it never touches a person's own tmux sessions."""

from __future__ import annotations

import asyncio
import os
import shutil
import time

from kshell.runtimes.base import (
    TIMEOUT,
    AttachInfo,
    RuntimeCreateConfig,
    RuntimeError_,
    RuntimeHandle,
    RuntimeMetrics,
    check_id,
)


class TmuxRuntime:
    name = "tmux"

    def __init__(self, socket: str = "komputer-runtime", *, size: tuple[int, int] = (80, 24)) -> None:
        self.socket = check_id(socket, "socket")
        self.size = size
        self._started: dict[str, float] = {}

    async def _tmux(self, *args: str, check: bool = True) -> str:
        tmux = shutil.which("tmux")
        if tmux is None:
            raise RuntimeError_("tmux: command not found (install tmux: apt-get install -y tmux)")
        proc = await asyncio.create_subprocess_exec(tmux, "-L", self.socket, *args, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(proc.communicate(), TIMEOUT)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise RuntimeError_(f"tmux {args[0]}: no answer within {TIMEOUT:g} s") from None
        if check and proc.returncode:
            raise RuntimeError_(f"tmux {args[0]}: {err.decode(errors='replace').strip()}")
        return out.decode(errors="replace")

    async def create(self, config: RuntimeCreateConfig) -> RuntimeHandle:
        env = [a for k, v in config.environment.items() for a in ("-e", f"{k}={v}")]
        args = ["new-session", "-d", "-s", config.session_id, "-x", str(self.size[0]), "-y", str(self.size[1]),
                "-c", os.path.abspath(config.workspace_path or "."), *env, "--", *config.launch_command,
                ";", "set-option", "-t", f"={config.session_id}:", "remain-on-exit", "on"]  # is_alive reads pane_dead
        for tries in range(3):
            try:
                await self._tmux(*args)
                break
            except RuntimeError_ as e:  # the last session's end stops tmux's server: a new one may meet it exiting
                if "server exited unexpectedly" not in str(e) or tries == 2:
                    raise
        self._started[config.session_id] = time.time()
        return RuntimeHandle(config.session_id, self.name, {"socket": self.socket})

    async def destroy(self, handle: RuntimeHandle) -> None:
        await self._tmux("kill-session", "-t", f"={check_id(handle.id)}", check=False)
        self._started.pop(handle.id, None)

    async def send_message(self, handle: RuntimeHandle, message: str) -> None:
        target = f"={check_id(handle.id)}:"
        await self._tmux("send-keys", "-t", target, "-l", "--", message)
        await self._tmux("send-keys", "-t", target, "Enter")

    async def get_output(self, handle: RuntimeHandle, lines: int = 50) -> str:
        out = await self._tmux("capture-pane", "-p", "-t", f"={check_id(handle.id)}:", "-S", f"-{max(lines, 0)}",
                               check=False)
        rows = out.rstrip("\n").split("\n")
        while rows and not rows[-1].strip():
            rows.pop()
        return "\n".join(row.rstrip() for row in rows[-lines:]) if lines > 0 else ""

    async def _pane(self, handle: RuntimeHandle, fmt: str) -> str | None:
        out = await self._tmux("display-message", "-p", "-t", f"={check_id(handle.id)}:", fmt, check=False)
        return out.strip() or None

    async def is_alive(self, handle: RuntimeHandle) -> bool:
        return await self._pane(handle, "#{pane_dead}") == "0"

    async def get_metrics(self, handle: RuntimeHandle) -> RuntimeMetrics:
        pid = await self._pane(handle, "#{pane_pid}")
        memory = None
        if pid is not None:
            try:
                with open(f"/proc/{int(pid)}/statm") as f:
                    memory = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError):
                pass
        return RuntimeMetrics(time.time() - self._started.get(handle.id, time.time()), memory,
                              files={"memory_bytes": f"/proc/{pid}/statm"} if pid else {})

    async def get_attach_info(self, handle: RuntimeHandle) -> AttachInfo:
        tmux = shutil.which("tmux") or "tmux"
        command = [tmux, "-L", self.socket, "attach-session", "-t", f"={check_id(handle.id)}"]
        return AttachInfo("tmux", command, handle.id)
