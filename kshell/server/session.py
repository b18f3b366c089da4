"""A session channel: `ssh host CMD` (exec) and the interactive shell with a PTY.

Exec sessions without a PTY run in bytes mode, so any byte sequence passes through stdin,
stdout and stderr unchanged. With a PTY, asyncssh's line editor gives line editing and
history; Ctrl-C arrives as a break (the OpenSSH client sends `\\x03`, never a signal), which
interrupts the running command (status 130) or clears the half-typed line at the prompt.
A window change updates `COLUMNS`/`LINES` before the next command (bash's checkwinsize). The
interactive shell has job control, as bash's: Ctrl-Z stops the running command, which becomes a
job (`^Z`, then `[1]+  Stopped  ...` and the prompt; `$?` is 148) for jobs, fg, bg and kill; job
notices are printed before the prompt; the first exit with stopped jobs only warns.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fnmatch
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import asyncssh

from kfs.agents import BadSessionName, LeaseHeld, SessionRecord
from kfs.agents.sessions import shown_value
from kfs.vfs.policy import stricter
from kshell.server.prompt import CTRL_Z, INTERRUPTED, Interrupted, prompt_loop, prompt_text, suspend_line
from kshell.server.terminals import TerminalError
from kshell.server.workers import WorkerShell

if TYPE_CHECKING:
    from kfs.agents import Agent
    from kfs.kstate import KState
    from kshell.server.auth import Connection
    from kshell.server.config import ServerConfig
    from kshell.server.leases import SessionLeases
    from kshell.server.terminals import PersistentTerminal, Terminals


def accepted_env(client_env: dict[str, str], patterns: tuple[str, ...]) -> dict[str, str]:
    """Client variables (SendEnv/SetEnv) that match the AcceptEnv-style allow-list."""
    return {
        k: v for k, v in client_env.items()
        if isinstance(k, str) and any(fnmatch.fnmatchcase(k, p) for p in patterns)
    }


class SessionHost(Protocol):
    """What a session channel uses of its server (kshell.server.app.KServer wires it): the state
    and settings, the sessions and leases, the audit, the persistent terminals and the shell
    maker."""

    state: KState
    config: ServerConfig
    hostname: str
    leases: SessionLeases
    terminals: Terminals

    async def audit(self, type_: str, **data: Any) -> None:
        """Append an event and wait until it is written (kshell.server.audit)."""

    def make_shell(self, agent: Agent, record: SessionRecord, env: dict[str, str], *, tty: bool = False,
                   front: str | None = None, hosts: dict[str, Any] | None = None) -> WorkerShell: ...


def client_env(config: ServerConfig, conn: Connection, sent: Any) -> dict[str, str]:
    """What a channel's client set (SendEnv/SetEnv) that the server accepts, with the mode
    floored by the server's `mode` and the key's environment="K_MODE=...": floors the client
    cannot lower (every channel kind, shell or komputer-api, reads its mode from here)."""
    env = accepted_env(dict(sent or {}), config.accept_env)
    floor = stricter(config.mode, conn.key_mode())
    if floor != "full":
        env["K_MODE"] = stricter(floor, env.get("K_MODE") or "full")
    return env


def fork_refusal(state: Any, agent: str, env: dict[str, str]) -> str | None:
    """Why a session naming a fork (K_FORK=N, or the session name K_SESSION=fork-N) may not run
    in it (None: it may; its mode is then the stricter of the session's and the fork's): the
    fork must exist and be the agent's."""
    fork = env.get("K_FORK")
    named = env.get("K_SESSION") or ""
    if fork is None and named.startswith("fork-"):
        fork = env["K_FORK"] = named[len("fork-"):]
    if fork is None:
        return None
    from kfs import forks

    shown = shown_value(fork)
    if not fork.isascii() or not fork.isdigit() or len(fork) > 18:  # a fork number is a u64 key
        return f"K_FORK={shown}: no such fork (komputer fork list shows them)"
    try:
        record = forks.get(state, int(fork))
    except forks.ForkError:
        return f"K_FORK={shown}: no such fork (komputer fork list shows them)"
    if record.get("agent") != agent:
        return f"K_FORK={shown}: the fork is not agent {agent}'s (komputer fork create --agent {agent})"
    env["K_FORK"] = str(record["id"])
    env["K_MODE"] = stricter(env.get("K_MODE") or "full", record["mode"])
    return None


def bytes_mode(process: asyncssh.SSHServerProcess) -> None:
    """Switch a session to raw bytes, as asyncssh does itself for SFTP; text decoding of binary
    data on an exec channel would otherwise drop the whole connection."""
    process._chan.set_encoding(None)  # noqa: SLF001 - before the process object is started
    process._encoding = None  # noqa: SLF001 - the stream session keeps its own copy


