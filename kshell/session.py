"""The K shell's entry point: `Shell(fs).run(script)` runs a script as `bash -c` would, on the
VFS, with state kept between calls (so an interactive session can reuse one Shell).

    shell = Shell(fs, name="k", env={"HOME": "/home/agent"}, limits=Limits())
    result = shell.run("echo hi > f; cat f", stdin=b"", args=["a1"])  # Result(stdout, stderr, status)
    status = shell.run_streaming(script, stdout=write_fn, stderr=write_fn, stdin=b"")

`Shell(fs, hosts={"api": {"/hello": "hello\\n"}})` binds virtual hosts for curl and wget
(kshell.tools.net.hosts), listed in /sys/hosts.md; `network=True` allows real HTTP.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from typing import NamedTuple

from kshell.exec.errors import AbortCommand, BreakLoop, ContinueLoop, ExitSignal, FatalError, ReturnSignal
from kshell.exec.interp import Interp, Session
from kshell.exec.streams import (
    BufferSink,
    BytesSource,
    CallbackSink,
    InStream,
    Meter,
    MeteredSink,
    Stream,
)
from kshell.exec.variables import EXPORT, Var
from kshell.limits import LimitExceeded, Limits
from kshell.tools import registry as tool_registry

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
BASH_VERSION = "5.2.15(1)-release"


class Result(NamedTuple):
    stdout: bytes
    stderr: bytes
    status: int


def init_defaults(sh: Interp, pwd: str | None = None) -> None:
    """The variables a new shell starts with (environment entries already set win)."""
    table = sh.vars.table
    cwd = sh.fs.cwd.decode("utf-8", "surrogateescape")
    home = sh.fs.home.decode("utf-8", "surrogateescape")
    uid = sh.fs.cred.uid

    def default(name: str, value: str, flags: int = 0) -> None:
        if name not in table:
            table[name] = Var(value, flags)

    default("HOME", home, EXPORT)
    default("PATH", DEFAULT_PATH, EXPORT)
    table["PWD"] = Var(pwd or cwd, EXPORT)
    default("IFS", " \t\n")
    default("PS4", "+ ")
    default("PS1", "\\s-\\v\\$ ")
    default("PS2", "> ")
    default("OPTIND", "1")
    default("SHELL", "/bin/bash", EXPORT)
    default("USER", "root" if uid == 0 else "agent", EXPORT)
    default("LOGNAME", table["USER"].value if isinstance(table["USER"].value, str) else "agent", EXPORT)
    default("HOSTNAME", "k")
    default("SHLVL", "1", EXPORT)
    default("UID", str(uid))
    default("EUID", str(uid))
    default("PPID", "1")
    default("BASH_VERSION", BASH_VERSION)
    default("MACHTYPE", "x86_64-pc-linux-gnu")
    default("OSTYPE", "linux-gnu")
    default("HOSTTYPE", "x86_64")
    default("TERM", "dumb", EXPORT)
    table["BASH_VERSINFO"] = Var({0: "5", 1: "2", 2: "15", 3: "1", 4: "release",
                                   5: "x86_64-pc-linux-gnu"}, 8)


class Shell:
    """One shell session on a PathFS. `name` is `$0` and the prefix of error messages (bash
    prints `bash: line 1: ...`; K prints `k: line 1: ...`)."""

    def __init__(self, fs, *, name: str = "k", env: dict[str, str] | None = None,
                 limits: Limits | None = None, hosts: dict | None = None, network: bool = False) -> None:
        from kfs.vfs import PathFS

        self.limits = limits or Limits()
        self.session = Session(self.limits, name)
        own_fs = PathFS(fs.vfs, cred=fs.cred, cwd=fs.cwd, home=fs.home, umask=fs.umask, tilde=False)
        self.interp = Interp(own_fs, self.session, {})
        self.session.tools.update(tool_registry())
        self.name = name
        if env:
            self.interp.init_env(env)
        init_defaults(self.interp)
        self.exited: int | None = None
        self.bind_hosts(hosts or {}, network=network, clear=False)

    def bind_hosts(self, hosts: dict, *, network: bool = False, clear: bool = True) -> None:
        """Bind virtual hosts for curl and wget (name -> {path: response} or a handler) and
        list them in /sys/hosts.md (removed, unless `clear` is false, when none are bound);
        `network` allows real HTTP to other hosts."""
        from kfs.vfs import Cred, PathFS
        from kshell.tools.net.hosts import bind

        self.hosts = bind(self.session, hosts, network)
        if not hosts and not clear:
            return
        root = PathFS(self.interp.fs.vfs, cred=Cred(0, 0), cwd="/", home="/", umask=0o022)
        if hosts:
            root.mkdir("/sys", 0o755, parents=True)
            root.write_file("/sys/hosts.md", self.hosts.markdown())
        elif root.exists("/sys/hosts.md"):
            root.unlink("/sys/hosts.md")

    @property
    def tools(self) -> dict:
        """External commands (ls, grep, ...) registered by later layers: name -> fn(sh, argv)."""
        return self.session.tools

    def run(self, source: str, *, stdin: bytes = b"", args: list[str] | None = None) -> Result:
        """Run `source` as `bash -c SOURCE NAME ARGS...` does, NAME being the shell's name and
        `args` (when given) the positional parameters; collect output. The EXIT trap runs at
        the end, as when a script ends."""
        out = BufferSink(self.limits.output_bytes * 4, "output")
        err = BufferSink(self.limits.output_bytes * 4, "output")
        status = self._run(source, BytesSource(stdin), out, err, args, script=True)
        return Result(bytes(out.data), bytes(err.data), status)

    def run_streaming(self, source: str, *, stdout: Callable[[bytes], object],
                      stderr: Callable[[bytes], object], stdin: bytes | InStream = b"",
                      args: list[str] | None = None, script: bool = True) -> int:
        """As run(), with output delivered as it is produced. script=False runs one
        interactive input (no EXIT trap; `exit` is reported through `self.exited`)."""
        source_stream = BytesSource(stdin) if isinstance(stdin, bytes | bytearray) else stdin
        return self._run(source, source_stream, CallbackSink(stdout), CallbackSink(stderr), args,
                         script=script)

    # ------------------------------------------------------------------ internals

    def _run(self, source: str, stdin: Stream, out: Stream, err: Stream,
             args: list[str] | None, script: bool) -> int:
        _raise_recursion_limit()
        sh = self.interp
        meter = Meter(self.limits.output_bytes)
        sh.fds = {0: stdin, 1: MeteredSink(out, meter), 2: MeteredSink(err, meter)}
        if args is not None:
            sh.positional = list(args)
        holder: list[int] = []
        worker = threading.Thread(target=lambda: holder.append(self._main(sh, source, meter, script)),
                                  daemon=True)
        worker.start()
        worker.join()
        return holder[0] if holder else 1

    def _main(self, sh: Interp, source: str, meter: Meter, script: bool) -> int:
        sh.is_top = True
        sh.line_meter = meter
        status = 0
        try:
            try:
                status = sh.run_source(source)
            except ExitSignal as e:
                status = e.status
                self.exited = status
            except FatalError as e:
                status = e.status
                self.exited = status
            except AbortCommand as e:
                status = e.status
            except (BreakLoop, ContinueLoop):
                status = sh.last_status
            except ReturnSignal as r:
                status = r.status
            except BrokenPipeError:
                status = 141
            except RecursionError:
                sh.error("maximum recursion depth exceeded")
                status = 1
            except LimitExceeded as e:
                sh.error(e.message)
                status = 1
            if script:
                trap = sh.traps.pop("EXIT", None)
                if trap:
                    try:
                        sh.run_trap(trap, status, exit_trap=True)
                    except ExitSignal as e:
                        status = e.status
                    except Exception:  # noqa: BLE001
                        pass
                sh.cleanup_tmp()
        except Exception as e:  # noqa: BLE001 - never a traceback for the user
            sh.write_err(f"{sh.script_name}: internal error: {type(e).__name__}: {e}\n")
            status = 1
        finally:
            for stream in sh.fds.values():
                with contextlib.suppress(Exception):  # a stream that cannot flush is gone
                    stream.flush()
        status &= 0xFF
        sh.last_status = status
        return status


def _raise_recursion_limit() -> None:
    if sys.getrecursionlimit() < 20000:
        sys.setrecursionlimit(20000)
    try:
        if threading.stack_size() < 256 * 1024 * 1024:
            threading.stack_size(256 * 1024 * 1024)
    except (ValueError, RuntimeError):
        pass
