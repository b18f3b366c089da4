"""The SDK's session surface against a remote appliance, over SSH alone (`Komputer.connect`).

A program on another machine drives an agent of a served state (`komputer serve`) with the same
calls as a local `AgentSession`, and exactly the authority of that agent's SSH login:

- one asyncssh connection per `RemoteSession`, which is one durable agent session on the
  server (kshell.server.app: a connection is one session; its channels share it);
- `exec`: one exec channel per command line, with `K_SESSION` (and `K_MODE`) set as
  `ssh -o SetEnv=...` would; a named session carries cwd and exported variables from command
  to command and across `detach` and a later `connect(session=...)`;
- `fs`: SFTP on the same connection (the server's SFTP is the agent's view of the files: its
  uid, mode, rules, forks and drives);
- `events`, `fork`, `stats`, `close`: the server's `komputer-api` subsystem
  (kshell.server.api), whose channel also holds the session's lease while connected.

Nothing here leaves a thread behind: what asyncssh and asyncio run in an executor while a
connection is made runs in a one-thread executor of the SDK's, shut down once connected.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import inspect
import ipaddress
import json
import os
import posixpath
import secrets
import socket
import stat as statmod
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

import asyncssh

from kshell.sdk.commands import scoped
from kshell.sdk.types import ExecResult, FileStat, KomputerClosed, LeaseHeld, SDKError, WalkEntry

__all__ = ["RemoteFS", "RemoteSession", "connect"]

API_SUBSYSTEM = "komputer-api"  # kshell.server.api.SUBSYSTEM (not imported: a client needs no server code)
INTERRUPT_GRACE = 10.0  # seconds an interrupted command has to end before its channel is closed
_ERRORS = {"PermissionError": PermissionError, "ValueError": ValueError, "LookupError": LookupError}

# SFTP status codes (v4+, which a v3 server sends as FX_FAILURE with the message) -> errno
_SFTP_ERRNO = {
    asyncssh.FX_NO_SUCH_FILE: errno.ENOENT, asyncssh.FX_PERMISSION_DENIED: errno.EACCES,
    asyncssh.FX_FILE_ALREADY_EXISTS: errno.EEXIST, asyncssh.FX_WRITE_PROTECT: errno.EROFS,
    asyncssh.FX_NO_SPACE_ON_FILESYSTEM: errno.ENOSPC, asyncssh.FX_QUOTA_EXCEEDED: errno.EDQUOT,
    asyncssh.FX_DIR_NOT_EMPTY: errno.ENOTEMPTY, asyncssh.FX_NOT_A_DIRECTORY: errno.ENOTDIR,
    asyncssh.FX_INVALID_FILENAME: errno.EINVAL, asyncssh.FX_LINK_LOOP: errno.ELOOP,
    asyncssh.FX_INVALID_PARAMETER: errno.EINVAL, asyncssh.FX_FILE_IS_A_DIRECTORY: errno.EISDIR,
    asyncssh.FX_OP_UNSUPPORTED: errno.EOPNOTSUPP, asyncssh.FX_NO_MEDIA: errno.ENOMEDIUM,
}
# what the server's messages start with (kshell.server.sftp: the VFS error's strerror)
_STRERROR = {os.strerror(n): n for n in (
    errno.ENOENT, errno.EACCES, errno.EPERM, errno.EEXIST, errno.EROFS, errno.ENOSPC, errno.EDQUOT,
    errno.ENOTEMPTY, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EILSEQ, errno.ELOOP, errno.EINVAL,
    errno.EISDIR, errno.EBADF, errno.EOPNOTSUPP, errno.EBUSY, errno.EXDEV, errno.EFBIG, errno.EMLINK,
)}
_FILE_TYPES = {
    asyncssh.FILEXFER_TYPE_REGULAR: statmod.S_IFREG, asyncssh.FILEXFER_TYPE_DIRECTORY: statmod.S_IFDIR,
    asyncssh.FILEXFER_TYPE_SYMLINK: statmod.S_IFLNK,
}


@dataclass(frozen=True, slots=True)
class _Target:
    """Where and as whom to connect: kept so that `fork()` opens its session the same way."""

    host: str
    port: int
    agent: str
    key: str | None
    known_hosts: str | None


def _parse(url: str) -> tuple[str, str, int]:
    """(agent, host, port) of `ssh://AGENT@HOST[:PORT]`."""
    parts = urlsplit(url)
    if parts.scheme != "ssh" or not parts.username or not parts.hostname or parts.path not in ("", "/"):
        raise ValueError(f"{url!r}: expected ssh://AGENT@HOST[:PORT]")
    try:
        port = parts.port or 22
    except ValueError as e:
        raise ValueError(f"{url!r}: {e}") from None
    return unquote(parts.username), parts.hostname, port


@dataclass(slots=True)
class _Swap:
    """The executor the SDK put in place of a loop's default one, and how many connects use it."""

    pool: concurrent.futures.ThreadPoolExecutor
    saved: Any
    users: int = 0


_SWAPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Swap] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def _own_executor() -> AsyncIterator[concurrent.futures.ThreadPoolExecutor]:
    """A one-thread executor that is the loop's default one while connections are being made,
    then shut down: asyncssh builds its options (reading key and config files) and asyncio
    resolves host names in the loop's default executor, whose threads would otherwise live as
    long as the loop. Connects made at once share it; the last one puts the loop's own back.
    Nothing of the SDK's is left running after `detach()` or `close()`."""
    loop = asyncio.get_running_loop()
    swap = _SWAPS.get(loop)
    if swap is None:
        pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="kshell-sdk-connect")
        swap = _SWAPS[loop] = _Swap(pool, getattr(loop, "_default_executor", None))
        if hasattr(loop, "_default_executor"):  # asyncio has no public way to put the old one back
            loop._default_executor = pool  # type: ignore[attr-defined]  # noqa: SLF001
    swap.users += 1
    try:
        yield swap.pool
    finally:
        swap.users -= 1
        if swap.users == 0:
            del _SWAPS[loop]
            if getattr(loop, "_default_executor", None) is swap.pool:
                loop._default_executor = swap.saved  # type: ignore[attr-defined]  # noqa: SLF001
            swap.pool.shutdown(wait=False)  # anything still queued runs, then its thread ends


async def _resolve(host: str, port: int, pool: concurrent.futures.Executor) -> str:
    """An address for `host` (asyncssh is then given the address, and the name for known_hosts)."""
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(host)
        return host
    loop = asyncio.get_running_loop()
    infos = await loop.run_in_executor(pool, socket.getaddrinfo, host, port, 0, socket.SOCK_STREAM)
    return str(infos[0][4][0])


async def _open(target: _Target, session: str, mode: str | None) -> RemoteSession:
    async with _own_executor() as pool:
        return await _connect(target, session, mode, await _resolve(target.host, target.port, pool))


async def _connect(target: _Target, session: str, mode: str | None, host: str) -> RemoteSession:
    options: dict[str, Any] = {
        "username": target.agent, "host_key_alias": target.host if host != target.host else None,
        "known_hosts": () if target.known_hosts is None else target.known_hosts,
    }
    if target.key is not None:
        options["client_keys"] = [target.key]
        options["agent_path"] = None  # this key and no other: as ssh -i KEY -o IdentitiesOnly=yes
    try:
        conn = await asyncssh.connect(host, target.port, **options)
    except asyncssh.PermissionDenied as e:
        raise PermissionError(errno.EACCES,
                              f"ssh {target.agent}@{target.host}: permission denied ({e.reason})") from None
    except asyncssh.HostKeyNotVerifiable as e:
        raise ConnectionError(f"ssh {target.host}: host key not verifiable ({e.reason}); pass known_hosts= a file "
                              "with the appliance's key (ssh-keyscan prints it: check it against the "
                              "fingerprint `komputer serve` prints)") from None
    env = {"K_SESSION": session}
    if mode is not None:
        env["K_MODE"] = mode
    try:
        remote = RemoteSession(conn, target, env)
        await remote._start()  # noqa: SLF001
    except BaseException:
        conn.close()
        await conn.wait_closed()
        raise
    return remote


