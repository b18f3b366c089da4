"""A sandbox client for openai-agents' Sandbox Agents: `SandboxRunConfig(client=KSandboxClient())`
runs a `SandboxAgent`'s shell and file tools on a K sandbox (kshell.compat.core), as that
framework's own clients run them on a local Unix host, Docker, E2B or Daytona.

The translation, call by call (the framework's `BaseSandboxClient` / `BaseSandboxSession`):

- `create(options=KSandboxClientOptions(...))`: a new K sandbox (a K agent session on a computer
  of its own; `template` an image folder, `envs`, `metadata`, `timeout` as the E2B adapter's);
  its session id is the sandbox id, kept in the session state for `resume`.
- `resume(state)`: the sandbox of `state.sandbox_id` (`KSandbox.find`: this process's, or a
  durable one under K_SANDBOX_ROOT that another program made), else a new one whose workspace
  the framework hydrates from the state's snapshot.
- `exec`: the framework hands an argv (its shell tool's `sh -lc CMD`): it runs as that argv in
  the K shell (`shlex.join`), in the workspace root once the framework made it, with the
  sandbox's and the manifest's environment; a timeout ends the command and raises the
  framework's ExecTimeoutError.
- `read`/`write`: the agent's files through the SDK (parents made on write), in the agent's view.
- `persist_workspace`/`hydrate_workspace`: a tar of the workspace root made and unpacked by K's
  `tar`.
- `shutdown`: the sandbox is killed (the framework calls it when the run owns the session).
- Ptys (`supports_pty`) are not offered: the framework then runs each shell tool call as one
  command (its documented fallback), which K runs directly.

The workspace root: a manifest the caller gives is used as given (a root the agent may not
write, such as upstream's default /workspace, fails at start with "Permission denied"); with no
manifest the root is `/home/user/workspace`, inside the agent's home.

The framework calls these on the caller's loop; each K call runs on the adapters' loop and is
awaited there (`_on_k`), so the caller's loop is never blocked.
"""

from __future__ import annotations

import asyncio
import io
import shlex
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar

from agents.sandbox.errors import ExecTimeoutError, WorkspaceArchiveReadError, WorkspaceReadNotFoundError
from agents.sandbox.manifest import Manifest
from agents.sandbox.session import SandboxSession, SandboxSessionState
from agents.sandbox.session.base_sandbox_session import BaseSandboxSession
from agents.sandbox.session.dependencies import Dependencies
from agents.sandbox.session.manager import Instrumentation
from agents.sandbox.session.sandbox_client import BaseSandboxClient, BaseSandboxClientOptions
from agents.sandbox.snapshot import SnapshotBase, SnapshotSpec, resolve_snapshot
from agents.sandbox.types import ExecResult, User
from pydantic import Field

from kshell.compat import core

__all__ = ["KSandboxClient", "KSandboxClientOptions", "KSandboxSession", "KSandboxSessionState"]

T = TypeVar("T")
BACKEND = "komputer"
DEFAULT_ROOT = "/home/user/workspace"  # inside the agent's home (K's agents write there)


