"""Daytona's `Daytona` client (its sync Python SDK, `daytona` 0.2xx) over K: a script written
for Daytona runs unchanged once its import names this module:

    from kshell.compat.daytona import Daytona, SessionExecuteRequest

    daytona = Daytona()
    sandbox = daytona.create()
    print(sandbox.process.exec("echo hello").result)
    sandbox.fs.upload_file(b"data", "notes/a.txt")
    daytona.delete(sandbox)

Names, parameters, defaults and result fields are Daytona's (tests/compat/test_signatures.py
holds them to the installed `daytona`); its pydantic models are plain dataclasses here. A sandbox
is a K computer plus the agent `user`'s session (kshell.compat.core); a Daytona session is a K
durable session of that agent, so its shell state (cwd, variables) lives on between its commands,
as upstream. Calls K cannot honour raise `Unsupported` at the call site, naming why.
"""

from __future__ import annotations

import fnmatch
import functools
import io
import os
import re
import shlex
import stat as statmod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from kshell.compat import core
from kshell.compat import git as kgit
from kshell.compat.core import Unsupported

__all__ = [
    "CodeRunParams", "Command", "CreateSandboxBaseParams", "CreateSandboxFromImageParams",
    "CreateSandboxFromSnapshotParams", "Daytona", "DaytonaConfig", "DaytonaError", "DaytonaNotFoundError",
    "DaytonaTimeoutError", "ExecuteResponse", "ExecutionArtifacts", "FileDownloadRequest", "FileDownloadResponse",
    "FileInfo", "FileStatus", "FileUpload", "Git", "GitCommitResponse", "GitFileStatus", "GitRemote", "GitStatus",
    "ListBranchResponse", "ListRemotesResponse", "Match", "PtyHandle", "PtyResult", "PtySessionInfo", "PtySize",
    "ReplaceResult", "Sandbox", "SandboxState", "SearchFilesResponse", "Session", "SessionCommandLogsResponse",
    "SessionExecuteRequest", "SessionExecuteResponse", "Unsupported",
]


# -- errors ------------------------------------------------------------------------------------------


