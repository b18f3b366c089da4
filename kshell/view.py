"""The one session view: what an agent's session sees and obeys, whichever front end it came in by.

The session worker (an SSH exec or terminal), SFTP and scp, the agent's FUSE mount (and the
views mounted for its delegated programs), `komputer sh --agent` and the SDK all open their view
here, from a typed `SessionSpec`: the agent's credentials and home, the tree it works in (the
state's or its fork's), the rules in force and the write policy they make (the agent's mode and
scope, the session's mode, the fork's mode as a floor, path rules, the image's write hooks or,
for a front end that runs none, a refusal of what they would judge), and the image's drives.
Deciding it in one place means a rule holds in every front end or in none.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kfs.drives.view import DriveFS, Drives, mount
from kfs.runtime import image
from kfs.runtime.drives import of_image
from kfs.runtime.rules import Governance, governance
from kfs.vfs import VFS, Cred
from kshell.errors import AgentNotFound

if TYPE_CHECKING:
    from kfs.agents.records import Agent
    from kfs.drives.memory import MemoryDrives
    from kfs.kstate import KState
    from kfs.vfs.policy import WritePolicy
    from kshell.worker.hooks import Hooks

# The front ends that run a shell session: the image's `session_start` hook is asked of them
# (docs/image.md: "of shell sessions only"), and their python drives are mounted over the
# drives' objects (SFTP and the mount run no drive code: calls there are "not supported").
SHELL_FRONTS = frozenset({"ssh exec", "ssh pty", "sdk", "cli:sh"})


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """What a front end knows of the session it opens; everything else is read from the state."""

    agent: str  # the agent's name (must exist; kfs.agents.find_agent)
    front: str  # who acts, as receipts name it: "ssh exec", "ssh pty", "sftp", "mount", "sdk", "cli:sh"
    session: str = "-"  # the session id
    mode: str = "full"  # the session's requested mode; the fork's mode is a floor on it
    fork: int | None = None  # work in this fork's tree (must be the agent's: PermissionError otherwise)
    hooks: bool = True  # the front end runs the image's hooks (False: what a write hook would judge is refused)
    drives: bool = True  # mount the image's drives in the view
    configured: dict | None = None  # what komputer.toml says of the agent (ServerConfig.configured(name))
    cwd: str | None = None  # start here (falls back to home when gone / not a directory)
    peer: str | None = None  # who acts, for receipts' "by", when not "FRONT AGENT/SESSION" (SFTP's peer)


@dataclass
class SessionView:
    """One session's view (module docstring). `fs` is the agent's filesystem: its credentials,
    cwd and home, the write policy and the drives; `vfs.by` names who acts in every receipt."""

    spec: SessionSpec
    agent: Agent  # kfs.agents record (uid, gid, home)
    vfs: VFS  # the state's or the fork's tree
    fs: DriveFS
    policy: WritePolicy | None
    governance: Governance  # settings, the rules in force (kfs.runtime.rules)
    fork: dict | None  # the fork's record
    image: dict | None  # the image record in force
    hooks: Hooks | None  # the image's hooks for this agent and session, when it has any and spec.hooks
    start_verdict: Any  # the session_start hook's objection (None: no hook, or it allowed)
    drives: Drives


def open_view(state: KState, spec: SessionSpec, *, memory_drives: MemoryDrives | None = None,
              python_drives: Any = None) -> SessionView:
    """The view of `spec`'s session on `state`. `memory_drives`: the server run's memory drives
    (None: they are not mounted, as outside a server); `python_drives`: the
    kshell.image.drives.PythonDrives a worker keeps across its sessions (None: a shell
    front end whose image has python drives makes its own). Raises AgentNotFound for an unknown
    agent, PermissionError for a fork that is not the agent's, kfs.forks.ForkError for none."""
    from kfs.agents.records import find_agent

    agent = find_agent(state, spec.agent)
    if agent is None:
        raise AgentNotFound(f"no agent {spec.agent!r} (komputer agent list shows them)")
    fork, tree = None, state
    if spec.fork is not None:
        from kfs import forks

        fork = forks.get(state, spec.fork)
        if fork.get("agent") != agent.name:
            raise PermissionError(f"fork {spec.fork} is not agent {agent.name}'s "
                                  f"(komputer fork create --agent {agent.name})")
        tree = forks.view(state, spec.fork)
    vfs = VFS(tree, by=spec.peer or f"{spec.front} {agent.name}/{spec.session}")
    gov = governance(state, agent.name, agent.home, spec.mode, spec.configured, runs_hooks=spec.hooks, fork=fork)
    policy = gov.policy
    record = image.current(state)
    hooks, verdict = None, None
    if spec.hooks and not (fork is not None and not fork["hooks"]):  # a fork made --no-hooks runs none
        from kshell.worker.hooks import judged, session_hooks

        hooks = session_hooks(state, record, agent.name, spec.session)
        if hooks is not None:
            policy = judged(policy, hooks, agent.home)
            if spec.front in SHELL_FRONTS:
                verdict = hooks.decide("session_start")
    drives = _drives(state, spec, vfs, record, fork, memory_drives, python_drives) if spec.drives else Drives(())
    cred = Cred(agent.uid, agent.gid)
    fs = DriveFS(vfs, drives=drives, cred=cred, cwd=agent.home, home=agent.home, policy=policy)
    if spec.cwd and spec.cwd != agent.home:  # a resumed cwd that is gone (or no directory now): home
        with contextlib.suppress(OSError):
            if fs.stat(spec.cwd).is_dir:
                fs = DriveFS(vfs, drives=drives, cred=cred, cwd=spec.cwd, home=agent.home, policy=policy)
    return SessionView(spec, agent, vfs, fs, policy, gov, fork, record, hooks, verdict, drives)