async def connect(url: str, *, key: str | os.PathLike[str] | None = None,
                  known_hosts: str | os.PathLike[str] | None = None,
                  session: str | None = None, mode: str | None = None) -> RemoteSession:
    """A session of agent AGENT on the appliance at `url` (`ssh://AGENT@HOST[:PORT]`, port 22
    by default), with that agent's authority and nothing more.

    `key`: the private key file to log in with (None: the ssh agent and ~/.ssh's keys, as ssh
    does); `known_hosts`: the file that must hold the appliance's host key (None:
    ~/.ssh/known_hosts); `session`: the session's name, to resume a detached one (None: a fresh
    name, see `.id`); `mode`: a restricted mode for the session (`limited`, `plan`, `readonly`:
    `K_MODE`), never looser than what the server and the key impose. Raises `LeaseHeld` while
    another connection holds the session, `PermissionError` when the key is refused.
    Usable as `async with await connect(...) as agent:` (leaving detaches)."""
    agent, host, port = _parse(url)
    target = _Target(host, port, agent, None if key is None else os.fspath(key),
                     None if known_hosts is None else os.fspath(known_hosts))
    return await _open(target, session or f"sdk-{secrets.token_hex(6)}", mode)


def _sftp_oserror(e: asyncssh.SFTPError, path: str) -> OSError:
    """The OSError a Unix user expects for an SFTP status: FileNotFoundError, and so on. A v3
    server sends the newer codes as FX_FAILURE (and ENOTDIR as FX_NO_SUCH_FILE), so the errno
    is read first from its message, which starts with the strerror (kshell.server.sftp); a
    permission-denied status is always a PermissionError (a mode's refusal keeps EROFS, as
    kfs.vfs.policy.Refusal does)."""
    reason = e.reason or ""
    number = next((n for text, n in _STRERROR.items() if reason.startswith(text)), None)
    if e.code == asyncssh.FX_PERMISSION_DENIED:
        return PermissionError(number or errno.EACCES, reason or os.strerror(errno.EACCES), path)
    number = number or _SFTP_ERRNO.get(e.code, errno.EIO)
    return OSError(number, reason or os.strerror(number), path)


