"""The K SDK: boot a computer on its state, log agents in, run their commands, read and write
their files, follow their events, fork them, decide their approvals, recover their sessions, and
keep many computers warm in a pool; or drive a remote appliance over SSH with the same calls.

    from kshell.sdk import Komputer

    async with Komputer.boot(state="/var/lib/k") as computer:
        agent = await computer.login("alice")
        print((await agent.exec("uname -a")).text)

See docs/sdk.md. `kshell.sdk.blocking` has the same calls for scripts and notebooks.
"""

from kshell.runs import RunContext, create_run_context, resolve_sandbox_path, update_run_state
from kshell.sdk.computer import Booting, Komputer
from kshell.sdk.options import host_drive, local_remote, memory_drive, memory_state, ssh_remote
from kshell.sdk.pool import KomputerPool
from kshell.sdk.session import AgentSession, CommandTimeout
from kshell.sdk.types import AgentNotFound, ExecResult, FileStat, KomputerClosed, LeaseHeld, SDKError, WalkEntry

__all__ = [
    "AgentNotFound", "AgentSession", "Booting", "CommandTimeout", "ExecResult", "FileStat", "Komputer",
    "KomputerClosed", "KomputerPool", "LeaseHeld", "RunContext", "SDKError", "WalkEntry", "create_run_context",
    "host_drive", "local_remote", "memory_drive", "memory_state", "resolve_sandbox_path", "ssh_remote",
    "update_run_state",
]
