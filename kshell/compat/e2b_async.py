"""E2B's async client (`AsyncSandbox`, `e2b` 2.x) over K: the twin of kshell.compat.e2b's
`Sandbox` (kshell.compat.aio), so a script written for E2B's async SDK runs unchanged once its
import names `kshell.compat.e2b`:

    from kshell.compat.e2b import AsyncSandbox

    sandbox = await AsyncSandbox.create()
    print((await sandbox.commands.run("echo hello")).stdout)
    await sandbox.kill()

Where E2B's async calls differ from its sync ones, so do these: `commands.run` and
`commands.connect` take callbacks that may be `async def` (run in order on the caller's loop),
`AsyncCommandHandle.wait()` takes none, `files.watch_dir` hands each event to `on_event` as it
comes, `commands.stream_input` opens an input handle. tests/compat/test_signatures.py holds
every name, parameter and default to the installed `e2b`'s async classes.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from kshell.compat import core
from kshell.compat.aio import Relay, Twin, awaited, lift, off, passed, shown, twin_of
from kshell.compat.e2b import (
    CommandHandle,
    CommandResult,
    Commands,
    Filesystem,
    Pty,
    PtySize,
    Sandbox,
    SandboxPaginator,
    WatchHandle,
    _errors,
    _Variant,
)
from kshell.compat.e2b_git import Git

__all__ = ["AsyncCommandHandle", "AsyncCommandInputHandle", "AsyncCommands", "AsyncFilesystem", "AsyncGit", "AsyncPty",
           "AsyncSandbox", "AsyncSandboxPaginator", "AsyncWatchHandle"]

Handler = Callable[[Any], Any]  # upstream's OutputHandler: a plain function or an `async def`


def _relays(on_stdout: Handler | None, on_stderr: Handler | None) -> dict[str, Relay]:
    return {stream: Relay(handler, stream) for stream, handler in (("stdout", on_stdout), ("stderr", on_stderr))
            if handler is not None}


@twin_of(CommandHandle)
class AsyncCommandHandle(Twin):
    """A running command (E2B's AsyncCommandHandle); its pid is its K process row."""

    _sync: CommandHandle

    def __init__(self, sync: CommandHandle, relays: dict[str, Relay] | None = None) -> None:
        super().__init__(sync)
        self._relays = relays or {}
        for relay in self._relays.values():
            relay.bind(sync._process)  # noqa: SLF001

    pid = shown("pid")
    stdout = shown("stdout")
    stderr = shown("stderr")
    exit_code = shown("exit_code")
    error = shown("error")

    async def wait(self) -> CommandResult[str]:
        """The result once the command ended (the same every time) and its callbacks have all
        run; CommandExitException when its status is not 0; what a callback raised, if one did."""
        failure: Exception | None = None
        result = None
        try:
            result = await off(self._sync.wait)
        except Exception as e:  # noqa: BLE001 - raised below, once the callbacks have run
            failure = e
        for relay in self._relays.values():
            await relay.drained()
        raised = next((r.error for r in self._relays.values() if r.error is not None), None)
        if raised is not None:
            raise raised
        if failure is not None:
            raise failure
        return result

    kill = awaited(CommandHandle, "kill")
    send_stdin = awaited(CommandHandle, "send_stdin")
    close_stdin = awaited(CommandHandle, "close_stdin")
    disconnect = awaited(CommandHandle, "disconnect")


async def _attach(sync: CommandHandle, relays: dict[str, Relay]) -> AsyncCommandHandle:
    """An async handle to a running command or pty whose callbacks get its output so far,
    then the rest as it comes (text; a pty's bytes as they are)."""
    if relays:
        def listen(stream: str, chunk: bytes) -> None:
            if stream in relays:
                relays[stream].push(chunk if stream == "pty" else chunk.decode("utf-8", "replace"))

        await asyncio.wrap_future(core.submit(sync._process.follow(listen, lambda: None)))  # noqa: SLF001
    return AsyncCommandHandle(sync, relays)  # bound after the output so far was pushed: their end comes after it


class AsyncCommandInputHandle:
    """What `commands.stream_input(pid)` (or `pty.stream_input`) opens: `send` pieces of input
    in order; `close` ends the stream (a command's stdin is closed; a pty's input goes on, as
    upstream's, until it is killed)."""

    def __init__(self, owner: Commands | Pty, pid: int) -> None:
        self._owner = owner
        self._pid = pid

    async def send(self, data: str | bytes) -> None:
        if isinstance(self._owner, Pty) and isinstance(data, str):
            data = data.encode()
        await off(self._owner.send_stdin, self._pid, data)

    async def close(self) -> None:
        if isinstance(self._owner, Commands):
            await off(self._owner.close_stdin, self._pid)


@twin_of(Commands)
class AsyncCommands(Twin):
    _sync: Commands

    list = awaited(Commands, "list")
    kill = awaited(Commands, "kill")
    send_stdin = awaited(Commands, "send_stdin")
    close_stdin = awaited(Commands, "close_stdin")

    async def run(self, cmd: str, background: bool | None = None, envs: dict[str, str] | None = None,
                  user: str | None = None, cwd: str | None = None, on_stdout: Handler | None = None,
                  on_stderr: Handler | None = None, stdin: bool | None = None, timeout: float | None = 60,
                  request_timeout: float | None = None, *,
                  retain_output: bool = True) -> CommandResult[str] | AsyncCommandHandle:
        """As the sync `run`; the callbacks (plain or `async def`) run on this loop, in order."""
        relays = _relays(on_stdout, on_stderr)
        pushes = {stream: relays[stream].push if stream in relays else None for stream in ("stdout", "stderr")}
        sync = await off(self._sync._start, cmd, background, envs, user, cwd, pushes["stdout"],  # noqa: SLF001
                         pushes["stderr"], stdin, timeout)
        handle = AsyncCommandHandle(sync._sync, relays)
        return handle if background else await handle.wait()

    async def connect(self, pid: int, timeout: float | None = 60, request_timeout: float | None = None,
                      on_stdout: Handler | None = None, on_stderr: Handler | None = None, *,
                      retain_output: bool = True) -> AsyncCommandHandle:
        """Another handle to running process `pid`: the callbacks get its output so far, then
        the rest as it comes."""
        sync = (await off(self._sync.connect, pid, timeout, request_timeout))._sync
        return await _attach(sync, _relays(on_stdout, on_stderr))

    def stream_input(self, pid: int, *, timeout: float | None = 60.0) -> AsyncCommandInputHandle:
        return AsyncCommandInputHandle(self._sync, pid)


@twin_of(Pty)
class AsyncPty(Twin):
    """The sandbox's ptys (see kshell.compat.e2b.Pty); `on_data` (plain or `async def`) gets
    the terminal's bytes in order on this loop."""

    _sync: Pty

    send_stdin = awaited(Pty, "send_stdin")
    resize = awaited(Pty, "resize")
    kill = awaited(Pty, "kill")

    async def create(self, size: PtySize, on_data: Handler, user: str | None = None, cwd: str | None = None,
                     envs: dict[str, str] | None = None, timeout: float | None = 60,
                     request_timeout: float | None = None) -> AsyncCommandHandle:
        sync = (await off(self._sync.create, size, user, cwd, envs, timeout, request_timeout))._sync
        return await _attach(sync, {"pty": Relay(on_data, "pty")})

    async def connect(self, pid: int, on_data: Handler, timeout: float | None = 60,
                      request_timeout: float | None = None) -> AsyncCommandHandle:
        sync = (await off(self._sync.connect, pid, timeout, request_timeout))._sync
        return await _attach(sync, {"pty": Relay(on_data, "pty")})

    def stream_input(self, pid: int, *, timeout: float | None = 60.0) -> AsyncCommandInputHandle:
        return AsyncCommandInputHandle(self._sync, pid)


@twin_of(WatchHandle)
class AsyncWatchHandle(Twin):
    """A directory followed on K's change feed: each event goes to `on_event` as it comes;
    `on_exit` is called once the watch stopped (by `stop` or past its `timeout`)."""

    _sync: WatchHandle

    def __init__(self, sync: WatchHandle, relay: Relay | None = None,
                 on_exit: Handler | None = None) -> None:
        super().__init__(sync)
        self._relay = relay
        self._on_exit = on_exit
        self._stopped = False

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        await off(self._sync.stop)
        if self._relay is not None:
            self._relay.end()
            await self._relay.drained()
        if self._on_exit is not None:
            result = self._on_exit(self._relay.error if self._relay is not None else None)
            if asyncio.iscoroutine(result):
                await result


@twin_of(Filesystem)
class AsyncFilesystem(Twin):
    _sync: Filesystem

    read = awaited(Filesystem, "read")
    write = awaited(Filesystem, "write")
    write_files = awaited(Filesystem, "write_files")
    list = awaited(Filesystem, "list")
    exists = awaited(Filesystem, "exists")
    get_info = awaited(Filesystem, "get_info")
    remove = awaited(Filesystem, "remove")
    rename = awaited(Filesystem, "rename")
    make_dir = awaited(Filesystem, "make_dir")

    async def watch_dir(self, path: str, on_event: Handler, on_exit: Handler | None = None, user: str | None = None,
                        request_timeout: float | None = None, timeout: float | None = 60, recursive: bool = False,
                        include_entry: bool = False, allow_network_mounts: bool = False) -> AsyncWatchHandle:
        """Follow the directory's changes, whoever makes them; `on_event` gets each
        FilesystemEvent in order; the watch stops after `timeout` seconds (0 or None: never)."""
        sync: WatchHandle = (await off(self._sync.watch_dir, path, user, request_timeout, recursive,
                                       include_entry))._sync

        async def deliver(change: core.Change) -> None:
            result = on_event(await off(sync._event, change))  # noqa: SLF001
            if asyncio.iscoroutine(result):
                await result

        relay = Relay(deliver)
        watcher = sync._watcher  # noqa: SLF001
        await asyncio.wrap_future(core.submit(_listen(watcher, relay.push)))
        handle = AsyncWatchHandle(sync, relay, on_exit)
        if timeout:
            asyncio.get_running_loop().call_later(timeout, lambda: asyncio.ensure_future(handle.stop()))
        return handle


async def _listen(watcher: core.Watcher, listener: Callable[[core.Change], None]) -> None:
    """Hand the watcher's events to `listener` only (those it has already, then each as it
    comes; none kept for `take`)."""
    watcher.keep = False
    for change in watcher.events:
        listener(change)
    watcher.events.clear()
    watcher.listeners.append(listener)


@twin_of(Git)
class AsyncGit(Twin):
    _sync: Git


for _name in ["clone", "init", "remote_add", "remote_get", "status", "branches", "create_branch", "checkout_branch",
              "delete_branch", "add", "commit", "reset", "restore", "push", "pull", "set_config", "get_config",
              "configure_user", "dangerously_authenticate"]:
    setattr(AsyncGit, _name, awaited(Git, _name))


@twin_of(SandboxPaginator)
class AsyncSandboxPaginator(Twin):
    _sync: SandboxPaginator

    has_next = shown("has_next")
    next_items = awaited(SandboxPaginator, "next_items")


@twin_of(Sandbox)
class AsyncSandbox(Twin):
    """A K sandbox with E2B's async calls (see kshell.compat.e2b.Sandbox for what each does)."""

    _sync: Sandbox
    default_template = Sandbox.default_template
    default_sandbox_timeout = Sandbox.default_sandbox_timeout

    sandbox_id = shown("sandbox_id")
    commands = shown("commands")
    files = shown("files")
    pty = shown("pty")
    git = shown("git")

    create = awaited(Sandbox, "create")
    _cls_connect_sandbox = awaited(Sandbox, "_cls_connect_sandbox")
    connect = _Variant("_cls_connect_sandbox")(awaited(Sandbox, "connect"))
    _cls_kill = awaited(Sandbox, "_cls_kill")
    kill = _Variant("_cls_kill")(awaited(Sandbox, "kill"))
    is_running = awaited(Sandbox, "is_running")
    _cls_get_info = awaited(Sandbox, "_cls_get_info")
    get_info = _Variant("_cls_get_info")(awaited(Sandbox, "get_info"))
    _cls_set_timeout = awaited(Sandbox, "_cls_set_timeout")
    set_timeout = _Variant("_cls_set_timeout")(awaited(Sandbox, "set_timeout"))
    _cls_fork_sandbox = awaited(Sandbox, "_cls_fork_sandbox")
    fork = _Variant("_cls_fork_sandbox")(awaited(Sandbox, "fork"))
    pause = awaited(Sandbox, "pause")
    beta_pause = awaited(Sandbox, "beta_pause")
    get_metrics = awaited(Sandbox, "get_metrics")
    create_snapshot = awaited(Sandbox, "create_snapshot")
    update_network = awaited(Sandbox, "update_network")
    get_mcp_token = awaited(Sandbox, "get_mcp_token")
    get_host = passed(Sandbox, "get_host")
    upload_url = passed(Sandbox, "upload_url")
    download_url = passed(Sandbox, "download_url")
    get_mcp_url = passed(Sandbox, "get_mcp_url")

    @staticmethod
    @functools.wraps(Sandbox.list)
    def list(*args: Any, **kwargs: Any) -> AsyncSandboxPaginator:
        return lift(_errors(Sandbox.list)(*args, **kwargs))

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.kill()