class RemoteSession:
    """One agent session on a remote appliance: the surface of the local `AgentSession`.

    `agent`: the agent's name; `id`: the session's name (K_SESSION), to resume it after
    `detach()` with `connect(url, session=id)`; `home`, `mode`, `fork_number`: as the server
    reports them (the mode with every floor applied; the fork the session works in, or None)."""

    def __init__(self, conn: asyncssh.SSHClientConnection, target: _Target, env: dict[str, str]) -> None:
        self._conn = conn
        self._target = target
        self._env = env
        self._api: asyncssh.SSHClientProcess[bytes] | None = None
        self._api_lock = asyncio.Lock()
        self._sftp: asyncssh.SFTPClient | None = None
        self._sftp_lock = asyncio.Lock()
        self._closed = False
        self._slots = asyncio.Semaphore(1)  # exec and events channels at once: set from the greeting
        self.agent = target.agent
        self.id = env["K_SESSION"]
        self.home = ""
        self.mode = "full"
        self.fork_number: int | None = None
        self.fs = RemoteFS(self)

    def __repr__(self) -> str:
        return f"<RemoteSession {self.agent}/{self.id} on {self._target.host}:{self._target.port}>"

    async def __aenter__(self) -> RemoteSession:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.detach()

    # -- the api channel -----------------------------------------------------------------------

    async def _channel(self) -> tuple[asyncssh.SSHClientProcess[bytes], dict[str, Any]]:
        """A new komputer-api channel of this session and the server's greeting."""
        try:
            process = await self._conn.create_process(subsystem=API_SUBSYSTEM, env=self._env, encoding=None)
        except asyncssh.Error as e:
            if self._conn.is_closed():
                raise self._lost(e) from None
            raise SDKError(f"{self._target.host} refused the {API_SUBSYSTEM} subsystem ({e.reason}): a K server "
                           "with the SDK's API is needed, and a key without a forced command") from None
        try:
            hello = await self._line(process)
        except ValueError:  # not JSON: something else answered (a forced command runs instead)
            hello = None
        if not isinstance(hello, dict) or "ok" not in hello:
            process.close()
            raise SDKError(f"{self._target.host}: no {API_SUBSYSTEM} answered: a K server with the SDK's API is "
                           "needed, and a key without a forced command")
        if not hello.get("ok"):
            process.close()
            raise _api_error(hello)
        return process, hello

    @staticmethod
    async def _line(process: asyncssh.SSHClientProcess[bytes]) -> dict[str, Any] | None:
        try:
            line = await process.stdout.readline()
        except (asyncssh.Error, ConnectionError):
            return None
        return json.loads(line) if line else None

    async def _start(self) -> None:
        self._api, hello = await self._channel()  # it takes the session's lease (or LeaseHeld)
        self.id, self.home, self.mode, self.fork_number = hello["session"], hello["home"], hello["mode"], hello["fork"]
        # the server's MaxSessions counts every channel of the connection: this one and SFTP's
        # are kept open, the rest is for commands and event streams (more wait for a free one)
        self._slots = asyncio.Semaphore(max(1, int(hello.get("channels", 10)) - 2))

    async def _request(self, op: str, **args: Any) -> dict[str, Any]:
        self._check()
        async with self._api_lock:
            api = self._api
            assert api is not None
            try:
                api.stdin.write(json.dumps({"op": op, **args}).encode() + b"\n")
            except (asyncssh.Error, ConnectionError, BrokenPipeError) as e:
                raise self._lost(e) from None
            reply = await self._line(api)
        if reply is None:
            raise self._lost(None)
        if not reply.get("ok"):
            raise _api_error(reply)
        return reply

    def _check(self) -> None:
        if self._closed:
            raise KomputerClosed(f"session {self.agent}/{self.id} is detached or closed")

    def _lost(self, e: BaseException | None) -> Exception:
        if isinstance(e, asyncssh.ChannelOpenError) and not self._conn.is_closed():
            return SDKError(f"session {self.agent}/{self.id}: {self._target.host} refused a channel ({e.reason})")
        return KomputerClosed(f"session {self.agent}/{self.id}: the connection to {self._target.host} is gone"
                              + (f" ({e})" if e is not None and str(e) else ""))

    # -- commands ------------------------------------------------------------------------------

    async def exec(self, command: str, *, stdin: bytes | str | None = None, env: dict[str, str] | None = None,
                   cwd: str | None = None, timeout: float | None = None,
                   on_output: Callable[[str, bytes], Any] | None = None) -> ExecResult:
        """Run one command line in the agent's K shell, as `ssh AGENT@HOST COMMAND` does.

        `stdin`: all of the command's input (None: none, as `< /dev/null`); `env`, `cwd`: for
        this command only, as `(cd DIR && VAR=... COMMAND)` (the session keeps its own);
        `on_output(stream, chunk)`: called with "stdout" or "stderr" and each chunk as it
        arrives (a coroutine function is awaited); `timeout`: seconds, after which the command
        is interrupted as Ctrl-C would and TimeoutError is raised."""
        self._check()
        line = scoped(command, env, cwd)
        async with self._slots:
            return await self._exec(command, line, stdin, timeout, on_output)

    async def _exec(self, command: str, line: str, stdin: bytes | str | None, timeout: float | None,
                    on_output: Callable[[str, bytes], Any] | None) -> ExecResult:
        self._check()
        try:
            process = await self._conn.create_process(line, env=self._env, encoding=None)
        except (asyncssh.ChannelOpenError, asyncssh.ConnectionLost, asyncssh.DisconnectError) as e:
            raise self._lost(e) from None
        out: list[bytes] = []
        err: list[bytes] = []

        async def pump(stream: asyncssh.SSHReader[bytes], name: str, into: list[bytes]) -> None:
            while chunk := await stream.read(65536):
                into.append(chunk)
                if on_output is not None:
                    result = on_output(name, chunk)
                    if inspect.isawaitable(result):
                        await result

        async def feed() -> None:
            with contextlib.suppress(asyncssh.Error, BrokenPipeError, ConnectionError):
                if stdin:
                    process.stdin.write(stdin.encode("utf-8", "surrogateescape") if isinstance(stdin, str) else stdin)
                    await process.stdin.drain()
                process.stdin.write_eof()

        async def run() -> None:
            await asyncio.gather(pump(process.stdout, "stdout", out), pump(process.stderr, "stderr", err), feed())
            await process.wait_closed()

        task = asyncio.ensure_future(run())
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
            if not done:  # interrupt it as Ctrl-C does, and wait for the shell to end it
                with contextlib.suppress(asyncssh.Error, OSError):
                    process.send_signal("INT")
                done, _ = await asyncio.wait({task}, timeout=INTERRUPT_GRACE)
                if not done:
                    process.close()
                    await asyncio.wait({task}, timeout=INTERRUPT_GRACE)
                raise TimeoutError(f"{command!r}: timed out after {timeout:g} s (interrupted)")
            task.result()
        except (asyncssh.ConnectionLost, asyncssh.DisconnectError) as e:
            raise self._lost(e) from None
        finally:
            if not task.done():  # cancelled, or on_output raised: hang up, as a closed ssh does
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            if process.exit_status is None and process.exit_signal is None:
                with contextlib.suppress(asyncssh.Error, OSError):
                    process.send_signal("INT")
                process.close()
        status = process.exit_status
        return ExecResult(b"".join(out), b"".join(err), 255 if status is None or status < 0 else status)

    # -- events, forks, approvals, counters ----------------------------------------------------

    async def events(self, since: int | None = None) -> AsyncIterator[dict[str, Any]]:
        """The agent's own events in order (each a dict with `seq`, `type`, `ts` and its data),
        after `since` (None: from the oldest the appliance keeps), following new ones until the
        caller stops iterating, this session is closed, or it is detached."""
        self._check()
        async with self._slots:
            process, _ = await self._channel()
            try:
                process.stdin.write(json.dumps({"op": "events", "since": since or 0}).encode() + b"\n")
                while True:
                    line = await self._line(process)
                    if line is None:
                        return
                    if "event" not in line:
                        raise _api_error(line)
                    yield line["event"]
            finally:
                process.close()

    async def fork(self, *, mode: str = "full", hooks: bool = True, disk: str = "overlay",
                   scope: list[str] | None = None) -> RemoteSession:
        """A session (`fork-N`, on a connection of its own) in a new fork of this session's tree
        (the state's, or the fork this session works in), for this agent: its mode is at least
        as strict as this session's, a limited fork's `scope` stays inside this session's fork's,
        and `hooks=False` is refused where the image has hooks. `disk`: "overlay" (the fork's
        writes stay in it) or "shared" (they go to the parent's tree). Merging and discarding
        are the operator's (`komputer fork merge|discard N`)."""
        reply = await self._request("fork", mode=mode, hooks=hooks, disk=disk, scope=list(scope or ()))
        return await _open(self._target, reply["session"], reply["mode"])

    async def decide(self, id: int, decision: str, reason: str | None = None) -> None:
        """Approvals are the operator's (`komputer decide ID allow|reject`): an agent's session
        over SSH may not decide them, so this raises PermissionError (as the server answers)."""
        await self._request("decide", id=id, decision=decision, reason=reason)

    async def processes(self, session: str | None = None) -> list[dict[str, Any]]:
        """The agent's live processes on the appliance (its process table's rows, each with
        `pid`, `session`, `argv`, `status`...), whichever connection or program started them;
        with `session`, that session's rows, ended ones too."""
        extra = {} if session is None else {"session": session}
        return list((await self._request("processes", **extra))["processes"])

    async def kill(self, pid: int, signal: int = 15) -> bool:
        """Send `signal` to the agent's process `pid`; False when it is not running."""
        return bool((await self._request("kill", pid=pid, signal=signal))["found"])

    async def stats(self) -> dict[str, Any]:
        """The agent's counters as the appliance keeps them: its sessions (`sessions`, and
        `attached` ones), live processes (`processes`, `session_processes`), `events` kept,
        `forks`; and this session's `agent`, `session`, `mode`, `fork`."""
        reply = await self._request("stats")
        reply.pop("ok", None)
        return reply

    # -- the end -------------------------------------------------------------------------------

    async def detach(self) -> None:
        """Release the session's lease (the connection ends); the session stays on the
        appliance, with its cwd and exported variables, for `connect(url, session=self.id)`."""
        if self._closed:
            return
        self._closed = True
        self._conn.close()
        await self._conn.wait_closed()

    async def close(self) -> None:
        """End the durable session: when the connection is gone its record goes with the lease
        (nothing to resume) and a `session.close` event says so."""
        if self._closed:
            return
        with contextlib.suppress(KomputerClosed):
            await self._request("close")
        await self.detach()


