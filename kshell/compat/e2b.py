"""E2B's `Sandbox` (its sync Python SDK, `e2b` 2.x) over K: a script written for E2B runs
unchanged once its import names this module:

    from kshell.compat.e2b import Sandbox, CommandExitException

    sandbox = Sandbox.create()
    print(sandbox.commands.run("echo hello").stdout)
    sandbox.files.write("/home/user/notes/a.txt", "hi")
    sandbox.kill()

Names, parameters, defaults and result fields are E2B's (tests/compat/test_signatures.py holds
them to the installed `e2b`). A sandbox is a K computer plus the agent `user`'s session
(kshell.compat.core); `Sandbox.connect(id)` also finds a durable sandbox another process made
(`K_SANDBOX_ROOT`). Calls K cannot honour raise `Unsupported` at the call site, naming why.
"""

from __future__ import annotations

import functools
import io
import logging
import os
import stat as statmod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import IO, Any, Generic, Literal, TypeVar

from kshell.compat import core
from kshell.compat.core import Unsupported

__all__ = [
    "CommandExitException", "CommandHandle", "CommandResult", "EntryInfo", "FileType", "FilesystemEvent",
    "FilesystemEventType", "InvalidArgumentException", "NotFoundException", "ProcessInfo", "Pty", "PtySize", "Sandbox",
    "SandboxException", "SandboxInfo", "SandboxNotFoundException", "SandboxState", "TimeoutException",
    "Unsupported", "WatchHandle", "WriteInfo",
]

OutputT = TypeVar("OutputT")
DEFAULT_TIMEOUT = 300  # seconds: E2B's default sandbox lifetime, reported by get_info


# -- errors, as E2B names them ---------------------------------------------------------------------



def _endpoint(opts: dict[str, Any]) -> core.Endpoint | None:
    """The remote appliance a call names, as E2B's clients name their endpoint: `domain=` (or
    E2B_DOMAIN) is its `ssh://AGENT@HOST[:PORT]`, `api_key=` (or E2B_API_KEY) the agent's
    private key file. None: sandboxes booted here."""
    url = opts.get("domain") or opts.get("api_url") or os.environ.get("E2B_DOMAIN")
    return core.Endpoint.of(url, opts.get("api_key") or os.environ.get("E2B_API_KEY"))


class SandboxException(Exception):
    """Base of the errors (E2B's name)."""


class TimeoutException(SandboxException):
    """A command ran past its timeout."""


class NotFoundException(SandboxException):
    """A file, process or sandbox that is not there."""


class SandboxNotFoundException(NotFoundException):
    """No sandbox with that id."""


class InvalidArgumentException(SandboxException):
    """An argument K (and E2B) cannot take."""