class DaytonaError(Exception):
    def __init__(self, message: str, status_code: int | None = None, headers: Any = None, code: str | None = None,
                 source: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.headers = headers or {}
        self.code = code
        self.source = source


class DaytonaNotFoundError(DaytonaError):
    """A sandbox, session, command or file that is not there."""


class DaytonaTimeoutError(DaytonaError):
    """A command ran past its timeout."""


def _errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """OSErrors and K's own errors as Daytona's (the errno's words kept)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (FileNotFoundError, ProcessLookupError, LookupError) as e:
            raise DaytonaNotFoundError(str(e), 404) from e
        except TimeoutError as e:
            raise DaytonaTimeoutError(str(e)) from e
        except core.SandboxGone as e:
            raise DaytonaError(str(e), 410) from e
        except (Unsupported, DaytonaError):
            raise
        except ValueError as e:
            raise DaytonaError(str(e), 400) from e
        except PermissionError as e:
            raise DaytonaError(str(e), 403) from e
        except OSError as e:
            raise DaytonaError(str(e), 400) from e

    return call


# -- parameters and results -----------------------------------------------------------------------------


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class DaytonaConfig:
    api_key: str | None = None
    api_url: str | None = None
    server_url: str | None = None
    target: str | None = None
    jwt_token: str | None = None
    organization_id: str | None = None
    connection_pool_maxsize: int | None = 250
    otel_enabled: bool | None = None
    use_deprecated_polling: bool | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class CreateSandboxBaseParams:
    name: str | None = None
    language: str | None = None
    os_user: str | None = None
    env_vars: dict[str, str] | None = None
    labels: dict[str, str] | None = None
    public: bool | None = None
    auto_stop_interval: int | None = None
    auto_pause_interval: int | None = None
    auto_archive_interval: int | None = None
    auto_delete_interval: int | None = None
    ttl_minutes: int | None = None
    queue_timeout: int | None = None
    volumes: list[Any] | None = None
    secrets: dict[str, str] | None = None
    network_block_all: bool | None = None
    kvm: bool | None = None
    network_allow_list: str | None = None
    domain_allow_list: str | None = None
    outbound_proxy_url: str | None = None
    otel_endpoint_override: str | None = None
    ephemeral: bool | None = None
    spot: bool | None = None
    linked_sandbox: str | None = None
    target: str | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class CreateSandboxFromSnapshotParams(CreateSandboxBaseParams):
    snapshot: str | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class CreateSandboxFromImageParams(CreateSandboxBaseParams):
    image: Any
    resources: Any = None


@dataclass
class ExecutionArtifacts:
    stdout: str = ""
    charts: list[Any] | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class ExecuteResponse:
    exit_code: int
    result: str
    artifacts: ExecutionArtifacts | None = None


@dataclass
class CodeRunParams:
    argv: list[str] | None = None
    env: dict[str, str] | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class SessionExecuteRequest:
    """`run_async` (or `var_async`, upstream's wire name) returns at once with the command's id."""

    var_async: bool | None = None
    command: str
    run_async: bool | None = None
    suppress_input_echo: bool | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class SessionExecuteResponse:
    cmd_id: str
    exit_code: int | None = None
    output: str | None = None
    stderr: str | None = None
    stdout: str | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class Command:
    command: str
    exit_code: int | None = None
    id: str


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class Session:
    commands: list[Command]
    session_id: str


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class SessionCommandLogsResponse:
    output: str | None = None
    stderr: str | None = None
    stdout: str | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class FileInfo:
    group: str
    is_dir: bool
    mod_time: str
    mode: str
    modified_at: str | None = None
    name: str
    owner: str
    path: str | None = None
    permissions: str
    size: int


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class Match:
    content: str
    file: str
    line: int


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class ReplaceResult:
    error: str | None = None
    file: str | None = None
    success: bool | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class SearchFilesResponse:
    files: list[str]


@dataclass
class FileUpload:
    source: bytes | str
    destination: str


@dataclass
class FileDownloadRequest:
    source: str
    destination: str | None = None


@dataclass
class FileDownloadResponse:
    source: str
    result: str | bytes | None = None
    error: str | None = None
    error_details: Any = None


@dataclass
class PtySize:
    rows: int
    cols: int


@dataclass
class PtyResult:
    exit_code: int | None = None
    error: str | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class PtySessionInfo:
    active: bool
    cols: int
    created_at: str
    cwd: str
    envs: dict[str, str]
    id: str
    lazy_start: bool
    rows: int


class PtyHandle:
    """A pty session (Daytona's PtyHandle) on a K persistent terminal running K's shell a line
    at a time (kshell.compat.core.Terminal): `send_input` types, `wait(on_data=...)` hands the
    terminal's bytes as they come, `resize` and `kill` reach the terminal."""

    def __init__(self, process: Process, session_id: str, terminal: core.Terminal) -> None:
        self._owner = process
        self._session_id = session_id
        self._terminal = terminal
        self._connected = True

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def exit_code(self) -> int | None:
        done = self._terminal.done
        return done.result().status if done.done() else None

    @property
    def error(self) -> str | None:
        done = self._terminal.done
        return done.result().error if done.done() else None

    def is_connected(self) -> bool:
        return self._connected and self._terminal.running

    def wait_for_connection(self, timeout: float = 10.0) -> None:
        """Connected already: the terminal was attached when it was made."""

    def __iter__(self) -> Iterator[bytes]:
        for _, chunk in core.stream(self._terminal):
            yield chunk

    @_errors
    def send_input(self, data: str | bytes) -> None:
        """Keys, as a terminal sends them (a "\\n" or "\\r" ends a line)."""
        core.run(_call(self._terminal.send_stdin, data.encode() if isinstance(data, str) else bytes(data)))

    @_errors
    def resize(self, pty_size: PtySize) -> PtySessionInfo:
        return self._owner.resize_pty_session(self._session_id, pty_size)

    @_errors
    def kill(self) -> None:
        self._owner.kill_pty_session(self._session_id)

    @_errors
    def wait(self, on_data: Callable[[bytes], None] | None = None, timeout: float | None = None) -> PtyResult:
        """Until the pty ends (DaytonaTimeoutError after `timeout` seconds); `on_data` gets its
        bytes so far, then the rest as they come (a callback that raises ends the pty)."""
        for _, chunk in core.stream(self._terminal, timeout):
            if on_data is not None:
                try:
                    on_data(chunk)
                except Exception as e:
                    core.run(_call(self._terminal.fail, e, "pty"))
                    raise
        outcome = core.run(self._terminal.wait())
        return PtyResult(exit_code=outcome.status, error=outcome.error)

    def disconnect(self) -> None:
        """Stop following the pty here; it runs on (kill ends it)."""
        self._connected = False


class SandboxState(StrEnum):
    STARTED = "started"
    STOPPED = "stopped"
    DESTROYED = "destroyed"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _file_info(entry: core.Entry) -> FileInfo:
    when = datetime.fromtimestamp(entry.mtime / 1e9, UTC)
    return FileInfo(group=entry.group, is_dir=entry.kind == "dir", mod_time=when.isoformat(),
                    mode=statmod.filemode(entry.mode), modified_at=when.isoformat(), name=entry.name,
                    owner=entry.owner, path=entry.path, permissions=f"{statmod.S_IMODE(entry.mode):o}",
                    size=entry.size)


# -- process ------------------------------------------------------------------------------------------------


class Process:
    """Commands (each in a subshell, as upstream's `sh -c`) and sessions (K durable sessions of
    the agent: their shell state lives on between their commands)."""

    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox
        self._commands: dict[str, dict[str, core.Process]] = {}  # session id -> command id -> process
        self._ptys: dict[str, tuple[core.Terminal, PtySessionInfo]] = {}  # pty session id -> its terminal

    @_errors
    def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
             timeout: int | None = None) -> ExecuteResponse:
        """Run a shell command line; `result` is stdout and stderr as they came (Daytona's
        combined output). A non-zero status is returned, not raised, as upstream."""
        process = core.run(self._sandbox.start(command, background=False, envs=env, cwd=cwd, timeout=timeout))
        outcome = core.run(process.wait())
        if isinstance(outcome.exception, TimeoutError):
            raise DaytonaTimeoutError(f"{outcome.error}: the command was interrupted")
        if outcome.exception is not None:
            raise outcome.exception
        result = _text(b"".join(process.combined))
        return ExecuteResponse(exit_code=outcome.status, result=result,
                               artifacts=ExecutionArtifacts(stdout=result, charts=None))

    @_errors
    def code_run(self, code: str, params: CodeRunParams | None = None, timeout: int | None = None) -> ExecuteResponse:
        """Run Python code (the default language of a Daytona sandbox) with `python3`, which
        is a program the computer delegates (K_SANDBOX_REMOTE=local), as upstream runs it."""
        argv = " ".join(shlex.quote(a) for a in (params.argv if params and params.argv else []))
        line = f"python3 -c {shlex.quote(code)} {argv}".rstrip()
        return self.exec(line, env=params.env if params else None, timeout=timeout)

    # sessions

    def _session(self, session_id: str) -> Any:
        session = self._sandbox.sessions.get(session_id)
        if session is None:
            raise DaytonaNotFoundError(f"session {session_id} not found", 404)
        return session

    @_errors
    def create_session(self, session_id: str, request_timeout: float | None = None) -> None:
        """A K durable session of the sandbox's agent, named `session_id`."""
        if session_id in self._sandbox.sessions:
            raise DaytonaError(f"session {session_id} already exists", 409)
        self._sandbox.sessions[session_id] = core.run(self._sandbox.new_session(session_id))
        self._commands[session_id] = {}

    @_errors
    def get_session(self, session_id: str, request_timeout: float | None = None) -> Session:
        self._session(session_id)
        return Session(commands=[self._command(p) for p in self._commands.get(session_id, {}).values()],
                       session_id=session_id)

    @_errors
    def list_sessions(self, request_timeout: float | None = None) -> list[Session]:
        return [self.get_session(s) for s in list(self._sandbox.sessions)]

    @_errors
    def delete_session(self, session_id: str, request_timeout: float | None = None) -> None:
        """End the session (its running command, its jobs, its record)."""
        session = self._session(session_id)
        for process in self._commands.pop(session_id, {}).values():
            core.run(_interrupt(process))
        del self._sandbox.sessions[session_id]
        core.run(session.close())

    @_errors
    def execute_session_command(self, session_id: str, req: SessionExecuteRequest,
                                timeout: int | None = None) -> SessionExecuteResponse:
        """Run `req.command` in the session's shell (one command at a time there: a second
        waits for the first). `run_async`: return at once with its id; its logs and exit code
        come from get_session_command(_logs)."""
        session = self._session(session_id)
        background = bool(req.run_async or req.var_async)
        process = core.run(self._sandbox.start(req.command, background=background, session=session, scoped=False,
                                               timeout=timeout, stdin=background))
        outcome = None if background else core.run(process.wait())
        cmd_id = str(process.pid)  # its K process row: known at start for an async command, at its end else
        self._commands[session_id][cmd_id] = process
        process.cmd_id = cmd_id  # type: ignore[attr-defined]
        if outcome is None:
            return SessionExecuteResponse(cmd_id=cmd_id)
        if outcome.exception is not None and not isinstance(outcome.exception, TimeoutError):
            raise outcome.exception
        return SessionExecuteResponse(cmd_id=cmd_id, exit_code=outcome.status,
                                      output=_text(b"".join(process.combined)), stdout=_text(outcome.stdout),
                                      stderr=_text(outcome.stderr))

    def _process(self, session_id: str, command_id: str) -> core.Process:
        self._session(session_id)
        process = self._commands.get(session_id, {}).get(command_id)
        if process is None:
            raise DaytonaNotFoundError(f"command {command_id} not found in session {session_id}", 404)
        return process

    def _command(self, process: core.Process) -> Command:
        done = process.done
        return Command(command=process.cmd, exit_code=done.result().status if done.done() else None,
                       id=getattr(process, "cmd_id", str(process.pid)))

    @_errors
    def get_session_command(self, session_id: str, command_id: str, request_timeout: float | None = None) -> Command:
        return self._command(self._process(session_id, command_id))

    @_errors
    def get_session_command_logs(self, session_id: str, command_id: str,
                                 request_timeout: float | None = None) -> SessionCommandLogsResponse:
        process = self._process(session_id, command_id)
        return SessionCommandLogsResponse(output=_text(b"".join(process.combined)), stderr=_text(b"".join(process.err)),
                                          stdout=_text(b"".join(process.out)))

    @_errors
    def get_session_command_logs_async(self, session_id: str, command_id: str, on_stdout: Callable[[str], Any],
                                       on_stderr: Callable[[str], Any]) -> None:
        """Hand the command's output so far, then the rest as it comes, until it ends."""
        process = self._process(session_id, command_id)
        for stream, chunk in core.stream(process):
            try:
                (on_stdout if stream == "stdout" else on_stderr)(_text(chunk))
            except Exception as e:  # a callback that raises fails the command and ends it
                core.run(_call(process.fail, e, stream))
                raise

    @_errors
    def send_session_command_input(self, session_id: str, command_id: str, data: str,
                                   request_timeout: float | None = None) -> None:
        """Input for a running (async) command; an ended one reads no more."""
        process = self._process(session_id, command_id)
        core.run(_call(process.send_stdin, data.encode("utf-8")))

    # pty sessions

    @_errors
    def create_pty_session(self, id: str, cwd: str | None = None, envs: dict[str, str] | None = None,
                           pty_size: PtySize | None = None) -> PtyHandle:
        """A pty session named `id`: a K persistent terminal of `pty_size` (120x30 by default,
        as upstream's) running K's shell a line at a time, in `cwd` (the home) with `envs`."""
        if id in self._ptys and self._ptys[id][0].running:
            raise DaytonaError(f"pty session {id} already exists", 409)
        size = pty_size or PtySize(rows=30, cols=120)
        terminal = core.run(self._sandbox.open_terminal(size=(size.cols, size.rows), cwd=cwd, env=envs))
        info = PtySessionInfo(active=True, cols=size.cols, created_at=datetime.now(UTC).isoformat(),
                              cwd=self._sandbox.session.fs.path(cwd or self._sandbox.session.home),
                              envs=dict(envs or {}), id=id, lazy_start=False, rows=size.rows)
        self._ptys[id] = (terminal, info)
        return PtyHandle(self, id, terminal)

    def _pty(self, session_id: str) -> tuple[core.Terminal, PtySessionInfo]:
        found = self._ptys.get(session_id)
        if found is None:
            raise DaytonaNotFoundError(f"pty session {session_id} not found", 404)
        return found

    @_errors
    def connect_pty_session(self, session_id: str) -> PtyHandle:
        """Another handle to pty session `session_id` (its output so far, then as it comes)."""
        terminal, _ = self._pty(session_id)
        if not terminal.running:
            raise DaytonaNotFoundError(f"pty session {session_id} has ended", 404)
        return PtyHandle(self, session_id, terminal)

    @_errors
    def list_pty_sessions(self, request_timeout: float | None = None) -> list[PtySessionInfo]:
        return [self.get_pty_session_info(i) for i in self._ptys]

    @_errors
    def get_pty_session_info(self, session_id: str, request_timeout: float | None = None) -> PtySessionInfo:
        terminal, info = self._pty(session_id)
        info.active = terminal.running
        return info

    @_errors
    def kill_pty_session(self, session_id: str, request_timeout: float | None = None) -> None:
        """End the pty session: its shell and every program it started."""
        terminal, _ = self._pty(session_id)
        core.run(_interrupt(terminal))
        core.run(terminal.wait())

    @_errors
    def resize_pty_session(self, session_id: str, pty_size: PtySize,
                           request_timeout: float | None = None) -> PtySessionInfo:
        """The window changed: the terminal and the program on it follow (SIGWINCH)."""
        terminal, info = self._pty(session_id)
        core.run(terminal.resize(pty_size.cols, pty_size.rows))
        info.cols, info.rows = pty_size.cols, pty_size.rows
        return self.get_pty_session_info(session_id)

    # refused

    def get_entrypoint_logs(self, request_timeout: float | None = None) -> Any:
        raise Unsupported("Process.get_entrypoint_logs", "a K sandbox has no entrypoint process")


async def _interrupt(process: core.Process | core.Terminal) -> bool:
    return process.interrupt()


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


# -- files ------------------------------------------------------------------------------------------------------


class FileSystem:
    """The sandbox's files through the agent's session view (the same as SFTP's and the mount's)."""

    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox

    @property
    def _fs(self) -> Any:
        return self._sandbox.session.fs

    @_errors
    def create_folder(self, path: str, mode: str, request_timeout: float | None = None) -> None:
        core.run(self._fs.mkdir(path, mode=int(mode, 8)))
        core.run(self._fs.chmod(path, int(mode, 8)))  # the mode as given, not under the umask

    @_errors
    def delete_file(self, path: str, recursive: bool = False, request_timeout: float | None = None) -> None:
        """Delete a file, or a directory with `recursive` (an empty one without, as rmdir)."""
        fs = self._fs
        if not recursive and core.run(fs.stat(path, follow=False)).is_dir:
            core.run(_rmdir(fs, path))
            return
        core.run(fs.rm(path, recursive=recursive))

    @_errors
    def download_file(self, *args: Any) -> bytes | None:
        """`download_file(remote)` -> its bytes; `download_file(remote, local)` writes it to the
        local file; a third argument (upstream's timeout) is taken and not needed."""
        data = core.run(self._fs.read_file(args[0]))
        if len(args) >= 2 and isinstance(args[1], str):
            with open(args[1], "wb") as out:
                out.write(data)
            return None
        return data

    @_errors
    def download_files(self, files: list[FileDownloadRequest], timeout: int = 1800) -> list[FileDownloadResponse]:
        out = []
        for request in files:
            try:
                data = core.run(self._fs.read_file(request.source))
            except OSError as e:
                out.append(FileDownloadResponse(source=request.source, error=str(e)))
                continue
            if request.destination is not None:
                with open(request.destination, "wb") as f:
                    f.write(data)
                out.append(FileDownloadResponse(source=request.source, result=request.destination))
            else:
                out.append(FileDownloadResponse(source=request.source, result=data))
        return out

    @_errors
    def upload_file(self, src: str | bytes, dst: str, timeout: int = 1800) -> None:
        """`src`: the bytes, or the path of a local file to send (upstream's meaning)."""
        if isinstance(src, str):
            with open(src, "rb") as f:
                src = f.read()
        core.run(self._fs.write_file(dst, bytes(src)))

    @_errors
    def upload_files(self, files: list[FileUpload], timeout: int = 1800) -> None:
        for upload in files:
            source = upload.source
            if isinstance(source, io.IOBase):
                source = source.read()
            self.upload_file(source, upload.destination)

    @_errors
    def list_files(self, path: str, depth: int | None = None, request_timeout: float | None = None) -> list[FileInfo]:
        return [_file_info(e) for e in core.run(self._sandbox.listing(path, depth or 1))]

    @_errors
    def get_file_info(self, path: str, request_timeout: float | None = None) -> FileInfo:
        return _file_info(core.run(self._sandbox.entry(path)))

    @_errors
    def move_files(self, source: str, destination: str, request_timeout: float | None = None) -> None:
        core.run(self._fs.rename(source, destination))

    def _files(self, path: str) -> Iterator[str]:
        for top, _, names in core.run(self._fs.walk(path)):
            for name in names:
                yield top.rstrip("/") + "/" + name

    @_errors
    def find_files(self, path: str, pattern: str, request_timeout: float | None = None) -> list[Match]:
        """Lines that contain `pattern` (a regular expression, as upstream's grep), in the files
        under `path`."""
        expr = re.compile(pattern)
        out = []
        for name in self._files(path):
            try:
                text = core.run(self._fs.read_text(name))
            except OSError:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if expr.search(line):
                    out.append(Match(content=line, file=name, line=number))
        return out

    @_errors
    def search_files(self, path: str, pattern: str, request_timeout: float | None = None) -> SearchFilesResponse:
        """Files under `path` whose names match the glob `pattern`."""
        return SearchFilesResponse(files=[n for n in self._files(path)
                                          if fnmatch.fnmatch(os.path.basename(n), pattern)])

    @_errors
    def replace_in_files(self, files: list[str], pattern: str, new_value: str,
                         request_timeout: float | None = None) -> list[ReplaceResult]:
        """Replace `pattern` (plain text, as upstream) with `new_value` in each file."""
        out = []
        for name in files:
            try:
                text = core.run(self._fs.read_text(name))
                core.run(self._fs.write_file(name, text.replace(pattern, new_value)))
                out.append(ReplaceResult(file=name, success=True))
            except OSError as e:
                out.append(ReplaceResult(error=str(e), file=name, success=False))
        return out

    @_errors
    def set_file_permissions(self, path: str, mode: str | None = None, owner: str | None = None,
                             group: str | None = None, request_timeout: float | None = None) -> None:
        """chmod; an owner or group change is refused: an agent cannot chown."""
        if owner is not None or group is not None:
            raise Unsupported("FileSystem.set_file_permissions(owner=/group=)",
                              "a K agent cannot give its files to another user or group (chown needs root)")
        if mode is not None:
            core.run(self._fs.chmod(path, int(mode, 8)))

    def upload_file_stream(self, *args: Any, **kwargs: Any) -> None:
        raise Unsupported("FileSystem.upload_file_stream", "use upload_file; K writes a file in one transaction")

    def download_file_stream(self, *args: Any, **kwargs: Any) -> Any:
        raise Unsupported("FileSystem.download_file_stream", "use download_file; K reads a file in one call")


async def _rmdir(fs: Any, path: str) -> None:
    """rmdir: only an empty directory."""
    entries = await fs.walk(path)
    if entries and (entries[0].dirs or entries[0].files):
        raise OSError(39, "Directory not empty", fs.path(path))
    await fs.rm(path, recursive=True)


# -- git ----------------------------------------------------------------------------------------------------------


class GitFileStatus(StrEnum):  # upstream's Status (its toolbox API's name and members)
    Unmodified = "Unmodified"
    Untracked = "Untracked"
    Modified = "Modified"
    Added = "Added"
    Deleted = "Deleted"
    Renamed = "Renamed"
    Copied = "Copied"
    UpdatedButUnmerged = "Updated but unmerged"


_LETTERS = {".": GitFileStatus.Unmodified, "?": GitFileStatus.Untracked, "M": GitFileStatus.Modified,
            "T": GitFileStatus.Modified, "A": GitFileStatus.Added, "D": GitFileStatus.Deleted,
            "R": GitFileStatus.Renamed, "C": GitFileStatus.Copied, "U": GitFileStatus.UpdatedButUnmerged}


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class FileStatus:
    extra: str
    name: str
    staging: GitFileStatus
    worktree: GitFileStatus


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class GitStatus:
    ahead: int | None = None
    behind: int | None = None
    branch_published: bool | None = None
    current_branch: str
    detached: bool | None = None
    file_status: list[FileStatus]
    upstream: str | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class ListBranchResponse:
    branches: list[str]
    current: str | None = None


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class GitRemote:
    name: str
    url: str


@dataclass(kw_only=True)  # a pydantic model upstream: keyword arguments only
class ListRemotesResponse:
    remotes: list[GitRemote]


@dataclass
class GitCommitResponse:
    sha: str


class Git:
    """Daytona's git helpers: real `git` run in the sandbox (kshell.compat.git), paths relative
    to the home. Credentials are refused (a K sandbox reaches only local paths and its image's
    virtual hosts); without git to run, each call says "install git"."""

    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox

    def _run(self, args: list[str], path: str | None = None, env: dict[str, str] | None = None) -> str:
        where = self._sandbox.session.fs.path(path) if path is not None else None
        return core.run(kgit.git(self._sandbox, args, cwd=where, env=env))

    @_errors
    def clone(self, url: str, path: str, branch: str | None = None, commit_id: str | None = None,
              username: str | None = None, password: str | None = None, insecure_skip_tls: bool | None = None,
              depth: int | None = None, request_timeout: float | None = None) -> None:
        kgit.refuse_credentials("Git.clone", username, password)
        if insecure_skip_tls:
            raise Unsupported("Git.clone(insecure_skip_tls=True)", "a K sandbox reaches no TLS hosts to skip")
        args = ["clone", *(["--branch", branch] if branch else []), *(["--depth", str(depth)] if depth else []),
                "--", url, self._sandbox.session.fs.path(path)]
        self._run(args)
        if commit_id:
            self._run(["checkout", "--detach", commit_id], path)

    @_errors
    def init(self, path: str, bare: bool = False, initial_branch: str | None = None,
             request_timeout: float | None = None) -> None:
        self._run(["init", *(["--bare"] if bare else []),
                   *(["--initial-branch", initial_branch] if initial_branch else []),
                   self._sandbox.session.fs.path(path)])

    @_errors
    def add(self, path: str, files: list[str], request_timeout: float | None = None) -> None:
        self._run(["add", "--", *files], path)

    @_errors
    def commit(self, path: str, message: str, author: str, email: str, allow_empty: bool = False,
               request_timeout: float | None = None) -> GitCommitResponse:
        where = self._sandbox.session.fs.path(path)
        return GitCommitResponse(core.run(kgit.commit(self._sandbox, where, message, author, email, allow_empty)))

    @_errors
    def status(self, path: str, request_timeout: float | None = None) -> GitStatus:
        found = core.run(kgit.status(self._sandbox, self._sandbox.session.fs.path(path)))
        return GitStatus(ahead=found.ahead, behind=found.behind, branch_published=found.upstream is not None,
                         current_branch=found.branch, detached=found.detached, upstream=found.upstream,
                         file_status=[FileStatus(extra=c.extra, name=c.name, staging=_LETTERS[c.staging],
                                                 worktree=_LETTERS[c.worktree]) for c in found.changes])

    @_errors
    def branches(self, path: str, request_timeout: float | None = None) -> ListBranchResponse:
        found = core.run(kgit.branches(self._sandbox, self._sandbox.session.fs.path(path)))
        return ListBranchResponse(branches=found.names, current=found.current)

    @_errors
    def create_branch(self, path: str, name: str, request_timeout: float | None = None) -> None:
        """Create branch `name` and check it out (upstream's meaning)."""
        self._run(["checkout", "-b", name], path)

    @_errors
    def checkout_branch(self, path: str, branch: str, request_timeout: float | None = None) -> None:
        self._run(["checkout", branch], path)

    @_errors
    def delete_branch(self, path: str, name: str, request_timeout: float | None = None) -> None:
        self._run(["branch", "-d", name], path)

    @_errors
    def pull(self, path: str, username: str | None = None, password: str | None = None, branch: str | None = None,
             remote: str | None = None, request_timeout: float | None = None) -> None:
        kgit.refuse_credentials("Git.pull", username, password)
        self._run(["pull", *([remote or "origin"] if remote or branch else []), *([branch] if branch else [])], path)

    @_errors
    def push(self, path: str, username: str | None = None, password: str | None = None, branch: str | None = None,
             remote: str | None = None, set_upstream: bool = False, request_timeout: float | None = None) -> None:
        kgit.refuse_credentials("Git.push", username, password)
        self._run(["push", *(["--set-upstream"] if set_upstream else []),
                   *([remote or "origin"] if remote or branch else []), *([branch] if branch else [])], path)

    @_errors
    def configure_user(self, name: str, email: str, scope: str = "global", path: str | None = None,
                       request_timeout: float | None = None) -> None:
        self.set_config("user.name", name, scope, path)
        self.set_config("user.email", email, scope, path)

    @_errors
    def set_config(self, key: str, value: str, scope: str = "global", path: str | None = None,
                   request_timeout: float | None = None) -> None:
        self._run(["config", f"--{scope}", key, value], path)

    @_errors
    def get_config(self, key: str, scope: str = "global", path: str | None = None,
                   request_timeout: float | None = None) -> str | None:
        """The value, or None when it is not set (git config's status 1)."""
        try:
            return self._run(["config", f"--{scope}", "--get", key], path).strip()
        except kgit.GitFailed as e:
            if "(status 1)" in str(e):
                return None
            raise

    @_errors
    def remote_add(self, path: str, name: str, url: str, fetch: bool = False, overwrite: bool = False,
                   request_timeout: float | None = None) -> None:
        if overwrite and self.remote_get(path, name) is not None:
            self._run(["remote", "set-url", name, url], path)
        else:
            self._run(["remote", "add", name, url], path)
        if fetch:
            self._run(["fetch", name], path)

    @_errors
    def remote_get(self, path: str, name: str, request_timeout: float | None = None) -> str | None:
        try:
            return self._run(["remote", "get-url", name], path).strip()
        except kgit.GitFailed as e:
            if "No such remote" in str(e):
                return None
            raise

    @_errors
    def reset(self, path: str, mode: str | None = None, target: str | None = None, files: list[str] | None = None,
              request_timeout: float | None = None) -> None:
        self._run(["reset", *([f"--{mode}"] if mode else []), *([target] if target else []),
                   *(["--", *files] if files else [])], path)

    @_errors
    def restore(self, path: str, files: list[str], staged: bool | None = None, worktree: bool | None = None,
                source: str | None = None, request_timeout: float | None = None) -> None:
        self._run(["restore", *(["--staged"] if staged else []), *(["--worktree"] if worktree else []),
                   *([f"--source={source}"] if source else []), "--", *files], path)

    @_errors
    def remotes(self, path: str, request_timeout: float | None = None) -> ListRemotesResponse:
        """The repository's remotes and their (fetch) URLs."""
        names = self._run(["remote"], path).split()
        return ListRemotesResponse(remotes=[GitRemote(name=n, url=self._run(["remote", "get-url", n], path).strip())
                                            for n in names])

    def dangerously_authenticate(self, username: str, password: str, host: str | None = None,
                                 protocol: str | None = None, request_timeout: float | None = None) -> None:
        raise Unsupported("Git.dangerously_authenticate", "a K sandbox reaches only local paths and its image's "
                          "virtual hosts, which take no git credentials")


# -- sandboxes ------------------------------------------------------------------------------------------------------


class Sandbox:
    """A K sandbox with Daytona's calls: `process` (with pty sessions), `fs`, `git` (real git,
    delegated), lifecycle; previews, SSH access and LSP refuse with the reason (see
    docs/compat.md)."""

    def __init__(self, sandbox: core.KSandbox, client: Daytona) -> None:
        self._sandbox = sandbox
        self._client = client
        self.process = Process(sandbox)
        self.fs = FileSystem(sandbox)
        self._stopped = False

    @property
    def id(self) -> str:
        return self._sandbox.id

    @property
    def name(self) -> str:
        return self._sandbox.metadata.get("name", self._sandbox.id)

    @property
    def user(self) -> str:
        return core.AGENT

    @property
    def env(self) -> dict[str, str]:
        return dict(self._sandbox.envs)

    @property
    def labels(self) -> dict[str, str]:
        return dict(self._sandbox.labels)

    @property
    def state(self) -> SandboxState:
        if self._sandbox.killed:
            return SandboxState.STOPPED if self._stopped else SandboxState.DESTROYED
        return SandboxState.STARTED

    @property
    def git(self) -> Git:
        return Git(self._sandbox)

    def get_user_home_dir(self) -> str:
        return self._sandbox.session.home

    def get_work_dir(self) -> str:
        return self._sandbox.session.home

    def get_user_root_dir(self) -> str:
        return self._sandbox.session.home

    @_errors
    def set_labels(self, labels: dict[str, str], request_timeout: float | None = None) -> dict[str, str]:
        self._sandbox.labels.clear()
        self._sandbox.labels.update(labels)
        core.run(self._sandbox.save_meta())
        return dict(labels)

    def refresh_data(self, request_timeout: float | None = None) -> None:
        """Nothing to fetch: this object is the sandbox."""

    @_errors
    def delete(self, timeout: float | None = 60, wait: bool = False) -> None:
        core.run(self._sandbox.destroy())

    @_errors
    def stop(self, timeout: float | None = 60, force: bool = False) -> None:
        """Stop: its commands end and its computer closes; a durable sandbox (K_SANDBOX_ROOT)
        keeps its files for `start`. A memory sandbox has no stopped state: refused."""
        if self._sandbox.path is None and not isinstance(self._sandbox, core.RemoteSandbox):
            raise Unsupported("Sandbox.stop", "a memory sandbox has no stopped state (its state is in memory); "
                              "set K_SANDBOX_ROOT for durable sandboxes")
        core.run(self._sandbox.detach())
        self._stopped = True

    @_errors
    def start(self, timeout: float | None = 60) -> None:
        if not self._sandbox.killed:
            return
        if not self._stopped:
            raise DaytonaNotFoundError(f"sandbox {self.id} was deleted", 404)
        self._sandbox = self._client._find(self._sandbox.id)
        self.process = Process(self._sandbox)
        self.fs = FileSystem(self._sandbox)
        self._stopped = False

    @_errors
    def fork(self, name: str | None = None, timeout: float | None = 60) -> Sandbox:
        """A sandbox on a K fork of this one's tree (what it writes stays in it), in the same
        computer; deleted with this one."""
        child = core.run(self._sandbox.fork())
        if name:
            child.metadata["name"] = name
        return Sandbox(child, self._client)

    def create_ssh_access(self, expires_in_minutes: int | None = None, request_timeout: float | None = None) -> Any:
        raise Unsupported("Sandbox.create_ssh_access", "K's SSH access is the appliance's (komputer up) with the "
                          "agent's key, not a token per sandbox")

    def get_preview_link(self, port: int, request_timeout: float | None = None) -> Any:
        raise Unsupported("Sandbox.get_preview_link", "K sandboxes listen on no ports")

    def create_lsp_server(self, language_id: Any, path_to_project: str) -> Any:
        raise Unsupported("Sandbox.create_lsp_server", "K runs no language servers")

    def update_network_settings(self, *, network_block_all: bool | None = None, network_allow_list: str | None = None,
                                domain_allow_list: str | None = None, request_timeout: float | None = None) -> None:
        raise Unsupported("Sandbox.update_network_settings", "network changes at run time: a K sandbox's hosts "
                          "are its image's")

    def upload_url(self, path: str, ttl_seconds: int | None = None) -> str:
        raise Unsupported("Sandbox.upload_url", "K has no HTTP file endpoint; use fs.upload_file or SFTP")

    def download_url(self, path: str, ttl_seconds: int | None = None) -> str:
        raise Unsupported("Sandbox.download_url", "K has no HTTP file endpoint; use fs.download_file or SFTP")

    def archive(self, request_timeout: float | None = None) -> None:
        raise Unsupported("Sandbox.archive", "K states are archived with komputer's own tools, not per sandbox")

    def pause(self, timeout: float = 60) -> None:
        raise Unsupported("Sandbox.pause", "a K sandbox has nothing to pause: its state is durable and its "
                          "processes are rows (use stop and start on a durable sandbox)")


class Daytona:
    """The client: `create`, `get`, `list`, `start`, `stop`, `delete`. `config.api_url` (or
    DAYTONA_API_URL) names the endpoint as upstream's does: here a served K appliance,
    `ssh://AGENT@HOST[:PORT]`, with `api_key` (or DAYTONA_API_KEY) the agent's private key file
    (core.Endpoint); without one, sandboxes are this process's computers, or durable ones under
    K_SANDBOX_ROOT."""

    def __init__(self, config: DaytonaConfig | None = None) -> None:
        self._config = config or DaytonaConfig()
        url = self._config.api_url or self._config.server_url or os.environ.get("DAYTONA_API_URL")
        self._endpoint = core.Endpoint.of(url, self._config.api_key or os.environ.get("DAYTONA_API_KEY"))

    def _find(self, sandbox_id: str) -> core.KSandbox:
        """The sandbox `sandbox_id`: on the configured appliance, else here (or under K_SANDBOX_ROOT)."""
        if self._endpoint is not None:
            return core.run(core.RemoteSandbox.find_on(self._endpoint, sandbox_id))
        return core.run(core.KSandbox.find(sandbox_id))

    @_errors
    def create(self, params: CreateSandboxFromSnapshotParams | CreateSandboxFromImageParams | None = None, *,
               timeout: float = 60, on_snapshot_create_logs: Callable[[str], None] | None = None) -> Sandbox:
        """A new sandbox. `snapshot` (or `image` as a path): a K image folder (komputer.toml);
        `env_vars`: variables every command gets; `labels`, `name`: kept for `get` and `list`."""
        params = params or CreateSandboxFromSnapshotParams()
        if params.os_user not in (None, core.AGENT):
            raise Unsupported(f"os_user={params.os_user!r}", f"a K sandbox's user is its agent {core.AGENT!r}")
        if params.language not in (None, "python"):
            raise Unsupported(f"language={params.language!r}", "code_run runs python3 only")
        refused = {"volumes": "declare drives in the image's komputer.toml [drives]",
                   "secrets": "K has no secret store; pass env_vars",
                   "network_allow_list": "a K sandbox reaches only its image's virtual hosts",
                   "domain_allow_list": "a K sandbox reaches only its image's virtual hosts",
                   "outbound_proxy_url": "a K sandbox reaches only its image's virtual hosts",
                   "public": "K sandboxes listen on no ports", "kvm": "K sandboxes are not virtual machines",
                   "linked_sandbox": "K sandboxes are not linked", "resources": "K sandboxes share the host's CPUs "
                   "(limits are the image's [limits])"}
        for name, why in refused.items():
            if getattr(params, name, None):
                raise Unsupported(f"Daytona.create({name}=...)", why)
        image = getattr(params, "image", None)
        template = getattr(params, "snapshot", None) or (image if isinstance(image, str) else None)
        if image is not None and not isinstance(image, str):
            raise Unsupported("Daytona.create(image=Image...)", "K builds no container images; give an image "
                              "folder with komputer.toml")
        metadata = {"name": params.name} if params.name else {}
        if self._endpoint is not None:
            sandbox = core.run(core.RemoteSandbox.create_on(self._endpoint, template=template, envs=params.env_vars,
                                                            metadata=metadata, labels=params.labels))
        else:
            sandbox = core.run(core.KSandbox.create(template=template, envs=params.env_vars, metadata=metadata,
                                                    labels=params.labels))
        return Sandbox(sandbox, self)

    @_errors
    def get(self, sandbox_id_or_name: str, request_timeout: float | None = None) -> Sandbox:
        for sandbox in core.sandboxes().values():
            if sandbox.metadata.get("name") == sandbox_id_or_name and not sandbox.killed:
                return Sandbox(sandbox, self)
        return Sandbox(self._find(sandbox_id_or_name), self)

    @_errors
    def list(self, query: Any = None, request_timeout: float | None = None) -> Iterator[Sandbox]:
        """This process's sandboxes (and the durable ones under K_SANDBOX_ROOT); `query` with
        `labels` keeps those that carry them."""
        labels = getattr(query, "labels", None) or (query.get("labels") if isinstance(query, dict) else None) or {}
        for sandbox_id in core.KSandbox.known():
            sandbox = self.get(sandbox_id)
            if all(sandbox.labels.get(k) == v for k, v in labels.items()):
                yield sandbox

    def start(self, sandbox: Sandbox, timeout: float = 60) -> None:
        sandbox.start(timeout)

    def stop(self, sandbox: Sandbox, timeout: float = 60) -> None:
        sandbox.stop(timeout)

    def delete(self, sandbox: Sandbox, timeout: float = 60, wait: bool = False) -> None:
        sandbox.delete(timeout, wait)


# Daytona's async client, the twin of `Daytona` (exported here, as `daytona` exports it beside Daytona)
from kshell.compat.daytona_async import AsyncDaytona, AsyncSandbox  # noqa: E402 - it builds on the classes above

__all__ += ["AsyncDaytona", "AsyncSandbox"]