def _api_error(reply: dict[str, Any]) -> Exception:
    kind, message = reply.get("error"), str(reply.get("message", "refused"))
    if kind == "LeaseHeld":
        return LeaseHeld(message)
    if kind == "PermissionError":
        return PermissionError(errno.EACCES, message)
    return _ERRORS.get(str(kind), SDKError)(message)


class RemoteFS:
    """The agent's files over SFTP on the session's connection, in the agent's view (its uid,
    mode and rules, its fork): `~` and relative paths are the agent's home. Errors are OSError
    subclasses with the errno a Unix user expects."""

    def __init__(self, session: RemoteSession) -> None:
        self._session = session

    async def _client(self) -> asyncssh.SFTPClient:
        s = self._session
        s._check()  # noqa: SLF001
        async with s._sftp_lock:  # noqa: SLF001
            if s._sftp is None:  # noqa: SLF001
                try:
                    s._sftp = await s._conn.start_sftp_client(env=s._env, path_errors="surrogateescape")  # noqa: SLF001
                except (asyncssh.Error, OSError) as e:
                    raise s._lost(e) from None  # noqa: SLF001
            return s._sftp  # noqa: SLF001

    def path(self, path: str | os.PathLike[str]) -> str:
        """The absolute path `path` names for the agent (`~` and relative paths: its home)."""
        return self._path(path)

    def _path(self, path: str | os.PathLike[str]) -> str:
        p = os.fspath(path)
        home = self._session.home
        if p == "~" or p.startswith("~/"):
            p = home + p[1:]
        return p if p.startswith("/") else posixpath.normpath(posixpath.join(home, p))

    @contextlib.contextmanager
    def _errors(self, path: str) -> Any:
        try:
            yield
        except asyncssh.SFTPError as e:
            raise _sftp_oserror(e, path) from None
        except (asyncssh.ConnectionLost, asyncssh.DisconnectError) as e:
            raise self._session._lost(e) from None  # noqa: SLF001

    async def read_file(self, path: str | os.PathLike[str]) -> bytes:
        p = self._path(path)
        sftp = await self._client()
        with self._errors(os.fspath(path)):
            async with sftp.open(p, "rb") as f:
                return await f.read()

    async def read_text(self, path: str | os.PathLike[str]) -> str:
        return (await self.read_file(path)).decode("utf-8", "surrogateescape")

    async def _put(self, path: str | os.PathLike[str], data: bytes | str, how: str, mode: int) -> int:
        raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)
        p = self._path(path)
        sftp = await self._client()
        with self._errors(os.fspath(path)):
            async with sftp.open(p, how, asyncssh.SFTPAttrs(permissions=mode)) as f:
                await f.write(raw)
        return len(raw)

    async def write_file(self, path: str | os.PathLike[str], data: bytes | str, *, mode: int = 0o666) -> int:
        """Create or replace the file; the number of bytes written."""
        return await self._put(path, data, "wb", mode)

    async def append_file(self, path: str | os.PathLike[str], data: bytes | str, *, mode: int = 0o666) -> int:
        return await self._put(path, data, "ab", mode)

    async def mkdir(self, path: str | os.PathLike[str], *, parents: bool = False, mode: int = 0o777) -> None:
        """`mkdir` (FileExistsError when it exists); `parents`: as `mkdir -p`."""
        p = self._path(path)
        sftp = await self._client()
        with self._errors(os.fspath(path)):
            if not parents:
                await sftp.mkdir(p, asyncssh.SFTPAttrs(permissions=mode))
                return
            parts = p.strip("/").split("/")
            for i in range(1, len(parts) + 1):
                step = "/" + "/".join(parts[:i])
                if await sftp.isdir(step):  # as mkdir -p: what exists is not made again (nor judged)
                    continue
                try:
                    await sftp.mkdir(step, asyncssh.SFTPAttrs(permissions=mode))
                except asyncssh.SFTPError as e:
                    if _sftp_oserror(e, step).errno != errno.EEXIST:
                        raise
                    if not await sftp.isdir(step):
                        raise OSError(errno.ENOTDIR if i < len(parts) else errno.EEXIST,
                                      os.strerror(errno.ENOTDIR if i < len(parts) else errno.EEXIST),
                                      os.fspath(path)) from None

    async def rename(self, src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        """POSIX rename: an existing `dst` file is replaced."""
        sftp = await self._client()
        with self._errors(os.fspath(src)):
            await sftp.posix_rename(self._path(src), self._path(dst))

    async def rm(self, path: str | os.PathLike[str], *, recursive: bool = False, force: bool = False) -> None:
        """As `rm` (`-r`: a directory and all it holds; `-f`: a missing path is no error);
        a directory without `recursive` is IsADirectoryError."""
        p = self._path(path)
        sftp = await self._client()
        with self._errors(os.fspath(path)):
            try:
                attrs = await sftp.lstat(p)
            except asyncssh.SFTPError as e:
                if force and _sftp_oserror(e, p).errno == errno.ENOENT:
                    return
                raise
            if attrs.type != asyncssh.FILEXFER_TYPE_DIRECTORY:
                await sftp.remove(p)
            elif not recursive:
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
            else:
                await self._rmtree(sftp, p)

    async def _rmtree(self, sftp: asyncssh.SFTPClient, path: str) -> None:
        for entry in await sftp.readdir(path):
            if entry.filename in (".", ".."):
                continue
            child = posixpath.join(path, entry.filename)
            if entry.attrs.type == asyncssh.FILEXFER_TYPE_DIRECTORY:
                await self._rmtree(sftp, child)
            else:
                await sftp.remove(child)
        await sftp.rmdir(path)

    async def walk(self, path: str | os.PathLike[str] = ".") -> list[WalkEntry]:
        """os.walk's shape, top-down, names sorted, symlinks to directories not followed (listed
        with the files)."""
        top = os.fspath(path).rstrip("/") or "/"
        sftp = await self._client()
        found: list[WalkEntry] = []

        async def visit(shown: str) -> None:
            with self._errors(shown):
                entries = [e for e in await sftp.readdir(self._path(shown)) if e.filename not in (".", "..")]
            dirs = sorted(e.filename for e in entries if e.attrs.type == asyncssh.FILEXFER_TYPE_DIRECTORY)
            files = sorted(e.filename for e in entries if e.attrs.type != asyncssh.FILEXFER_TYPE_DIRECTORY)
            found.append(WalkEntry(shown, dirs, files))
            for name in dirs:
                await visit(shown + "/" + name if shown != "/" else "/" + name)

        await visit(top)
        return found

    async def stat(self, path: str | os.PathLike[str], *, follow: bool = True) -> FileStat:
        """`stat` (`follow=False`: `lstat`). SFTP v3 carries times in seconds and no link count
        (`nlink` is 1 unless the server says)."""
        p = self._path(path)
        sftp = await self._client()
        with self._errors(os.fspath(path)):
            a = await (sftp.stat(p) if follow else sftp.lstat(p))
        mode = a.permissions or 0
        if not statmod.S_IFMT(mode):
            mode |= _FILE_TYPES.get(a.type, 0)

        def ns(sec: int | None, frac: int | None) -> int:
            return 0 if sec is None else sec * 1_000_000_000 + (frac or 0)

        return FileStat(mode=mode, uid=a.uid or 0, gid=a.gid or 0, size=a.size or 0, nlink=a.nlink or 1,
                        mtime=ns(a.mtime, a.mtime_ns), atime=ns(a.atime, a.atime_ns), ctime=ns(a.ctime, a.ctime_ns))

    async def exists(self, path: str | os.PathLike[str]) -> bool:
        try:
            await self.stat(path)
        except FileNotFoundError:
            return False
        return True

    async def chmod(self, path: str | os.PathLike[str], mode: int) -> None:
        sftp = await self._client()
        with self._errors(os.fspath(path)):
            await sftp.chmod(self._path(path), mode)

    async def symlink(self, target: str, path: str | os.PathLike[str]) -> None:
        """A symlink at `path` pointing to `target` (kept as given), as `ln -s TARGET PATH`."""
        sftp = await self._client()
        with self._errors(os.fspath(path)):
            await sftp.symlink(target, self._path(path))

    async def readlink(self, path: str | os.PathLike[str]) -> str:
        sftp = await self._client()
        with self._errors(os.fspath(path)):
            return await sftp.readlink(self._path(path))