class Output:
    """A channel writer for the shell's bytes: decoded incrementally on a PTY, raw otherwise."""

    def __init__(self, writer: asyncssh.SSHWriter, text: bool, touch: Callable[[], None] = lambda: None, *,
                 screen: bool = False) -> None:
        self._writer = writer
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace") if text else None
        self._touch = touch  # output is traffic: a command printing keeps the connection from idling out
        chan: Any = writer.channel
        self._past_editor = getattr(chan, "_orig_chan", chan).write
        # bytes a terminal takes as they are, past the channel's line editor, which would add a
        # CR to each LF (CR CR LF after a pty's ONLCR, and a TUI's bare-LF cursor moves broken)
        # and redraw its (empty) line around them: a persistent terminal's (`screen`), and a
        # delegated program's while it has a pty of its own (SessionHandler._raw sets it)
        self.raw = screen

    async def write(self, data: bytes) -> None:
        self._touch()
        try:
            send = self._past_editor if self.raw else self._writer.write
            send(self._decoder.decode(data) if self._decoder else data)
            await self._writer.drain()
        except (asyncssh.Error, BrokenPipeError, ConnectionError):
            pass  # the client went away; the command is being cancelled

    def text(self, s: str) -> None:
        self._writer.write(s if self._decoder else s.encode())


