"""`process`: each session a child process of this program on a pty of its own (so a REPL or an
agent's CLI behaves as in a terminal), its screen kept by the same VT emulator a persistent K
terminal uses (kshell.screen). It lives as long as this program does."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import struct
import subprocess
import termios
import time
from dataclasses import dataclass, field

from kshell.runtimes.base import (
    TIMEOUT,
    AttachInfo,
    RuntimeCreateConfig,
    RuntimeError_,
    RuntimeHandle,
    RuntimeMetrics,
    check_id,
)
from kshell.screen import VTScreen


@dataclass(eq=False)
class _Child:
    proc: subprocess.Popen[bytes]
    master: int
    screen: VTScreen
    started: float = field(default_factory=time.time)


class ProcessRuntime:
    name = "process"

    def __init__(self, *, size: tuple[int, int] = (80, 24)) -> None:
        self.size = size
        self._children: dict[str, _Child] = {}

    def _child(self, handle: RuntimeHandle) -> _Child:
        child = self._children.get(check_id(handle.id))
        if child is None:
            raise RuntimeError_(f"{handle.id}: no such session")
        return child

    async def create(self, config: RuntimeCreateConfig) -> RuntimeHandle:
        if config.session_id in self._children:
            raise RuntimeError_(f"{config.session_id}: the session exists")
        master, slave = os.openpty()
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", self.size[1], self.size[0], 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", **config.environment}
        try:
            proc = subprocess.Popen(list(config.launch_command), stdin=slave, stdout=slave, stderr=slave,
                                    cwd=config.workspace_path or None, env=env, start_new_session=True,
                                    close_fds=True, preexec_fn=_controlling_tty)
        except OSError as e:
            os.close(master)
            raise RuntimeError_(f"{config.launch_command[0]}: {e.strerror}") from None
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        child = _Child(proc, master, VTScreen(*self.size))
        self._children[config.session_id] = child
        asyncio.get_running_loop().add_reader(master, self._readable, child)
        return RuntimeHandle(config.session_id, self.name, {"pid": proc.pid})

    def _readable(self, child: _Child) -> None:
        try:
            data = os.read(child.master, 65536)
        except BlockingIOError:
            return
        except OSError:  # EIO: every holder of the slave side closed it
            data = b""
        if data:
            child.screen.feed(data)
        else:
            asyncio.get_running_loop().remove_reader(child.master)

    async def destroy(self, handle: RuntimeHandle) -> None:
        child = self._children.pop(check_id(handle.id), None)
        if child is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.proc.pid, signal.SIGHUP)  # as a closing terminal does, then SIGKILL
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.to_thread(child.proc.wait), TIMEOUT)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.proc.pid, signal.SIGKILL)
        await asyncio.to_thread(child.proc.wait)
        asyncio.get_running_loop().remove_reader(child.master)
        os.close(child.master)

    async def send_message(self, handle: RuntimeHandle, message: str) -> None:
        child = self._child(handle)
        if child.proc.poll() is not None:
            raise RuntimeError_(f"{handle.id}: its program has ended")
        os.write(child.master, message.encode() + b"\r")

    async def get_output(self, handle: RuntimeHandle, lines: int = 50) -> str:
        return "\n".join(self._child(handle).screen.lines(lines))

    async def is_alive(self, handle: RuntimeHandle) -> bool:
        child = self._children.get(handle.id)
        return child is not None and child.proc.poll() is None

    async def get_metrics(self, handle: RuntimeHandle) -> RuntimeMetrics:
        child = self._child(handle)
        pid = child.proc.pid
        memory = cpu = None
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{pid}/statm") as f:
                memory = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
                cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return RuntimeMetrics(time.time() - child.started, memory, cpu, None,
                              {"memory_bytes": f"/proc/{pid}/statm", "cpu_seconds": f"/proc/{pid}/stat"})

    async def get_attach_info(self, handle: RuntimeHandle) -> AttachInfo:
        child = self._child(handle)
        return AttachInfo("process", [], str(child.proc.pid))


def _controlling_tty() -> None:
    """In the child, after setsid: its stdin (the pty) becomes its controlling terminal, so
    Ctrl-C typed reaches it as SIGINT."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
