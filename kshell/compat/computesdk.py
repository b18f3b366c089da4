"""ComputeSDK's provider-neutral calls (its Python package `computesdk`, async) over K: code
written for it runs unchanged once its import names this module:

    from kshell.compat.computesdk import compute, RunCommandOptions

    sandbox = await compute.sandbox.create()
    result = await sandbox.run_command("ls -la", RunCommandOptions(cwd="/home/user"))
    await sandbox.filesystem.write_file("/home/user/a.txt", "hi")
    await sandbox.destroy()

Names, parameters, defaults and result fields are ComputeSDK's (tests/compat/test_signatures.py
holds them to the installed `computesdk`). A sandbox is a K computer plus the agent `user`'s
session (kshell.compat.core); the calls run on the adapters' loop and are awaited from the
caller's. What K cannot do raises `Unsupported` at the call site, naming why.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kshell.compat import core
from kshell.compat.core import Unsupported

__all__ = ["CodeResult", "CommandResult", "Compute", "ComputeSDKError", "CreateSandboxOptions", "FileEntry",
           "FileSystem", "FileType", "NotFoundError", "RunCommandOptions", "Sandbox", "SandboxInfo", "SandboxStatus",
           "Unsupported", "compute"]


class ComputeSDKError(Exception):
    """Base of the errors (ComputeSDK's name)."""


class NotFoundError(ComputeSDKError):
    """A sandbox or a file that is not there."""


class SandboxStatus(StrEnum):
    RUNNING = "running"
    STOPPED = "stopped"
    ERROR = "error"


class FileType(StrEnum):
    FILE = "file"
    DIRECTORY = "directory"


@dataclass
class CommandResult:
    stdout: str
    stderr: str
    exit_code: int
    duration_ms: int


@dataclass
class CodeResult:
    output: str
    exit_code: int
    language: str


@dataclass
class FileEntry:
    name: str
    type: FileType
    size: int | None = None
    modified: str | None = None


@dataclass
class SandboxInfo:
    id: str
    provider: str
    status: SandboxStatus
    created_at: str | None = None
    timeout: int | None = None
    metadata: dict[str, Any] | None = None
    name: str | None = None
    namespace: str | None = None


@dataclass
class RunCommandOptions:
    shell: str | None = None
    cwd: str | None = None
    env: dict[str, str] | None = None
    background: bool = False
    stream: bool = False
    timeout: int | None = None


@dataclass
class CreateSandboxOptions:
    timeout: int | None = None
    template_id: str | None = None
    metadata: dict[str, Any] | None = None
    envs: dict[str, str] | None = None
    name: str | None = None
    namespace: str | None = None


async def _on_core(coro: Any) -> Any:
    """Await `coro` on the adapters' loop from the caller's loop; file errors as ComputeSDK's."""
    try:
        return await asyncio.wrap_future(core.submit(coro))
    except FileNotFoundError as e:
        raise NotFoundError(str(e)) from e
    except LookupError as e:
        raise NotFoundError(str(e)) from e
    except core.SandboxGone as e:
        raise ComputeSDKError(str(e)) from e


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class FileSystem:
    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox

    @property
    def _fs(self) -> Any:
        return self._sandbox.session.fs

    async def read_file(self, path: str) -> str:
        return await _on_core(self._fs.read_text(path))

    async def write_file(self, path: str, content: str) -> None:
        await _on_core(self._fs.write_file(path, content))

    async def readdir(self, path: str) -> list[FileEntry]:
        import datetime

        entries = await _on_core(self._sandbox.entries(self._fs.path(path)))
        return [FileEntry(name=e.name, type=FileType.DIRECTORY if e.kind == "dir" else FileType.FILE, size=e.size,
                          modified=datetime.datetime.fromtimestamp(e.mtime / 1e9, datetime.UTC).isoformat())
                for e in entries]

    async def mkdir(self, path: str) -> None:
        """Make the directory and its parents (mkdir -p)."""
        await _on_core(self._fs.mkdir(path, parents=True))

    async def exists(self, path: str) -> bool:
        return await _on_core(self._fs.exists(path))

    async def remove(self, path: str) -> None:
        await _on_core(self._fs.rm(path, recursive=True))

    async def batch_write(self, files: list[dict[str, str]]) -> None:
        for entry in files:
            await self.write_file(entry["path"], entry["content"])


class Sandbox:
    """A K sandbox with ComputeSDK's calls; terminals, servers, watchers' ids, tokens, magic
    links and child sandboxes are refused with the reason."""

    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox
        self._filesystem = FileSystem(sandbox)

    @property
    def sandbox_id(self) -> str:
        return self._sandbox.id

    @property
    def provider(self) -> str:
        return "k"

    @property
    def filesystem(self) -> FileSystem:
        return self._filesystem

    @property
    def name(self) -> str | None:
        return self._sandbox.metadata.get("name")

    @property
    def namespace(self) -> str | None:
        return self._sandbox.labels.get("namespace")

    @property
    def metadata(self) -> dict[str, Any] | None:
        return dict(self._sandbox.metadata) or None

    async def run_command(self, command: str, options: RunCommandOptions | None = None) -> CommandResult:
        """Run a shell command line (K's shell; `shell` other than sh/bash is refused). With
        `background` it is started and the result is returned at once, empty, as upstream."""
        options = options or RunCommandOptions()
        if options.shell not in (None, "sh", "bash", "/bin/sh", "/bin/bash"):
            raise Unsupported(f"RunCommandOptions(shell={options.shell!r})", "commands run in K's shell (bash's "
                              "language); another shell is a program to name in the command")
        if options.stream:
            raise Unsupported("RunCommandOptions(stream=True)", "this adapter returns a command's output when it "
                              "ends; use kshell.compat.e2b's on_stdout for a stream")
        began = time.perf_counter()
        timeout = options.timeout / 1000 if options.timeout else None  # milliseconds upstream
        process = await _on_core(self._sandbox.start(command, background=options.background, envs=options.env,
                                                     cwd=options.cwd, timeout=timeout))
        if options.background:
            return CommandResult(stdout="", stderr="", exit_code=0, duration_ms=0)
        outcome = await _on_core(process.wait())
        if isinstance(outcome.exception, TimeoutError):
            raise ComputeSDKError(f"{outcome.error}: the command was interrupted")
        if outcome.exception is not None:
            raise outcome.exception
        return CommandResult(stdout=_text(outcome.stdout), stderr=_text(outcome.stderr), exit_code=outcome.status,
                             duration_ms=int((time.perf_counter() - began) * 1000))

    async def run_code(self, code: str, language: str = "python") -> CodeResult:
        """Run code with `python3` (or `node`): programs the computer delegates (K_SANDBOX_REMOTE)."""
        import shlex

        programs = {"python": "python3 -c", "node": "node -e"}
        if language not in programs:
            raise Unsupported(f"run_code(language={language!r})", "python and node only")
        result = await self.run_command(f"{programs[language]} {shlex.quote(code)} 2>&1")
        return CodeResult(output=result.stdout, exit_code=result.exit_code, language=language)

    async def get_info(self) -> SandboxInfo:
        import datetime

        s = self._sandbox
        status = SandboxStatus.STOPPED if s.killed else SandboxStatus.RUNNING
        return SandboxInfo(id=s.id, provider="k", status=status,
                           created_at=datetime.datetime.fromtimestamp(s.started, datetime.UTC).isoformat(),
                           timeout=int(s.timeout * 1000) if s.timeout else None, metadata=self.metadata,
                           name=self.name, namespace=self.namespace)

    async def get_url(self, port: int, protocol: str = "https") -> str:
        raise Unsupported("Sandbox.get_url", f"port {port}: a K sandbox listens on no ports; its virtual hosts "
                          "(the image's [hosts]) are reached by name from inside it, as curl http://NAME/")

    async def destroy(self) -> None:
        await _on_core(self._sandbox.destroy())

    async def extend(self, duration: int = 900000) -> None:
        raise Unsupported("Sandbox.extend", "K sandboxes end when destroyed, never on a timer")

    async def health(self) -> bool:
        return not self._sandbox.killed

    async def create_terminal(self, options: Any = None) -> Any:
        raise Unsupported("Sandbox.create_terminal", "K's terminals are its SSH front end's (ssh -t agent@host)")

    async def create_watcher(self, path: str, options: Any = None) -> Any:
        raise Unsupported("Sandbox.create_watcher", "use kshell.compat.e2b's files.watch_dir (K's change feed)")

    async def start_server(self, options: Any) -> Any:
        raise Unsupported("Sandbox.start_server", "K sandboxes listen on no ports")

    async def create_session_token(self, options: Any = None) -> Any:
        raise Unsupported("Sandbox.create_session_token", "K's access is an agent's SSH key, not a token")

    async def create_magic_link(self, redirect_url: str | None = None) -> Any:
        raise Unsupported("Sandbox.create_magic_link", "K sandboxes have no web front end")

    async def create_child_sandbox(self) -> Any:
        raise Unsupported("Sandbox.create_child_sandbox", "a K fork is a tree of the same computer "
                          "(kshell.sdk AgentSession.fork), not a sandbox of its own")

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.destroy()


class SandboxResource:
    """`compute.sandbox`: create, get_by_id, find, find_or_create, destroy; on the appliance
    `endpoint` names, else here."""

    def __init__(self, endpoint: core.Endpoint | None = None) -> None:
        self._endpoint = endpoint

    async def create(self, options: CreateSandboxOptions | None = None) -> Sandbox:
        options = options or CreateSandboxOptions()
        metadata = dict(options.metadata or {})
        if options.name:
            metadata["name"] = options.name
        labels = {"namespace": options.namespace} if options.namespace else None
        timeout = options.timeout / 1000 if options.timeout else None
        if self._endpoint is not None:
            return Sandbox(await _on_core(core.RemoteSandbox.create_on(
                self._endpoint, template=options.template_id, envs=options.envs, metadata=metadata, labels=labels,
                timeout=timeout)))
        return Sandbox(await _on_core(core.KSandbox.create(template=options.template_id, envs=options.envs,
                                                           metadata=metadata, labels=labels, timeout=timeout)))

    async def get_by_id(self, sandbox_id: str) -> Sandbox:
        if self._endpoint is not None:
            return Sandbox(await _on_core(core.RemoteSandbox.find_on(self._endpoint, sandbox_id)))
        return Sandbox(await _on_core(core.KSandbox.find(sandbox_id)))

    async def find(self, name: str, namespace: str = "default") -> Sandbox | None:
        for sandbox in list(core.sandboxes().values()):
            if (not sandbox.killed and sandbox.metadata.get("name") == name
                    and sandbox.labels.get("namespace", "default") == namespace):
                return Sandbox(sandbox)
        return None

    async def find_or_create(self, name: str, namespace: str = "default", options: Any = None) -> Sandbox:
        found = await self.find(name, namespace)
        if found is not None:
            return found
        base = options or CreateSandboxOptions()
        return await self.create(CreateSandboxOptions(timeout=base.timeout, template_id=base.template_id,
                                                      metadata=base.metadata, envs=base.envs, name=name,
                                                      namespace=namespace))

    async def destroy(self, sandbox_id: str) -> None:
        await (await self.get_by_id(sandbox_id)).destroy()


class Compute:
    """The entry point (`compute` is one made for you). `config` names the gateway as
    upstream's `GatewayConfig` does (`gateway_url`, `api_key`; or COMPUTESDK_GATEWAY_URL and
    COMPUTESDK_API_KEY): here a served K appliance, `ssh://AGENT@HOST[:PORT]`, and the agent's
    private key file (core.Endpoint). Without one, sandboxes are booted here (or found under
    K_SANDBOX_ROOT)."""

    def __init__(self, config: Any = None) -> None:
        url = getattr(config, "gateway_url", None) or os.environ.get("COMPUTESDK_GATEWAY_URL")
        key = getattr(config, "api_key", None) or os.environ.get("COMPUTESDK_API_KEY")
        self._resource = SandboxResource(core.Endpoint.of(url, key))

    @property
    def sandbox(self) -> SandboxResource:
        return self._resource

    async def close(self) -> None:
        """Nothing to close: sandboxes end with destroy (or are let go at exit)."""


compute = Compute()
