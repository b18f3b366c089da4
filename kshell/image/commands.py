"""The image's commands (kfs.runtime.image `[commands.NAME]`), run by name in an agent's shell
like any tool: a Python handler, or a markdown runbook.

A Python handler is `def NAME(ctx)`, returning the exit status (None: 0). `ctx` has the
arguments (`ctx.args`), standard input (`ctx.input`, read whole on first use), `ctx.write` and
`ctx.error` for output, `ctx.exec(script)` to run shell work with the agent's own authority
(its credential, mode, path rules and hooks: a subshell of the agent's shell), and
`ctx.secret(name)` for the image's secrets. The handler itself is the operator's code: it runs
in the session's worker, not in the sandbox.

A markdown command runs the ```sh blocks of its `.md` file as a script (the arguments are $1,
$2, ...). Its front matter may restrict that one invocation: `readonly: true` (or `mode: plan`,
...) makes it run in that mode, with the session's own mode restored afterwards (the stricter
of the two applies: a command never loosens the session).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from kfs.vfs.policy import WritePolicy, stricter
from kshell.exec.streams import BufferSink, BytesSource
from kshell.image.code import HandlerFailed, loader

if TYPE_CHECKING:
    from kshell.core.context import ToolContext
    from kshell.exec.interp import Interp

OUTPUT_LIMIT = 64 << 20  # what ctx.exec collects of a script's output


class ExecResult(NamedTuple):
    stdout: bytes
    stderr: bytes
    status: int


class Context:
    """What a command handler is given (module docstring): the tools' contract
    (kshell.core.context.ToolContext) in the handler's words, and nothing more of the shell."""

    def __init__(self, sh: ToolContext, argv: list[str], agent: str, secret: Callable[[str], str]) -> None:
        self.name = argv[0]
        self.args = argv[1:]
        self.agent = agent
        self._sh = sh
        self._secret = secret
        self._input: bytes | None = None

    @property
    def cwd(self) -> str:
        return self._sh.fs.cwd.decode("utf-8", "surrogateescape")

    @property
    def input(self) -> bytes:
        if self._input is None:
            stream = self._sh.fds.get(0)
            self._input = stream.read() if stream is not None and stream.readable else b""
        return self._input

    def write(self, data: str | bytes) -> None:
        self._sh.fds[1].write(data.encode() if isinstance(data, str) else data)

    def error(self, data: str | bytes) -> None:
        self._sh.fds[2].write(data.encode() if isinstance(data, str) else data)

    def exec(self, script: str, input: bytes = b"") -> ExecResult:  # noqa: A002 - ctx.exec(script, input=...)
        """Run shell work as the agent would (a subshell of its shell), its output collected."""
        out, err = BufferSink(OUTPUT_LIMIT), BufferSink(OUTPUT_LIMIT)
        status = self._sh.run_script(script, self.name, {0: BytesSource(input), 1: out, 2: err})
        return ExecResult(bytes(out.data), bytes(err.data), status)

    def secret(self, name: str) -> str:
        return self._secret(name)


def _python_command(name: str, load: Callable[[], Any], agent: str, secret: Callable[[str], str]) -> Any:
    def run(sh: ToolContext, argv: list[str]) -> int:
        try:
            status = load()(Context(sh, argv, agent, secret))
        except Exception as e:  # noqa: BLE001 - the handler's failure is the command's
            sh.write_err(f"{name}: {HandlerFailed(f'the handler of {name}', e)}\n")
            return 1
        return 0 if status is None else int(status) & 0xFF

    return run


def _markdown_command(name: str, command: dict[str, Any]) -> Any:
    options = command["options"]
    mode = "readonly" if options.get("readonly") else options.get("mode")
    script = command["script"]

    def run(sh: Interp, argv: list[str]) -> int:
        child = sh.fork()
        child.positional = argv[1:]
        if mode:
            child.fs.policy = restricted(child.fs.policy, mode, child.fs.home.decode("utf-8", "surrogateescape"))
        return child.run_subshell(lambda: child.run_string(script, name))

    return run


def restricted(policy: WritePolicy | None, mode: str, home: str) -> WritePolicy | None:
    """`policy` made at least as strict as `mode`, its rules, grants and approvals kept."""
    current = policy.mode if policy is not None else "full"
    strict = stricter(current, mode)
    if strict == current:
        return policy
    made = WritePolicy.make(strict, home, policy.allowed if policy is not None else (),
                            rules=policy.rules if policy is not None else (),
                            bounds=policy.bounds if policy is not None else None)  # a fork's scope too
    if made is not None and policy is not None:
        made.approve, made.granted, made.hook = policy.approve, policy.granted, policy.hook
    return made


def image_commands(record: dict[str, Any], read: Callable[[str], bytes], agent: str,
                   secret: Callable[[str], str]) -> dict[str, Any]:
    """The image's commands as tools (name -> fn(sh, argv))."""
    out: dict[str, Any] = {}
    for name, command in record["spec"]["commands"].items():
        if "handler" in command:
            load = loader(record, read, command["handler"], secret)
            out[name] = _python_command(name, load, agent, secret)
        else:
            out[name] = _markdown_command(name, command)
    return out