class SessionHandler:
    """Runs one session channel for an authenticated agent; its shell lives in a worker."""

    def __init__(self, server: SessionHost, conn: Connection, process: asyncssh.SSHServerProcess) -> None:
        self.server = server
        self.conn = conn
        self.process = process
        self.pty = process.term_type is not None
        self.runner: WorkerShell | None = None
        self.record: SessionRecord | None = None
        self.status = 0
        self._park: asyncio.TimerHandle | None = None
        self._line = False  # a command line was sent and has not finished
        self._out: Output | None = None  # the interactive shell's writers
        self._tty: Output | None = None  # the terminal's writer (a PTY session's)
        self._err: Output | None = None
        process._k_handler = self  # type: ignore[attr-defined]

    @property
    def running(self) -> bool:
        """A command line was sent and has not finished (a break interrupts it)."""
        return self._line

    def _env(self) -> dict[str, str]:
        agent = self.conn.agent
        assert agent is not None
        p, c = self.process, self.conn
        env = {
            "HOME": agent.home, "USER": agent.name, "LOGNAME": agent.name,
            "SSH_CONNECTION": f"{c.peer_addr} {c.peer_port} {c.local_addr} {c.local_port}",
            "SSH_CLIENT": f"{c.peer_addr} {c.peer_port} {c.local_port}",
        }
        if self.pty:
            env["TERM"] = p.term_type or "dumb"
            cols, lines = p.term_size[:2]
            if cols:
                env["COLUMNS"], env["LINES"] = str(cols), str(lines)
        env.update(client_env(self.server.config, self.conn, p.env))
        original = getattr(p.channel, "original_command", None)  # a forced command ran instead (app.py)
        if original is not None:
            env["SSH_ORIGINAL_COMMAND"] = original
        return env

    async def run(self) -> None:
        process = self.process
        out = Output(process.stdout, self.pty, self.conn.touch)
        err = out if self.pty else Output(process.stderr, False, self.conn.touch)  # a terminal shows both
        self._tty = out if self.pty else None
        agent = self.conn.agent
        assert agent is not None
        env = self._env()
        command = process.command  # asyncssh has already put a forced command (command=) here
        refused = fork_refusal(self.server.state, agent.name, env)
        if refused is not None:
            err.text(f"komputer: {refused}\n")
            process.exit(1)
            return
        if self.pty and env.get("K_SESSION") and self.conn.forced_command is None:
            if env.get("K_PERSIST") == "1" or self.server.terminals.get(agent.name, env["K_SESSION"]):
                self._raw(True)  # keys typed ahead reach the terminal as typed, unechoed here
            terminal = self.server.terminals.get(agent.name, env["K_SESSION"])
            if (terminal is None or not terminal.alive) and env.get("K_PERSIST") == "1":  # no command: the K prompt
                try:
                    terminal = await self.server.terminals.create(
                        agent, env["K_SESSION"], command, env=env, size=self._size() or (80, 24), front="ssh pty")
                except (LeaseHeld, BadSessionName, TerminalError) as e:
                    err.text(f"komputer: {e}\n")
                    process.exit(1)
                    return
            if terminal is not None:
                status = await self._attach(terminal)
                with contextlib.suppress(OSError, asyncssh.Error):
                    process.exit(status & 0xFF)
                return
        try:
            self.record = await self.server.leases.join(self.conn, env.get("K_SESSION"))  # the connection's
        except (LeaseHeld, BadSessionName) as e:
            err.text(f"komputer: {e}\n")
            process.exit(1)
            return
        saved: dict[str, Any] | None = None
        try:
            self.runner = self.server.make_shell(agent, self.record, env, tty=self.pty)
            self.runner.on_raw = self._raw
            self.conn.cancel_hooks.add(self.cancel)
            if self.pty:
                self._bind_ctrl_z(out)
            if command is not None:
                await self.server.audit("ssh.exec", agent=agent.name, session=self.record.name,
                                        command=command, peer=self.conn.peer_addr, pty=self.pty)
                self.status = await self._command(command, out, err)
            elif self.pty:
                self.status = await self._interactive(out, err)
            else:  # `ssh host < script`: the whole of stdin is the script
                script = await process.stdin.read()
                await self.server.audit("ssh.exec", agent=agent.name, session=self.record.name,
                                        command="<stdin script>", peer=self.conn.peer_addr, pty=False)
                self.status = await self._command(script.decode("utf-8", "surrogateescape"), out, err, stdin=False)
        finally:
            self.conn.cancel_hooks.discard(self.cancel)
            if self._park is not None:
                self._park.cancel()
            if self.runner is not None:
                with contextlib.suppress(Exception):  # never lose the logout over it
                    if not self.record.ephemeral:
                        saved = await self.runner.state()
                await self.runner.hangup()  # no job outlives its session, stopped or running
            await self.server.leases.leave(self.conn, self.record, saved)
        with contextlib.suppress(OSError, asyncssh.Error):
            process.exit(self.status & 0xFF)

    def _size(self) -> tuple[int, int] | None:
        cols, lines = self.process.term_size[:2]
        return (cols, lines) if cols and lines else None

    async def _attach(self, terminal: PersistentTerminal) -> int:
        """Relay between this channel and a persistent terminal (kshell.server.terminals):
        keys to it untouched (the line editor is off), its bytes here, a window change to its
        program. The terminal goes on when the client goes away; the channel ends then, or
        when the terminal's command ends (with its status)."""
        process = self.process
        agent = self.conn.agent
        assert agent is not None
        self._raw(True)
        out = Output(process.stdout, True, self.conn.touch, screen=True)
        await self.server.audit("terminal.attach", agent=agent.name, session=terminal.record.name,
                                peer=self.conn.peer_addr, front="ssh pty")
        mode = self._env().get("K_MODE") or "full"  # the login's, with the server's and the key's floors
        writes = stricter(mode, terminal.mode) == terminal.mode
        viewer = await terminal.attach(out.write, self._size(), can_write=writes)
        ended = asyncio.ensure_future(terminal.ended.wait())
        try:
            while not ended.done():
                read = asyncio.ensure_future(process.stdin.read(65536))
                await asyncio.wait({read, ended}, return_when=asyncio.FIRST_COMPLETED)
                if not read.done():
                    read.cancel()
                    await asyncio.gather(read, return_exceptions=True)
                    break
                try:
                    data = read.result()
                except asyncssh.TerminalSizeChanged:
                    size = self._size()
                    if size is not None and terminal.is_writer(viewer):
                        await terminal.resize(*size)
                    continue
                except asyncssh.BreakReceived:
                    data = "\x03"
                except asyncssh.SignalReceived:
                    continue
                except (asyncssh.Error, ConnectionError):
                    break
                if not data:
                    break
                self.conn.touch()
                if terminal.is_writer(viewer):
                    await terminal.type(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
            if ended.done():
                await terminal.flushed(viewer)  # its last output, before the channel ends
        finally:
            terminal.detach(viewer)
            ended.cancel()
        return terminal.status if terminal.status is not None else 0

    def _bind_ctrl_z(self, out: Output) -> None:
        """Ctrl-Z reaches the line editor as a key: while a command runs, it stops the command
        (the shell makes it a job and the prompt returns); at the prompt it does nothing, as in
        bash."""
        chan: Any = self.process.channel
        loop = asyncio.get_running_loop()

        async def stop() -> None:
            if self.runner is not None and await suspend_line(self.runner, lambda: self._line):
                with contextlib.suppress(OSError, asyncssh.Error):  # the client may be gone already
                    out.text("^Z")  # the `[1]+  Stopped` notice follows before the prompt

        def ctrl_z(line: str, pos: int) -> tuple[str, int]:
            if self._line:  # acted on after the editor has finished with this key
                loop.create_task(stop())
            return line, pos

        with contextlib.suppress(AssertionError, AttributeError):  # no editor: nothing to bind
            chan.register_key(CTRL_Z, ctrl_z)

    async def _sync_size(self) -> None:
        """The window changed since the last command: update COLUMNS and LINES."""
        if not self.pty or self.runner is None:
            return
        size = tuple(self.process.term_size[:2])
        if size[0] and size != self.runner.term_size:
            await self.runner.resize(size[0], size[1])

    def _raw(self, raw: bool) -> None:
        """A delegated program has its own pty (kshell.delegate.terminal): keys go to it as
        typed, and it echoes and edits; when it ends the line editor takes over again."""
        chan: Any = self.process.channel
        if self._tty is not None:
            self._tty.raw = raw  # its pty made the line ends: past the editor
        with contextlib.suppress(AttributeError, AssertionError, OSError, asyncssh.Error):
            chan.set_line_mode(not raw)
            chan.set_echo(not raw)

    def cancel(self) -> None:
        """The connection went away: stop whatever this session runs."""
        if self.runner is not None:
            self.runner.interrupt(hangup=True)

    async def _pump(self, runner: WorkerShell) -> None:
        """Channel stdin to the running command, a chunk for each one the worker asks for (so a
        command that does not read stops the channel's window); a break or SIGINT interrupts."""
        stdin = self.process.stdin
        try:
            while await runner.take_credit():
                while True:
                    try:
                        data = await stdin.read(65536)
                    except (asyncssh.BreakReceived, asyncssh.SignalReceived):
                        runner.interrupt()
                        continue
                    except asyncssh.TerminalSizeChanged:
                        await self._sync_size()  # a program with a pty of its own sees SIGWINCH now
                        continue
                    break
                if not data:
                    runner.send_eof()
                    return
                self.conn.touch()
                runner.send_stdin(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
        except (asyncssh.Error, ConnectionError):
            runner.send_eof()

    async def _command(self, source: str, out: Output, err: Output, *, stdin: bool = True,
                       interactive: bool = False) -> int:
        runner = self.runner
        assert runner is not None
        await self._sync_size()
        loop = asyncio.get_running_loop()
        runner_task = loop.create_task(runner.run(source, out.write, err.write, interactive=interactive,
                                                  stdin=stdin))
        pump = loop.create_task(self._pump(runner)) if stdin else None
        self._line = True
        try:
            status = await runner_task
        finally:
            self._line = False
            if pump is not None:
                pump.cancel()
                await asyncio.gather(pump, return_exceptions=True)
        return INTERRUPTED if runner.interrupted else status

    def prompt(self) -> str:
        agent = self.conn.agent
        assert agent is not None and self.runner is not None
        return prompt_text(agent.name, agent.home, self.server.hostname, self.runner.cwd)

    def idle(self) -> None:
        """An idle interactive session with no jobs gives its worker back after `park_idle`."""
        runner = self.runner
        idle = self.server.config.limits.park_idle
        if runner is None or idle <= 0 or runner.has_jobs or not runner.alive:
            return
        loop = asyncio.get_running_loop()
        self._park = loop.call_later(idle, lambda: loop.create_task(runner.park()))

    def write(self, text: str) -> None:
        assert self._out is not None
        self._out.text(text)

    async def readline(self) -> str:
        """The line the channel's editor finished; a window change or a signal at the prompt is
        not a line."""
        while True:
            try:
                line = await self.process.stdin.readline()
            except asyncssh.BreakReceived:
                _clear_input(self.process.channel)
                raise Interrupted from None
            except (asyncssh.TerminalSizeChanged, asyncssh.SignalReceived):
                continue
            if self._park is not None:
                self._park.cancel()
                self._park = None
            if line:
                self.conn.touch()
            return line

    async def run_line(self, line: str) -> int:
        assert self._out is not None and self._err is not None and self.record is not None
        await self.server.audit("ssh.exec", agent=self.conn.agent.name, session=self.record.name,  # type: ignore[union-attr]
                                command=line.rstrip("\n"), peer=self.conn.peer_addr, pty=True)
        return await self._command(line, self._out, self._err, interactive=True)

    async def _interactive(self, out: Output, err: Output) -> int:
        """The PTY shell (kshell.server.prompt): prompt, edited line, run, repeat; Ctrl-D or
        `exit N` ends it."""
        assert self.runner is not None
        self._out, self._err = out, err
        return await prompt_loop(self, self.runner)


def _clear_input(chan: Any) -> None:
    clear = getattr(chan, "clear_input", None)
    if clear is not None:
        with contextlib.suppress(AssertionError, AttributeError):
            clear()


async def run_session(server: SessionHost, conn: Connection, process: asyncssh.SSHServerProcess) -> None:
    await SessionHandler(server, conn, process).run()


Factory = Callable[[asyncssh.SSHServerProcess], Awaitable[None]]
__all__ = ["SessionHandler", "accepted_env", "bytes_mode", "client_env", "run_session"]