def _drives(state: KState, spec: SessionSpec, vfs: VFS, record: dict | None, fork: dict | None,
            memory_drives: MemoryDrives | None, python_drives: Any) -> Drives:
    """The image's drives mounted for the session: read-only in an overlay fork (what a fork
    writes stays in it: a drive cannot); python drives over their objects for a shell front end
    (loaded and mounted once by `python_drives`), else not supported."""
    records = of_image(record)
    python = None
    if spec.front in SHELL_FRONTS and (python_drives is not None or any(d.kind == "python" for d in records)):
        from kfs.runtime import secrets
        from kshell.image.drives import PythonDrives

        def read(rel: str) -> bytes:
            assert record is not None
            return image.read_file(state, record["version"], rel)

        def secret(name: str) -> str:  # for the image's code, never the agent's shell
            return secrets.reveal(state, name).decode("utf-8", "surrogateescape")

        python = (python_drives or PythonDrives()).opener(record, read, spec.agent, secret)
    return mount(records, vfs, memory_drives, python, overlay=fork is not None and fork["disk"] == "overlay")


def govern_shell(state: KState, view: SessionView, shell: Any, approvals: Any, network: bool | list[str],
                 hosts: dict[str, Any] | None = None) -> None:
    """Put the view's rules on a K shell of the session: every tool asks the command rules and
    the image's command hook (programs ask in run_path), curl and wget the host rules, the write
    policy the path rules; a denial is a `policy.deny` event, an `ask` waits for a decision
    through `approvals` (kshell.worker.approvals.SessionApprovals); the image's hosts, commands
    and secrets' handles are bound (with `hosts`, the SDK's own, over them), with `network` the
    real network curl and wget reach."""
    from kfs.journal import append_event
    from kshell.image.session import bind_image

    spec, gov = view.spec, view.governance
    session = shell.interp.session
    session.approve = approvals.command
    bind_image(shell, state, view.image, spec.agent, network, hosts)
    session.hosts.rules, session.hosts.approve = gov.of("host"), approvals.host
    if view.policy is not None:
        view.policy.approve = approvals.write
    hook = view.hooks.command if view.hooks is not None and view.hooks.has("command") else None
    if not gov.rules and hook is None:
        return
    shell.govern(list(gov.of("command")), hook)

    def denied(command: str, rule: Any) -> None:
        state.write(lambda txn: append_event(txn, "policy.deny", agent=spec.agent, session=spec.session,
                                             front=spec.front, command=command[:4096], rule=rule.id))

    session.denied = denied


def start_refusal(view: SessionView, approvals: Any, interp: Any) -> str:
    """Why the image's session_start hook keeps this session's lines from running ("" when it
    does not): its `deny`, or an `ask` someone rejected (asked once, at the first line; an
    allowed one is forgotten)."""
    from kfs.runtime.rules import Rule

    verdict = view.start_verdict
    if verdict is None:
        return ""
    if verdict.action == "ask":
        allowed, why = approvals.ask(interp, "session", f"session of {view.spec.agent}", verdict, None)
        if allowed:
            view.start_verdict = None
            return ""
        verdict = view.start_verdict = Rule(verdict.id, "deny", verdict.pattern, note=verdict.note,
                                            reason=why or "not allowed")
    return f"K: this session is refused ({verdict.describe()})\n"


def session_network(view: SessionView, delegate: Any = None) -> bool | list[str]:
    """The real network curl and wget reach (True: all, a list: the hosts matching it): the
    server's `[delegate]` setting (`delegate`, kshell.delegate.config.DelegateConfig; None: no
    delegation) with the agent's own when they open it or the agent's closes it, else the
    image's (its `[agents.NAME] network`, else its `[network] allow`)."""
    from kshell.image.session import image_network

    settings = view.governance.settings
    if delegate is None:
        opened: bool | list[str] = bool(settings.get("network"))
    else:
        from kshell.delegate.config import for_agent

        opened = for_agent(delegate, settings).network
    if opened or settings.get("network") is False:
        return opened
    return image_network(view.image, view.spec.agent)


def resumable(interp: Any) -> dict[str, Any]:
    """What a named session keeps for its next channel and a `K_SESSION` resume (the record's
    `shell`, with its cwd): the shell's cwd, exported variables and functions."""
    from kshell.syntax.printer import function_text

    return {
        "cwd": interp.fs.cwd.decode("utf-8", "surrogateescape"),
        "exported": dict(interp.exported_env()),
        "functions": "".join(function_text(f) + "\n" for f in interp.funcs.values()),
    }
