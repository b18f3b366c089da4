"""Daytona's async client (`AsyncDaytona`, `daytona` 0.2xx) over K: the twin of
kshell.compat.daytona's `Daytona` (kshell.compat.aio), so a script written for Daytona's async
SDK runs unchanged once its import names `kshell.compat.daytona`:

    from kshell.compat.daytona import AsyncDaytona

    async with AsyncDaytona() as daytona:
        sandbox = await daytona.create()
        print((await sandbox.process.exec("echo hello")).result)
        await daytona.delete(sandbox)

Every call is the sync one's, awaited; `list` is an async iterator and the log callbacks of
`get_session_command_logs_async` may be `async def` (run in order on the caller's loop), as
upstream. tests/compat/test_signatures.py holds every name, parameter and default to the
installed `daytona`'s async classes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from kshell.compat import core
from kshell.compat.aio import Relay, Twin, awaited, off, passed, shown, twin_of
from kshell.compat.daytona import (
    Daytona,
    DaytonaConfig,
    FileSystem,
    Git,
    Process,
    PtyHandle,
    PtyResult,
    PtySize,
    Sandbox,
)

__all__ = ["AsyncDaytona", "AsyncFileSystem", "AsyncGit", "AsyncProcess", "AsyncPtyHandle", "AsyncSandbox"]

Handler = Callable[[str], Any]  # upstream's OutputHandler: a plain function or an `async def`


@twin_of(Process)
class AsyncProcess(Twin):
    _sync: Process

    exec = awaited(Process, "exec")
    code_run = awaited(Process, "code_run")
    create_session = awaited(Process, "create_session")
    get_session = awaited(Process, "get_session")
    list_sessions = awaited(Process, "list_sessions")
    delete_session = awaited(Process, "delete_session")
    execute_session_command = awaited(Process, "execute_session_command")
    get_session_command = awaited(Process, "get_session_command")
    get_session_command_logs = awaited(Process, "get_session_command_logs")
    send_session_command_input = awaited(Process, "send_session_command_input")
    get_entrypoint_logs = awaited(Process, "get_entrypoint_logs")

    async def get_session_command_logs_async(self, session_id: str, command_id: str, on_stdout: Handler,
                                             on_stderr: Handler) -> None:
        """The command's output so far, then the rest as it comes, to the callbacks (plain or
        `async def`, in order, on this loop) until it ends; one that raises ends the command
        and its error is raised here."""
        process = self._sync._process(session_id, command_id)  # noqa: SLF001
        relays = [Relay(on_stdout, "stdout"), Relay(on_stderr, "stderr")]
        for relay in relays:
            relay.bind(process, until_done=False)
        try:
            await off(self._sync.get_session_command_logs_async, session_id, command_id, relays[0].push,
                      relays[1].push)
        finally:
            for relay in relays:
                relay.end()
                await relay.drained()
        raised = next((r.error for r in relays if r.error is not None), None)
        if raised is not None:
            raise raised

    list_pty_sessions = awaited(Process, "list_pty_sessions")
    get_pty_session_info = awaited(Process, "get_pty_session_info")
    kill_pty_session = awaited(Process, "kill_pty_session")
    resize_pty_session = awaited(Process, "resize_pty_session")

    async def create_pty_session(self, id: str, on_data: Callable[[bytes], Any], cwd: str | None = None,
                                 envs: dict[str, str] | None = None,
                                 pty_size: PtySize | None = None) -> AsyncPtyHandle:
        """As the sync call; `on_data` (plain or `async def`) gets the terminal's bytes in order
        on this loop, from the first."""
        return await _attach((await off(self._sync.create_pty_session, id, cwd, envs, pty_size))._sync, on_data)

    async def connect_pty_session(self, session_id: str, on_data: Callable[[bytes], Any]) -> AsyncPtyHandle:
        return await _attach((await off(self._sync.connect_pty_session, session_id))._sync, on_data)


@twin_of(PtyHandle)
class AsyncPtyHandle(Twin):
    """A pty session (see kshell.compat.daytona.PtyHandle); its bytes go to the `on_data` it
    was made with."""

    _sync: PtyHandle

    def __init__(self, sync: PtyHandle, relay: Relay | None = None) -> None:
        super().__init__(sync)
        self._relay = relay

    session_id = shown("session_id")
    exit_code = shown("exit_code")
    error = shown("error")
    is_connected = passed(PtyHandle, "is_connected")
    send_input = awaited(PtyHandle, "send_input")
    resize = awaited(PtyHandle, "resize")
    kill = awaited(PtyHandle, "kill")
    disconnect = awaited(PtyHandle, "disconnect")

    async def wait_for_connection(self) -> None:
        """Connected already: the terminal was attached when it was made."""

    async def wait(self) -> PtyResult:
        """Until the pty ends and `on_data` has had all it printed."""
        result = await off(self._sync.wait)
        if self._relay is not None:
            await self._relay.drained()
            if self._relay.error is not None:
                raise self._relay.error
        return result


async def _attach(sync: PtyHandle, on_data: Callable[[bytes], Any]) -> AsyncPtyHandle:
    relay = Relay(on_data, "pty")
    terminal = sync._terminal  # noqa: SLF001
    await asyncio.wrap_future(core.submit(terminal.follow(lambda _, chunk: relay.push(chunk), lambda: None)))
    relay.bind(terminal)  # after the output so far was pushed: the relay's end comes after it
    return AsyncPtyHandle(sync, relay)


@twin_of(FileSystem)
class AsyncFileSystem(Twin):
    _sync: FileSystem

    create_folder = awaited(FileSystem, "create_folder")
    delete_file = awaited(FileSystem, "delete_file")
    download_file = awaited(FileSystem, "download_file")
    download_files = awaited(FileSystem, "download_files")
    upload_file = awaited(FileSystem, "upload_file")
    upload_files = awaited(FileSystem, "upload_files")
    list_files = awaited(FileSystem, "list_files")
    get_file_info = awaited(FileSystem, "get_file_info")
    move_files = awaited(FileSystem, "move_files")
    find_files = awaited(FileSystem, "find_files")
    search_files = awaited(FileSystem, "search_files")
    replace_in_files = awaited(FileSystem, "replace_in_files")
    set_file_permissions = awaited(FileSystem, "set_file_permissions")
    upload_file_stream = awaited(FileSystem, "upload_file_stream")
    download_file_stream = awaited(FileSystem, "download_file_stream")


@twin_of(Git)
class AsyncGit(Twin):
    _sync: Git


for _name in ["clone", "init", "add", "commit", "status", "branches", "create_branch", "checkout_branch",
              "delete_branch", "pull", "push", "configure_user", "set_config", "get_config", "remote_add", "remote_get",
              "reset", "restore", "remotes", "dangerously_authenticate"]:
    setattr(AsyncGit, _name, awaited(Git, _name))


@twin_of(Sandbox)
class AsyncSandbox(Twin):
    """A K sandbox with Daytona's async calls (see kshell.compat.daytona.Sandbox)."""

    _sync: Sandbox

    id = shown("id")
    name = shown("name")
    user = shown("user")
    env = shown("env")
    labels = shown("labels")
    state = shown("state")
    process = shown("process")
    fs = shown("fs")
    git = shown("git")

    delete = awaited(Sandbox, "delete")
    start = awaited(Sandbox, "start")
    stop = awaited(Sandbox, "stop")
    fork = awaited(Sandbox, "fork")
    get_user_home_dir = awaited(Sandbox, "get_user_home_dir")
    get_work_dir = awaited(Sandbox, "get_work_dir")
    get_user_root_dir = awaited(Sandbox, "get_user_root_dir")
    set_labels = awaited(Sandbox, "set_labels")
    refresh_data = awaited(Sandbox, "refresh_data")
    create_ssh_access = awaited(Sandbox, "create_ssh_access")
    get_preview_link = awaited(Sandbox, "get_preview_link")
    update_network_settings = awaited(Sandbox, "update_network_settings")
    upload_url = awaited(Sandbox, "upload_url")
    download_url = awaited(Sandbox, "download_url")
    archive = awaited(Sandbox, "archive")
    pause = awaited(Sandbox, "pause")
    create_lsp_server = passed(Sandbox, "create_lsp_server")


@twin_of(Daytona)
class AsyncDaytona(Twin):
    """The async client: `create`, `get`, `list` (an async iterator), `start`, `stop`, `delete`."""

    _sync: Daytona

    def __init__(self, config: DaytonaConfig | None = None) -> None:
        super().__init__(config if isinstance(config, Daytona) else Daytona(config))

    create = awaited(Daytona, "create")
    get = awaited(Daytona, "get")
    start = awaited(Daytona, "start")
    stop = awaited(Daytona, "stop")
    delete = awaited(Daytona, "delete")

    async def list(self, query: Any = None, request_timeout: float | None = None) -> AsyncIterator[AsyncSandbox]:
        """This process's sandboxes (and the durable ones under K_SANDBOX_ROOT), as the sync `list`."""
        for sandbox in await off(lambda: [*self._sync.list(query, request_timeout)]):
            yield sandbox

    async def close(self) -> None:
        """Nothing to close: K holds no HTTP session (sandboxes end with `delete`)."""

    async def __aenter__(self) -> AsyncDaytona:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None = None, exc_value: BaseException | None = None,
                        traceback: Any = None) -> None:
        await self.close()