async def _on_k(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on the adapters' loop, awaited from the caller's."""
    return await asyncio.wrap_future(core.submit(coro))


class KSandboxClientOptions(BaseSandboxClientOptions):
    """What a new K sandbox is made with (the E2B adapter's `Sandbox.create` arguments)."""

    type: Literal["komputer"] = "komputer"
    template: str | None = None
    envs: dict[str, str] | None = None
    metadata: dict[str, str] | None = None
    timeout: int | None = None


class KSandboxSessionState(SandboxSessionState):
    """The session state the framework persists (RunState): which K sandbox, made how."""

    type: Literal["komputer"] = "komputer"
    sandbox_id: str
    template: str | None = None
    base_envs: dict[str, str] = Field(default_factory=dict)
    metadata: dict[str, str] | None = None
    sandbox_timeout: int | None = None


class KSandboxSession(BaseSandboxSession):
    """One K sandbox as a Sandbox Agents session."""

    state: KSandboxSessionState

    def __init__(self, *, state: KSandboxSessionState, sandbox: core.KSandbox) -> None:
        self.state = state
        self._sandbox = sandbox

    @property
    def sandbox_id(self) -> str:
        return self.state.sandbox_id

    async def _envs(self) -> dict[str, str]:
        return {**self.state.base_envs, **await self.state.manifest.environment.resolve()}

    async def _exec_internal(self, *command: str | Path, timeout: float | None = None) -> ExecResult:
        argv = [str(c) for c in command]
        if len(argv) >= 4 and argv[0] == "sudo" and argv[1] == "-u" and argv[3] == "--":
            if argv[2] != core.AGENT:  # SandboxSession.exec's prefix for another user
                raise core.Unsupported(f"exec as user {argv[2]!r}",
                                       f"a K sandbox runs its commands as its agent {core.AGENT!r}")
            argv = argv[4:]
        cwd = self.state.manifest.root if self.state.workspace_root_ready else None
        outcome = await _on_k(self._sandbox.exec(shlex.join(argv), envs=await self._envs(), cwd=cwd,
                                                 timeout=timeout))
        if isinstance(outcome.exception, TimeoutError):  # CommandTimeout, or a remote session's
            raise ExecTimeoutError(command=command, timeout_s=timeout, cause=outcome.exception)
        if isinstance(outcome.exception, core.SandboxGone):
            raise outcome.exception
        return ExecResult(stdout=outcome.stdout, stderr=outcome.stderr, exit_code=outcome.status)

    async def read(self, path: Path, *, user: str | User | None = None) -> io.IOBase:
        if user is not None:
            await self._check_read_with_exec(path, user=user)
        where = await self._validate_path_access(path)
        try:
            data = await _on_k(self._sandbox.session.fs.read_file(str(where)))
        except FileNotFoundError as e:
            raise WorkspaceReadNotFoundError(path=path, cause=e) from e
        except OSError as e:
            raise WorkspaceArchiveReadError(path=path, cause=e) from e
        return io.BytesIO(data)

    async def write(self, path: Path, data: io.IOBase, *, user: str | User | None = None) -> None:
        if user is not None:
            await self._check_write_with_exec(path, user=user)
        payload = data.read()
        if isinstance(payload, str):
            payload = payload.encode()
        where = str(await self._validate_path_access(path, for_write=True))
        fs = self._sandbox.session.fs

        async def put() -> None:
            await fs.mkdir(str(Path(where).parent), parents=True)
            await fs.write_file(where, bytes(payload))

        await _on_k(put())

    async def running(self) -> bool:
        return self._sandbox.running

    async def persist_workspace(self) -> io.IOBase:
        root = self.state.manifest.root
        outcome = await _on_k(self._sandbox.exec(f"tar -C {shlex.quote(root)} -cf - ."))
        if outcome.status != 0:
            stderr = outcome.stderr.decode("utf-8", "replace")
            raise WorkspaceArchiveReadError(path=Path(root), context={"stderr": stderr})
        return io.BytesIO(outcome.stdout)

    async def hydrate_workspace(self, data: io.IOBase) -> None:
        root = self.state.manifest.root
        raw = data.read()
        archive = f"{self._sandbox.session.home}/.k-hydrate-{self.state.session_id.hex}.tar"
        fs = self._sandbox.session.fs

        async def unpack() -> core.Outcome:
            await fs.write_file(archive, raw if isinstance(raw, bytes) else raw.encode())
            try:
                return await self._sandbox.exec(f"mkdir -p {shlex.quote(root)} && "
                                                f"tar -C {shlex.quote(root)} -xf {shlex.quote(archive)}")
            finally:
                await fs.rm(archive, force=True)

        outcome = await _on_k(unpack())
        if outcome.status != 0:
            raise OSError(f"tar: {outcome.stderr.decode('utf-8', 'replace').strip()}")

    async def _shutdown_backend(self) -> None:
        await _on_k(self._sandbox.destroy())


class KSandboxClient(BaseSandboxClient[KSandboxClientOptions | None]):
    """Sandbox Agents' client for K: `SandboxRunConfig(client=KSandboxClient())`."""

    backend_id = BACKEND
    supports_default_options = True

    def __init__(self, *, instrumentation: Instrumentation | None = None,
                 dependencies: Dependencies | None = None) -> None:
        self._instrumentation = instrumentation if instrumentation is not None else Instrumentation()
        self._dependencies = dependencies

    async def create(self, *, snapshot: SnapshotSpec | SnapshotBase | None = None, manifest: Manifest | None = None,
                     options: KSandboxClientOptions | None = None) -> SandboxSession:
        options = options or KSandboxClientOptions()
        manifest = manifest if manifest is not None else Manifest(root=DEFAULT_ROOT)
        self._validate_manifest_for_create(manifest)
        sandbox = await _on_k(core.KSandbox.create(template=options.template, envs=options.envs,
                                                   metadata=options.metadata, timeout=options.timeout))
        session_id = uuid.uuid4()
        state = KSandboxSessionState(session_id=session_id, manifest=manifest,
                                     snapshot=resolve_snapshot(snapshot, str(session_id)), sandbox_id=sandbox.id,
                                     template=options.template, base_envs=dict(options.envs or {}),
                                     metadata=options.metadata, sandbox_timeout=options.timeout)
        return self._wrap_session(KSandboxSession(state=state, sandbox=sandbox), instrumentation=self._instrumentation)

    async def delete(self, session: SandboxSession) -> SandboxSession:
        inner = session._inner  # noqa: SLF001 - the framework's wrapper around ours
        if not isinstance(inner, KSandboxSession):
            raise TypeError("KSandboxClient.delete expects a KSandboxSession")
        await _on_k(inner._sandbox.destroy())  # noqa: SLF001
        return session

    async def resume(self, state: SandboxSessionState) -> SandboxSession:
        if not isinstance(state, KSandboxSessionState):
            raise TypeError("KSandboxClient.resume expects a KSandboxSessionState")
        state.assert_path_grants_rebound()
        try:
            sandbox = await _on_k(core.KSandbox.find(state.sandbox_id))
            found = True
        except LookupError:
            sandbox = await _on_k(core.KSandbox.create(template=state.template, envs=state.base_envs or None,
                                                       metadata=state.metadata, timeout=state.sandbox_timeout))
            state.sandbox_id = sandbox.id
            state.workspace_root_ready = False
            found = False
        inner = KSandboxSession(state=state, sandbox=sandbox)
        inner._set_start_state_preserved(found, system=found)  # noqa: SLF001 - as the framework's own clients
        return self._wrap_session(inner, instrumentation=self._instrumentation)

    def deserialize_session_state(self, payload: dict[str, object]) -> SandboxSessionState:
        return self._deserialize_session_state_payload(payload, KSandboxSessionState)