def _errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """OSErrors and K's own errors as E2B's exceptions (the errno's words kept)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (FileNotFoundError, ProcessLookupError) as e:
            raise NotFoundException(str(e)) from e
        except core.SandboxGone as e:
            raise SandboxException(str(e)) from e
        except (Unsupported, SandboxException):
            raise
        except ValueError as e:
            raise InvalidArgumentException(str(e)) from e
        except OSError as e:
            raise SandboxException(str(e)) from e

    return call


# -- results ---------------------------------------------------------------------------------------


@dataclass
class CommandResult(Generic[OutputT]):
    stderr: OutputT
    stdout: OutputT
    exit_code: int
    error: str | None


@dataclass
class CommandExitException(SandboxException, CommandResult[OutputT]):
    """A command exited with a non-zero status (what `run` and `wait` raise)."""

    def __str__(self) -> str:
        if self.stderr is None:
            return f"Command exited with code {self.exit_code}"
        return f"Command exited with code {self.exit_code} and error:\n{self.stderr}"


@dataclass
class ProcessInfo:
    pid: int
    tag: str | None
    cmd: str
    args: list[str]
    envs: dict[str, str]
    cwd: str | None


@dataclass
class PtySize:
    rows: int
    cols: int


class FileType(Enum):
    FILE = "file"
    DIR = "dir"
    SYMLINK = "symlink"


@dataclass
class WriteInfo:
    name: str
    type: FileType | None
    path: str
    metadata: dict[str, str] | None = field(default=None, kw_only=True)


@dataclass
class EntryInfo(WriteInfo):
    size: int
    mode: int
    permissions: str
    owner: str
    group: str
    modified_time: datetime
    symlink_target: str | None = None


class FilesystemEventType(Enum):
    CHMOD = "chmod"
    CREATE = "create"
    REMOVE = "remove"
    RENAME = "rename"
    WRITE = "write"


@dataclass
class FilesystemEvent:
    name: str
    type: FilesystemEventType
    entry: EntryInfo | None = None


class SandboxState(Enum):
    PAUSED = "paused"
    RUNNING = "running"


@dataclass
class SandboxInfo:
    sandbox_id: str
    sandbox_domain: str | None
    template_id: str
    name: str | None
    metadata: dict[str, str]
    started_at: datetime
    end_at: datetime
    state: SandboxState
    cpu_count: int
    memory_mb: int
    envd_version: str
    allow_internet_access: bool | None = None
    network: Any | None = None
    lifecycle: Any | None = None
    volume_mounts: list[dict[str, str]] = field(default_factory=list)
    envd_unresponsive_at_pause: bool | None = None


def _entry(entry: core.Entry) -> EntryInfo:
    kinds = {"file": FileType.FILE, "dir": FileType.DIR, "symlink": FileType.SYMLINK}
    return EntryInfo(name=entry.name, type=kinds.get(entry.kind), path=entry.path, size=entry.size,
                     mode=statmod.S_IMODE(entry.mode), permissions=statmod.filemode(entry.mode), owner=entry.owner,
                     group=entry.group, modified_time=datetime.fromtimestamp(entry.mtime / 1e9, UTC),
                     symlink_target=entry.symlink_target)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _check_user(user: str | None) -> None:
    if user not in (None, core.AGENT):
        raise Unsupported(f"user={user!r}", f"a K sandbox's commands and files are its agent {core.AGENT!r}'s; "
                          "an agent cannot act as another user or as root")


# -- commands ----------------------------------------------------------------------------------------


class CommandHandle:
    """A running command (E2B's handle): its pid is its K process row, which every handle to
    the sandbox (and `commands.list`/`kill`, and `komputer ps`) shares."""

    def __init__(self, process: core.Process) -> None:
        self._process = process
        self._sent = {"stdout": 0, "stderr": 0}

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stdout(self) -> str:
        return _text(b"".join(self._process.out))

    @property
    def stderr(self) -> str:
        return _text(b"".join(self._process.err))

    @property
    def exit_code(self) -> int | None:
        done = self._process.done
        return done.result().status if done.done() else None

    @property
    def error(self) -> str | None:
        done = self._process.done
        return done.result().error if done.done() else None

    def __iter__(self) -> Iterator[tuple[str | None, str | None, bytes | None]]:
        """(stdout, stderr, None) for each chunk, as it comes, until the command ends; (None,
        None, bytes) for a pty's."""
        for stream, chunk in core.stream(self._process):
            if stream == "pty":
                yield None, None, chunk
            else:
                yield (_text(chunk), None, None) if stream == "stdout" else (None, _text(chunk), None)

    def disconnect(self) -> None:
        """Stop following the command here; it runs on (E2B's meaning)."""
        self._process.listeners.clear()

    @_errors
    def wait(self, on_pty: Callable[[bytes], None] | None = None, on_stdout: Callable[[str], None] | None = None,
             on_stderr: Callable[[str], None] | None = None) -> CommandResult[str]:
        """The command's result once it ended (the same every time); CommandExitException when
        its status is not 0. `on_stdout`/`on_stderr` (`on_pty`, a pty's) get the output so far,
        then the rest as it comes."""
        if on_stdout is not None or on_stderr is not None or on_pty is not None:
            for out, err, pty in self:
                if out is not None and on_stdout is not None:
                    on_stdout(out)
                elif err is not None and on_stderr is not None:
                    on_stderr(err)
                elif pty is not None and on_pty is not None:
                    on_pty(pty)
        return _result(core.run(self._process.wait()))

    @_errors
    def kill(self) -> bool:
        """SIGKILL the command; False when it had ended."""
        return core.run(_call(self._process.interrupt))

    @_errors
    def send_stdin(self, data: str | bytes, request_timeout: float | None = None) -> None:
        core.run(_call(self._process.send_stdin, data.encode() if isinstance(data, str) else data))

    @_errors
    def close_stdin(self, request_timeout: float | None = None) -> None:
        core.run(_call(self._process.close_stdin))


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` on the adapters' loop (where the process's state is touched)."""
    return fn(*args)


def _result(outcome: core.Outcome) -> CommandResult[str]:
    stdout, stderr = _text(outcome.stdout), _text(outcome.stderr)
    failure = outcome.exception
    if isinstance(failure, TimeoutError):
        raise TimeoutException(f"{outcome.error}: the command was interrupted") from failure
    if failure is not None:
        raise failure
    if outcome.status != 0:
        raise CommandExitException(stderr=stderr, stdout=stdout, exit_code=outcome.status, error=outcome.error)
    return CommandResult(stderr=stderr, stdout=stdout, exit_code=outcome.status, error=outcome.error)


def _strip(cmd: str) -> str:
    """The command line of a K process row, without the subshell K wraps an SDK command in."""
    if cmd.startswith("(cd -- ") and cmd.endswith("\n)"):
        lines = cmd[1:-2].split("\n")
        body = [ln for ln in lines[1:] if not ln.startswith("export ")]
        return "\n".join(body)
    return cmd


class Commands:
    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox

    @_errors
    def list(self, request_timeout: float | None = None) -> list[ProcessInfo]:
        """The sandbox's running processes: K's process table, so every handle's and every
        process's (an ended one is gone from it)."""
        sandbox = self._sandbox
        rows = core.run(sandbox.live())
        own = sandbox.processes
        return [ProcessInfo(pid=r["pid"], tag=None, cmd=own[r["pid"]].cmd if r["pid"] in own else _strip(r["cmd"]),
                            args=[], envs={}, cwd=r.get("cwd")) for r in rows]

    @_errors
    def kill(self, pid: int, request_timeout: float | None = None) -> bool:
        return core.run(self._sandbox.kill(pid))

    @_errors
    def send_stdin(self, pid: int, data: str | bytes, request_timeout: float | None = None) -> None:
        self._process(pid).send_stdin(data)

    @_errors
    def stream_input(self, pid: int, data: Iterable[str | bytes], *, timeout: float | None = 60.0) -> None:
        for piece in data:
            self._process(pid).send_stdin(piece)

    @_errors
    def close_stdin(self, pid: int, request_timeout: float | None = None) -> None:
        self._process(pid).close_stdin()

    def _process(self, pid: int) -> CommandHandle:
        process = self._sandbox.processes.get(pid)
        if process is None:
            alive = any(r["pid"] == pid for r in core.run(self._sandbox.live()))
            if alive:
                raise Unsupported(f"process {pid}", "its stdin belongs to the program that started it; "
                                  "connect from that program")
            raise NotFoundException(f"process {pid} not found (it ended, or never was)")
        return CommandHandle(process)

    @_errors
    def connect(self, pid: int, timeout: float | None = 60, request_timeout: float | None = None, *,
                retain_output: bool = True) -> CommandHandle:
        """Another handle to running process `pid` (its output so far, then as it comes)."""
        return self._process(pid)

    @_errors
    def run(self, cmd: str, background: bool | None = None, envs: dict[str, str] | None = None,
            user: str | None = None, cwd: str | None = None, on_stdout: Callable[[str], None] | None = None,
            on_stderr: Callable[[str], None] | None = None, stdin: bool | None = None,
            timeout: float | None = 60, request_timeout: float | None = None, *,
            retain_output: bool = True) -> CommandResult[str] | CommandHandle:
        """Run `cmd` as a shell command line (E2B runs `bash -l -c cmd`; here the K shell, in a
        subshell, so nothing of it stays for the next). Waited for unless `background`; the
        callbacks get the output as it comes, whether or not anybody waits. `timeout`: seconds
        (0 or None: none), then it is interrupted and TimeoutException raised."""
        handle = self._start(cmd, background, envs, user, cwd, on_stdout, on_stderr, stdin, timeout)
        return handle if background else handle.wait()

    @_errors
    def _start(self, cmd: str, background: bool | None, envs: dict[str, str] | None, user: str | None,
               cwd: str | None, on_stdout: Callable[[str], None] | None, on_stderr: Callable[[str], None] | None,
               stdin: bool | None, timeout: float | None) -> CommandHandle:
        """`run` up to the command's start (what AsyncSandbox's `run` shares before it waits)."""
        _check_user(user)
        listeners = []
        if on_stdout is not None or on_stderr is not None:
            def listen(stream: str, chunk: bytes) -> None:
                call = on_stdout if stream == "stdout" else on_stderr
                if call is not None:
                    call(_text(chunk))

            listeners.append(listen)
        process = core.run(self._sandbox.start(cmd, background=bool(background), envs=envs, cwd=cwd,
                                               timeout=timeout, stdin=bool(stdin), listeners=listeners))
        return CommandHandle(process)


class Pty:
    """The sandbox's ptys: each a K persistent terminal running K's shell a line at a time
    (kshell.compat.core.Terminal); what a program started there reads and prints goes through a
    pty of its own. `create` returns a CommandHandle whose `wait(on_pty=...)` gets the
    terminal's bytes; its pid is the terminal's worker (the process running its shell)."""

    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox

    def _terminal(self, pid: int) -> core.Terminal:
        terminal = self._sandbox.terminals.get(pid)
        if terminal is None:
            raise NotFoundException(f"pty {pid} not found (it ended, or another program made it)")
        return terminal

    @_errors
    def create(self, size: PtySize, user: str | None = None, cwd: str | None = None,
               envs: dict[str, str] | None = None, timeout: float | None = 60,
               request_timeout: float | None = None) -> CommandHandle:
        """A pty of `size` (rows, cols), its shell in `cwd` (the home by default) with `envs`;
        it ends after `timeout` seconds (0 or None: never), as upstream's."""
        _check_user(user)
        return CommandHandle(core.run(self._sandbox.open_terminal(size=(size.cols, size.rows), cwd=cwd, env=envs,
                                                                  timeout=timeout)))

    @_errors
    def connect(self, pid: int, timeout: float | None = 60, request_timeout: float | None = None) -> CommandHandle:
        """Another handle to pty `pid` of this program (its output so far, then as it comes)."""
        return CommandHandle(self._terminal(pid))

    @_errors
    def send_stdin(self, pid: int, data: bytes, request_timeout: float | None = None) -> None:
        """Keys, as a terminal sends them (b"\\r" or b"\\n" ends a line)."""
        terminal = self._terminal(pid)
        core.run(_call(terminal.send_stdin, bytes(data)))

    @_errors
    def stream_input(self, pid: int, data: Iterable[str | bytes], *, timeout: float | None = 60.0) -> None:
        if isinstance(data, (str, bytes)):
            raise InvalidArgumentException("stream_input takes an iterable of pieces, not one str or bytes")
        for piece in data:
            self.send_stdin(pid, piece.encode() if isinstance(piece, str) else piece)

    @_errors
    def resize(self, pid: int, size: PtySize, request_timeout: float | None = None) -> None:
        """The window changed: the terminal and the program on it follow (SIGWINCH)."""
        core.run(self._terminal(pid).resize(size.cols, size.rows))

    @_errors
    def kill(self, pid: int, request_timeout: float | None = None) -> bool:
        """End the pty (its shell and every program it started); False when it was gone."""
        return core.run(self._sandbox.kill(pid))


# -- files --------------------------------------------------------------------------------------------


class WatchHandle:
    """A directory followed on K's change feed; `get_new_events` hands the events since the last call."""

    def __init__(self, watcher: core.Watcher, include_entry: bool) -> None:
        self._watcher = watcher
        self._include_entry = include_entry

    @_errors
    def get_new_events(self, request_timeout: float | None = None) -> list[FilesystemEvent]:
        return [self._event(change) for change in core.run(_call(self._watcher.take))]

    def _event(self, change: core.Change) -> FilesystemEvent:
        """The event for one change (with its entry, when asked for and the name is still there)."""
        entry = None
        if self._include_entry and change.kind != "remove" and change.kind != "rename":
            try:
                entry = _entry(core.run(self._watcher.sandbox.entry(self._watcher.path + "/" + change.name)))
            except OSError:
                entry = None
        return FilesystemEvent(name=change.name, type=FilesystemEventType(change.kind), entry=entry)

    def stop(self, request_timeout: float | None = None) -> None:
        core.run(_call(self._watcher.stop))


class Filesystem:
    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox

    @property
    def _fs(self) -> Any:
        return self._sandbox.session.fs

    @_errors
    def read(self, path: str, format: Literal["text", "bytes", "stream"] = "text", user: str | None = None,
             request_timeout: float | None = None, gzip: bool = False,
             stream_idle_timeout: float | None = None) -> str | bytearray | Iterator[bytes]:
        _check_user(user)
        data = core.run(self._fs.read_file(path))
        if format == "text":
            return data.decode("utf-8", "replace")
        if format == "bytes":
            return bytearray(data)
        if format == "stream":
            return iter([data[i:i + 65536] for i in range(0, len(data), 65536)] or [b""])
        raise InvalidArgumentException(f"format {format!r}: expected 'text', 'bytes' or 'stream'")

    @_errors
    def write(self, path: str, data: str | bytes | IO[Any] | Iterable[bytes], user: str | None = None,
              request_timeout: float | None = None, gzip: bool = False, use_octet_stream: bool | None = None,
              metadata: dict[str, str] | None = None) -> WriteInfo:
        """Write the file, its parent directories made first (as E2B does)."""
        _check_user(user)
        if metadata:
            raise Unsupported("write(metadata=...)", "K files carry no user metadata besides xattrs")
        content = _content(data)
        fs = self._fs
        full = fs.path(path)
        parent = full.rsplit("/", 1)[0] or "/"
        core.run(fs.mkdir(parent, parents=True))
        core.run(fs.write_file(full, content))
        return WriteInfo(name=full.rsplit("/", 1)[1], type=FileType.FILE, path=full)

    @_errors
    def write_files(self, files: Sequence[dict[str, Any]], user: str | None = None,
                    request_timeout: float | None = None, gzip: bool = False, use_octet_stream: bool | None = None,
                    metadata: dict[str, str] | None = None) -> list[WriteInfo]:
        return [self.write(f["path"], f["data"], user=user, metadata=metadata) for f in files]

    @_errors
    def list(self, path: str, depth: int | None = 1, user: str | None = None,
             request_timeout: float | None = None) -> list[EntryInfo]:
        _check_user(user)
        if depth is not None and depth < 1:
            raise InvalidArgumentException("depth should be at least one")
        return [_entry(e) for e in core.run(self._sandbox.listing(path, depth or 1))]

    @_errors
    def exists(self, path: str, user: str | None = None, request_timeout: float | None = None) -> bool:
        _check_user(user)
        return core.run(self._fs.exists(path))

    @_errors
    def get_info(self, path: str, user: str | None = None, request_timeout: float | None = None) -> EntryInfo:
        _check_user(user)
        return _entry(core.run(self._sandbox.entry(path)))

    @_errors
    def remove(self, path: str, user: str | None = None, request_timeout: float | None = None) -> None:
        """Remove a file or a directory with what it holds (E2B's meaning)."""
        _check_user(user)
        core.run(self._fs.rm(path, recursive=True))

    @_errors
    def rename(self, old_path: str, new_path: str, user: str | None = None,
               request_timeout: float | None = None) -> EntryInfo:
        _check_user(user)
        core.run(self._fs.rename(old_path, new_path))
        return _entry(core.run(self._sandbox.entry(new_path)))

    @_errors
    def make_dir(self, path: str, user: str | None = None, request_timeout: float | None = None) -> bool:
        """Make the directory and its parents; False when it existed already."""
        _check_user(user)
        if core.run(self._fs.exists(path)):
            return False
        try:
            core.run(self._fs.mkdir(path, parents=True))
        except FileExistsError:
            return False
        return True

    @_errors
    def watch_dir(self, path: str, user: str | None = None, request_timeout: float | None = None,
                  recursive: bool = False, include_entry: bool = False,
                  allow_network_mounts: bool = False) -> WatchHandle:
        """Follow the directory's changes, whoever makes them: this sandbox's commands, SFTP,
        the agent's mount, another session (K's change feed)."""
        _check_user(user)
        return WatchHandle(core.run(self._sandbox.watch(path, recursive=recursive)), include_entry)


def _content(data: Any) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, io.IOBase) or hasattr(data, "read"):
        read = data.read()
        return read.encode("utf-8") if isinstance(read, str) else bytes(read)
    return b"".join(bytes(piece) for piece in data)


# -- the sandbox ----------------------------------------------------------------------------------------


class _Variant:
    """A method that, called on the class, takes a sandbox id first (E2B's class_method_variant)."""

    def __init__(self, cls_name: str) -> None:
        self.cls_name = cls_name

    def __call__(self, fn: Callable[..., Any]) -> Any:
        self.fn = fn
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]
        return self

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return getattr(owner, self.cls_name)
        return self.fn.__get__(obj, owner)


class Sandbox:
    """A K sandbox with E2B's calls: `commands`, `pty`, `files`, `git` (real git, delegated),
    lifecycle; what K cannot do refuses with the reason (see docs/compat.md)."""

    default_template = "base"
    default_sandbox_timeout = DEFAULT_TIMEOUT

    def __init__(self, sandbox: core.KSandbox) -> None:
        self._sandbox = sandbox
        self._commands = Commands(sandbox)
        self._files = Filesystem(sandbox)
        self._pty = Pty(sandbox)

    @property
    def sandbox_id(self) -> str:
        return self._sandbox.id

    @property
    def commands(self) -> Commands:
        return self._commands

    @property
    def files(self) -> Filesystem:
        return self._files

    @property
    def pty(self) -> Pty:
        return self._pty

    @property
    def git(self) -> Any:
        """Real git, run in the sandbox as a delegated program (kshell.compat.e2b_git)."""
        from kshell.compat.e2b_git import Git

        return Git(self._sandbox)

    # lifecycle

    @classmethod
    @_errors
    def create(cls, template: str | None = None, timeout: int | None = None, metadata: dict[str, str] | None = None,
               envs: dict[str, str] | None = None, secure: bool | None = None,
               allow_internet_access: bool | None = None, mcp: Any = None, network: Any = None, iam: Any = None,
               lifecycle: Any = None, volume_mounts: dict[str, Any] | None = None,
               logger: logging.Logger | None = None, idempotency_key: str | None = None, **opts: Any) -> Sandbox:
        """A new sandbox: a K computer and its agent's session. `template`: an image folder
        (komputer.toml); `envs`: variables every command gets; `metadata`: kept for get_info."""
        refused = {"mcp": (mcp, "K runs no MCP gateway"),
                   "network": (network, "K sandboxes reach only the virtual hosts their image declares"),
                   "iam": (iam, "K has no cloud identity to attach"),
                   "lifecycle": (lifecycle, "K sandboxes are not paused on a timer"),
                   "volume_mounts": (volume_mounts, "declare drives in the template's komputer.toml [drives]"),
                   "idempotency_key": (idempotency_key, "K has no control plane that replays a create")}
        for name, (value, why) in refused.items():
            if value:
                raise Unsupported(f"Sandbox.create({name}=...)", why)
        if allow_internet_access:
            raise Unsupported("Sandbox.create(allow_internet_access=True)",
                              "K sandboxes reach only the virtual hosts their image declares")
        endpoint = _endpoint(opts)
        try:
            if endpoint is not None:
                sandbox = core.run(core.RemoteSandbox.create_on(endpoint, template=template, envs=envs,
                                                                metadata=metadata, timeout=timeout or DEFAULT_TIMEOUT))
            else:
                sandbox = core.run(core.KSandbox.create(template=template, envs=envs, metadata=metadata,
                                                        timeout=timeout or DEFAULT_TIMEOUT))
        except FileNotFoundError as e:
            raise NotFoundException(str(e)) from e
        return cls(sandbox)

    @classmethod
    def _cls_connect_sandbox(cls, sandbox_id: str, timeout: int | None = None, logger: logging.Logger | None = None,
                             *, on_resume: Literal["restore", "reboot"] = "restore", **opts: Any) -> Sandbox:
        endpoint = _endpoint(opts)
        try:
            if endpoint is not None:
                return cls(core.run(core.RemoteSandbox.find_on(endpoint, sandbox_id)))
            return cls(core.run(core.KSandbox.find(sandbox_id)))
        except LookupError as e:
            raise SandboxNotFoundException(str(e)) from e

    @_Variant("_cls_connect_sandbox")
    def connect(self, timeout: int | None = None, *, on_resume: Literal["restore", "reboot"] = "restore",
                **opts: Any) -> Sandbox:
        """Connect to this sandbox (class call: `Sandbox.connect(sandbox_id)`, which also finds a
        durable sandbox another process made)."""
        return type(self)._cls_connect_sandbox(self.sandbox_id, timeout)

    @staticmethod
    def _cls_kill(sandbox_id: str, **opts: Any) -> bool:
        sandbox = core.sandboxes().get(sandbox_id)
        if sandbox is None:
            endpoint = _endpoint(opts)
            try:
                sandbox = core.run(core.RemoteSandbox.find_on(endpoint, sandbox_id) if endpoint is not None
                                   else core.KSandbox.find(sandbox_id))
            except LookupError:
                return False
        return core.run(sandbox.destroy())

    @_Variant("_cls_kill")
    def kill(self, **opts: Any) -> bool:
        """End the sandbox (its commands, sessions, computer and state); False if it was gone."""
        return core.run(self._sandbox.destroy())

    def is_running(self, request_timeout: float | None = None) -> bool:
        return self._sandbox.running

    @staticmethod
    def _cls_get_info(sandbox_id: str, **opts: Any) -> SandboxInfo:
        try:
            return Sandbox(core.run(core.KSandbox.find(sandbox_id)))._info()
        except LookupError as e:
            raise SandboxNotFoundException(str(e)) from e

    @_Variant("_cls_get_info")
    def get_info(self, **opts: Any) -> SandboxInfo:
        return self._info()

    def _info(self) -> SandboxInfo:
        s = self._sandbox
        if s.killed:
            raise SandboxNotFoundException(f"sandbox {s.id} was killed")
        started = datetime.fromtimestamp(s.started, UTC)
        end = datetime.fromtimestamp(s.started + (s.timeout or DEFAULT_TIMEOUT), UTC)
        return SandboxInfo(sandbox_id=s.id, sandbox_domain=None, template_id=s.template or "k", name=None,
                           metadata=dict(s.metadata), started_at=started, end_at=end, state=SandboxState.RUNNING,
                           cpu_count=_cpus(), memory_mb=0, envd_version="k")

    @staticmethod
    def _cls_set_timeout(sandbox_id: str, timeout: int, **opts: Any) -> None:
        raise Unsupported("Sandbox.set_timeout", "K sandboxes end when killed (or their program lets them go), "
                          "never on a timer")

    @_Variant("_cls_set_timeout")
    def set_timeout(self, timeout: int, **opts: Any) -> None:
        """Refused: a K sandbox has no lifetime timer."""
        type(self)._cls_set_timeout(self.sandbox_id, timeout)

    @staticmethod
    def list(query: Any = None, limit: int | None = None, next_token: str | None = None,
             order: Literal["asc", "desc"] | None = None, **opts: Any) -> SandboxPaginator:
        if query is not None:
            raise Unsupported("Sandbox.list(query=...)", "K sandboxes are listed by id only")
        return SandboxPaginator(core.KSandbox.known(), limit, order)

    @classmethod
    def _cls_fork_sandbox(cls, sandbox_id: str, timeout: int | None = None, count: int | None = None,
                          logger: logging.Logger | None = None, **opts: Any) -> list[Sandbox | Exception]:
        try:
            sandbox = core.run(core.KSandbox.find(sandbox_id))
        except LookupError as e:
            raise SandboxNotFoundException(str(e)) from e
        if count is not None and not 1 <= count <= 20:
            raise InvalidArgumentException(f"count {count}: an integer between 1 and 20")
        out: list[Sandbox | Exception] = []
        for _ in range(count or 1):  # each succeeds or fails on its own, as upstream's
            try:
                out.append(cls(core.run(sandbox.fork())))
            except Exception as e:  # noqa: BLE001 - the list says why this one failed
                out.append(e)
        return out

    @_Variant("_cls_fork_sandbox")
    def fork(self, timeout: int | None = None, count: int | None = None, **opts: Any) -> list[Sandbox | Exception]:
        """Sandboxes on K forks of this one's tree (overlay: what each writes stays in it), in
        the same computer, so they are made in O(1) and killed with this one; this program's only."""
        return type(self)._cls_fork_sandbox(self.sandbox_id, timeout, count)

    def pause(self, keep_memory: bool | None = None, *, mode: Literal["full", "filesystem"] | None = None,
              strict: bool = False, **opts: Any) -> bool:
        raise Unsupported("Sandbox.pause", "a K sandbox has nothing to pause: its state is durable and its "
                          "processes are rows (use a durable sandbox, K_SANDBOX_ROOT, and connect again)")

    def beta_pause(self, keep_memory: bool | None = None, *, mode: Literal["full", "filesystem"] | None = None,
                   **opts: Any) -> bool:
        return self.pause(keep_memory, mode=mode)

    def get_host(self, port: int) -> str:
        raise Unsupported("Sandbox.get_host", "K sandboxes listen on no ports; their virtual hosts are reached "
                          "with curl inside the sandbox")

    def upload_url(self, path: str, user: str | None = None, use_signature_expiration: int | None = None) -> str:
        raise Unsupported("Sandbox.upload_url", "K has no HTTP file endpoint; write with files.write or SFTP")

    def download_url(self, path: str, user: str | None = None, use_signature_expiration: int | None = None) -> str:
        raise Unsupported("Sandbox.download_url", "K has no HTTP file endpoint; read with files.read or SFTP")

    def get_metrics(self, start: datetime | None = None, end: datetime | None = None, **opts: Any) -> Any:
        raise Unsupported("Sandbox.get_metrics", "use komputer top/stats; no CPU or memory series are kept")

    def create_snapshot(self, name: str | None = None, *, mode: Literal["full", "filesystem"] | None = None,
                        **opts: Any) -> Any:
        raise Unsupported("Sandbox.create_snapshot", "K forks are trees of one computer, not images to boot")

    def update_network(self, network: Any, **opts: Any) -> Any:
        raise Unsupported("Sandbox.update_network", "network changes at run time: a K sandbox's hosts are its "
                          "image's")

    def get_mcp_url(self) -> str:
        raise Unsupported("Sandbox.get_mcp_url", "K runs no MCP gateway")

    def get_mcp_token(self) -> str:
        raise Unsupported("Sandbox.get_mcp_token", "K runs no MCP gateway")

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


class SandboxPaginator:
    """E2B's listing pages: every id in one page."""

    def __init__(self, ids: list[str], limit: int | None, order: str | None) -> None:
        self._ids = sorted(ids, reverse=order == "desc")
        self._limit = limit or len(self._ids) or 1
        self.has_next = True

    def next_items(self, **opts: Any) -> list[SandboxInfo]:
        page, self._ids = self._ids[:self._limit], self._ids[self._limit:]
        self.has_next = bool(self._ids)
        out = []
        for sandbox_id in page:
            try:
                out.append(Sandbox._cls_get_info(sandbox_id))
            except (SandboxNotFoundException, core.SDKError):
                continue
        return out


def _cpus() -> int:
    import os

    return os.cpu_count() or 1



# E2B's async client, the twin of `Sandbox` (exported here, as `e2b` exports it beside Sandbox)
from kshell.compat.e2b_async import (  # noqa: E402 - it builds on the classes above
    AsyncCommandHandle,
    AsyncCommandInputHandle,
    AsyncSandbox,
    AsyncSandboxPaginator,
    AsyncWatchHandle,
)

__all__ += ["AsyncCommandHandle", "AsyncCommandInputHandle", "AsyncSandbox", "AsyncSandboxPaginator",
            "AsyncWatchHandle"]

# E2B's git helpers' results (sandbox.git is kshell.compat.e2b_git's)
from kshell.compat.e2b_git import GitBranches, GitFileStatus, GitStatus  # noqa: E402

__all__ += ["GitBranches", "GitFileStatus", "GitStatus"]
