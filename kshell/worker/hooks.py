"""The image's hooks (kfs.runtime.image `[[hooks]]`) in a session: Python the operator wrote,
asked before a command runs, before a write, and when the session starts and ends.

A hook is `def check(ctx)`; `ctx.event` is `command`, `write`, `session_start` or
`session_end`, with `ctx.agent`, `ctx.session`, and `ctx.argv` / `ctx.command` (a command) or
`ctx.path` (the path a write reaches), `ctx.secret(name)`, and `ctx.ask(reason)` /
`ctx.deny(reason)` to answer with a reason. A command hook is asked about
each line the command runs that K sees, as the command rules are (kfs.runtime.command_lines:
`nice git push` and `git -C d push` also as `git push`). It returns None or "allow" (no
objection), "deny" or "ask", or a pair (decision, reason) whose reason the agent reads. The first
hook that objects decides; policy rules that match come before hooks, and the session's mode
after them. A hook is bounded in time (HOOK_TIMEOUT): one that raises or does not answer
denies, saying so.

An `ask` waits for `komputer decide`, as an `ask` rule does. At session start, `deny` refuses
every command line of the session with the hook's reason, and `ask` holds the first line until
someone decides; what `session_end` returns is not used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kfs.kstate import KState
from kfs.runtime import image, secrets
from kfs.runtime.rules import Rule
from kfs.vfs.policy import WritePolicy
from kshell.image.code import HandlerFailed, bounded, loader

HOOK_TIMEOUT = 5.0
DECISIONS = ("allow", "deny", "ask")


class HookContext:
    """What a hook is given (module docstring)."""

    def __init__(self, event: str, agent: str, session: str, secret: Callable[[str], str], *,
                 argv: list[str] | None = None, path: str | None = None) -> None:
        self.event = event
        self.agent = agent
        self.session = session
        self.argv = argv
        self.command = " ".join(argv) if argv is not None else None
        self.path = path
        self._secret = secret

    def secret(self, name: str) -> str:
        return self._secret(name)

    def ask(self, reason: str = "") -> tuple[str, str]:
        """The hook's answer that pauses the action for a decision (`return ctx.ask("why")`):
        the same as returning ("ask", reason); `agent.decide` or `komputer decide` settles it."""
        return ("ask", reason)

    def deny(self, reason: str = "") -> tuple[str, str]:
        """The answer that refuses the action, with its reason (as returning ("deny", reason))."""
        return ("deny", reason)


class Hooks:
    """The hooks of the image in force that apply to one agent's session."""

    def __init__(self, record: dict[str, Any], read: Callable[[str], bytes], agent: str, session: str,
                 secret: Callable[[str], str]) -> None:
        self.agent = agent
        self.session = session
        self.secret = secret
        self.by_event: dict[str, list[tuple[dict[str, Any], Callable[[], Any]]]] = {}
        for hook in record["spec"]["hooks"]:
            if hook["agents"] is None or agent in hook["agents"]:
                load = loader(record, read, hook["handler"], secret)
                self.by_event.setdefault(hook["on"], []).append((hook, load))

    def has(self, event: str) -> bool:
        return event in self.by_event

    def decide(self, event: str, **subject: Any) -> Rule | None:
        """The first objection of the hooks on `event`, as a rule (what policy denials and
        approvals already know how to say), or None."""
        for hook, load in self.by_event.get(event, ()):
            ctx = HookContext(event, self.agent, self.session, self.secret, **subject)
            name = f"hook {hook['index']} ({hook['handler']})"
            try:
                answer = bounded(name, lambda c, load=load: load()(c), ctx, timeout=HOOK_TIMEOUT)
            except (HandlerFailed, TimeoutError) as e:
                answer = ("deny", str(e))
            decision, reason = answer if isinstance(answer, tuple) else (answer or "allow", "")
            if decision not in DECISIONS:
                decision, reason = "deny", f"answered {decision!r}, not allow, deny or ask"
            if decision != "allow":
                return Rule(hook["index"], decision, hook["handler"], note="image hook", reason=str(reason),
                            on="path" if event == "write" else "command")
        return None

    def command(self, argv: list[str]) -> Rule | None:
        return self.decide("command", argv=argv)

    def write(self, path: str) -> Rule | None:
        return self.decide("write", path=path)


def session_hooks(state: KState, record: dict[str, Any] | None, agent: str, session: str) -> Hooks | None:
    """The hooks of the image `record` that apply to a session of `agent`, reading the image's
    files and secrets from `state` (None: none apply)."""
    if record is None or not record["spec"]["hooks"]:
        return None

    def read(rel: str) -> bytes:
        return image.read_file(state, record["version"], rel)

    def secret(name: str) -> str:  # for the image's code, never the agent's
        return secrets.reveal(state, name).decode("utf-8", "surrogateescape")

    hooks = Hooks(record, read, agent, session, secret)
    return hooks if hooks.by_event else None


def judged(policy: WritePolicy | None, hooks: Hooks | None, home: str) -> WritePolicy | None:
    """The write policy with the hooks' judgement of writes joined (made, in the `full` mode,
    for them)."""
    if hooks is None or not hooks.has("write"):
        return policy
    policy = policy or WritePolicy("full", home)
    policy.hook = hooks.write
    return policy
